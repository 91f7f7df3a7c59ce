"""User-model measures: RBP and its residual, ERR, trec_eval's G and binG.

>>> import numpy as np
>>> lists = RankedLists(offsets=np.array([0, 5]), label=np.array([0., 1, 0, 1, 1]),   # one query: ranks 2, 4, 5 relevant
...                     judged_offsets=np.array([0, 5]), judged_label=np.array([0., 1, 0, 1, 1]))
>>> rbp(lists, 0.5, GainScheme.linear()).tolist()   # (1 - 0.5) (0.5 + 0.5^3 + 0.5^4)
[0.34375]
"""

from __future__ import annotations

import numpy as np

from harness.kernels._segments import RankedLists, segment_cumsum
from harness.kernels.gains import GainScheme


def rbp(lists: RankedLists, p: float, scheme: GainScheme) -> np.ndarray:
    """Rank-biased precision (Moffat and Zobel, TOIS 2008): (1 - p) * sum_i g_i p^(i-1).

    As in trec_eval, gains outside [0, 1] are rescaled per query to
    (g - min) / (max - min) over the gains of the levels 0..max judged level.
    """
    gains = lists.gains(scheme)
    judged = lists.judged_label
    top_level = np.full(lists.n_queries, -1.0)
    valid = judged >= 0
    np.maximum.at(top_level, lists.judged_qidx[valid], np.floor(judged[valid]))
    # Gains of the levels 0..top_level: their min and max decide the rescaling.
    n_levels = int(top_level.max()) + 1 if lists.n_queries else 0
    level_gain = scheme.gain_of(np.arange(max(n_levels, 1), dtype=np.float64))
    prefix_min = np.minimum.accumulate(level_gain)
    prefix_max = np.maximum.accumulate(level_gain)
    idx = np.maximum(top_level, 0).astype(np.int64)
    lo = np.where(top_level >= 0, prefix_min[idx], 0.0)
    hi = np.where(top_level >= 0, prefix_max[idx], 0.0)
    for _, gain in scheme.table:  # trec_eval's gain table also holds every level named in the parameters
        lo = np.minimum(lo, gain)
        hi = np.maximum(hi, gain)
    rescale = (lo < 0) | (hi > 1)
    q = lists.qidx
    span = (hi - lo)[q]
    scaled = np.where(rescale[q], np.divide(gains - lo[q], span, out=np.zeros_like(gains), where=span != 0), gains)
    weight = np.power(p, lists.pos.astype(np.float64))
    return (1.0 - p) * lists.sum(np.where(gains != 0, scaled * weight, 0.0))


def rbp_residual(lists: RankedLists, p: float = 0.9) -> np.ndarray:
    """RBP's uncertainty from unjudged documents: p^n + (1 - p) * sum over unjudged p^(i-1).

    0 when every retrieved document is judged (trec_eval ``rbp_resid``).
    """
    unjudged = ~(lists.label >= 0)
    weight = np.power(p, lists.pos.astype(np.float64))
    total = lists.sum(np.where(unjudged, weight, 0.0))
    tail = np.power(p, lists.n_ret.astype(np.float64))
    return np.where(lists.sum(unjudged) > 0, tail + (1.0 - p) * total, 0.0)


def expected_reciprocal_rank(lists: RankedLists, k: int | None, max_rel: float) -> np.ndarray:
    """ERR@k (Chapelle et al., CIKM 2009): sum_r (1/r) R_r prod_{i<r} (1 - R_i), R = (2^g - 1) / 2^max_rel."""
    grade = np.where(lists.label >= 0, np.minimum(lists.label, max_rel), 0.0)
    stop = (np.exp2(grade) - 1.0) / np.exp2(max_rel)
    go_on = 1.0 - stop
    # prod over earlier ranks, via logs; a certain stop (go_on = 0) is counted apart.
    zero = go_on <= 0
    logs = np.log(np.where(zero, 1.0, go_on))
    before = lists.cumsum(logs) - logs
    zeros_before = lists.cumsum(zero) - zero
    reach = np.where(zeros_before > 0, 0.0, np.exp(before))
    return lists.sum_top(stop * reach / (lists.pos + 1.0), k)


def bin_g(lists: RankedLists, rel: float | None = None) -> np.ndarray:
    """binG: (1/R) * sum over relevant retrieved of 1 / log2(2 + non-relevant ranked above)."""
    hits = lists.hits(rel)
    misses_above = (lists.pos + 1.0) - lists.cumsum(hits)
    total = lists.sum(np.where(hits, 1.0 / np.log2(2.0 + misses_above), 0.0))
    big_r = lists.num_rel(rel)
    return np.divide(total, big_r, out=np.zeros_like(total), where=big_r > 0)


def g_measure(lists: RankedLists, scheme: GainScheme) -> np.ndarray:
    """trec_eval's G: sum_i g_i / log2(2 + cost_i - gained_i), over the total ideal gain.

    cost_i sums max(ideal gain, 1) over the first i ideal positions; gained_i sums
    the gains retrieved so far.
    """
    gains = lists.gains(scheme)
    gained = lists.cumsum(gains)
    offsets, ideal = lists.ideal(scheme)
    n_pos = np.diff(offsets)
    cost_run = segment_cumsum(np.maximum(ideal, 1.0), offsets, n_pos)
    q = lists.qidx
    depth = lists.pos + 1
    within = np.minimum(depth, n_pos[q])
    has = within > 0
    cost = np.zeros(gains.size)
    cost[has] = cost_run[offsets[:-1][q[has]] + within[has] - 1]
    cost += np.maximum(depth - n_pos[q], 0)
    total = lists.sum(np.where(gains != 0, gains / np.log2(2.0 + cost - gained), 0.0))
    owner = np.repeat(np.arange(lists.n_queries), n_pos)
    ideal_total = np.bincount(owner, weights=ideal, minlength=lists.n_queries).astype(np.float64)
    return np.divide(total, ideal_total, out=np.zeros_like(total), where=ideal_total > 0)
