"""Two-way ANOVA without replication (systems x queries) and the randomised Tukey HSD.

For more than two systems, as Sakai recommends for IR ("Statistical Significance,
Power, and Sample Sizes", SIGIR 2014; "Laboratory Experiments in Information
Retrieval", 2018): the residual variance of the systems x topics design, and a
Tukey HSD whose null distribution comes from permuting each query's values across
systems, which controls the family-wise error over all pairs at once.

Both are functions of the per-query values and query ids only, as the paired tests
are (:mod:`harness.stats.paired`): the sums of squares are exact integer sums on a
grid (:mod:`harness.stats.grid`), and each query's permutation in each trial is keyed
by its id (:mod:`harness.stats.keyed`), so neither the queries' order nor their
partitioning changes a bit. Like the paired tests they run in passes whose parts add up
(``+``) to the whole's: :func:`scan` (order-free facts), :func:`partial` (exact sums),
:func:`finish`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from itertools import permutations

import numpy as np

from harness.kernels._parallel import over_rows
from harness.stats import grid, keyed

# the Tukey trials drawn and added up a tile of trials at a time on each core, up to this many systems (one of the m!
# tabled permutations drawn per query); beyond, indicator matrices for a block of trials over every query at a time
_TILE_TRIALS, _TABLED_SYSTEMS = 512, 6
MEASURES_BUDGET = 256 << 20  # bytes: run analyses as many measures at a time as their Tukey trials' arrays fit in

Done = Callable[[float], None]
"""Told the share of the Tukey trials done so far (0 to 1, rising), from whichever thread did them: their progress."""


class _Trials:
    """Counts a pass's Tukey trials as its threads finish them, and tells ``done`` the share of ``total`` done."""

    def __init__(self, total: int, done: Done | None) -> None:
        self.total, self.done, self.count = max(total, 1), done, 0
        self.lock = threading.Lock()

    def add(self, trials: int) -> None:
        if self.done is None:
            return
        with self.lock:
            self.count += trials
            self.done(min(self.count / self.total, 1.0))


@dataclass(frozen=True)
class AnovaResult:
    f: float
    p: float
    df_systems: int
    df_residual: int
    residual_variance: float


@dataclass(frozen=True)
class Scan:
    """Per measure: the queries analysed (defined for every system) and the largest |value|; parts add up (``+``)."""

    n: np.ndarray
    largest: np.ndarray

    def __add__(self, other: Scan) -> Scan:
        return Scan(self.n + other.n, np.maximum(self.largest, other.largest))


def _masked(x: np.ndarray, mask: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """((M, m, n) values with left-out queries set to 0 for every system, (M, n) mask)."""
    data = np.asarray(x, dtype=np.float64)
    data = data[None] if data.ndim == 2 else data
    shape = (data.shape[0], data.shape[2])
    mask = np.ones(shape, dtype=bool) if mask is None else np.broadcast_to(np.asarray(mask, dtype=bool), shape)
    return np.where(mask[:, None, :], data, 0.0), mask


def scan(x: np.ndarray, mask: np.ndarray | None = None) -> Scan:
    """Pass 1 over (M measures, m systems, n queries); ``mask`` (M, n): the queries each measure is analysed on."""
    data, mask = _masked(x, mask)
    return Scan(mask.sum(axis=1), np.abs(data).max(axis=(1, 2), initial=0.0))


@dataclass(frozen=True)
class Plan:
    scan: Scan
    trials: int
    e: np.ndarray  # the grid of each measure

    most: int  # the most queries of any measure of the whole: what bounds every sum, so what sizes the limbs

    @classmethod
    def of(cls, whole: Scan, trials: int = 10_000) -> Plan:
        return cls(whole, trials, grid.exponent(whole.largest), int(whole.n.max(initial=0)))

    def measures(self, lo: int, hi: int) -> Plan:
        """The plan of measures lo .. hi alone, with the whole's bound on the sums: their limbs, and every bit of
        their results, are the whole's."""
        return replace(self, scan=Scan(self.scan.n[lo:hi], self.scan.largest[lo:hi]), e=self.e[lo:hi])

    def measures_at_a_time(self, systems: int, queries: int) -> int:
        """How many measures :func:`run` takes at a time within :data:`MEASURES_BUDGET`: a measure costs about 8
        float64 arrays of trials x systems (the slots' limb sums, the shuffled means, their ranges and sort) and 6 of
        systems x queries (the grid and the limbs)."""
        per_measure = 8 * systems * (8 * self.trials + 6 * queries) + 1
        return max(1, MEASURES_BUDGET // per_measure)


@dataclass(frozen=True)
class Partial:
    """Exact sums over some queries: per measure and system, and of squares; the Tukey trials' shuffled slot sums."""

    system_sums: np.ndarray  # (M, m) object: Python integers
    squares: np.ndarray  # (M,) object: sum of x^2
    query_squares: np.ndarray  # (M,) object: sum over queries of (sum over systems of x)^2
    slots: np.ndarray | None  # (L, trials, m - 1, M): limb sums of what each slot holds, less the last system's
    last: np.ndarray  # (L', M): limb sums of the last system's values

    def __add__(self, other: Partial) -> Partial:
        slots = None if self.slots is None else self.slots + other.slots
        return Partial(
            self.system_sums + other.system_sums,
            self.squares + other.squares,
            self.query_squares + other.query_squares,
            slots,
            self.last + other.last,
        )


def _indicators(m: int, keys: np.ndarray, first: int, count: int) -> Callable[[int, int], np.ndarray]:
    """A uniformly random permutation of range(m) for every (trial, query), keyed by the query and shuffled
    (Fisher-Yates), as ``slot(i, j)``: the float (trials, n) matrix of "slot i holds system j". For more than
    ``_TABLED_SYSTEMS`` systems, whose m! permutations are not drawn from a table (:func:`_tabled_slots`)."""
    perm = keyed.shuffle_matrix(keys, m, first, count)
    return lambda i, j: (perm[:, :, i] == j).astype(np.float64)


def _tabled_slots(keys: np.ndarray, m: int, trials: int, limbs_of: Callable[[int], np.ndarray], counted: _Trials) -> np.ndarray:
    """(trials, m - 1, L * M): what each slot holds in each trial, less the last system, summed over the queries:
    each (trial, query) draws one of the m! permutations and adds the limbs (``limbs_of(j)``: (L, M, n), system j's
    values less the last system's) of the systems it sends to the first m - 1 slots (compiled:
    :func:`keyed.slot_sums`), where indicator matrices times the limbs multiplied each of them by 0 or 1 (3 systems
    of 200,000 queries: 12.4 s -> 5 s). Each core takes a share of the trials, a tile at a time (the progress's
    steps); the sums are exact: neither the order nor the split changes a bit."""
    table = np.ascontiguousarray(np.array(list(permutations(range(m))), dtype=np.int8)[:, : m - 1])
    width = keyed.SUMMED_COLUMNS
    limbs = limbs_of(0)
    columns, n = limbs.shape[0] * limbs.shape[1], limbs.shape[2]
    # each group of ``width`` columns of a system's queries one after the other, padded with zeros
    grouped = np.zeros((m - 1, -(-columns // width), n, width))
    for j in range(m - 1):
        flat = (limbs if j == 0 else limbs_of(j)).reshape(columns, n)  # column l * M + k: limb l of measure k
        for g in range(grouped.shape[1]):
            part = flat[g * width : (g + 1) * width]
            grouped[j, g, :, : part.shape[0]] = part.T
    del limbs, flat  # laid out in ``grouped``, which the trials read
    out = np.zeros((trials, m - 1, grouped.shape[1] * width))

    def share(lo: int, hi: int) -> None:
        for start in range(lo, hi, _TILE_TRIALS):
            stop = min(hi, start + _TILE_TRIALS)
            keyed.slot_sums(keys, table, grouped, start, stop, out)
            counted.add(stop - start)

    over_rows(trials, share)
    return out[:, :, :columns]


def partial(
    x: np.ndarray, keys: np.ndarray, plan: Plan, mask: np.ndarray | None = None, tukey: bool = True, done: Done | None = None
) -> Partial:
    """Pass 2 over the queries of ``x`` (M, m, n), whose keys are ``keys``; ``done``: told the share of the Tukey
    trials done as they are (:data:`Done`).

    The Tukey trials' shuffled sums are, for slot i, ``sum_j [perm[t, q, i] == j] @ x[j]`` on the
    grid, exact in limbs. Since every query sends exactly one system's value to each slot, slot i
    gets ``sum_{j < m-1} [perm == j] @ (x[j] - x[m-1])`` plus the last system's sum, and the last
    slot what the others leave. Up to ``_TABLED_SYSTEMS`` systems a compiled pass adds each
    (trial, query)'s rows (:func:`_tabled_slots`); beyond, indicator matrices multiply them, (m-1)^2
    products per block of trials.
    """
    data, mask = _masked(x, mask)
    n_measures, m, n = data.shape
    if n_measures == 0:  # no per-query measure to analyse (system measures only)
        nothing = np.zeros(0, dtype=object)
        return Partial(
            nothing.reshape(0, m),
            nothing,
            nothing.copy(),
            np.zeros((1, plan.trials, m - 1, 0)) if tukey else None,
            np.zeros((1, 0)),
        )
    on = grid.on_grid(data.reshape(n_measures, -1), plan.e).reshape(n_measures, m, n)
    system_sums = np.array([grid.integer_sums(on[k])[0] for k in range(n_measures)], dtype=object).reshape(n_measures, m)
    squares = grid.integer_sums(on.reshape(n_measures, -1))[1]
    query_squares = grid.integer_sums(on.sum(axis=1), grid.PRECISION + m.bit_length())[1]
    bits = grid.limb_bits(plan.most)
    last = grid.split_limbs(on[:, m - 1, :], bits).sum(axis=2)  # exact
    if not tukey:
        return Partial(system_sums, squares, query_squares, None, last)

    def limbs_of(j: int) -> np.ndarray:  # (L, M, n): system j's values less the last system's, in limbs
        return grid.split_limbs(on[:, j, :] - on[:, m - 1, :], bits, grid.PRECISION + 1)

    counted = _Trials(plan.trials, done)
    if m <= _TABLED_SYSTEMS:  # each system's limbs made and laid out in turn
        slots = _tabled_slots(keys, m, plan.trials, limbs_of, counted)
    else:
        limbs = [limbs_of(j) for j in range(m - 1)]
        stacked = [np.ascontiguousarray(c.transpose(2, 0, 1).reshape(n, c.shape[0] * n_measures)) for c in limbs]  # (n, L * M)
        slots = np.zeros((plan.trials, m - 1, stacked[0].shape[1]))
        block = max(1, min(plan.trials, 4_000_000 // max(1, n * m)))
        for first in range(0, plan.trials, block):
            size = min(block, plan.trials - first)
            slot_holds = _indicators(m, keys, first, size)
            for i in range(m - 1):
                for j in range(m - 1):
                    slots[first : first + size, i, :] += slot_holds(i, j) @ stacked[j]
            counted.add(size)
    return Partial(
        system_sums,
        squares,
        query_squares,
        slots.reshape(plan.trials, m - 1, slots.shape[2] // n_measures, n_measures).transpose(2, 0, 1, 3).copy(),
        last,
    )


def anova(plan: Plan, whole: Partial, m: int) -> list[AnovaResult]:
    """The F-test of the system effect with queries as blocks, per measure, from exact sums.

    With S_s the systems' sums, Q_q the queries' sums and G the grand sum (on the grid),
    SS_systems = (m sum S_s^2 - G^2) / (mn) and SS_residual = (mn sum x^2 - n sum Q_q^2
    - m sum S_s^2 + G^2) / (mn): integers divided once.
    """
    from scipy import special

    out = []
    for k, n in enumerate(plan.scan.n.tolist()):
        df_s, df_e = m - 1, (m - 1) * (n - 1)
        if df_e <= 0:
            out.append(AnovaResult(float("nan"), float("nan"), df_s, max(df_e, 0), float("nan")))
            continue
        sums = [int(v) for v in whole.system_sums[k].tolist()]
        grand = sum(sums)
        between = m * sum(s * s for s in sums) - grand * grand  # (mn) SS_systems
        within = m * n * int(whole.squares[k]) - n * int(whole.query_squares[k]) - m * sum(s * s for s in sums) + grand * grand
        if within == 0:
            out.append(AnovaResult(0.0 if between == 0 else float("inf"), 1.0 if between == 0 else 0.0, df_s, df_e, 0.0))
            continue
        f = (between * df_e) / (within * df_s)
        step = float(np.ldexp(1.0, int(plan.e[k]) - grid.PRECISION))
        v_e = within / (m * n * df_e) * step * step
        out.append(AnovaResult(float(f), float(special.fdtrc(df_s, df_e, f)), df_s, df_e, float(v_e)))
    return out


def tukey(plan: Plan, whole: Partial, m: int) -> np.ndarray:
    """(M, m, m) randomised Tukey HSD p-values: p_ij = (1 + #{range >= |mean_i - mean_j|}) / (B + 1)."""
    assert whole.slots is not None
    if not plan.scan.n.size:
        return np.ones((0, m, m))
    n = np.maximum(plan.scan.n, 1).astype(np.float64)
    step = np.ldexp(1.0, plan.e - grid.PRECISION)  # (M,)
    means = (
        np.array(
            [[int(s) / k for s in row] for row, k in zip(whole.system_sums.tolist(), plan.scan.n.tolist(), strict=True)]
        ).reshape(-1, m)
        * step[:, None]
    )
    observed = np.abs(means[:, :, None] - means[:, None, :])  # (M, m, m)
    bits = grid.limb_bits(plan.most)
    slot = grid.combine(whole.slots, bits) + grid.combine(whole.last, bits)[None, None, :]  # (trials, m - 1, M)
    totals = np.array([float(sum(int(s) for s in row)) for row in whole.system_sums.tolist()])
    rest = totals[None, :] - slot.sum(axis=1)  # the last slot: what the others leave, from exact pieces
    shuffled = np.concatenate([slot, rest[:, None, :]], axis=1) * (step / n)[None, None, :]
    ranges = (shuffled.max(axis=1) - shuffled.min(axis=1)).T  # (M, trials)
    threshold = observed - 1e-12 * np.maximum(1.0, observed)
    sorted_ranges = np.sort(ranges, axis=1)
    counts = np.empty_like(observed)
    for k in range(observed.shape[0]):  # count ranges >= each threshold by binary search
        counts[k] = plan.trials - np.searchsorted(sorted_ranges[k], threshold[k].ravel(), side="left").reshape(m, m)
    p = (counts + 1) / (plan.trials + 1)
    idx = np.arange(m)
    p[:, idx, idx] = 1.0
    return p


def run(
    x: np.ndarray,
    keys: np.ndarray | None,
    trials: int = 10_000,
    mask: np.ndarray | None = None,
    tukey_hsd: bool = True,
    done: Done | None = None,
) -> tuple[list[AnovaResult], np.ndarray | None]:
    """The three passes in one process: (ANOVA per measure, Tukey p-values (M, m, m) or None); ``done``: told the
    share of the Tukey trials done as they are, over every measure (:data:`Done`)."""
    data, mask = _masked(x, mask)
    plan = Plan.of(scan(data, mask), trials)
    keys = np.zeros(data.shape[2], dtype=np.uint64) if keys is None else keys
    m = data.shape[1]
    step = plan.measures_at_a_time(m, data.shape[2])
    results: list[AnovaResult] = []
    p: list[np.ndarray] = []
    # measures a block at a time: a measure's results depend on its own values, the keys and the whole's bound only,
    # so they are the whole call's bit for bit, and memory is a block's, whatever the measures
    blocks = range(0, max(data.shape[0], 1), step)
    for number, lo in enumerate(blocks):
        hi = min(lo + step, data.shape[0])
        part = plan.measures(lo, hi)
        share = None if done is None else (lambda f, b=number, tell=done: tell((b + f) / len(blocks)))
        whole = partial(data[lo:hi], keys, part, mask[lo:hi], tukey_hsd, share)
        results += anova(part, whole, m)
        if tukey_hsd:
            p.append(tukey(part, whole, m))
    return results, np.concatenate(p) if tukey_hsd else None


def two_way_anova(x: np.ndarray) -> AnovaResult:
    """``x``: (m systems, n queries). F-test of the system effect with queries as blocks, from exact sums (:func:`anova`).

    >>> r = two_way_anova(np.array([[0.1, 0.2, 0.3], [0.3, 0.4, 0.6]]))
    >>> round(r.f, 6), r.df_systems, r.df_residual   # two systems: the paired t-test's t^2 (differences .2 .2 .3: t = 7)
    (49.0, 1, 2)
    """
    return run(x, None, tukey_hsd=False)[0][0]


def randomized_tukey_hsd(x: np.ndarray, keys: np.ndarray, trials: int = 10_000) -> np.ndarray:
    """p-values for every pair of systems, for one or several measures at once.

    ``x``: (m systems, n queries), or (M measures, m, n); ``keys``: the queries' keys
    (:func:`harness.stats.keyed.query_keys`). Each trial shuffles every query's m values
    across the systems (the same shuffle for every measure, keyed by the query) and
    records the range (max - min) of the system means;
    p_ij = (1 + #{range >= |mean_i - mean_j|}) / (B + 1). Returns (m, m) or (M, m, m).
    """
    p = run(x, keys, trials)[1]
    assert p is not None
    return np.asarray(p[0] if x.ndim == 2 else p)
