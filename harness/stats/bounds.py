"""One-sided bounds for the mean of per-user values: the t bound where the normal approximation holds, and a betting
bound that holds for every distribution in a known range.

A release guard asks whether the mean of ``e_i`` (a user's drop beyond the guard's margin)
is below 0 (PASS) or above it (FAIL). Two bounds answer it here:

* **t** (:func:`t_bound`): Student's one-sided bound. Its error rate rests on the normality
  of the mean, which fails where recommender and search changes live: when a change touches
  few users, most ``e_i`` are equal and a few are far off; the sample often holds none or one
  of them, the sd is underestimated, and the stated 5% becomes 20-75%. By the Edgeworth expansion of
  the studentised mean (Hall, *The Bootstrap and Edgeworth Expansion*, 1992, section 2.6)
  its one-sided error is about ``alpha + |skewness| (2z^2 + 1) phi(z) / (6 sqrt(n))``;
  :func:`t_excess` estimates that excess from the sample.
* **betting** (:func:`betting_bound`): the hedged-capital bound of Waudby-Smith and Ramdas
  ("Estimating means of bounded random variables by betting", JRSS B 86(1), 2024). For values in a known
  range ``[low, high]``, a gambler bets on the mean being on one side of ``m``, and ``m`` is
  rejected when her wealth reaches ``1 / alpha``. Ville's inequality holds the error at
  alpha for *every* distribution in the range, with no assumption on its shape. The bets
  ``lambda_i`` are predictable (each uses the values before it, in the users' order) and
  tuned for ``n``, so the bound is as tight as betting allows for one look at ``n`` users.
  Its price is width: about ``sqrt(2 log(1/alpha)) / z`` times the t bound's for
  a spread change (1.5x at alpha 0.05), more where the range is wide next to the sd.

:func:`mean_bound` uses t where its estimated excess error is at most a tenth of alpha, and the
betting bound elsewhere when the range is known. The test of a spread change keeps its power, and a change that
touches few users is decided by a bound whose error holds whatever its shape. A change can also touch so few users
that the sample holds none of them: then the sample shows no harm and no skew, and t's error is about the chance
of that miss, (1 - p)^n for a harmed share p. So for a measure with a known range t decides only from
:func:`t_trusted_from` users on, where that chance is at most a tenth of alpha for the rarest harm the release
states (``release.min_affected``, 1% by default: 528 users at alpha 0.05). t never decides without spread, nor
when no user changed (a sample that missed every changed user says nothing of them): there the betting bound
decides if the range is known (its width then holds the users not seen), and nothing does if it is not.

>>> import numpy as np
>>> spread = np.random.default_rng(1).normal(-0.02, 0.1, 1000)
>>> b = mean_bound(spread, -2.0, 2.0, 0.05, min_affected=0.01)
>>> b.method, b.high < 0
('t', True)
>>> few = np.r_[np.full(59, -0.02), 0.38]   # 1 user in 20 broken by 0.4 (a true mean of 0): this sample drew 1 of 60
>>> t_bound(few, 0.05).high < 0                  # the t bound would PASS it
True
>>> b = mean_bound(few, -2.0, 2.0, 0.05)
>>> b.method, b.high < 0                                         # the betting bound does not
('betting', False)
>>> b = mean_bound(np.full(2, -0.01), -2.0, 2.0, 0.05)            # two identical users: exact, and far from 0
>>> b.method, b.high < 0, b.p_below > 0.9
('betting', False, True)
>>> mean_bound(np.full(2, -0.01), None, None, 0.05).reason[:9]    # with no range, nothing at all
'no spread'
"""

from __future__ import annotations

import dataclasses
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, NamedTuple

import numpy as np

from harness.stats.paired import ZERO_SD

BoundMethod = Literal["t", "betting", "none"]
BoundChoice = Literal["auto", "t", "betting"]
BOUND_CHOICES: tuple[BoundChoice, ...] = ("auto", "t", "betting")
EXCESS_TOLERANCE = 0.1  # t decides where its estimated excess error is at most this fraction of alpha
# a bet never risks more than this share of the wealth: c in Waudby-Smith and Ramdas' lambda <= c / m, who use 1/2
# or 3/4. Where few users are sampled the cap, not the spread, sets the bound's reach (about range x log(1/alpha) /
# (c n)): 3/4 narrows it by 20-30% against 1/2 at 100-1,000 users, and costs at most an eighth where users sit near
# the top of the range (benchmarks/betting_width.py); 0.9 costs a fifth there.
_TRUNCATION = 0.75
_BISECTIONS = 48  # of the range [0, 1]: 2^-48, far below any printed digit


@dataclass(frozen=True)
class MeanBound:
    """One-sided (1 - alpha) bounds for the mean of ``n`` values and the p-values of "mean >= 0" (``p_below``: small
    when the mean is shown below 0) and "mean <= 0" (``p_above``), by ``method``; ``changed`` counts the values that
    differ from 0 by more than rounding. ``decided`` is False when no bound could be had (``reason`` says why)."""

    n: int
    mean: float
    sd: float
    low: float
    high: float
    p_below: float
    p_above: float
    method: BoundMethod
    changed: int
    excess: float  # t's estimated excess error (Edgeworth), NaN where it cannot be estimated
    reason: str = ""

    @property
    def decided(self) -> bool:
        return self.method != "none"


def t_bound(values: np.ndarray, alpha: float) -> MeanBound:
    """Student's one-sided bounds and p-values for the mean (NaN bounds and p = 1 where the sd is 0 or n < 2).

    >>> b = t_bound(np.array([0.1, 0.3, 0.2, 0.4]), 0.05)
    >>> round(b.low, 4), round(b.high, 4)
    (0.0981, 0.4019)
    """

    x = np.asarray(values, dtype=np.float64)
    n = int(x.size)
    mean = float(x.mean()) if n else math.nan
    sd = float(x.std(ddof=1)) if n > 1 else math.nan
    changed = changed_count(x)
    if n < 2 or not sd > 0:
        return MeanBound(n, mean, sd, math.nan, math.nan, 1.0, 1.0, "none", changed, math.nan, no_spread(n, changed))
    low, high, p_below, p_above = t_moments(n, mean, sd, alpha)
    return MeanBound(n, mean, sd, low, high, p_below, p_above, "t", changed, t_excess(x, alpha))


def t_moments(n: int, mean: float, sd: float, alpha: float, offset: float = 0.0) -> tuple[float, float, float, float]:
    """Student's one-sided (1 - alpha) lower and upper bounds of ``offset + mean``, and the p-values of "mean >= 0"
    (small when the mean is shown below 0) and "mean <= 0", from ``n`` values' mean and sd (n >= 2, sd > 0). A release
    guard's t-test: ``mean`` the users' mean drop beyond the margin, ``offset`` the margin, so the bounds are the
    drop's; its moments come from exact sums (:mod:`harness.stats.paired`).

    >>> [round(x, 4) for x in t_moments(4, 0.25, 0.1291, 0.05, offset=0.01)]
    [0.1081, 0.4119, 0.9848, 0.0152]
    """
    from scipy import special

    se = sd / math.sqrt(n)
    reach = float(special.stdtrit(n - 1, 1 - alpha)) * se  # the one-sided bounds' distance from the estimate
    statistic = mean / se
    return (
        offset + mean - reach,
        offset + mean + reach,
        float(special.stdtr(n - 1, statistic)),
        float(special.stdtr(n - 1, -statistic)),
    )


def bootstrap_bound(observed: float, replicates: np.ndarray, alpha: float) -> tuple[float, float, float, float, float]:
    """One-sided (1 - alpha) bounds of a statistic from its bootstrap replicates, centred on the ``observed`` value
    (the replicates' spread around their mean is the statistic's sampling spread), the p-values of "it is >= 0" and
    "it is <= 0" with the resampling test's +1 (never below 1 / (B + 1)), and the replicates' sd, the statistic's
    standard error. A release guard on a measure with one value per run: the statistic its drop beyond the margin.

    >>> low, high, p_below, p_above, se = bootstrap_bound(-0.2, np.array([-0.1, 0.0, 0.1, 0.0]), 0.05)
    >>> round(low, 3), round(high, 3), p_below, p_above, round(se, 4)
    (-0.285, -0.115, 0.2, 1.0, 0.0816)
    """
    shifted = observed + replicates - replicates.mean()  # the sampling distribution, centred on the estimate
    b = shifted.size
    p_below = float((1 + np.sum(shifted >= 0)) / (b + 1))
    p_above = float((1 + np.sum(shifted <= 0)) / (b + 1))
    low, high = np.quantile(shifted, [alpha, 1 - alpha])
    return float(low), float(high), p_below, p_above, float(replicates.std(ddof=1))


def t_excess(values: np.ndarray, alpha: float) -> float:
    """The one-sided t-test's error beyond alpha that the sample's skewness predicts (first Edgeworth term), the
    skewness taken one standard error (:func:`skewness_se`) towards 0.

    >>> round(t_excess(np.r_[np.zeros(95), np.ones(5)], 0.05), 4)    # 5 users of 100 changed: t errs by ~0.03 more
    0.0339
    """
    from scipy import special

    x = np.asarray(values, dtype=np.float64)
    n = int(x.size)
    if n < 3:
        return math.nan
    centred = x - x.mean()
    square = centred * centred
    m2 = float(np.mean(square))
    if not m2 > 0:
        return math.nan
    # less one standard error of the sample's skewness: its noise alone does not send a sample to the wider bound,
    # while the skewness of a change that touches few users (about sqrt(n / changed)) still does
    skewness = max(0.0, abs(float(np.mean(square * centred))) / m2**1.5 - skewness_se(x))
    z = float(special.ndtri(1 - alpha))
    density = math.exp(-z * z / 2) / math.sqrt(2 * math.pi)
    return skewness * (2 * z * z + 1) * density / (6 * math.sqrt(n))


def skewness_se(values: np.ndarray) -> float:
    """The standard error of the sample skewness ``g = m3 / m2^1.5`` by the delta method from the sample's central
    moments up to the sixth, and never below a normal sample's sqrt(6 / n). The normal one alone is far too small for
    the zero-inflated differences of a change that touches few users (kurtosis of order 1 / share changed), whose
    skewness is then mostly noise.

    With mu_k the central moments, n Var(g) = (mu6 - mu3^2 - 6 mu4 mu2 + 9 mu2^3) / mu2^3
    - 3 mu3 (mu5 - 4 mu3 mu2) / mu2^4 + 9/4 mu3^2 (mu4 - mu2^2) / mu2^5 (Var(m3), Cov(m2, m3) and Var(m2) of the
    sample moments; 6 for a normal sample).

    >>> x = np.r_[np.zeros(90), np.full(5, 1.0), np.full(5, -1.0)]   # 10 of 100 changed: mu2 = mu4 = mu6 = 0.1
    >>> round(skewness_se(x), 4), round(math.sqrt(6 / 100), 4)   # n Var(g) = (0.1 - 0.06 + 0.009) / 0.001 = 49
    (0.7, 0.2449)
    """
    x = np.asarray(values, dtype=np.float64)
    n = int(x.size)
    normal = math.sqrt(6 / n) if n else math.nan
    c = x - x.mean()
    c2 = c * c
    c3 = c2 * c  # products, not powers: numpy's pow takes 15 times as long
    mu2, mu3, mu4, mu5, mu6 = (float(np.mean(p)) for p in (c2, c3, c2 * c2, c3 * c2, c3 * c3))
    if not mu2 > 0:
        return normal
    variance = (
        (mu6 - mu3 * mu3 - 6 * mu4 * mu2 + 9 * mu2**3) / mu2**3
        - 3 * mu3 * (mu5 - 4 * mu3 * mu2) / mu2**4
        + 2.25 * mu3 * mu3 * (mu4 - mu2 * mu2) / mu2**5
    )
    return max(normal, math.sqrt(max(variance, 0.0) / n))


def betting_bound(values: np.ndarray, low: float, high: float, alpha: float) -> MeanBound:
    """The hedged-capital one-sided bounds for the mean of values known to lie in ``[low, high]``, and the p-values of
    "mean >= 0" and "mean <= 0" (one over the wealth a bettor against each reaches, at most 1).

    The values are taken in the order given (the bets are predictable in it); callers pass them in a
    fixed order (by user id) so that the bound is a function of the users' values alone.

    >>> b = betting_bound(np.full(50, 0.5), 0.0, 1.0, 0.05)      # no spread: the bound stays well inside the range
    >>> 0.5 < b.high < 0.75, b.p_below == 1.0
    (True, True)
    """
    x = np.asarray(values, dtype=np.float64)
    n = int(x.size)
    changed = changed_count(x)
    if n == 0:
        return MeanBound(0, math.nan, math.nan, math.nan, math.nan, 1.0, 1.0, "none", 0, math.nan, no_spread(0, 0))
    width = high - low
    if not (math.isfinite(low) and math.isfinite(high) and width > 0):
        raise ValueError(f"the range must be finite and wide, got [{low}, {high}]")
    y = (x - low) / width  # on [0, 1]
    if float(y.min()) < 0.0 or float(y.max()) > 1.0:
        raise ValueError(f"values outside the range [{low}, {high}]: {float(x.min())} to {float(x.max())}")
    bets = _bets(y, alpha)
    threshold = math.log(1 / alpha)
    zero = -low / width  # the tested mean 0 on the [0, 1] scale
    mean = float(x.mean())
    # "mean < m" gains wealth with bets on m - y; the upper bound is the least m where it reaches 1 / alpha
    upper = _least(lambda m: _log_wealth(bets, m - y, 1 - m), float(y.mean()), 1.0, threshold)
    lower = 1.0 - _least(lambda m: _log_wealth(bets, y - (1 - m), 1 - m), 1 - float(y.mean()), 1.0, threshold)
    # 0 at or past an end of the range: the side it lies on is certain (0 at the end itself: p = 1, nothing shown)
    p_below = _p_of(_log_wealth(bets, zero - y, 1 - zero)) if 0 < zero < 1 else float(zero <= 1)
    p_above = _p_of(_log_wealth(bets, y - zero, zero)) if 0 < zero < 1 else float(zero >= 0)
    return MeanBound(
        n,
        mean,
        float(x.std(ddof=1)) if n > 1 else math.nan,
        low + lower * width,
        low + upper * width,
        p_below,
        p_above,
        "betting",
        changed,
        math.nan,
    )


def t_trusted_from(min_affected: float | None, alpha: float) -> int:
    """The fewest users from which ``auto`` lets t decide a measure with a known range: the least n with
    ``(1 - min_affected)^n <= EXCESS_TOLERANCE * alpha``, so that a change hurting a ``min_affected`` share of the users
    leaves the sample without any of them with probability at most a tenth of alpha. A sample that holds none of them
    looks like no harm at all, and no check on it can tell; below this n the exact betting bound decides. 0 for
    ``None`` (no such rule: how gates decided before it); never (the largest int) for ``min_affected`` 0.

    >>> t_trusted_from(0.01, 0.05), t_trusted_from(0.05, 0.05), t_trusted_from(None, 0.05)
    (528, 104, 0)
    """
    if min_affected is None:
        return 0
    if not min_affected > 0:
        return sys.maxsize
    return math.ceil(math.log(EXCESS_TOLERANCE * alpha) / math.log1p(-min_affected))


def mean_bound(
    values: np.ndarray,
    low: float | None,
    high: float | None,
    alpha: float,
    choice: BoundChoice = "auto",
    changed: int | None = None,
    min_affected: float | None = None,
) -> MeanBound:
    """The bound a guard decides by, for the mean of ``values`` (each user's excess drop over the margin).

    ``choice``: ``t``; ``betting`` (needs the range ``[low, high]``: without it nothing decides, and the reason says
    so); or ``auto``: t where it can be trusted (some user ``changed``, the values spread beyond rounding, t's
    estimated excess error is at most ``EXCESS_TOLERANCE * alpha``, and, when the range is known, at least
    :func:`t_trusted_from` users for ``min_affected``, the rarest harm (a share of the users) t must not miss; None:
    no such rule), else the betting bound when the range is known, else
    nothing. ``changed``: how many users' changes (without the margin) are not 0, by :func:`changed_count` (default:
    the values' own count). A relative margin spreads the excess even when no user changed, and a sample with no
    changed user says nothing of the users it missed.

    >>> gains = np.random.default_rng(2).normal(-0.02, 0.05, 100)   # 100 users, none of a broken 2% among them
    >>> mean_bound(gains, -2.0, 2.0, 0.05).method, mean_bound(gains, -2.0, 2.0, 0.05, min_affected=0.01).method
    ('t', 'betting')
    """
    x = np.asarray(values, dtype=np.float64)
    changed = changed_count(x) if changed is None else changed
    bounded = low is not None and high is not None
    t = _spread_checked(t_bound(x, alpha), x, changed)
    if choice == "t":
        return t
    enough = not bounded or t.n >= t_trusted_from(min_affected, alpha)
    if choice == "auto" and _trusts(t, changed, alpha, enough):
        return t
    if not bounded:
        if choice == "betting":  # asked for, and impossible: never t in its place without a word
            return _undecided(t, NO_RANGE_FOR_BETTING)
        if t.decided and choice == "auto":
            return _undecided(t, _untrusted(t, changed, alpha))
        return t
    betting = betting_bound(x, low, high, alpha)  # type: ignore[arg-type]  # bounded: both are floats
    return dataclasses.replace(betting, changed=changed, excess=t.excess)


def _trusts(t: MeanBound, changed: int, alpha: float, enough: bool) -> bool:
    """``auto``'s rule: t decides (spread beyond rounding), some value changed, t's estimated excess error at ``alpha``
    is within a tenth of it, and there are ``enough`` values."""
    return t.decided and changed > 0 and t.excess <= EXCESS_TOLERANCE * alpha and enough


def t_trusted_rows(diffs: np.ndarray, mask: np.ndarray, alpha: float, min_values: int) -> np.ndarray:
    """Which rows of (F, n) paired differences, each over the queries its ``mask`` row keeps, ``auto``'s rule trusts
    the two-sided t-test at ``alpha`` on: each tail at ``alpha / 2`` by :func:`mean_bound`'s rule (spread beyond
    rounding, some difference not 0, the excess error the skewness predicts within a tenth of ``alpha / 2``) and at
    least ``min_values`` queries. Each row's answer depends on its own differences alone.

    >>> rng = np.random.default_rng(3)
    >>> spread, few = rng.normal(0.01, 0.1, 2000), np.r_[np.zeros(1980), np.full(20, 0.5)]   # 1% of users changed
    >>> t_trusted_rows(np.stack([spread, few, spread]), np.ones((3, 2000), bool), 0.05, 597).tolist()
    [True, False, True]
    >>> t_trusted_rows(spread[None, :500], np.ones((1, 500), bool), 0.05, 597).tolist()   # too few queries
    [False]
    """
    d = np.asarray(diffs, dtype=np.float64)
    keep = np.asarray(mask, dtype=bool)
    out = np.zeros(d.shape[0], dtype=bool)
    tail = alpha / 2
    for i in np.flatnonzero(keep.sum(axis=1) >= max(min_values, 3)).tolist():
        x = d[i][keep[i]]
        changed = changed_count(x)
        out[i] = _trusts(_spread_checked(t_bound(x, tail), x, changed), changed, tail, True)
    return out


NO_RANGE_FOR_BETTING = (
    "bound: betting needs the range of the measure's values, and this measure has none here (none is known, or the "
    "values fall outside it): nothing decides it; bound: auto lets the t-test decide where it can be trusted"
)


def _spread_checked(t: MeanBound, x: np.ndarray, changed: int) -> MeanBound:
    """t with no decision where the values are equal up to rounding (sd at most ZERO_SD of the largest |value|, as the
    comparisons' tests treat constant differences)."""
    if t.decided and t.sd <= ZERO_SD * float(np.max(np.abs(x))):
        return dataclasses.replace(_undecided(t, no_spread(t.n, changed)), excess=math.nan)
    return dataclasses.replace(t, changed=changed, reason=t.reason and no_spread(t.n, changed))


def _undecided(t: MeanBound, reason: str) -> MeanBound:
    """``t`` deciding nothing, for ``reason``: no bounds, p = 1 both ways."""
    return dataclasses.replace(t, low=math.nan, high=math.nan, p_below=1.0, p_above=1.0, method="none", reason=reason)


def _untrusted(t: MeanBound, changed: int, alpha: float) -> str:
    if changed == 0:
        return f"no user of {t.n:,} changed, and the measure has no known range to bound the users not seen"
    return (
        f"{changed:,} of {t.n:,} users changed, so skewed that the t-test could err at about "
        f"{alpha + t.excess:.2f} instead of {alpha:g}, and the measure has no known range for an exact bound"
    )


def betting_reach(n: int, sd: float, low: float, high: float, alpha: float) -> float:
    """About how far the betting bound lies from the mean of ``n`` values with sd ``sd`` in ``[low, high]`` (0 inside
    it): the gap at which a bettor's wealth reaches 1 / alpha, with her bet at its best or at its cap (then the range,
    not the sd, sets the reach: the price of bounding the users a sample may have missed). For planning.

    >>> round(betting_reach(30, 0.06, -1.02, 0.98, 0.05), 3)      # 3 of 30 users changed by 0.2: the range dominates
    0.137
    >>> round(betting_reach(10_000, 0.1, -1.02, 0.98, 0.05), 4)   # many users: sd sqrt(2 log(1/alpha) / n)
    0.0024
    """
    width = high - low
    zero = -low / width
    scaled = sd / width
    level = math.log(1 / alpha)
    cap = _TRUNCATION / max(zero, 1 - zero, 1e-12)
    bet = min(math.sqrt(2 * level / n) / scaled, cap) if scaled > 0 else cap  # the best bet, L/(n b) + b s^2/2 least
    return width * (level / (n * bet) + bet * scaled * scaled / 2)


def betting_sample_size(distance: float, sd: float, low: float, high: float, alpha: float, z_power: float) -> int | None:
    """The users at which the betting bound's reach plus ``z_power`` standard errors is ``distance``: the users that
    would decide a guard that far from its margin with that power, approximately (None beyond 10^9).

    >>> betting_sample_size(0.02, 0.06, -1.02, 0.98, 0.05, 0.8416)
    262
    """

    def reach(n: int) -> float:
        return betting_reach(n, sd, low, high, alpha) + z_power * sd / math.sqrt(n)

    if not distance > 0 or reach(10**9) > distance:
        return None
    low_n, high_n = 1, 2
    while reach(high_n) > distance:
        low_n, high_n = high_n, high_n * 2
    while high_n - low_n > 1:
        middle = (low_n + high_n) // 2
        low_n, high_n = (low_n, middle) if reach(middle) <= distance else (middle, high_n)
    return high_n


class AutoPlan(NamedTuple):
    """The users ``bound: auto`` needs: ``needed``, the fewer of the betting bound's (``betting``) and t's, t's raised
    to ``t_from`` (:func:`t_trusted_from`: below it t does not decide a measure with a known range); ``by`` says which
    bound that is (None where neither would decide)."""

    needed: int | None
    by: Literal["t", "betting"] | None
    betting: int | None
    t_from: int

    @property
    def raised(self) -> bool:
        """t's own users were fewer than the threshold it decides from, and the plan is the threshold."""
        return self.by == "t" and self.needed == self.t_from


def auto_sample_size(
    n_t: int | None,
    distance: float,
    sd: float,
    low: float,
    high: float,
    alpha: float,
    target: float,
    min_affected: float | None,
) -> AutoPlan:
    """The users ``auto`` needs to resolve ``distance`` with power ``target`` for a mean of values in ``[low, high]``
    with per-user sd ``sd``, given t's own users ``n_t``: the plan of the bound that will decide at that many users.

    >>> plan = auto_sample_size(155, 0.01, 0.05, -1.01, 0.99, 0.05, 0.8, 0.01)   # t's own 155 users, raised to 528
    >>> plan.needed, plan.by, plan.raised, plan.betting
    (528, 't', True, 554)
    >>> auto_sample_size(155, 0.01, 0.05, -1.01, 0.99, 0.05, 0.8, 0.0)[:2]      # t never decides: the betting bound
    (554, 'betting')
    """
    from scipy import special

    n_min = t_trusted_from(min_affected, alpha)
    n_bet = betting_sample_size(abs(distance), sd, low, high, alpha, float(special.ndtri(target))) if sd > 0 else None
    t_side = None if n_t is None or n_min == sys.maxsize else max(n_t, n_min)
    if t_side is None and n_bet is None:
        return AutoPlan(None, None, None, n_min)
    if n_bet is None or (t_side is not None and t_side < n_bet):
        return AutoPlan(t_side, "t", n_bet, n_min)
    return AutoPlan(n_bet, "betting", n_bet, n_min)


def betting_plan(
    n: int, sd: float, low: float, high: float, alpha: float, power: float, distance: float
) -> tuple[float, int | None]:
    """(the minimum detectable effect of the betting bound over ``n`` users, the users that would resolve ``distance``
    with ``power``), approximately: its reach plus the power's standard errors.

    >>> mde, users = betting_plan(30, 0.06, -1.02, 0.98, 0.05, 0.8, 0.02)
    >>> round(mde, 3), users
    (0.146, 262)
    """
    from scipy import special

    z_power = float(special.ndtri(power))
    mde = betting_reach(n, sd, low, high, alpha) + z_power * sd / math.sqrt(n)
    return mde, betting_sample_size(abs(distance), sd, low, high, alpha, z_power)


def changed_count(x: np.ndarray) -> int:
    """How many values differ from 0 by more than rounding (for a guard: the users whose value changed)."""
    if x.size == 0:
        return 0
    scale = float(np.max(np.abs(x)))
    return int(np.count_nonzero(np.abs(x) > ZERO_SD * scale)) if scale > 0 else 0


def no_spread(n: int, changed: int) -> str:
    if n < 2:
        return f"{n} user(s) with values for both systems: a bound needs 2 or more"
    return (
        f"no spread: the {n:,} users' differences are all equal ({changed:,} changed), so how far the mean may "
        "lie from them is unknown"
    )


def _bets(y: np.ndarray, alpha: float) -> np.ndarray:
    """Predictable bets tuned for one look at n values: sqrt(2 log(1/alpha) / (n var_{i-1})), each from the values
    before it (Waudby-Smith and Ramdas' plug-in, with their shrunk running mean and variance)."""
    n = y.size
    seen = np.arange(1, n + 1, dtype=np.float64)
    running_mean = (0.5 + np.cumsum(y)) / (seen + 1)
    squares = (y - running_mean) ** 2
    before = np.concatenate(([0.0], np.cumsum(squares)[:-1]))
    variance = (0.25 + before) / seen
    return np.sqrt(2 * math.log(1 / alpha) / (n * variance))


def _log_wealth(bets: np.ndarray, gains: np.ndarray, room: float) -> float:
    """log of prod(1 + lambda_i g_i), each bet capped so that no outcome loses more than half the wealth (``room``:
    the largest loss per unit bet)."""
    cap = _TRUNCATION / room if room > 0 else math.inf
    return float(np.sum(np.log1p(np.minimum(bets, cap) * gains)))


def _p_of(log_wealth: float) -> float:
    """One over the wealth, at most 1: a bettor who lost (log wealth <= 0, as far as the many users of a large sample
    drive it, beyond what exp holds) shows nothing.

    >>> _p_of(math.log(40.0)), _p_of(-5000.0)
    (0.025, 1.0)
    """
    return math.exp(-log_wealth) if log_wealth > 0 else 1.0


def _least(log_wealth: Callable[[float], float], start: float, stop: float, threshold: float) -> float:
    """The least m in [start, stop] whose wealth reaches the threshold (wealth rises with m), by bisection."""
    if log_wealth(stop) < threshold:
        return stop
    low, high = start, stop
    for _ in range(_BISECTIONS):
        middle = (low + high) / 2
        if log_wealth(middle) >= threshold:
            high = middle
        else:
            low = middle
    return high
