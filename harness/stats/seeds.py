"""The difference of two training procedures' means, with users and seeds both random: the crossed design.

A version is a training procedure; each of its runs (a seed) is one draw of it. Over ``n`` users, system ``s`` has
``r_s`` runs, and the per-user values ``y[s, k, u]`` follow

    y = mu_s + user_u + (system x user)_su + seed_k(s) + residual_sku

(users shared by both systems, seeds nested in their system). The difference of the procedures' means is estimated
by the difference of the grand means, and its variance comes from the closed-form mean squares of the balanced
tables (every run has every user): with ``d_u`` the difference of a user's seed-averaged values,

    Var = S2(d) / n  +  sum_s w_s^2 (MS_seed,s - MS_residual,s) / (n r_s)

The first term holds the users (and the residual averaged over seeds); the second what the seeds add, which no
number of users removes. It is the textbook quasi-F of a crossed design (for r_A = r_B = r and unit weights,
``2 (MS_SU + MS_seed - MS_residual) / (r n)``). A linear functional ``w_a mean_a + w_b mean_b`` covers
relative margins (``w_a = 1 - r``).

Its degrees of freedom are Satterthwaite's over the users' term and each system's seed term, the seed terms taken
at their ``SEED_DF_CONFIDENCE`` (80%) upper confidence limits. A seed term has r - 1 degrees of freedom, and with
Satterthwaite's own df a seed term estimated small by chance lends the test many of them just when its variance
is underestimated: with production's seed sd 0.02 against the candidate's 0.002, 2 seeds each and 1,000 users, a
version at its margin was shown better 0.084 of the time (0.081 with 2 seeds against 5). At the upper limits
it was 0.052 and 0.051 (3,000 trials each), and with unequal spreads up to 0.04 against 0.001 or none, 0.027-0.049.
The price is power: 0.70 where it was 0.81 with 2 seeds, 0.92 for 0.94 with 3, 0.94 for 0.95 with 5.

>>> rng = np.random.default_rng(0)
>>> users = rng.normal(0.5, 0.1, 200)
>>> a = users + rng.normal(0, 0.01, (3, 1)) + rng.normal(0, 0.05, (3, 200))   # 3 seeds: seed sd 0.01
>>> b = users + 0.02 + rng.normal(0, 0.01, (3, 1)) + rng.normal(0, 0.05, (3, 200))
>>> found = crossed_difference(a, b, -1.0, 1.0)   # mean_b - mean_a
>>> round(found.estimate, 4), round(found.seed_share, 2), round(found.df, 1)   # 3 seeds: few degrees of freedom
(0.0294, 0.21, 2.9)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from harness.stats.ppi import Layers


@dataclass(frozen=True)
class CrossedDifference:
    """``w_a mean_a + w_b mean_b`` over users and seeds: its estimate, variance, Satterthwaite df, and the parts."""

    estimate: float
    variance: float
    df: float
    user_variance: float  # S2(d) / n: what more users shrink
    seed_variance: float  # what the seeds add (0 when the mean squares show none): what only more seeds shrink
    seed_sd: tuple[float, float]  # each system's seed sd (of a run's mean over the users), from its mean squares
    n: int
    seeds: tuple[int, int]
    lam: float = math.nan  # crossed_corrected: PPI++'s weight of the judge's values

    @property
    def seed_share(self) -> float:
        """The share of the estimate's variance that the seeds make."""
        return self.seed_variance / self.variance if self.variance > 0 else 0.0

    def bounds(self, alpha: float) -> tuple[float, float]:
        """One-sided (1 - alpha) lower and upper bounds."""
        from scipy import stats

        reach = float(stats.t.ppf(1 - alpha, self.df)) * math.sqrt(self.variance)
        return self.estimate - reach, self.estimate + reach

    def plan(self, distance: float, alpha: float, power: float) -> tuple[float, int | None, float]:
        """(the minimum detectable effect, the users that resolve ``distance`` with ``power`` at these seeds, the
        variance that resolving it allows): None users where the seeds' variance alone exceeds that allowance (more
        seeds, not more users, would resolve it). Users shrink only the user part of the variance.

        >>> d = CrossedDifference(0.0, 0.0004, 30.0, 0.0003, 0.0001, (0.01, 0.01), 1000, (5, 5))  # t quantiles 1.697 + 0.854
        >>> mde, users, allowed = d.plan(0.05, 0.05, 0.8)
        >>> round(mde, 4), users, round(allowed, 6)
        (0.051, 1056, 0.000384)
        """
        from scipy import stats

        quantile = float(stats.t.ppf(1 - alpha, self.df)) + float(stats.t.ppf(power, self.df))
        allowed = (abs(distance) / quantile) ** 2 if distance else 0.0
        users = None
        if allowed > self.seed_variance and self.user_variance > 0:
            users = math.ceil(self.user_variance * self.n / (allowed - self.seed_variance))
        return quantile * math.sqrt(self.variance), users, allowed

    def p_below(self) -> float:
        """p of "the functional >= 0": small when it is shown below 0."""
        from scipy import stats

        if self.variance <= 0:
            return 1.0
        return float(stats.t.cdf(self.estimate / math.sqrt(self.variance), self.df))


SEED_DF_CONFIDENCE = 0.8  # the seeds' degrees of freedom are Satterthwaite's at this upper limit of each seed term


def _upper(mean_square: float, df: int, confidence: float = SEED_DF_CONFIDENCE) -> float:
    """A mean square's one-sided ``confidence`` upper limit, ``MS df / chi2_{1 - confidence}(df)``.

    >>> round(_upper(1.0, 1), 3)   # one degree of freedom: a seed term could be 15x its estimate
    15.58
    """
    from scipy import special

    return mean_square * df / float(special.chdtri(df, confidence))


def satterthwaite(total: float, terms: Sequence[tuple[float, float]], otherwise: float) -> float:
    """The degrees of freedom of a sum of mean-square terms, ``total``, each ``(term, its df)``: Satterthwaite's
    ``total^2 / sum(term^2 / df)``; ``otherwise`` when every term is 0.

    >>> satterthwaite(2.0, [(1.0, 10), (1.0, 10)], 1.0)    # two equal terms of 10 df: 20
    20.0
    """
    denominator = sum(term * term / df for term, df in terms)
    return total * total / denominator if denominator > 0 else otherwise


def mean_squares(table: np.ndarray) -> tuple[float, float]:
    """(MS_seed, MS_residual) of one system's seeds x users table (every seed has every user).

    >>> mean_squares(np.array([[1.0, 2.0, 3.0], [2.0, 3.0, 4.0]]))   # seeds differ by 1 everywhere: no residual
    (1.5, 0.0)
    """
    r, n = table.shape
    grand = float(table.mean())
    seeds, users = table.mean(axis=1), table.mean(axis=0)
    ms_seed = n * float(((seeds - grand) ** 2).sum()) / (r - 1)
    residual = table - seeds[:, None] - users[None, :] + grand
    ms_residual = float((residual**2).sum()) / ((r - 1) * (n - 1))
    return ms_seed, ms_residual


def crossed_difference(
    a: np.ndarray, b: np.ndarray, weight_a: float, weight_b: float, constant: float = 0.0
) -> CrossedDifference:
    """``weight_a mean_a + weight_b mean_b + constant`` for two systems' seeds x users tables (users in the same
    order, at least 2 seeds and 2 users each)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    (ra, n), (rb, nb) = a.shape, b.shape
    if n != nb or n < 2 or ra < 2 or rb < 2:
        raise ValueError(f"need 2 or more seeds and the same 2 or more users in both tables, got {a.shape} and {b.shape}")
    d = weight_a * a.mean(axis=0) + weight_b * b.mean(axis=0)
    user_variance = float(d.var(ddof=1)) / n
    parts, terms, seed_sd = [], [(user_variance, n - 1)], []
    for weight, table, r in ((weight_a, a, ra), (weight_b, b, rb)):
        ms_seed, ms_residual = mean_squares(table)
        c = weight * weight / (n * r)
        parts.append(c * (ms_seed - ms_residual))
        terms.append((c * _upper(ms_seed, r - 1), r - 1))
        seed_sd.append(math.sqrt(max(0.0, (ms_seed - ms_residual) / n)))
    seed_variance = max(0.0, sum(parts))
    variance = user_variance + seed_variance
    df = satterthwaite(sum(term for term, _ in terms), terms, float(n - 1))
    estimate = float(d.mean()) + constant
    return CrossedDifference(estimate, variance, df, user_variance, seed_variance, (seed_sd[0], seed_sd[1]), n, (ra, rb))


def crossed_corrected(
    people: Sequence[tuple[np.ndarray, float]],
    judge: Sequence[np.ndarray],
    sampled: np.ndarray,
    layers: Layers | None = None,
    constant: float = 0.0,
) -> CrossedDifference:
    """:func:`crossed_difference` (or, for one system, its mean) on a dataset with a model judge: ``sum_s w_s
    mean_s + constant`` where each system's runs x users table is the judge's over every user (``judge``, in the
    order of ``people``) and people's over the users they judged (``people``: (table, w_s); ``sampled``, a mask over
    the judge's users, says which, in the same order).

    Each user's seed-averaged functional is corrected by people's (:func:`~harness.stats.ppi.ppi_sampled`): its
    estimate and variance take the users' part of the crossed design. The seeds' part comes from people's tables
    (``(MS_seed - MS_residual) / (n r)`` per system, ``n`` people's users), as in :func:`crossed_difference`: a run's
    seed effect is common to all its users, so it cancels between the judge's two means in the estimate, which
    keeps people's seed effect alone. The degrees of freedom are Satterthwaite's over the corrected users' term (its
    own df) and each seed term at its ``SEED_DF_CONFIDENCE`` upper limit. ``n`` of the result is people's users.

    >>> rng = np.random.default_rng(4)
    >>> users = rng.uniform(0.2, 0.8, 300)
    >>> a = users + rng.normal(0, 0.02, (3, 1)) + rng.normal(0, 0.05, (3, 300))
    >>> b = a + 0.03
    >>> sampled = np.arange(300) < 60
    >>> found = crossed_corrected([(a[:, :60], -1.0), (b[:, :60], 1.0)], [a + 0.1, b + 0.2], sampled)
    >>> round(found.estimate, 6), found.n    # the judge's +0.1 of bias for b corrected away
    (0.03, 60)
    """
    from harness.stats.ppi import ppi_sampled

    d_people = sum(w * np.asarray(t, dtype=np.float64).mean(axis=0) for t, w in people)
    d_judge = sum(w * np.asarray(t, dtype=np.float64).mean(axis=0) for (_, w), t in zip(people, judge, strict=True))
    found = ppi_sampled(np.asarray(d_people), np.asarray(d_judge), sampled, layers)
    n = int(sampled.sum())
    user_variance = found.se**2
    parts, terms, seed_sd = [], [(user_variance, float(found.df))], []
    for table, weight in people:
        r = table.shape[0]
        if r < 2:
            seed_sd.append(0.0)
            continue
        ms_seed, ms_residual = mean_squares(np.asarray(table, dtype=np.float64))
        c = weight * weight / (n * r)
        parts.append(c * (ms_seed - ms_residual))
        terms.append((c * _upper(ms_seed, r - 1), r - 1))
        seed_sd.append(math.sqrt(max(0.0, (ms_seed - ms_residual) / n)))
    seed_variance = max(0.0, sum(parts))
    df = satterthwaite(sum(term for term, _ in terms), terms, float(found.df))
    runs = tuple(t.shape[0] for t, _ in people)
    return CrossedDifference(
        found.estimate + constant,
        user_variance + seed_variance,
        df,
        user_variance,
        seed_variance,
        (seed_sd[0], seed_sd[-1]),
        n,
        (runs[0], runs[-1]),
        found.lam,
    )


def detectable(variance: float, df: float, alpha: float = 0.05, power: float = 0.8) -> float:
    """The smallest true difference the two-sided version test at ``alpha`` detects with ``power``, for an estimate
    of that variance and Satterthwaite df: ``(t(1 - alpha/2) + t(power)) * se``, the shifted central t that
    :func:`version_power` uses too (the far tail left out).

    >>> round(detectable(0.0001, 1e9), 4)    # se 0.01 and a normal: (1.960 + 0.842) * 0.01
    0.028
    """
    from scipy import stats

    return float((stats.t.ppf(1 - alpha / 2, df) + stats.t.ppf(power, df)) * math.sqrt(variance))


def mean_interval(table: np.ndarray, confidence: float = 0.95) -> tuple[float, float, float]:
    """(mean, low, high): a version's mean over its runs x users ``table`` with its interval, users and seeds both
    random: ``Var = (MS_user + MS_seed - MS_residual) / (r n)`` (at least the users' part), with the degrees of
    freedom of the crossed test: Satterthwaite's over the users' term and the seed term at its ``SEED_DF_CONFIDENCE``
    upper limit. With Satterthwaite's own df a 95% interval of 1,000 users covered the version's mean 0.875 of the
    time with 2 runs of seed sd 0.02 (0.925 with 3); with these, 0.954-0.979 over seed sds 0-0.02 and 2-5 runs
    (2,000 trials each), at the width the seeds' few degrees of freedom ask.

    >>> mean, low, high = mean_interval(np.array([[0.2, 0.4, 0.6], [0.3, 0.5, 0.7]]))
    >>> round(mean, 2), low < mean < high
    (0.45, True)
    """
    from scipy import stats

    r, n = table.shape
    mean = float(table.mean())
    if r < 2 or n < 2:
        return mean, math.nan, math.nan
    ms_seed, ms_residual = mean_squares(table)
    ms_user = r * float(table.mean(axis=0).var(ddof=1))
    c = 1.0 / (r * n)
    variance = max(c * (ms_user + ms_seed - ms_residual), c * ms_user)
    seed_term = c * _upper(ms_seed, r - 1)
    df = satterthwaite(c * ms_user + seed_term, [(c * ms_user, n - 1), (seed_term, r - 1)], float(n - 1))
    reach = float(stats.t.ppf(0.5 + confidence / 2, df)) * math.sqrt(variance)
    return mean, mean - reach, mean + reach


@dataclass(frozen=True)
class Components:
    """The sds of the crossed design's random parts, as :func:`version_plan` takes them: a run's offset (seed), the
    system x user interaction and the residual."""

    seed_sd: float
    interaction_sd: float
    residual_sd: float


def components(a: np.ndarray, b: np.ndarray) -> Components:
    """The components estimated from two systems' runs x users tables (users aligned, 2 or more runs each), by the
    method of moments on the expected mean squares (each clamped at 0): ``E[MS_residual] = s2_e``,
    ``E[MS_seed] = s2_e + n s2_seed`` (pooled over the systems), ``E[MS_SU] = s2_e + r s2_su``.

    >>> rng = np.random.default_rng(5)
    >>> users = rng.normal(0.5, 0.1, (1, 2000))
    >>> a = users + rng.normal(0, 0.02, (6, 1)) + rng.normal(0, 0.05, (6, 2000))
    >>> b = users + rng.normal(0, 0.08, (1, 2000)) + rng.normal(0, 0.02, (6, 1)) + rng.normal(0, 0.05, (6, 2000))
    >>> found = components(a, b)
    >>> round(found.residual_sd, 3), round(found.interaction_sd / math.sqrt(0.5), 2)   # b's 0.08 split over both
    (0.05, 0.08)
    """
    (ra, n), rb = a.shape, b.shape[0]
    squares = [mean_squares(t) for t in (a, b)]
    residual = (squares[0][1] * (ra - 1) + squares[1][1] * (rb - 1)) / (ra + rb - 2)
    seed = sum((ms_seed - ms_residual) / n for ms_seed, ms_residual in squares) / 2
    d = b.mean(axis=0) - a.mean(axis=0)
    harmonic = 2 / (1 / ra + 1 / rb)  # the runs behind a user's difference of seed-averaged values
    interaction = float(d.var(ddof=1)) / 2 - residual / harmonic
    return Components(math.sqrt(max(0.0, seed)), math.sqrt(max(0.0, interaction)), math.sqrt(max(0.0, residual)))


def seed_sd_upper(a: np.ndarray, b: np.ndarray, confidence: float = 0.9) -> float:
    """The one-sided ``confidence`` upper limit of the seed sd :func:`components` estimates: the seeds' pooled mean
    square M (with (r_a - 1) + (r_b - 1) degrees of freedom) estimates s2_e + n s2_seed, whose upper limit is
    M df / chi2_{1 - confidence}(df); less the residual mean square, over n. Few runs leave it wide: a plan from it
    reaches its power with at least that confidence over the runs the seed sd was estimated from.

    >>> rng = np.random.default_rng(5)
    >>> a = rng.normal(0.5, 0.1, (1, 500)) + rng.normal(0, 0.02, (3, 1)) + rng.normal(0, 0.05, (3, 500))
    >>> b = a.mean(axis=0) + rng.normal(0, 0.02, (3, 1)) + rng.normal(0, 0.05, (3, 500))
    >>> round(components(a, b).seed_sd, 4), round(seed_sd_upper(a, b), 4)   # 4 degrees of freedom: about 2x
    (0.0168, 0.0327)
    """
    (ra, n), rb = a.shape, b.shape[0]
    squares = [mean_squares(t) for t in (a, b)]
    df = ra + rb - 2
    pooled_seed = (squares[0][0] * (ra - 1) + squares[1][0] * (rb - 1)) / df
    residual = (squares[0][1] * (ra - 1) + squares[1][1] * (rb - 1)) / df
    return math.sqrt(max(0.0, (_upper(pooled_seed, df, confidence) - residual) / n))


@dataclass(frozen=True)
class VersionPlan:
    """Users needed for a version comparison with ``seeds`` runs of each system: None when no number of users
    reaches the power (the seeds' variance alone is too large: more seeds, not more users)."""

    seeds: int
    users: int | None
    power_at: float  # the power those users give (the target, or the most any number of users reaches)


def version_power(
    n: int, r: int, distance: float, seed_sd: float, interaction_sd: float, residual_sd: float, alpha: float = 0.05
) -> float:
    """The power of the one-sided version test to resolve ``distance`` with ``r`` runs of each system and ``n`` users,
    from the components: the seeds' sd (a run's offset), the system x user sd and the residual sd. Its degrees of
    freedom are Satterthwaite's from the expected mean squares, so few seeds cost what they cost.

    >>> round(version_power(1000, 5, 0.01, 0.0, 0.08, 0.05), 3)       # no seed spread: the users' paired t's
    0.851
    >>> round(version_power(1000, 3, 0.01, 0.01, 0.08, 0.05), 3)      # seed sd 0.01: 3 seeds barely see 0.01
    0.191
    """
    from scipy import stats

    ms_su, ms_seed, ms_e = residual_sd**2 + r * interaction_sd**2, residual_sd**2 + n * seed_sd**2, residual_sd**2
    variance = 2 * (ms_su + ms_seed - ms_e) / (r * n)
    seed_term = _upper(ms_seed, r - 1)  # each system's, as crossed_difference's degrees of freedom take it
    df = satterthwaite(ms_su + seed_term, [(ms_su, n - 1), (seed_term / 2, r - 1), (seed_term / 2, r - 1)], float(n - 1))
    critical = float(stats.t.ppf(1 - alpha, df))
    return float(stats.t.sf(critical - distance / math.sqrt(variance), df))


def version_plan(
    distance: float,
    seed_sd: float,
    interaction_sd: float,
    residual_sd: float,
    alpha: float = 0.05,
    power: float = 0.8,
    seeds: tuple[int, ...] = (2, 3, 5, 10),
) -> list[VersionPlan]:
    """For each number of runs per system, the fewest users whose version test resolves ``distance`` with ``power``
    (``harness plan`` for seeds and users): Var = 2 (s2_seed / r + s2_su / n + s2_e / (r n)).

    >>> [(p.seeds, p.users) for p in version_plan(0.01, 0.005, 0.08, 0.05)]
    [(2, None), (3, None), (5, 3483), (10, 1222)]
    """
    out = []
    for r in seeds:
        ceiling = version_power(10**9, r, distance, seed_sd, interaction_sd, residual_sd, alpha)
        if ceiling < power:
            out.append(VersionPlan(r, None, ceiling))
            continue
        low, high = 2, 2
        while version_power(high, r, distance, seed_sd, interaction_sd, residual_sd, alpha) < power:
            low, high = high, high * 2
        while low < high:
            middle = (low + high) // 2
            if version_power(middle, r, distance, seed_sd, interaction_sd, residual_sd, alpha) >= power:
                high = middle
            else:
                low = middle + 1
        out.append(VersionPlan(r, high, version_power(high, r, distance, seed_sd, interaction_sd, residual_sd, alpha)))
    return out
