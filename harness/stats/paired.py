"""Paired tests over per-query values, vectorised over many comparisons at once.

Every function takes ``diffs``: an (F, n) array, one row per comparison (a pair of
systems on a measure), one column per query (the same queries for both systems, by
construction), holding ``b - a``. Resampling tests draw from the ``numpy.random.Generator``
they are given: same generator state, same numbers. Their p-values are
(b + 1) / (B + 1), never 0.

Degenerate cases, decided once:

* all differences 0 (identical systems): every p-value is 1, the CIs are [0, 0],
  the effect size is 0;
* fewer than 2 queries: the t-test and its CI are NaN (undefined), and nothing is
  significant;
* constant non-zero differences (zero variance): the t-test gives p = 0 and the
  effect size is NaN (infinite standardised difference), as scipy's ``ttest_rel``
  does for the p-value.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

BLOCK = 1000  # permutations or resamples per matrix product: bounds memory at BLOCK x n floats


def _as_2d(diffs: np.ndarray) -> np.ndarray:
    d = np.asarray(diffs, dtype=np.float64)
    return d[None, :] if d.ndim == 1 else d


@dataclass(frozen=True)
class TResult:
    statistic: np.ndarray
    p: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray


def paired_t(diffs: np.ndarray, confidence: float = 0.95) -> TResult:
    """Student's paired t-test (two-sided) and the t interval of the mean difference."""
    from scipy import stats

    d = _as_2d(diffs)
    n = d.shape[1]
    mean = d.mean(axis=1)
    if n < 2:
        nan = np.full(d.shape[0], np.nan)
        return TResult(nan, nan, nan, nan)
    se = d.std(axis=1, ddof=1) / np.sqrt(n)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(se > 0, mean / se, np.where(mean == 0, 0.0, np.sign(mean) * np.inf))
    p = 2 * stats.t.sf(np.abs(t), n - 1)
    half = stats.t.ppf(0.5 + confidence / 2, n - 1) * se
    return TResult(t, p, mean - half, mean + half)


def wilcoxon(diffs: np.ndarray) -> np.ndarray:
    """Wilcoxon signed-rank test (two-sided), as scipy computes it; p = 1 when all differences are 0."""
    from scipy import stats

    d = _as_2d(diffs)
    p = np.ones(d.shape[0])
    nonzero = np.any(d != 0, axis=1)
    if nonzero.any() and d.shape[1] > 0:
        with np.errstate(divide="ignore", invalid="ignore"):
            p[nonzero] = stats.wilcoxon(d[nonzero], axis=1).pvalue
    return p


def _tolerance(observed: np.ndarray) -> np.ndarray:
    # permutation statistics equal to the observed one up to rounding count as "as extreme"
    return observed - 1e-12 * np.maximum(1.0, np.abs(observed))


def randomization(diffs: np.ndarray, rng: np.random.Generator, permutations: int = 10_000) -> np.ndarray:
    """Fisher's randomisation test: each query's pair is swapped (its difference's sign flipped) at random.

    p = (1 + #{|mean of sign-flipped d| >= |mean d|}) / (B + 1). The same random signs
    serve every comparison, so all of them cost one matrix product per block.
    """
    d = _as_2d(diffs)
    f, n = d.shape
    observed = np.abs(d.mean(axis=1))
    at_least = np.zeros(f, dtype=np.int64)
    threshold = _tolerance(observed)
    done = 0
    while done < permutations:
        size = min(BLOCK, permutations - done)
        signs = rng.integers(0, 2, size=(size, n), dtype=np.int8).astype(np.float64) * 2.0 - 1.0
        stats = np.abs(signs @ d.T) / n  # (size, f)
        at_least += (stats >= threshold).sum(axis=0)
        done += size
    return (at_least + 1) / (permutations + 1)


@dataclass(frozen=True)
class BootstrapResult:
    p: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray


def bootstrap(diffs: np.ndarray, rng: np.random.Generator, resamples: int = 10_000, confidence: float = 0.95) -> BootstrapResult:
    """Paired bootstrap over queries: percentile CI of the mean difference, and a two-sided p-value.

    p = (1 + #{|mean* - mean| >= |mean|}) / (B + 1): how often the resampled means,
    centred on the observed one (the null), land as far from 0 as the observation.
    """
    d = _as_2d(diffs)
    f, n = d.shape
    observed = d.mean(axis=1)
    means = np.empty((resamples, f))
    done = 0
    while done < resamples:
        size = min(BLOCK, resamples - done)
        picks = rng.integers(0, n, size=(size, n))
        counts = np.bincount((np.arange(size)[:, None] * n + picks).ravel(), minlength=size * n).reshape(size, n)
        means[done : done + size] = (counts @ d.T) / n
        done += size
    alpha = 1 - confidence
    low, high = np.quantile(means, [alpha / 2, 1 - alpha / 2], axis=0)
    extreme = (np.abs(means - observed) >= _tolerance(np.abs(observed))).sum(axis=0)
    p = (extreme + 1) / (resamples + 1)
    p = np.where(np.all(d == 0, axis=1), 1.0, p)
    return BootstrapResult(p, low, high)


def effect_size(diffs: np.ndarray) -> np.ndarray:
    """Standardised mean of the paired differences (Cohen's d_z): mean(d) / sd(d)."""
    d = _as_2d(diffs)
    mean = d.mean(axis=1)
    sd = d.std(axis=1, ddof=1) if d.shape[1] > 1 else np.full(d.shape[0], np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(sd > 0, mean / sd, np.where(mean == 0, 0.0, np.nan))


def win_tie_loss(diffs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Queries where b beats a (d > 0), ties (d == 0), and loses (d < 0)."""
    d = _as_2d(diffs)
    return (d > 0).sum(axis=1), (d == 0).sum(axis=1), (d < 0).sum(axis=1)
