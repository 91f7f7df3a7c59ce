"""Paired tests over per-query values, vectorised over many comparisons at once.

Every function takes ``diffs``: an (F, n) array, one row per comparison (a pair of
systems on a measure), one column per query (the same queries for both systems, by
construction), holding ``b - a``. Each row's result depends on that row only: the
choice between exact and approximate methods is made per row, and resampling tests
use the generator they are given (the caller derives it from the comparison's
identity). Resampling p-values are (b + 1) / (B + 1), never 0.

Definitions and degenerate cases, decided once:

* NaN anywhere is refused (``ValueError``): a missing value is not a p-value.
* The differences are *constant* when their sample standard deviation is at most
  ``ZERO_SD`` times their largest magnitude (rounding of b - a: 0.3 - 0.2 and
  0.7 - 0.6 differ in the last bit). All zero: every p-value is 1, the CIs are
  [0, 0] and d_z is 0. Constant non-zero: the t-test gives p = 0 (scipy's
  ``ttest_rel`` on exactly constant input) and d_z is NaN (infinitely many
  standard deviations).
* Fewer than 2 queries: the t-test, its CI and d_z are NaN.
* Wilcoxon: zero differences are dropped (``zero_method='wilcox'``), tied |d| get
  their mid-rank. With at most ``WILCOXON_EXACT_MAX`` non-zero differences the p-value
  is exact (the distribution of W+ over all 2^n sign assignments of the observed
  ranks, ties included, by dynamic programming); above, the normal approximation
  with the tie correction of the variance (no continuity correction), as scipy's
  ``method='approx'``. 0 non-zero differences give p = 1.
* Randomisation (Fisher's sign flip): exact, by enumerating every sign assignment of
  the non-zero differences, when there are at most ``2^k <= B`` of them; else B
  random assignments.
* Bootstrap: studentised (bootstrap-t) over queries. The CI is the symmetric
  bootstrap-t interval mean +- q * se, where q is the (1 - alpha) quantile of |t*|,
  t* = (mean* - mean) / se*; p = (1 + #{|t*| >= |t|}) / (B + 1) with t = mean / se,
  so p < alpha exactly when 0 lies outside the interval (up to the 1/(B+1) grid).
  Below ``BOOTSTRAP_MIN_QUERIES`` queries it is not computed (NaN): no bootstrap holds
  its level there (see the calibration tests).
* d_z (Cohen's standardised mean difference for paired data) = mean(d) / sd(d), sd
  with n - 1 degrees of freedom.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from itertools import product

import numpy as np

from harness.stats._counts import resample_counts

BLOCK = 1000  # permutations or resamples per matrix product, at most
BLOCK_CELLS = 1 << 24  # and at most this many matrix cells (128 MiB of float64), whatever the number of queries


def _block(n: int) -> int:
    """Rows per block: BLOCK, fewer for many queries so that a block stays within BLOCK_CELLS."""
    return max(1, min(BLOCK, BLOCK_CELLS // max(1, n)))


ZERO_SD = 1e-12  # sd below this fraction of max |d| is rounding: the differences are constant
WILCOXON_EXACT_MAX = 50  # non-zero differences up to which Wilcoxon's p is exact
BOOTSTRAP_MIN_QUERIES = 10  # below this the bootstrap is not computed (calibration: conservative from 10 up)


def _as_2d(diffs: np.ndarray) -> np.ndarray:
    d = np.asarray(diffs, dtype=np.float64)
    d = d[None, :] if d.ndim == 1 else d
    if np.isnan(d).any():
        rows = sorted(set(np.argwhere(np.isnan(d))[:, 0].tolist()))
        raise ValueError(f"NaN in the differences of comparison row(s) {rows[:5]}: a paired test needs a value for every query")
    return d


def _spread(d: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(mean, sd with ddof 1, constant?) per row; sd is NaN below 2 values."""
    n = d.shape[1]
    mean = d.mean(axis=1) if n else np.full(d.shape[0], np.nan)
    if n < 2:
        return mean, np.full(d.shape[0], np.nan), np.ones(d.shape[0], dtype=bool)
    sd = d.std(axis=1, ddof=1)
    scale = np.abs(d).max(axis=1)
    return mean, sd, sd <= ZERO_SD * scale


@dataclass(frozen=True)
class TResult:
    statistic: np.ndarray
    p: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray


def paired_t(diffs: np.ndarray, confidence: float = 0.95) -> TResult:
    """Student's paired t-test (two-sided) and the t interval of the mean difference.

    >>> r = paired_t(np.array([0.1, 0.2, 0.3]))
    >>> round(float(r.statistic[0]), 4), round(float(r.p[0]), 4)   # mean 0.2, se 0.1/sqrt(3)
    (3.4641, 0.0742)
    """
    from scipy import special  # the distributions themselves: scipy.stats costs a second to import

    d = _as_2d(diffs)
    n = d.shape[1]
    if n < 2:
        nan = np.full(d.shape[0], np.nan)
        return TResult(nan, nan, nan, nan)
    mean, sd, constant = _spread(d)
    se = np.where(constant, 0.0, sd / np.sqrt(n))
    exact_mean = np.where(constant & (np.abs(mean) <= ZERO_SD * np.abs(d).max(axis=1)), 0.0, mean)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(se > 0, mean / se, np.where(exact_mean == 0, 0.0, np.sign(mean) * np.inf))
    p = 2 * special.stdtr(n - 1, -np.abs(t))  # two-sided tail of Student's t
    half = special.stdtrit(n - 1, 0.5 + confidence / 2) * se
    return TResult(t, p, mean - half, mean + half)


# ---- Wilcoxon signed-rank -------------------------------------------------------


@cache
def _w_plus_counts_untied(n: int) -> np.ndarray:
    """Number of sign assignments of ranks 1..n giving each doubled W+ (0 .. n(n+1)), no ties."""
    return _w_plus_counts(tuple(range(2, 2 * n + 1, 2)))


def _w_plus_counts(doubled_ranks: tuple[int, ...]) -> np.ndarray:
    """counts[s] = number of subsets of the (doubled, integer) ranks that sum to s."""
    total = sum(doubled_ranks)
    counts = np.zeros(total + 1)
    counts[0] = 1.0
    for r in doubled_ranks:
        counts[r:] = counts[r:] + counts[: total + 1 - r].copy()
    return counts


def midranks(values: np.ndarray) -> np.ndarray:
    """1-based ranks, tied values sharing the mean of their ranks (scipy's ``rankdata(method='average')``).

    >>> midranks(np.array([0.3, 0.1, 0.3, 0.2])).tolist()
    [3.5, 1.0, 3.5, 2.0]
    """
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    new = np.ones(ordered.size, dtype=bool)
    new[1:] = ordered[1:] != ordered[:-1]
    group = np.cumsum(new) - 1
    starts = np.flatnonzero(new)
    ends = np.append(starts[1:], ordered.size)
    ranks = np.empty(values.size)
    ranks[order] = ((starts + 1 + ends) / 2.0)[group]
    return ranks


def _wilcoxon_row(d: np.ndarray) -> float:
    from scipy import special

    nz = d[d != 0]
    k = nz.size
    if k == 0:
        return 1.0
    ranks = midranks(np.abs(nz))  # mid-ranks for ties
    doubled = np.rint(2 * ranks).astype(np.int64)
    w2 = int(doubled[nz > 0].sum())  # 2 W+
    total = int(doubled.sum())
    if k <= WILCOXON_EXACT_MAX:
        tied = np.unique(doubled).size < k
        counts = _w_plus_counts(tuple(doubled.tolist())) if tied else _w_plus_counts_untied(k)
        probs = counts / counts.sum()
        low = min(w2, total - w2)  # two-sided: the tail of the smaller side, doubled
        p = 2.0 * probs[: low + 1].sum()
        return float(min(1.0, p))
    w = w2 / 2.0
    mean = k * (k + 1) / 4.0
    _, tie_counts = np.unique(ranks, return_counts=True)
    var = k * (k + 1) * (2 * k + 1) / 24.0 - (tie_counts**3 - tie_counts).sum() / 48.0
    if var <= 0:
        return 1.0
    z = (w - mean) / np.sqrt(var)
    return float(min(1.0, 2 * special.ndtr(-abs(z))))


def wilcoxon(diffs: np.ndarray) -> np.ndarray:
    """Wilcoxon signed-rank test (two-sided), each row on its own (see the module docstring).

    >>> wilcoxon(np.array([[0.1, 0.2, 0.3], [0.0, 0.0, 0.0]])).tolist()   # 3 positive: 2 x 1/8
    [0.25, 1.0]
    """
    d = _as_2d(diffs)
    return np.array([_wilcoxon_row(row) for row in d], dtype=np.float64)


# ---- randomisation ----------------------------------------------------------------


def _tolerance(observed: np.ndarray) -> np.ndarray:
    # statistics equal to the observed one up to rounding count as "as extreme"
    with np.errstate(invalid="ignore"):
        return np.where(np.isinf(observed), observed, observed - 1e-12 * np.maximum(1.0, np.abs(observed)))


@cache
def _all_signs(k: int) -> np.ndarray:
    """(2^k, k): every assignment of signs to k values."""
    return np.array(list(product((1.0, -1.0), repeat=k))) if k else np.ones((1, 0))


def randomization_floor(n_nonzero: np.ndarray, permutations: int) -> np.ndarray:
    """The smallest p-value the randomisation test can give a row: 2 / 2^k exactly, or 1/(B+1) when sampled."""
    k = np.asarray(n_nonzero, dtype=np.int64)
    return np.where(_enumerable(k, permutations), exact_sign_floor(k), 1.0 / (permutations + 1))


def _enumerable(k: np.ndarray, permutations: int) -> np.ndarray:
    """Whether 2^k sign assignments fit in the permutation budget (k <= log2 B)."""
    return np.asarray(k) <= int(np.log2(max(permutations, 1)))


def exact_sign_floor(k: np.ndarray) -> np.ndarray:
    """2 / 2^k, capped at 1: the smallest two-sided p of an exact test over k random signs."""
    return np.minimum(1.0, np.ldexp(1.0, 1 - np.asarray(k, dtype=np.int64)))


def randomization(diffs: np.ndarray, rng: np.random.Generator, permutations: int = 10_000) -> np.ndarray:
    """Fisher's randomisation test: each query's pair is swapped (its difference's sign flipped) at random.

    Exact when the row's k non-zero differences have 2^k <= ``permutations`` sign
    assignments (p = #{|mean*| >= |mean|} / 2^k); otherwise
    p = (1 + #{|mean of sign-flipped d| >= |mean d|}) / (B + 1), the same random signs
    serving every sampled row (one matrix product per block).

    >>> randomization(np.array([0.1, 0.2, 0.3]), np.random.default_rng(0)).tolist()   # 2 of 8 flips
    [0.25]
    """
    d = _as_2d(diffs)
    f, n = d.shape
    observed = np.abs(d.mean(axis=1)) if n else np.zeros(f)
    threshold = _tolerance(observed)
    p = np.ones(f)
    nonzero = (d != 0).sum(axis=1)
    exact = _enumerable(nonzero, permutations)
    for i in np.flatnonzero(exact & (nonzero > 0)).tolist():
        values = d[i][d[i] != 0]
        stats = np.abs(_all_signs(values.size) @ values) / n
        p[i] = float((stats >= threshold[i]).sum()) / stats.size
    sampled = np.flatnonzero(~exact)
    if sampled.size:
        ds = d[sampled]
        at_least = np.zeros(sampled.size, dtype=np.int64)
        done = 0
        total = ds.sum(axis=1)
        while done < permutations:
            size = min(BLOCK, permutations - done)  # the same random draws whatever the block layout below
            bits = np.unpackbits(rng.integers(0, 256, size=(size, (n + 7) // 8), dtype=np.uint8), axis=1, count=n)
            for start in range(0, size, _block(n)):
                kept = bits[start : start + _block(n)].astype(np.float64)
                stats = np.abs(2.0 * (kept @ ds.T) - total) / n  # signs (2 bits - 1) times d, without the signs matrix
                at_least += (stats >= threshold[sampled]).sum(axis=0)
            done += size
        p[sampled] = (at_least + 1) / (permutations + 1)
    return p


# ---- bootstrap ----------------------------------------------------------------------


@dataclass(frozen=True)
class BootstrapResult:
    p: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray


def bootstrap(diffs: np.ndarray, rng: np.random.Generator, resamples: int = 10_000, confidence: float = 0.95) -> BootstrapResult:
    """Studentised paired bootstrap over queries: the symmetric bootstrap-t CI and its p-value.

    Resample the n queries with replacement B times; for each resample,
    t* = (mean* - mean) / se*. The CI is mean +- q se with q the ``confidence``
    quantile of |t*|; p = (1 + #{|t*| >= |mean / se|}) / (B + 1). The same resamples
    serve every row. NaN below ``BOOTSTRAP_MIN_QUERIES`` queries.
    """
    d = _as_2d(diffs)
    f, n = d.shape
    nan = np.full(f, np.nan)
    if n < BOOTSTRAP_MIN_QUERIES:
        return BootstrapResult(nan, nan.copy(), nan.copy())
    mean, sd, constant = _spread(d)
    se = np.where(constant, 0.0, sd / np.sqrt(n))
    centred = d - mean[:, None]
    both = np.ascontiguousarray(np.hstack([centred.T, (centred**2).T]))  # (n, 2f): one product per block
    t_star = np.empty((resamples, f))
    buffer = np.empty((min(_block(n), resamples), n))  # the counts of every block, in turn
    done = 0
    while done < resamples:
        size = min(_block(n), resamples - done)
        picks = rng.integers(0, n, size=(size, n), dtype=np.int32)  # int32: half the memory traffic
        counts = resample_counts(picks, n, buffer)
        moments = (counts @ both) / n  # (size, 2f): mean* - mean, then the mean of the squared deviations
        shift = moments[:, :f]
        var = np.maximum(moments[:, f:] - shift**2, 0.0) * n / (n - 1)
        se_star = np.sqrt(var / n)
        tiny = se_star <= ZERO_SD * np.maximum(sd, np.abs(d).max(axis=1))[None, :]
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.where(tiny, np.where(np.abs(shift) <= ZERO_SD, 0.0, np.inf), np.abs(shift) / se_star)
        t_star[done : done + size] = t
        done += size
    with np.errstate(divide="ignore", invalid="ignore"):
        t_obs = np.where(se > 0, np.abs(mean) / se, np.where(np.abs(mean) <= ZERO_SD, 0.0, np.inf))
    extreme = (t_star >= _tolerance(t_obs)).sum(axis=0)
    p = (extreme + 1) / (resamples + 1)
    q = np.quantile(t_star, confidence, axis=0, method="higher")
    with np.errstate(invalid="ignore"):
        half = np.where(se > 0, q * se, 0.0)
    zero = np.all(d == 0, axis=1)
    p = np.where(zero, 1.0, p)
    return BootstrapResult(p, mean - half, mean + half)


def bootstrap_floor(resamples: int) -> float:
    """The smallest p-value the bootstrap can give: 1/(B+1)."""
    return 1.0 / (resamples + 1)


def effect_size(diffs: np.ndarray) -> np.ndarray:
    """Cohen's d_z: mean(d) / sd(d) (sd with n - 1 degrees of freedom); 0 when all d are 0, NaN when constant.

    >>> effect_size(np.array([[0.1, 0.2, 0.3], [0.1, 0.1, 0.1], [0.0, 0.0, 0.0]])).round(4).tolist()
    [2.0, nan, 0.0]
    """
    d = _as_2d(diffs)
    mean, sd, constant = _spread(d)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(constant, np.nan, mean / sd)
    return np.where(np.all(d == 0, axis=1) & (d.shape[1] > 0), 0.0, out)


def win_tie_loss(diffs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Queries where b beats a (d > 0), ties (d == 0), and loses (d < 0)."""
    d = _as_2d(diffs)
    return (d > 0).sum(axis=1), (d == 0).sum(axis=1), (d < 0).sum(axis=1)
