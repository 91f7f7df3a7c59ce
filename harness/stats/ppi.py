"""Prediction-powered inference for a mean over queries: people's labels on a random sample correct a judge's.

A model judge labels every query, people a random sample of them. For a measure (or a paired difference of two
systems' measures) let ``y`` be its value under people's labels and ``f`` under the judge's: both are known on the
``n`` queries people judged, only ``f`` on the ``N`` others. The PPI++ estimate of the mean over all queries
(Angelopoulos, Duchi and Zrnic, arXiv 2311.01453) is

    theta = lambda mean_N(f) + mean_n(y - lambda f)

unbiased for every lambda, since the judge's bias cancels between its two means. Its variance is

    se^2 = var_n(y - lambda f) / n + lambda^2 var_N(f) / N

(sample variances with n - 1 and N - 1 degrees of freedom), least at lambda = cov_n(y, f) / ((1 + n / N) var(f)),
the judge's values' variance taken over all n + N queries; lambda is clipped to [0, 1]: 0 is people's sample
alone, 1 is plain PPI. The interval is theta +- t_{n-1} se and the two-sided p of "mean = 0" uses the same t and the
same lambda. Student's t with n - 1 degrees of freedom (where ``ppi_py`` uses normal quantiles and variances with
n degrees of freedom) because people's sample is usually small and its term dominates the variance.

>>> y = np.array([1.0, 0.0, 1.0, 1.0])             # people's values on the 4 queries they judged
>>> f = np.array([1.0, 0.5, 1.0, 0.5])             # the judge's on the same queries
>>> rest = np.array([1.0, 0.5, 0.5, 1.0, 1.0, 0.0])  # the judge's on the 6 queries people did not judge
>>> found = ppi_mean(y, f, rest, lam=1.0)
>>> round(found.estimate, 6)                         # plain PPI: mean(rest) + mean(y - f) = 4/6 + 0
0.666667
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

MIN_HUMAN = 2  # people's sample needs 2 or more queries for a variance


@dataclass(frozen=True)
class PPIEstimate:
    """A prediction-powered mean: its estimate, standard error, two-sided (1 - alpha) interval, the p of "mean = 0",
    the lambda used, people's sample size ``n`` and the judge-only queries ``N``, and the t's degrees of freedom.
    Where the standard error is 0 (every residual equal, e.g. people gave every judged query the same value), the
    interval and p are NaN: a sample without spread bounds nothing."""

    estimate: float
    se: float
    low: float
    high: float
    p: float
    lam: float
    n: int
    N: int
    df: float

    def one_sided(self, alpha: float) -> tuple[float, float]:
        """The one-sided (1 - alpha) lower and upper bounds, with the same t and lambda."""
        from scipy import special

        reach = float(special.stdtrit(self.df, 1 - alpha)) * self.se
        return self.estimate - reach, self.estimate + reach


def tuned_lambda(y: np.ndarray, f: np.ndarray, f_rest: np.ndarray) -> float:
    """PPI++'s variance-minimising lambda for a mean, clipped to [0, 1]: cov_n(y, f) / ((1 + n / N) var(f)), the
    judge's variance over every query (n + N); 0 where the judge's values do not vary.

    >>> same = np.array([0.0, 1.0, 2.0])   # cov 1; the judge's variance over all 6 queries 0.8; n / N = 1
    >>> tuned_lambda(same, same, np.array([0.0, 2.0, 1.0]))   # 1 / ((1 + 1) 0.8)
    0.625
    """
    n, big = y.size, f_rest.size
    every = np.concatenate([f, f_rest])
    variance = float(every.var(ddof=1)) if every.size > 1 else 0.0
    if not variance > 0 or n < MIN_HUMAN or big == 0:
        return 0.0
    return float(_lambda(float(np.cov(y, f, ddof=1)[0, 1]), n, big, variance))


def _lambda(covariance: float, n: Any, big: Any, variance: float) -> Any:
    """cov / ((1 + n / N) var), clipped to [0, 1]: for one ``n``, or an array of them (``big`` N with it)."""
    return np.clip(covariance / ((1 + n / big) * variance), 0.0, 1.0)


def queries_needed(y: np.ndarray, f: np.ndarray, f_all: np.ndarray, estimate: float, alpha: float, power: float) -> int | None:
    """The fewest queries people would judge, of the ``Q = f_all.size`` the judge labelled, for the two-sided t at
    ``alpha`` to tell a true mean of ``estimate`` from 0 with ``power``, lambda tuned again at each n as
    :func:`tuned_lambda` tunes it: ``se^2(n) = var(y - lambda f) / n + lambda^2 var(f_all) / (Q - n)`` from the
    spreads and the covariance people's sample (``y``, and the judge's ``f`` on the same queries) shows,
    ``(t_{1 - alpha/2} + t_power) se <= |estimate|`` with n - 1 degrees of freedom; at n = Q people's values alone.
    None where no n up to Q does, or ``estimate`` is 0.

    >>> y = np.array([0.1, 0.3, 0.2, 0.5]); f = y + 0.05   # a judge off by a constant: people's 3 of 12 would do
    >>> queries_needed(y, f, np.concatenate([f, f, f]), 0.3, 0.05, 0.8), queries_needed(y, f, f, 0.0, 0.05, 0.8)
    (3, None)
    """
    from scipy import stats

    total = f_all.size
    if not abs(estimate) > 0 or y.size < MIN_HUMAN or total < MIN_HUMAN:
        return None
    var_y, var_f, spread = float(np.var(y, ddof=1)), float(np.var(f, ddof=1)), float(np.var(f_all, ddof=1))
    covariance = float(np.cov(y, f, ddof=1)[0, 1])
    n = np.arange(MIN_HUMAN, total + 1, dtype=np.float64)
    rest = total - n
    with np.errstate(divide="ignore", invalid="ignore"):
        lam = np.where(rest > 0, _lambda(covariance, n, rest, spread), 0.0) if spread > 0 else np.zeros_like(n)
        variance = (var_y - 2 * lam * covariance + lam * lam * var_f) / n + np.where(rest > 0, lam * lam * spread / rest, 0.0)
    reach = (stats.t.ppf(1 - alpha / 2, n - 1) + stats.t.ppf(power, n - 1)) * np.sqrt(np.maximum(variance, 0.0))
    enough = np.flatnonzero(reach <= abs(estimate))
    return int(n[enough[0]]) if enough.size else None


def ppi_mean(y: np.ndarray, f: np.ndarray, f_rest: np.ndarray, alpha: float = 0.05, lam: float | None = None) -> PPIEstimate:
    """The prediction-powered mean (see the module docstring): ``y`` and ``f`` people's and the judge's values on the
    queries people judged, ``f_rest`` the judge's on the others; ``lam`` None tunes it (:func:`tuned_lambda`).

    Raises ValueError for fewer than 2 human-judged queries, unpaired ``y`` and ``f``, or NaN.
    """
    from scipy import special

    y, f, rest = (np.asarray(v, dtype=np.float64) for v in (y, f, f_rest))
    if y.shape != f.shape or y.ndim != 1:
        raise ValueError(f"people's and the judge's values on the judged queries must pair up, got {y.shape} and {f.shape}")
    if np.isnan(y).any() or np.isnan(f).any() or np.isnan(rest).any():
        raise ValueError("a NaN value: prediction-powered inference needs every query's value")
    n, big = y.size, rest.size
    if n < MIN_HUMAN:
        raise ValueError(f"people judged {n} quer{'y' if n == 1 else 'ies'}: a corrected mean needs {MIN_HUMAN} or more")
    chosen = tuned_lambda(y, f, rest) if lam is None else float(lam)
    residual = y - chosen * f
    estimate = (chosen * float(rest.mean()) if big else 0.0) + float(residual.mean())
    variance = float(residual.var(ddof=1)) / n + (chosen**2 * float(rest.var(ddof=1)) / big if big > 1 else 0.0)
    se = math.sqrt(variance)
    df = n - 1
    if not se > 0:  # every residual equal: no spread to bound the mean by, so no interval and no test (never significant)
        return PPIEstimate(estimate, se, math.nan, math.nan, math.nan, chosen, n, big, df)
    half = float(special.stdtrit(df, 1 - alpha / 2)) * se
    p = 2 * float(special.stdtr(df, -abs(estimate) / se))
    return PPIEstimate(estimate, se, estimate - half, estimate + half, min(1.0, p), chosen, n, big, df)


def ppi_stratified(
    strata: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]], weights: Sequence[float], alpha: float = 0.05
) -> PPIEstimate:
    """The prediction-powered mean where people's queries were drawn at random within strata: each stratum's
    ``(y, f, f_rest)`` corrected on its own (:func:`ppi_mean`, its own lambda), the estimate ``sum_h W_h theta_h``
    with ``se^2 = sum_h W_h^2 se_h^2``, and Satterthwaite's degrees of freedom over the strata's terms, each with
    its n_h - 1. ``weights``: each stratum's share of all the queries (they sum to 1). The result's ``lam`` is the
    strata's lambdas weighted by W_h (for display: each stratum used its own), ``n`` and ``N`` the totals.

    >>> y, f, rest = np.array([1.0, 0.0, 1.0]), np.array([1.0, 0.5, 0.5]), np.array([1.0, 0.0])
    >>> one, both = ppi_mean(y, f, rest), ppi_stratified([(y, f, rest), (y, f, rest)], [0.5, 0.5])
    >>> both.estimate == one.estimate, math.isclose(both.se * math.sqrt(2), one.se)   # two halves alike: se / sqrt(2)
    (True, True)

    Raises ValueError where the weights do not match the strata or do not sum to 1, or a stratum cannot be corrected
    (:func:`ppi_mean`'s reasons).
    """
    from scipy import special

    if len(strata) != len(weights) or not strata:
        raise ValueError(f"{len(weights)} weights for {len(strata)} strata")
    w = np.asarray(weights, dtype=np.float64)
    if (w < 0).any() or not math.isclose(float(w.sum()), 1.0, rel_tol=0, abs_tol=1e-9):
        raise ValueError(f"the strata's weights must be shares summing to 1, got {w.tolist()}")
    found = [ppi_mean(y, f, rest, alpha) for y, f, rest in strata]
    estimate = float(sum(wh * e.estimate for wh, e in zip(w, found, strict=True)))
    terms = [(wh * e.se) ** 2 for wh, e in zip(w, found, strict=True)]
    variance = float(sum(terms))
    se = math.sqrt(variance)
    n, big = sum(e.n for e in found), sum(e.N for e in found)
    lam = float(sum(wh * e.lam for wh, e in zip(w, found, strict=True)))
    denominator = sum(term * term / e.df for term, e in zip(terms, found, strict=True))
    df = variance * variance / denominator if denominator > 0 else float(n - len(found))
    if not se > 0:
        return PPIEstimate(estimate, se, math.nan, math.nan, math.nan, lam, n, big, df)
    half = float(special.stdtrit(df, 1 - alpha / 2)) * se
    p = 2 * float(special.stdtr(df, -abs(estimate) / se))
    return PPIEstimate(estimate, se, estimate - half, estimate + half, min(1.0, p), lam, n, big, df)


Layers = tuple[tuple[np.ndarray, float], ...]  # each stratum's queries (a mask over all of them) and its share


def layers_of(strata: np.ndarray, sampled: np.ndarray) -> Layers | str:
    """Each stratum's queries (a mask over ``strata``, every query's stratum) and its share of them, in the strata's
    sorted order; or why they cannot be corrected: a stratum people judged fewer than 2 queries of (``sampled``).

    >>> layers_of(np.array(["a", "b", "a", "b", "a"]), np.array([True, True, True, False, False]))
    "stratum 'b': people judged 1 of its 2 queries, and a stratum's correction needs 2 or more"
    >>> [(mask.tolist(), share) for mask, share in layers_of(np.array(["a", "a", "a"]), np.array([1, 1, 0], bool))]
    [([True, True, True], 1.0)]
    """
    out = []
    for name in sorted(set(strata.tolist())):
        mask = strata == name
        judged = int((mask & sampled).sum())
        if judged < MIN_HUMAN:
            return (
                f"stratum {name!r}: people judged {judged} of its {int(mask.sum()):,} "
                f"quer{'y' if mask.sum() == 1 else 'ies'}, and a stratum's correction needs {MIN_HUMAN} or more"
            )
        out.append((mask, float(mask.sum()) / strata.size))
    return tuple(out)


def sample_layers(sampled: np.ndarray, strata: np.ndarray | None = None) -> Layers | str | None:
    """How people's sample is corrected: None for a random sample of all the queries, the strata's
    :func:`layers_of` for a stratified one (``strata``: each query's stratum); or why it cannot be corrected (people
    judged fewer than 2 of the queries, or of a stratum's).

    >>> sample_layers(np.array([True, False, False])), sample_layers(np.array([True, True, False]))
    ('people judged 1 of the 3 queries, and a correction needs 2 or more', None)
    """
    judged = int(sampled.sum())
    if judged < MIN_HUMAN:
        return f"people judged {judged} of the {sampled.size:,} queries, and a correction needs {MIN_HUMAN} or more"
    return None if strata is None else layers_of(strata, sampled)


def ppi_sampled(
    y: np.ndarray, f_all: np.ndarray, sampled: np.ndarray, layers: Layers | None = None, alpha: float = 0.05
) -> PPIEstimate:
    """The prediction-powered mean over every query: ``f_all`` the judge's values of all of them, ``sampled`` which
    of them people judged, ``y`` people's values there (in the same order); people's queries drawn at random from all
    of them (``layers`` None: :func:`ppi_mean`), or within each stratum of ``layers`` (:func:`ppi_stratified`).

    >>> f_all = np.array([1.0, 0.5, 1.0, 0.5, 1.0, 0.5, 0.5, 1.0, 1.0, 0.0])
    >>> sampled = np.arange(10) < 4
    >>> ppi_sampled(np.array([1.0, 0.0, 1.0, 1.0]), f_all, sampled, alpha=0.05) == ppi_mean(
    ...     np.array([1.0, 0.0, 1.0, 1.0]), f_all[:4], f_all[4:])
    True
    """
    if layers is None:
        return ppi_mean(y, f_all[sampled], f_all[~sampled], alpha)
    position = np.cumsum(sampled) - 1  # each of people's queries' place in y
    parts = [(y[position[mask & sampled]], f_all[mask & sampled], f_all[mask & ~sampled]) for mask, _ in layers]
    return ppi_stratified(parts, [w for _, w in layers], alpha)


@dataclass(frozen=True)
class PeoplePlan:
    """How many queries people would judge (the judge labelling all ``total``) for the prediction-powered t at
    ``alpha`` (``sided``) to resolve a true distance with the planned power: ``needed`` (None: not even all of them),
    with the power and the minimum detectable distance of the ``n`` people judged now, people's residual sd (``y -
    lambda f``) and lambda."""

    needed: int | None
    n: int
    total: int
    power_now: float
    mde_now: float
    residual_sd: float
    lam: float


def people_plan(
    y: np.ndarray, f_all: np.ndarray, sampled: np.ndarray, distance: float, alpha: float, target: float, sided: str = "one"
) -> PeoplePlan:
    """The queries people would judge to resolve ``distance`` (:func:`queries_needed`; one-sided at ``alpha`` is
    two-sided at ``2 alpha``), and what the ones judged now resolve: ``f_all`` the judge's values of every query,
    ``sampled`` which of them people judged, ``y`` people's values there.

    >>> y = np.array([0.1, 0.3, 0.2, 0.5]); f = y + 0.05
    >>> found = people_plan(y, np.concatenate([f, f, f]), np.arange(12) < 4, 0.3, 0.05, 0.8)
    >>> found.needed, found.n, found.total
    (3, 4, 12)
    """
    from scipy import special

    level = 2 * alpha if sided == "one" else alpha
    f = f_all[sampled]
    needed = queries_needed(y, f, f_all, distance, level, target)
    found = ppi_mean(y, f, f_all[~sampled], level)
    crit = float(special.stdtrit(found.df, 1 - level / 2))
    power_now = float(special.stdtr(found.df, distance / found.se - crit)) if found.se > 0 else math.nan
    mde = (crit + float(special.stdtrit(found.df, target))) * found.se
    residual = y - found.lam * f
    return PeoplePlan(needed, int(y.size), int(f_all.size), power_now, mde, float(residual.std(ddof=1)), found.lam)
