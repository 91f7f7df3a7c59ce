"""How many users a decision needs: power and sample size of the paired t-test (Sakai's topic-set-size design).

A paired t-test over n users whose per-user differences have standard deviation ``sd``
sees a true mean difference ``effect`` through the noncentral t distribution with n - 1
degrees of freedom and noncentrality ``effect * sqrt(n) / sd``. Its power is

* one-sided (a release guard: is the drop below the margin?):
  ``P(T' > t_{1-alpha, n-1})``;
* two-sided (a comparison: is there any difference?):
  ``P(T' > t_{1-alpha/2, n-1}) + P(T' < -t_{1-alpha/2, n-1})``.

:func:`sample_size` is the smallest n whose power reaches the target (Sakai, "Topic set
size design", Information Retrieval Journal 19, 2016, for the t-test), exact rather than
the normal approximation; :func:`minimum_detectable_effect` is the smallest true distance
that n users resolve with that power.

>>> sample_size(effect=0.5, sd=1.0, alpha=0.05, power=0.8, sided="one")   # G*Power: 27
27
>>> sample_size(effect=0.5, sd=1.0, alpha=0.05, power=0.8, sided="two")   # G*Power: 34
34
>>> round(minimum_detectable_effect(27, sd=1.0, alpha=0.05, power=0.8, sided="one"), 3)
0.491
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache, partial
from typing import Literal

Sided = Literal["one", "two"]
MOST_USERS = 10**9  # beyond this a plan is reported as out of reach rather than searched


def power(n: int, effect: float, sd: float, alpha: float = 0.05, sided: Sided = "one") -> float:
    """The probability that a paired t-test over n users rejects when the true mean difference is ``effect``.

    >>> round(power(300, effect=0.01, sd=0.23, sided="two"), 2)   # the issue's 300 users, 0.01 gain, sd 0.23
    0.12
    """
    if n < 2:
        return float("nan")
    if sd <= 0:
        return 1.0 if effect != 0 else 0.0  # differences all equal: the test is certain (constant 0 never rejects)
    return _power(n, abs(effect) / sd, alpha, sided)


def _power(n: int, standardised: float, alpha: float, sided: Sided) -> float:
    from scipy import special  # the distributions themselves (scipy.stats adds a second of import and per-call checks)

    df = n - 1
    ncp = standardised * math.sqrt(n)
    if sided == "one":
        return _above(df, ncp, float(special.stdtrit(df, 1 - alpha)))
    critical = float(special.stdtrit(df, 1 - alpha / 2))
    # the lower tail as P(T' > c | -ncp): the CDF at -c is NaN far in that tail (n = 300, ncp = 13.7 in scipy 1.17)
    return _above(df, ncp, critical) + _above(df, -ncp, critical)


def _above(df: int, ncp: float, critical: float) -> float:
    """P(T' > critical) for the noncentral t. scipy's CDF is NaN in some far corners (1 degree of freedom, ncp 11):
    then its survival function, then the normal approximation, which is exact to far below any power that matters."""
    from scipy import special

    value = 1.0 - float(special.nctdtr(df, ncp, critical))
    if not math.isfinite(value):
        from scipy import stats

        value = float(stats.nct.sf(critical, df, ncp))
    if not math.isfinite(value):
        value = float(special.ndtr(ncp - critical))
    return min(1.0, max(0.0, value))


def sample_size(effect: float, sd: float, alpha: float = 0.05, power: float = 0.8, sided: Sided = "one") -> int | None:
    """The smallest n >= 2 whose paired t-test detects a true difference ``effect`` with probability ``power``.

    None when no number of users would (an effect of 0), or more than a billion would.

    >>> sample_size(effect=0.01, sd=0.23, sided="two")   # the issue's "about 4,200"
    4154
    """
    _check(alpha, power)
    if sd < 0 or not math.isfinite(sd) or not math.isfinite(effect):
        raise ValueError(f"the standard deviation must be finite and >= 0, got {sd}")
    if effect == 0:
        return None
    if sd == 0:
        return 2
    standardised = abs(effect) / sd
    return _sample_size(standardised, alpha, power, sided)


@lru_cache(maxsize=4096)
def _sample_size(standardised: float, alpha: float, target: float, sided: Sided) -> int | None:
    if _power(MOST_USERS, standardised, alpha, sided) < target:
        return None
    low, high = 2, 4
    while _power(high, standardised, alpha, sided) < target:  # power rises with n: bracket, then bisect
        low, high = high, min(high * 2, MOST_USERS)
    if _power(low, standardised, alpha, sided) >= target:
        return low
    while high - low > 1:
        middle = (low + high) // 2
        if _power(middle, standardised, alpha, sided) >= target:
            high = middle
        else:
            low = middle
    return high


def minimum_detectable_effect(n: int, sd: float, alpha: float = 0.05, power: float = 0.8, sided: Sided = "one") -> float:
    """The smallest true mean difference that n users detect with probability ``power`` (NaN below 2 users).

    >>> round(minimum_detectable_effect(300, sd=0.23, sided="two"), 4)
    0.0373
    """
    _check(alpha, power)
    if n < 2 or not math.isfinite(sd):
        return float("nan")
    return sd * _standardised_mde(int(n), alpha, power, sided)


@lru_cache(maxsize=4096)
def _standardised_mde(n: int, alpha: float, target: float, sided: Sided) -> float:
    high = 1.0
    while _power(n, high, alpha, sided) < target:
        high *= 2
    return _first_true(lambda d: _power(n, d, alpha, sided) >= target, 0.0, high)


def _first_true(holds: Callable[[float], bool], low: float, high: float) -> float:
    """The least double in ``(low, high]`` at which ``holds`` turns true, for a predicate false at ``low``, true at
    ``high`` and monotone between: bisection down to two adjacent doubles (about 60 steps of a microsecond each). The
    root to the last bit, without importing scipy's root finders (half a second, in every run that plans).

    >>> _first_true(lambda x: x * x >= 2.0, 0.0, 2.0) == math.sqrt(2.0)  # and the double below it squares under 2
    True
    """
    while True:
        middle = low + (high - low) / 2
        if not low < middle < high:
            return high
        if holds(middle):
            high = middle
        else:
            low = middle


def _check(alpha: float, target: float) -> None:
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie between 0 and 1, got {alpha}")
    if not 0 < target < 1:
        raise ValueError(f"power must lie between 0 and 1, got {target}")


def effect_size_interval(n: int, statistic: float, confidence: float = 0.95) -> tuple[float, float]:
    """The exact interval of Cohen's d_z from a paired t statistic over n users (normal differences): the
    noncentralities whose noncentral t puts the observed statistic at the interval's two quantiles, over sqrt(n).

    NaN below 2 users or for an infinite statistic (constant differences: d_z is undefined).

    >>> low, high = effect_size_interval(20, 2.0)
    >>> round(low, 3), round(high, 3)
    (-0.019, 0.902)
    """
    if n < 2 or not math.isfinite(statistic):
        return float("nan"), float("nan")
    df = n - 1

    def below(ncp: float) -> float:  # P(T' <= statistic), falling as ncp grows
        return 1.0 - _above(df, ncp, statistic)

    bounds = []
    for target in ((1 + confidence) / 2, (1 - confidence) / 2):
        low, high = statistic - 2.0, statistic + 2.0
        while below(low) < target:
            low -= 2.0 * (1 + abs(low))
        while below(high) > target:
            high += 2.0 * (1 + abs(high))
        bounds.append(_first_true(partial(_at_most, below, target), low, high) / math.sqrt(n))
    return bounds[0], bounds[1]


def _at_most(function: Callable[[float], float], target: float, x: float) -> bool:
    return function(x) <= target


def bootstrap_plan(n: int, se: float, distance: float, alpha: float, power: float) -> tuple[float, int | None]:
    """(the minimum detectable effect, the users that resolve ``distance``) of a one-sided bound from the bootstrap
    over ``n`` users with standard error ``se``: the normal bound's reach ``(z_alpha + z_power) se``, shrinking as
    1 / sqrt(n). A release guard on a measure with one value per run, and harness plan's for it, are this one
    computation.

    >>> mde, users = bootstrap_plan(100, 0.05, 0.1, 0.05, 0.8)  # (1.645 + 0.842) 0.05 = 0.1243; 100 (1.243)^2 = 154.6
    >>> round(mde, 4), users
    (0.1243, 155)
    """
    from scipy import special

    z = float(special.ndtri(1 - alpha)) + float(special.ndtri(power))
    return z * se, (math.ceil(n * (z * se / distance) ** 2) if distance and se > 0 else None)


def bootstrap_power(distance: float, se: float, alpha: float) -> float:
    """The power of that bound to resolve a true ``distance`` when the statistic's standard error is ``se``.

    >>> round(bootstrap_power(0.12437, 0.05, 0.05), 3)
    0.8
    """
    from scipy import special

    if not se > 0:
        return 1.0
    x = distance / se - float(special.ndtri(1 - alpha))
    return 0.5 * math.erfc(-x / math.sqrt(2))


def sd_upper_limit(sd: float, n: int, confidence: float) -> float:
    """The one-sided ``confidence`` upper limit of a standard deviation ``sd`` estimated from ``n`` values (chi-square,
    n - 1 df): a plan from it reaches its power with probability at least ``confidence`` over such estimates (Browne,
    "On the use of a pilot sample for sample size determination", Statistics in Medicine 14, 1995).

    >>> round(sd_upper_limit(0.2, 30, 0.9), 4)   # 0.2 sqrt(29 / 19.768), chi-square's 10% quantile at 29 df
    0.2422
    """
    from scipy import stats

    return sd * math.sqrt((n - 1) / float(stats.chi2.ppf(1 - confidence, n - 1)))
