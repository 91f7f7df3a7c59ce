"""Two-way ANOVA without replication (systems x queries) and the randomised Tukey HSD.

For more than two systems, as Sakai recommends for IR ("Statistical Significance,
Power, and Sample Sizes", SIGIR 2014; "Laboratory Experiments in Information
Retrieval", 2018): the residual variance of the systems x topics design, and a
Tukey HSD whose null distribution comes from permuting each query's values across
systems, which controls the family-wise error over all pairs at once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class AnovaResult:
    f: float
    p: float
    df_systems: int
    df_residual: int
    residual_variance: float


def two_way_anova(x: np.ndarray) -> AnovaResult:
    """``x``: (m systems, n queries). F-test of the system effect with queries as blocks."""
    from scipy import special

    m, n = x.shape
    grand = x.mean()
    ss_systems = n * ((x.mean(axis=1) - grand) ** 2).sum()
    residual = x - x.mean(axis=1, keepdims=True) - x.mean(axis=0, keepdims=True) + grand
    ss_residual = (residual**2).sum()
    df_s, df_e = m - 1, (m - 1) * (n - 1)
    if df_e == 0:
        return AnovaResult(float("nan"), float("nan"), df_s, df_e, float("nan"))
    v_e = ss_residual / df_e
    if v_e == 0:
        f = 0.0 if ss_systems == 0 else float("inf")
        return AnovaResult(f, 1.0 if ss_systems == 0 else 0.0, df_s, df_e, 0.0)
    f = (ss_systems / df_s) / v_e
    return AnovaResult(float(f), float(special.fdtrc(df_s, df_e, f)), df_s, df_e, float(v_e))


def _indicators(m: int, rng: np.random.Generator, shape: tuple[int, int]) -> Callable[[int, int], np.ndarray]:
    """A uniformly random permutation of range(m) for every (trial, query), as ``slot(i, j)``:
    the float (trials, n) matrix of "slot i holds system j".

    Up to 6 systems, each (trial, query) draws one of the m! permutations and the indicator
    is a lookup in a tiny per-(slot, system) table (no permutation array is built);
    beyond, permutations come from sorting random keys.
    """
    if m <= 6:
        from itertools import permutations

        table = np.array(list(permutations(range(m))), dtype=np.int8)
        choice = rng.integers(0, len(table), size=shape, dtype=np.uint8)
        lookup = (table[:, :, None] == np.arange(m)[None, None, :]).astype(np.float64)  # (m!, slot, system)
        return lambda i, j: lookup[:, i, j][choice]
    perm = rng.random((*shape, m)).argsort(axis=2).astype(np.int8)
    return lambda i, j: (perm[:, :, i] == j).astype(np.float64)


def randomized_tukey_hsd(x: np.ndarray, rng: np.random.Generator, trials: int = 10_000) -> np.ndarray:
    """p-values for every pair of systems, for one or several measures at once.

    ``x``: (m systems, n queries), or (M measures, m, n). Each trial shuffles every
    query's m values across the systems (the same shuffle for every measure) and
    records the range (max - min) of the system means;
    p_ij = (1 + #{range >= |mean_i - mean_j|}) / (B + 1). Returns (m, m) or (M, m, m).

    The shuffled means are sums of indicator matrices times the data
    (``[perm[t, q, i] == j] @ x[j]``). Since every query sends exactly one system's
    value to each slot, sum_j [perm == j] = 1, so with the last system as reference
    slot i gets ``sum_{j < m-1} [perm == j] @ (x[j] - x[m-1]) + sum_q x[m-1]``:
    The last slot holds what the others leave: (m-1)^2 matrix products per block, not m^2.
    """
    single = x.ndim == 2
    data = x[None] if single else x
    n_measures, m, n = data.shape
    means = data.mean(axis=2)
    observed = np.abs(means[:, :, None] - means[:, None, :])  # (M, m, m)
    ranges = np.empty((n_measures, trials))
    last = data[:, m - 1, :]
    columns = [np.ascontiguousarray((data[:, j, :] - last).T) for j in range(m - 1)]  # (n, M) per system
    base = last.sum(axis=1)  # (M,)
    total = data.sum(axis=(1, 2))  # (M,): every slot's sum adds up to this in every trial
    block = max(1, min(trials, 4_000_000 // max(1, n * m)))
    done = 0
    while done < trials:
        size = min(block, trials - done)
        slot = _indicators(m, rng, (size, n))
        shuffled = np.empty((size, m, n_measures))
        shuffled[:] = base
        for i in range(m - 1):
            for j in range(m - 1):
                shuffled[:, i, :] += slot(i, j) @ columns[j]
        shuffled[:, m - 1, :] = total - shuffled[:, : m - 1, :].sum(axis=1)  # the slots share each query's values
        shuffled /= n
        ranges[:, done : done + size] = (shuffled.max(axis=1) - shuffled.min(axis=1)).T
        done += size
    threshold = observed - 1e-12 * np.maximum(1.0, observed)
    sorted_ranges = np.sort(ranges, axis=1)
    counts = np.empty_like(observed)
    for k in range(n_measures):  # count ranges >= each threshold by binary search
        counts[k] = trials - np.searchsorted(sorted_ranges[k], threshold[k].ravel(), side="left").reshape(m, m)
    p = (counts + 1) / (trials + 1)
    idx = np.arange(m)
    p[:, idx, idx] = 1.0
    return np.asarray(p[0] if single else p)
