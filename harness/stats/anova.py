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
partitioning changes a bit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from harness.stats import grid, keyed


@dataclass(frozen=True)
class AnovaResult:
    f: float
    p: float
    df_systems: int
    df_residual: int
    residual_variance: float


def two_way_anova(x: np.ndarray) -> AnovaResult:
    """``x``: (m systems, n queries). F-test of the system effect with queries as blocks, from exact sums.

    With S_s the systems' sums, Q_q the queries' sums and G the grand sum (on the grid),
    SS_systems = (m sum S_s^2 - G^2) / (mn) and SS_residual = (mn sum x^2 - n sum Q_q^2
    - m sum S_s^2 + G^2) / (mn): integers divided once.

    >>> r = two_way_anova(np.array([[0.1, 0.2, 0.3], [0.3, 0.4, 0.6]]))
    >>> round(r.f, 6), r.df_systems, r.df_residual   # two systems: the paired t-test's t^2 (differences .2 .2 .3: t = 7)
    (49.0, 1, 2)
    """
    from scipy import special

    m, n = x.shape
    df_s, df_e = m - 1, (m - 1) * (n - 1)
    if df_e == 0:
        return AnovaResult(float("nan"), float("nan"), df_s, df_e, float("nan"))
    e = grid.exponent(np.abs(x).max(keepdims=True).ravel())
    on = grid.on_grid(np.asarray(x, dtype=np.float64).reshape(1, -1), e).reshape(m, n)
    system_sums, _ = grid.integer_sums(on)
    _, squares = grid.integer_sums(on.reshape(1, -1))
    _, query_squares = grid.integer_sums(on.sum(axis=0, keepdims=True), grid.PRECISION + m.bit_length())
    grand = sum(system_sums.tolist())
    between = m * sum(s * s for s in system_sums.tolist()) - grand * grand  # (mn) SS_systems
    within = m * n * int(squares[0]) - n * int(query_squares[0]) - m * sum(s * s for s in system_sums.tolist()) + grand * grand
    if within == 0:
        return AnovaResult(0.0 if between == 0 else float("inf"), 1.0 if between == 0 else 0.0, df_s, df_e, 0.0)
    f = (between * df_e) / (within * df_s)
    step = float(np.ldexp(1.0, int(e[0]) - grid.PRECISION))
    v_e = within / (m * n * df_e) * step * step
    return AnovaResult(float(f), float(special.fdtrc(df_s, df_e, f)), df_s, df_e, float(v_e))


def _indicators(m: int, keys: np.ndarray, first: int, count: int) -> Callable[[int, int], np.ndarray]:
    """A uniformly random permutation of range(m) for every (trial, query), keyed by the query, as ``slot(i, j)``:
    the float (trials, n) matrix of "slot i holds system j".

    Up to 6 systems, each (trial, query) draws one of the m! permutations and the indicator
    is a lookup in a tiny per-(slot, system) table (no permutation array is built);
    beyond, each permutation is shuffled (Fisher-Yates).
    """
    if m <= 6:
        from itertools import permutations

        table = np.array(list(permutations(range(m))), dtype=np.int8)
        choice = keyed.uniform_matrix(keys, len(table), first, count)
        lookup = (table[:, :, None] == np.arange(m)[None, None, :]).astype(np.float64)  # (m!, slot, system)
        return lambda i, j: lookup[:, i, j][choice]
    perm = keyed.shuffle_matrix(keys, m, first, count)
    return lambda i, j: (perm[:, :, i] == j).astype(np.float64)


def randomized_tukey_hsd(x: np.ndarray, keys: np.ndarray, trials: int = 10_000) -> np.ndarray:
    """p-values for every pair of systems, for one or several measures at once.

    ``x``: (m systems, n queries), or (M measures, m, n); ``keys``: the queries' keys
    (:func:`harness.stats.keyed.query_keys`). Each trial shuffles every query's m values
    across the systems (the same shuffle for every measure, keyed by the query) and
    records the range (max - min) of the system means;
    p_ij = (1 + #{range >= |mean_i - mean_j|}) / (B + 1). Returns (m, m) or (M, m, m).

    The shuffled sums are indicator matrices times the data on the grid
    (``[perm[t, q, i] == j] @ x[j]``), exact in limbs. Since every query sends exactly one
    system's value to each slot, slot i gets
    ``sum_{j < m-1} [perm == j] @ (x[j] - x[m-1]) + sum_q x[m-1]`` and the last slot what
    the others leave: (m-1)^2 matrix products per block, not m^2.
    """
    single = x.ndim == 2
    data = x[None] if single else x
    n_measures, m, n = data.shape
    e = grid.exponent(np.abs(data).reshape(n_measures, -1).max(axis=1))
    on = grid.on_grid(data.reshape(n_measures, -1), e).reshape(n_measures, m, n)
    step = np.ldexp(1.0, e - grid.PRECISION)  # (M,)
    sums = np.array([[int(v) for v in grid.integer_sums(on[k])[0].tolist()] for k in range(n_measures)], dtype=object)
    means = np.array([[float(s) / n for s in row] for row in sums.tolist()]).reshape(n_measures, m) * step[:, None]
    observed = np.abs(means[:, :, None] - means[:, None, :])  # (M, m, m)
    bits = grid.limb_bits(n)
    last = on[:, m - 1, :]
    columns = [grid.split_limbs(on[:, j, :] - last, bits, grid.PRECISION + 1) for j in range(m - 1)]  # (L, M, n) each
    count = columns[0].shape[0] if columns else 1
    stacked = [np.ascontiguousarray(c.transpose(2, 0, 1).reshape(n, -1)) for c in columns]  # (n, L * M)
    base = grid.split_limbs(last, bits).sum(axis=2)  # (L', M) exact
    total = np.array([sum(int(v) for v in row) for row in sums.tolist()], dtype=object)  # (M,) grand sums, exact
    ranges = np.empty((n_measures, trials))
    block = max(1, min(trials, 4_000_000 // max(1, n * m)))
    for done in range(0, trials, block):
        size = min(block, trials - done)
        slot_holds = _indicators(m, keys, done, size)
        limb_sums = np.zeros((size, m - 1, count * n_measures))
        for i in range(m - 1):
            for j in range(m - 1):
                limb_sums[:, i, :] += slot_holds(i, j) @ stacked[j]
        moved = grid.combine(limb_sums.reshape(size, m - 1, count, n_measures).transpose(2, 0, 1, 3), bits)
        slot = moved + grid.combine(base, bits)[None, None, :]  # (size, m - 1, M): the first m - 1 slots' sums
        # the last slot's sum is the grand total less the others': from exact pieces, with one rounding each
        rest = np.array([float(t) for t in total.tolist()])[None, :] - slot.sum(axis=1)
        shuffled = np.concatenate([slot, rest[:, None, :]], axis=1) * (step / n)[None, None, :]
        ranges[:, done : done + size] = (shuffled.max(axis=1) - shuffled.min(axis=1)).T
    threshold = observed - 1e-12 * np.maximum(1.0, observed)
    sorted_ranges = np.sort(ranges, axis=1)
    counts = np.empty_like(observed)
    for k in range(n_measures):  # count ranges >= each threshold by binary search
        counts[k] = trials - np.searchsorted(sorted_ranges[k], threshold[k].ravel(), side="left").reshape(m, m)
    p = (counts + 1) / (trials + 1)
    idx = np.arange(m)
    p[:, idx, idx] = 1.0
    return np.asarray(p[0] if single else p)
