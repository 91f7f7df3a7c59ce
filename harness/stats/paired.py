"""Paired tests over per-query values, vectorised over many comparisons at once.

Every function takes ``diffs``: an (F, n) array, one row per comparison (a pair of
systems on a measure), one column per query (the same queries for both systems, by
construction), holding ``b - a``. Each row's result depends on that row only: the
choice between exact and approximate methods is made per row, and the resampling
tests' draws are keyed by query (:mod:`harness.stats.keyed`: each query's sign or
weight in replicate r is a hash of its key and r), summed exactly on a grid
(:mod:`harness.stats.grid`). Resampling p-values are (b + 1) / (B + 1), never 0.

The tests run in three passes: :func:`scan` (order-free facts), :func:`partial` (exact
sums) and :func:`finish`; :func:`run_tests` runs them over all the queries at once, as many
rows at a time as ``ROWS_BUDGET`` bytes hold. The scans and partial sums of any parts of
the queries add up (``+``) to the whole's, which is how ``tests/stats/test_exact.py`` shows
that neither order nor partitioning changes a bit.

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
* Bootstrap: studentised (bootstrap-t) Poisson bootstrap over queries: in replicate r
  query q counts w_qr ~ Poisson(1) times, so mean* and se* are those of a sample of
  size sum w (below 2 drawn: t* = inf). The CI is the symmetric
  bootstrap-t interval mean +- q * se, where q is the (1 - alpha) quantile of |t*|,
  t* = (mean* - mean) / se*; p = (1 + #{|t*| >= |t|}) / (B + 1) with t = mean / se,
  so p < alpha exactly when 0 lies outside the interval (up to the 1/(B+1) grid).
  Below ``BOOTSTRAP_MIN_QUERIES`` queries it is not computed (NaN): no bootstrap holds
  its level there (see the calibration tests).
* d_z (Cohen's standardised mean difference for paired data) = mean(d) / sd(d), sd
  with n - 1 degrees of freedom.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from functools import cache
from itertools import product
from typing import Any

import numpy as np

from harness.kernels._parallel import over_rows
from harness.stats import grid, keyed

TILE_REPLICATES, TILE_QUERIES = 1024, 4096  # the bootstrap's weights drawn and multiplied a tile at a time (32 MiB)
ROWS_BUDGET = 256 << 20  # bytes: run_tests tests as many rows at a time as their resampling's arrays fit in

RESOLUTION = 2.0**-44  # a bootstrap resample's variance below this fraction of the largest centred square is rounding
ZERO_SD = 1e-12  # sd below this fraction of max |d| is rounding: the differences are constant
WILCOXON_EXACT_MAX = 50  # non-zero differences up to which Wilcoxon's p is exact
TESTS = ("t", "wilcoxon", "randomization", "bootstrap")
BOOTSTRAP_MIN_QUERIES = 10  # below this the bootstrap is not computed (calibration: conservative from 10 up)


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


def _as_2d(diffs: np.ndarray) -> np.ndarray:
    d = np.asarray(diffs, dtype=np.float64)
    d = d[None, :] if d.ndim == 1 else d
    if np.isnan(d).any():
        rows = sorted(set(np.argwhere(np.isnan(d))[:, 0].tolist()))
        raise ValueError(f"NaN in the differences of comparison row(s) {rows[:5]}: a paired test needs a value for every query")
    return d


@dataclass(frozen=True)
class TResult:
    """The paired t-test of each row: its statistic, two-sided p and interval, and the mean and sd of the differences
    it was computed from (exact sums; sd 0 for differences constant up to rounding, as the test treats them)."""

    statistic: np.ndarray
    p: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    mean: np.ndarray
    sd: np.ndarray


@dataclass(frozen=True)
class BootstrapResult:
    p: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray


# ---- pass 1: the order-free facts every later step is planned from ---------------------------------------------


@dataclass(frozen=True)
class Scan:
    """Per row: the number of queries, of non-zero and of positive differences, and the largest and smallest
    difference (-inf and inf for a row without queries). Partitions' scans add up (``+``) to the whole one, exactly."""

    n: np.ndarray
    nonzero: np.ndarray
    positive: np.ndarray
    high: np.ndarray
    low: np.ndarray

    def __add__(self, other: Scan) -> Scan:
        return Scan(
            self.n + other.n,
            self.nonzero + other.nonzero,
            self.positive + other.positive,
            np.maximum(self.high, other.high),
            np.minimum(self.low, other.low),
        )


def _masked(diffs: np.ndarray, mask: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """(differences with the left-out queries' set to 0, mask): a 0 adds nothing to any sum but the counts."""
    d = np.asarray(diffs, dtype=np.float64)
    d = d[None, :] if d.ndim == 1 else d
    if mask is None:
        return _as_2d(d), np.ones(d.shape, dtype=bool)
    mask = np.broadcast_to(np.asarray(mask, dtype=bool), d.shape)
    return _as_2d(np.where(mask, d, 0.0)), mask


def scan(diffs: np.ndarray, mask: np.ndarray | None = None) -> Scan:
    """Pass 1 over (F, n) differences; ``mask`` (F, n): the queries each row is tested on (default: all)."""
    d, mask = _masked(diffs, mask)
    with np.errstate(invalid="ignore"):
        high = np.where(mask, d, -np.inf).max(axis=1, initial=-np.inf)
        low = np.where(mask, d, np.inf).min(axis=1, initial=np.inf)
    return Scan(mask.sum(axis=1), (d != 0).sum(axis=1), (d > 0).sum(axis=1), high, low)


@dataclass(frozen=True)
class Plan:
    """What pass 2 computes, decided from the whole scan: the grid of every row, and which test runs how."""

    scan: Scan
    tests: tuple[str, ...]
    permutations: int
    resamples: int
    e: np.ndarray  # the grid: d_int = round(d * 2^(52 - e)), max |d| < 2^e
    centre: np.ndarray  # the bootstrap's centre on the grid (the midrange: order-free)
    spread: np.ndarray  # the largest |d_int - centre| (grid steps): the scale of the bootstrap's centred sums
    e_square: np.ndarray  # the grid of the centred squares
    enumerated: np.ndarray  # rows whose randomisation test enumerates every sign assignment
    sampled: np.ndarray  # rows whose randomisation test samples B of them (indexes)
    most: int  # the most queries of any row of the whole: what bounds every sum, so what sizes the limbs
    resampled: np.ndarray  # rows the resampling tests (randomisation, bootstrap) run on; the others' are NaN

    @classmethod
    def of(
        cls,
        whole: Scan,
        tests: tuple[str, ...] = TESTS,
        permutations: int = 10_000,
        resamples: int = 10_000,
        resample: np.ndarray | None = None,
    ) -> Plan:
        """The plan of every row of ``whole``; ``resample`` (F,): the rows the resampling tests run on (default all)."""
        empty = whole.n == 0
        resampled = np.ones(whole.n.size, dtype=bool) if resample is None else np.asarray(resample, dtype=bool)
        whole = Scan(whole.n, whole.nonzero, whole.positive, np.where(empty, 0.0, whole.high), np.where(empty, 0.0, whole.low))
        e = grid.exponent(np.maximum(np.abs(whole.high), np.abs(whole.low)))
        high, low = grid.on_grid(whole.high[:, None], e)[:, 0], grid.on_grid(whole.low[:, None], e)[:, 0]
        centre = (high + low) >> 1  # the midrange: an order-free centre, within the range's half of every value
        spread = np.maximum(high - centre, centre - low).astype(np.float64)
        exact = _enumerable(whole.nonzero, permutations)
        randomized = "randomization" in tests
        enumerated = exact & (whole.nonzero > 0) & resampled if randomized else np.zeros_like(exact)
        sampled = np.flatnonzero(~exact & resampled) if randomized else np.zeros(0, dtype=np.int64)
        most = int(whole.n.max(initial=0))
        return cls(
            whole,
            tests,
            permutations,
            resamples,
            e,
            centre,
            spread,
            grid.exponent(spread * spread),
            enumerated,
            sampled,
            most,
            resampled,
        )

    def rows(self, lo: int, hi: int) -> Plan:
        """The plan of rows lo .. hi alone. It keeps the whole's bound on the sums (:attr:`most`), so their limbs, and
        every bit of their results, are those of the whole."""
        part, s = slice(lo, hi), self.scan
        return replace(
            self,
            scan=Scan(s.n[part], s.nonzero[part], s.positive[part], s.high[part], s.low[part]),
            e=self.e[part],
            centre=self.centre[part],
            spread=self.spread[part],
            e_square=self.e_square[part],
            enumerated=self.enumerated[part],
            sampled=self.sampled[(self.sampled >= lo) & (self.sampled < hi)] - lo,
            resampled=self.resampled[part],
        )

    @property
    def bootstrapped(self) -> np.ndarray:
        """The rows the bootstrap is computed for (enough queries, and resampled)."""
        return ("bootstrap" in self.tests) & (self.scan.n >= BOOTSTRAP_MIN_QUERIES) & self.resampled

    @property
    def drawn(self) -> np.ndarray:
        """The bootstrapped rows that need their resamples drawn: every difference 0 gives p = 1 and [0, 0] without."""
        return self.bootstrapped & (self.scan.nonzero > 0)

    def rows_at_a_time(self, queries: int) -> int:
        """How many rows of ``queries`` columns pass 2 and 3 take at a time within :data:`ROWS_BUDGET`.

        A row costs about 22 float64 arrays of its bootstrap's resamples (the replicates' limb sums, mean*, se*, t*
        and their temporaries), 10 of its randomisation's permutations (the flips' limb sums and statistics) and 14
        of its queries (the grid, the limbs, the stacked product operand).
        """
        boot = self.resamples if self.drawn.any() else 0
        flip = self.permutations if self.sampled.size else 0
        per_row = 8 * (22 * boot + 10 * flip + 14 * queries) + 1
        return max(1, ROWS_BUDGET // per_row)


# ---- pass 2: exact partial sums, one partition at a time ------------------------------------------------------


@dataclass(frozen=True)
class Partial:
    """Pass 2 over some of the queries: integer sums (exact) that add up (``+``) to the whole one's in any order."""

    first: np.ndarray  # (F,) object: sum of d_int, a Python integer
    second: np.ndarray  # (F,) object: sum of d_int^2
    ranks: list[tuple[np.ndarray, np.ndarray, np.ndarray]] | None  # per row: distinct |d| != 0, # positive, # negative
    nonzero: list[np.ndarray] | None  # per enumerated row: its non-zero d_int
    flips: np.ndarray | None  # (L, B, sampled): sum over queries of sign bit * limb of d_int
    flip_totals: np.ndarray | None  # (L, sampled): sum of the limbs
    weight: np.ndarray | None  # (B, R): sum of the Poisson weights of each bootstrapped row's queries
    moments: np.ndarray | None  # (2, L, B, R): sum of weight * limb of (d_int - centre), then of its grid square

    def __add__(self, other: Partial) -> Partial:
        def plus(a: Any, b: Any) -> Any:
            return None if a is None else a + b

        ranks = (
            None
            if self.ranks is None or other.ranks is None
            else [_merge_ranks(a, b) for a, b in zip(self.ranks, other.ranks, strict=True)]
        )
        nonzero = (
            None
            if self.nonzero is None or other.nonzero is None
            else [np.concatenate([a, b]) for a, b in zip(self.nonzero, other.nonzero, strict=True)]
        )
        return Partial(
            self.first + other.first,
            self.second + other.second,
            ranks,
            nonzero,
            plus(self.flips, other.flips),
            plus(self.flip_totals, other.flip_totals),
            plus(self.weight, other.weight),
            plus(self.moments, other.moments),
        )


def _merge_ranks(a: tuple[np.ndarray, ...], b: tuple[np.ndarray, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    values, where = np.unique(np.concatenate([a[0], b[0]]), return_inverse=True)
    positive = np.bincount(where, np.concatenate([a[1], b[1]]), minlength=values.size).astype(np.int64)
    negative = np.bincount(where, np.concatenate([a[2], b[2]]), minlength=values.size).astype(np.int64)
    return values, positive, negative


def _rank_counts(row: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    nonzero = row[row != 0]
    values, where = np.unique(np.abs(nonzero), return_inverse=True)
    positive = np.bincount(where, nonzero > 0, minlength=values.size).astype(np.int64)
    return values, positive, np.bincount(where, minlength=values.size).astype(np.int64) - positive


def _poisson_products(keys: np.ndarray, replicates: int, stacked: np.ndarray) -> np.ndarray:
    """(replicates, columns): each replicate's keyed Poisson weights over the queries times ``stacked`` (queries x
    columns). Each core takes a share of the replicates and works through it a tile of replicates x queries at a
    time, its weights still in the cache when its product reads them. The products are exact integer sums, so
    neither the tiling nor the split changes a bit."""
    from threadpoolctl import threadpool_limits

    n = keys.size
    out = np.zeros((replicates, stacked.shape[1]))
    rows, width = max(1, min(TILE_REPLICATES, replicates)), max(1, min(TILE_QUERIES, n))

    def share(lo: int, hi: int) -> None:
        buffer = np.empty(rows * width)  # a tile's weights, asked of the system once
        for start in range(lo, hi, rows):
            size = min(rows, hi - start)
            for first in range(0, n, width):
                part = slice(first, min(n, first + width))
                weights = keyed.poisson_rows(keys[part], start, buffer[: size * (part.stop - first)].reshape(size, -1))
                out[start : start + size] += weights @ stacked[part]

    with threadpool_limits(1, user_api="blas"):  # one BLAS thread per share: more would contend for the same cores
        over_rows(replicates, share)
    return out


def _distinct_rows(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the distinct rows of a boolean matrix, each row's index among them), in first-seen order.

    >>> rows, of = _distinct_rows(np.array([[True, False], [True, True], [True, False]]))
    >>> rows.tolist(), of.tolist()
    ([[True, False], [True, True]], [0, 1, 0])
    """
    seen: dict[bytes, int] = {}
    of = np.array([seen.setdefault(np.packbits(row).tobytes(), len(seen)) for row in mask], dtype=np.int64)
    first = np.unique(of, return_index=True)[1]
    return mask[first], of


def partial(diffs: np.ndarray, keys: np.ndarray, plan: Plan, mask: np.ndarray | None = None) -> Partial:
    """Pass 2 over the queries of ``diffs`` (columns), whose keys (:func:`harness.stats.keyed.query_keys`) are ``keys``;
    ``mask`` as in :func:`scan`."""
    d, mask = _masked(diffs, mask)
    f, n = d.shape
    d_int = grid.on_grid(d, plan.e)
    first, second = grid.integer_sums(d_int)
    ranks = [_rank_counts(row) for row in d] if "wilcoxon" in plan.tests else None
    nonzero = (
        [d_int[i][d_int[i] != 0] if plan.enumerated[i] else d_int[i, :0] for i in range(f)] if plan.enumerated.any() else None
    )
    flips = flip_totals = weight = moments = None
    whole_n = plan.most
    if plan.sampled.size:
        bits = grid.limb_bits(3 * whole_n)  # 2 * flips - totals stays exact
        limbs = grid.split_limbs(d_int[plan.sampled], bits)  # (L, S, n)
        count = limbs.shape[0]
        stacked = np.ascontiguousarray(limbs.transpose(2, 0, 1).reshape(n, count * plan.sampled.size))  # (n, L * S)
        flip_totals = stacked.sum(axis=0).reshape(count, -1)
        flips = keyed.sign_products(keys, stacked, plan.permutations)
        flips = flips.reshape(plan.permutations, count, -1).transpose(1, 0, 2).copy()
    if plan.drawn.any():
        # the rows drawn alone: each column's sums are exact, so which other columns share the product changes no bit
        # of them
        rows = np.flatnonzero(plan.drawn)
        booted = rows.size
        bits = grid.limb_bits(keyed.MAX_WEIGHT * whole_n)
        centred = np.where(mask[rows], d_int[rows] - plan.centre[rows, None], 0)  # |.| <= 2^53; a left-out query: 0
        as_float = centred.astype(np.float64)  # exact
        square = np.rint(np.ldexp(as_float * as_float, (grid.PRECISION - plan.e_square[rows])[:, None])).astype(np.int64)
        limbs = np.concatenate([grid.split_limbs(centred, bits, grid.PRECISION + 1), grid.split_limbs(square, bits)])
        count = limbs.shape[0]
        # the last columns count each row's draws (its resample's size): one column per distinct mask, as most rows
        # of a block test the same queries
        masks, mask_of = _distinct_rows(mask[rows])
        stacked = np.empty((n, count * booted + masks.shape[0]))
        stacked[:, : count * booted] = limbs.transpose(2, 0, 1).reshape(n, count * booted)
        stacked[:, count * booted :] = masks.T
        sums = _poisson_products(keys, plan.resamples, stacked)
        weight = sums[:, count * booted :][:, mask_of]
        half = grid.n_limbs(bits, grid.PRECISION + 1)
        sums = sums[:, : count * booted].reshape(plan.resamples, count, booted).transpose(1, 0, 2)
        moments = np.zeros((2, max(half, count - half), plan.resamples, booted))
        moments[0, :half], moments[1, : count - half] = sums[:half], sums[half:]
    return Partial(first, second, ranks, nonzero, flips, flip_totals, weight, moments)


# ---- pass 3: the tests, from the whole's sums -----------------------------------------------------------------


@dataclass(frozen=True)
class Tested:
    """Every test of every row (NaN where a test was not asked for or cannot be computed)."""

    t: TResult
    wilcoxon: np.ndarray
    randomization: np.ndarray
    bootstrap: BootstrapResult
    effect_size: np.ndarray
    nonzero: np.ndarray
    positive: np.ndarray  # differences > 0
    n: np.ndarray  # queries tested

    @staticmethod
    def concatenate(blocks: list[Tested]) -> Tested:
        """The blocks' rows, one after the other."""

        def joined(parts: list[Any]) -> Any:
            if isinstance(parts[0], np.ndarray):
                return np.concatenate(parts)
            return type(parts[0])(*(joined([getattr(p, f.name) for p in parts]) for f in fields(parts[0])))

        joined_blocks: Tested = joined(blocks)
        return joined_blocks


def finish(plan: Plan, whole: Partial, confidence: float = 0.95) -> Tested:
    """The tests of every row from the whole's pass-2 sums (the sum of its partitions' partials)."""
    from scipy import special  # the distributions themselves: scipy.stats costs a second to import

    n, f = plan.scan.n, plan.e.size
    scale = np.ldexp(1.0, plan.e - grid.PRECISION)  # one grid step, per row
    largest = np.maximum(np.abs(plan.scan.high), np.abs(plan.scan.low))
    zero = plan.scan.nonzero == 0
    counts = n.tolist()
    mean = np.array([float(s) / k if k else np.nan for s, k in zip(whole.first.tolist(), counts, strict=True)]) * scale
    # the variance from exact sums: n * S2 - S1^2 is an exact integer, divided once
    var = np.array(
        [
            (k * s2 - s1 * s1) / (k * (k - 1)) if k >= 2 else np.nan
            for s1, s2, k in zip(whole.first.tolist(), whole.second.tolist(), counts, strict=True)
        ]
    )
    var = var * scale * scale
    sd = np.sqrt(var)
    enough = n >= 2
    constant = ~enough | (sd <= ZERO_SD * largest)
    with np.errstate(divide="ignore", invalid="ignore"):
        se = np.where(enough, np.where(constant, 0.0, sd / np.sqrt(n)), np.nan)
        exact_mean = np.where(constant & (np.abs(mean) <= ZERO_SD * largest), 0.0, mean)
        t = np.where(se > 0, mean / se, np.where(exact_mean == 0, 0.0, np.sign(mean) * np.inf))
        df = np.maximum(n - 1, 1)
        p_t = 2 * special.stdtr(df, -np.abs(t))  # two-sided tail of Student's t
        half = special.stdtrit(df, 0.5 + confidence / 2) * se
        effect = np.where(zero & (n > 0), 0.0, np.where(constant, np.nan, mean / sd))
    nan = np.full(f, np.nan)
    t_result = TResult(
        np.where(enough, t, nan),
        np.where(enough, p_t, nan),
        np.where(enough, mean - half, nan),
        np.where(enough, mean + half, nan),
        np.where(enough, exact_mean, nan),
        np.where(enough, np.where(constant, 0.0, sd), nan),
    )
    p_wilcoxon = np.array([_wilcoxon_from_counts(*r) for r in whole.ranks]) if whole.ranks is not None else nan
    p_random = _randomization(plan, whole, mean, n) if "randomization" in plan.tests else nan
    boot = _bootstrap(plan, whole, mean, sd, se, scale, largest, confidence)
    return Tested(t_result, p_wilcoxon, p_random, boot, effect, plan.scan.nonzero, plan.scan.positive, plan.scan.n)


def _wilcoxon_from_counts(values: np.ndarray, positive: np.ndarray, negative: np.ndarray) -> float:
    """Wilcoxon's two-sided p from the distinct non-zero |d| and how many of each are positive and negative."""
    from scipy import special

    ties = positive + negative
    k = int(ties.sum())
    if k == 0:
        return 1.0
    before = np.concatenate([[0], np.cumsum(ties)[:-1]])
    doubled = 2 * before + ties + 1  # twice each distinct value's mid-rank: an integer
    w2 = int((positive * doubled).sum())  # 2 W+
    total = int((ties * doubled).sum())
    if k <= WILCOXON_EXACT_MAX:
        tied = bool((ties > 1).any())
        counts = _w_plus_counts(tuple(np.repeat(doubled, ties).tolist())) if tied else _w_plus_counts_untied(k)
        probs = counts / counts.sum()
        low = min(w2, total - w2)  # two-sided: the tail of the smaller side, doubled
        return float(min(1.0, 2.0 * probs[: low + 1].sum()))
    w = w2 / 2.0
    mean = k * (k + 1) / 4.0
    var = k * (k + 1) * (2 * k + 1) / 24.0 - float((ties.astype(np.float64) ** 3 - ties).sum()) / 48.0
    if var <= 0:
        return 1.0
    z = (w - mean) / np.sqrt(var)
    return float(min(1.0, 2 * special.ndtr(-abs(z))))


def _randomization(plan: Plan, whole: Partial, mean: np.ndarray, n: np.ndarray) -> np.ndarray:
    p = np.where(plan.resampled, 1.0, np.nan)
    observed = np.abs(np.where(n > 0, mean, 0.0))
    threshold = _tolerance(observed)
    scale = np.ldexp(1.0, plan.e - grid.PRECISION) / np.maximum(n, 1)
    for i in np.flatnonzero(plan.enumerated).tolist():
        assert whole.nonzero is not None
        values = np.sort(whole.nonzero[i])  # integers: the sums are exact, in any order
        stats = np.abs(_all_signs(values.size).astype(np.int64) @ values) * scale[i]
        p[i] = float((stats >= threshold[i]).sum()) / stats.size
    if plan.sampled.size:
        assert whole.flips is not None and whole.flip_totals is not None
        bits = grid.limb_bits(3 * plan.most)
        flipped = grid.combine(2.0 * whole.flips - whole.flip_totals[:, None, :], bits)  # exact limbs, one rounding
        stats = np.abs(flipped) * scale[plan.sampled]
        at_least = (stats >= threshold[plan.sampled]).sum(axis=0)
        p[plan.sampled] = np.where(n[plan.sampled] > 0, (at_least + 1) / (plan.permutations + 1), 1.0)
    return p


def _bootstrap(
    plan: Plan,
    whole: Partial,
    mean: np.ndarray,
    sd: np.ndarray,
    se: np.ndarray,
    scale: np.ndarray,
    largest: np.ndarray,
    confidence: float,
) -> BootstrapResult:
    out = np.full((3, plan.e.size), np.nan)  # p, the interval's ends; NaN for the rows not bootstrapped
    zero = plan.bootstrapped & (plan.scan.nonzero == 0)  # every difference 0 (mean 0): any resample's too
    out[0, zero], out[1, zero], out[2, zero] = 1.0, mean[zero], mean[zero]
    if not plan.drawn.any():
        return BootstrapResult(out[0], out[1], out[2])
    assert whole.moments is not None and whole.weight is not None
    rows = np.flatnonzero(plan.drawn)  # the rows the sums hold, in order
    n, mean, sd, se, scale, largest = (a[rows] for a in (plan.scan.n, mean, sd, se, scale, largest))
    bits = grid.limb_bits(keyed.MAX_WEIGHT * plan.most)
    drawn = whole.weight  # (B, R): each row's resample size, Poisson(n)
    first = grid.combine(whole.moments[0], bits) * scale  # sum of w * (d - centre)
    second = grid.combine(whole.moments[1], bits) * np.ldexp(1.0, plan.e_square[rows] - grid.PRECISION) * scale * scale
    centred_mean = (
        np.array(
            [
                float(s - k * int(c)) / max(k, 1)
                for s, c, k in zip(whole.first[rows].tolist(), plan.centre[rows].tolist(), n.tolist(), strict=True)
            ]
        )
        * scale
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        resampled = first / drawn  # mean* - centre
        shift = resampled - centred_mean
        spread = second / drawn - resampled**2
        var = np.maximum(spread, 0.0) * drawn / (drawn - 1)
        se_star = np.sqrt(var / drawn)
        # one pass over the sums leaves rounding of about 2^-52 of the largest centred square: below RESOLUTION of
        # it, a resample's spread (or shift) is that rounding, e.g. when it drew only equal values
        reach = np.ldexp(plan.spread[rows], plan.e[rows] - grid.PRECISION)[None, :]
        tiny = (se_star <= ZERO_SD * np.maximum(sd, largest)[None, :]) | (spread <= RESOLUTION * reach**2)
        still = np.abs(shift) <= np.maximum(ZERO_SD, np.sqrt(RESOLUTION) * reach)
        t_star = np.where(tiny, np.where(still, 0.0, np.inf), np.abs(shift) / se_star)
    t_star = np.where(drawn < 2, np.inf, t_star)  # fewer than 2 queries drawn: no spread to studentise by
    with np.errstate(divide="ignore", invalid="ignore"):
        t_obs = np.where(se > 0, np.abs(mean) / se, np.where(np.abs(mean) <= ZERO_SD, 0.0, np.inf))
    extreme = (t_star >= _tolerance(t_obs)).sum(axis=0)
    p = (extreme + 1) / (plan.resamples + 1)
    q = np.quantile(t_star, confidence, axis=0, method="higher")
    with np.errstate(invalid="ignore"):
        half = np.where(se > 0, q * se, 0.0)
    out[:, rows] = p, mean - half, mean + half
    return BootstrapResult(out[0], out[1], out[2])


def run_tests(
    diffs: np.ndarray,
    keys: np.ndarray | None = None,
    tests: tuple[str, ...] = TESTS,
    permutations: int = 10_000,
    resamples: int = 10_000,
    confidence: float = 0.95,
    mask: np.ndarray | None = None,
    resample: np.ndarray | None = None,
) -> Tested:
    """Every test over (F, n) differences whose queries have ``keys``, in one process: the three passes in turn.

    ``mask`` (F, n): the queries each row is tested on (default: all); a row's result is
    then that of its own queries alone, bit for bit. ``resample`` (F,): the rows the
    randomisation test and the bootstrap run on (default: all); the others' p-values and
    bootstrap interval are NaN, and every other row's are those of a call on all rows, bit for bit.

    >>> keys = keyed.query_keys(1, ("demo",), np.array(["q1", "q2", "q3"], dtype=object))
    >>> r = run_tests(np.array([0.1, 0.2, 0.3]), keys, ("t", "randomization"))
    >>> round(float(r.t.statistic[0]), 4), round(float(r.t.p[0]), 4), r.randomization.tolist()   # 2 of 8 flips
    (3.4641, 0.0742, [0.25])
    """
    d, mask = _masked(diffs, mask)
    if keys is None:
        if any(test in tests for test in ("randomization", "bootstrap")):
            raise ValueError("the resampling tests need each query's key (harness.stats.keyed.query_keys)")
        keys = np.zeros(d.shape[1], dtype=np.uint64)
    if keys.shape != (d.shape[1],):
        raise ValueError(f"{keys.size} keys for {d.shape[1]} queries")
    plan = Plan.of(scan(d, mask), tests, permutations, resamples, resample)
    step = plan.rows_at_a_time(d.shape[1])
    if d.shape[0] <= step:
        return finish(plan, partial(d, keys, plan, mask), confidence)
    # rows a block at a time: a row's result depends on its own differences, the keys and the whole's bound only, so
    # the blocks' results are the whole call's bit for bit, and memory is a block's, whatever the rows
    blocks = []
    for lo in range(0, d.shape[0], step):
        hi = min(lo + step, d.shape[0])
        part = plan.rows(lo, hi)
        blocks.append(finish(part, partial(d[lo:hi], keys, part, mask[lo:hi]), confidence))
    return Tested.concatenate(blocks)


def interval_sd(n: int, low: float, high: float, confidence: float = 0.95) -> float:
    """The standard deviation of n paired differences that their t interval [low, high] implies: half its width over
    Student's quantile, times sqrt(n). How a comparison row's sd is read back, wherever its sums were computed.

    >>> r = paired_t(np.array([0.1, 0.2, 0.3]))
    >>> round(interval_sd(3, float(r.ci_low[0]), float(r.ci_high[0])), 6)   # the sd of 0.1, 0.2, 0.3
    0.1
    """
    from scipy import special

    return (high - low) / 2 / float(special.stdtrit(n - 1, 0.5 + confidence / 2)) * math.sqrt(n)


def paired_t(diffs: np.ndarray, confidence: float = 0.95) -> TResult:
    """Student's paired t-test (two-sided) and the t interval of the mean difference, from exact sums.

    >>> r = paired_t(np.array([0.1, 0.2, 0.3]))
    >>> round(float(r.statistic[0]), 4), round(float(r.p[0]), 4)   # mean 0.2, se 0.1/sqrt(3)
    (3.4641, 0.0742)
    """
    return run_tests(diffs, None, ("t",), confidence=confidence).t


def wilcoxon(diffs: np.ndarray) -> np.ndarray:
    """Wilcoxon signed-rank test (two-sided), each row on its own (see the module docstring).

    >>> wilcoxon(np.array([[0.1, 0.2, 0.3], [0.0, 0.0, 0.0]])).tolist()   # 3 positive: 2 x 1/8
    [0.25, 1.0]
    """
    return run_tests(diffs, None, ("wilcoxon",)).wilcoxon


def randomization(diffs: np.ndarray, keys: np.ndarray, permutations: int = 10_000) -> np.ndarray:
    """Fisher's randomisation test: each query's pair is swapped (its difference's sign flipped) at random.

    Exact when the row's k non-zero differences have 2^k <= ``permutations`` sign
    assignments (p = #{|mean*| >= |mean|} / 2^k); otherwise
    p = (1 + #{|mean of sign-flipped d| >= |mean d|}) / (B + 1), query q's sign in
    replicate r keyed by its key (:mod:`harness.stats.keyed`), the same for every row.
    """
    return run_tests(diffs, keys, ("randomization",), permutations=permutations).randomization


def bootstrap(diffs: np.ndarray, keys: np.ndarray, resamples: int = 10_000, confidence: float = 0.95) -> BootstrapResult:
    """Studentised paired Poisson bootstrap over queries: the symmetric bootstrap-t CI and its p-value.

    In replicate r query q counts w_qr ~ Poisson(1) times (keyed, :mod:`harness.stats.keyed`);
    t* = (mean* - mean) / se*, with mean* and se* those of the weighted sample (of size
    sum w). The CI is mean +- q se with q the ``confidence`` quantile of |t*|;
    p = (1 + #{|t*| >= |mean / se|}) / (B + 1). NaN below ``BOOTSTRAP_MIN_QUERIES`` queries.
    """
    return run_tests(diffs, keys, ("bootstrap",), resamples=resamples, confidence=confidence).bootstrap


def bootstrap_floor(resamples: int) -> float:
    """The smallest p-value the bootstrap can give: 1/(B+1)."""
    return 1.0 / (resamples + 1)


def effect_size(diffs: np.ndarray) -> np.ndarray:
    """Cohen's d_z: mean(d) / sd(d) (sd with n - 1 degrees of freedom); 0 when all d are 0, NaN when constant.

    >>> effect_size(np.array([[0.1, 0.2, 0.3], [0.1, 0.1, 0.1], [0.0, 0.0, 0.0]])).round(4).tolist()
    [2.0, nan, 0.0]
    """
    return run_tests(diffs, None, ("t",)).effect_size
