"""Cumulative gain family: CG, DCG, IDCG, nDCG, and trec_eval's ndcg_rel and Rndcg.

DCG@k = sum over ranks i <= k of gain(d_i) / log2(i + 1) (Järvelin and Kekäläinen,
ACM TOIS 20(4), 2002, in the form every current tool uses). The ideal ranking is
built from every judged document with a positive gain (not from the retrieved
list), and truncated at k for nDCG@k.
"""

from __future__ import annotations

import numpy as np

from harness.kernels._segments import RankedLists, discount, largest_sums, segment_cumsum, segment_rows
from harness.kernels.gains import GainScheme


def cumulative_gain(lists: RankedLists, k: int | None, scheme: GainScheme) -> np.ndarray:
    """CG@k: the sum of the gains of the top k documents."""
    lists = lists if k is None else lists.head(k)
    return lists.sum_top(lists.tie_mean(lists.gains(scheme)), k)


def dcg(lists: RankedLists, k: int | None, scheme: GainScheme) -> np.ndarray:
    """DCG@k; over the whole list when k is None (trec_eval ``dcg``)."""
    lists = lists if k is None else lists.head(k)
    if lists.tie_group is None:  # each gain times its rank's discount, summed in rank order, in one compiled pass
        return lists.rank_weighted_sum(lists.gains(scheme), discount(np.arange(lists.n_ret.max(initial=0))))
    gains = lists.tie_mean(lists.gains(scheme))
    return lists.sum_top(gains * discount(lists.pos), k)


def _ideal_cumulative(lists: RankedLists, scheme: GainScheme) -> tuple[np.ndarray, np.ndarray]:
    offsets, gains = lists.ideal(scheme)
    counts = np.diff(offsets)
    pos = np.arange(gains.size) - np.repeat(offsets[:-1], counts)
    return offsets, segment_cumsum(gains * discount(pos), offsets, counts)


def _at(offsets: np.ndarray, running: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """running value at 1-based rank (clipped to the segment); 0 for rank 0 or empty segments."""
    counts = np.diff(offsets)
    rank = np.minimum(rank, counts)
    out = np.zeros(len(counts), dtype=np.float64)
    ok = rank > 0
    out[ok] = running[offsets[:-1][ok] + rank[ok] - 1]
    return out


def ideal_dcg(lists: RankedLists, k: int | None, scheme: GainScheme) -> np.ndarray:
    """IDCG@k: the DCG of the best possible ranking of the judged documents (cut at a shorter list's length under
    ``short_lists: truncate``)."""
    # each query's k largest positive gains (all of them without k), summed from 0.0 in decreasing order, each times
    # its discount: the additions of _ideal_cumulative's running sum, in its order, without sorting every judgment
    # (0.6 s -> 0.07 s at 200,000 users x 20 judgments)
    offsets, labels = (lists.offsets, lists.label) if lists.ideal_from_run else (lists.judged_offsets, lists.judged_label)
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    depth = int(np.diff(offsets).max(initial=0)) if k is None else k
    gains = np.ascontiguousarray(scheme.gain_of(labels), dtype=np.float64)
    positive = (gains > 0).view(np.uint8)
    best = largest_sums(offsets, gains, positive, depth, discount(np.arange(depth)))
    if k is None or not lists.short_lists_truncate:
        return best
    # as many ideal places as a list has, up to k (MLflow): the lists shorter than k, a call per length
    short = np.flatnonzero(lists.n_ret < k)
    for length in np.unique(lists.n_ret[short]).tolist():
        queries = short[lists.n_ret[short] == length]
        part, rows = segment_rows(offsets[queries], np.diff(offsets)[queries])
        best[queries] = largest_sums(part, gains[rows], positive[rows], length, discount(np.arange(length)))
    return best


def ndcg(lists: RankedLists, k: int | None, scheme: GainScheme) -> np.ndarray:
    """nDCG@k = DCG@k / IDCG@k, 0 when IDCG is 0 (trec_eval ``ndcg_cut.k``; ``ndcg`` without k).

    >>> import numpy as np
    >>> lists = RankedLists(offsets=np.array([0, 5]), label=np.array([3., 2, 0, 1, 0]),
    ...                     judged_offsets=np.array([0, 5]), judged_label=np.array([3., 2, 1, 0, 0]))
    >>> round(float(ndcg(lists, 5, GainScheme.linear())[0]), 4)  # (3 + 2/log2(3) + 1/log2(5)) / (3 + 2/log2(3) + 1/2)
    0.9854
    """
    top = dcg(lists, k, scheme)
    best = ideal_dcg(lists, k, scheme)
    return np.divide(top, best, out=np.zeros_like(top), where=best > 0)


def ndcg_rel(lists: RankedLists, scheme: GainScheme) -> np.ndarray:
    """nDCG averaged over the relevant documents (trec_eval ``ndcg_rel``).

    At each retrieved document with a positive gain: DCG so far / IDCG at the same
    rank; each positive-gain document not retrieved counts the final DCG / IDCG.
    """
    gains = lists.gains(scheme)
    running = lists.cumsum(gains * discount(lists.pos))
    offsets, ideal_running = _ideal_cumulative(lists, scheme)
    n_pos = np.diff(offsets)
    q = lists.qidx
    rows = gains > 0
    ideal_here = ideal_running[offsets[:-1][q[rows]] + np.minimum(lists.pos[rows] + 1, n_pos[q[rows]]) - 1]
    found = np.bincount(q[rows], weights=running[rows] / ideal_here, minlength=lists.n_queries).astype(np.float64)
    n_found = np.bincount(q[rows], minlength=lists.n_queries)
    final = np.divide(
        lists.at_rank(running, lists.n_ret),
        _at(offsets, ideal_running, n_pos),
        out=np.zeros(lists.n_queries),
        where=n_pos > 0,
    )
    total = found + (n_pos - n_found) * final
    return np.divide(total, n_pos, out=np.zeros_like(total), where=(total > 0) & (n_pos > 0))


def r_ndcg(lists: RankedLists, scheme: GainScheme, rel: float | None = None) -> np.ndarray:
    """nDCG averaged at the R-levels of the ideal ranking (trec_eval ``Rndcg``).

    The points are the ranks where the ideal gain changes (the number of judged
    documents with gain >= each positive gain value), plus the end of the list.

    trec_eval adds the end-of-list point only when the list is at least two
    documents longer than the ideal one (its first loop has already consumed the
    next document when it notices the change); we follow its code, which is the
    reference behind its test suite and pytrec_eval, rather than its help text.
    """
    running = lists.cumsum(lists.gains(scheme) * discount(lists.pos))
    offsets, ideal_gain = lists.ideal(scheme)
    _, ideal_running = _ideal_cumulative(lists, scheme)
    n_pos = np.diff(offsets)
    judged_q = np.repeat(np.arange(lists.n_queries), n_pos)
    # A boundary closes each run of equal ideal gains.
    is_end = np.ones(ideal_gain.size, dtype=bool)
    if ideal_gain.size > 1:
        is_end[:-1] = (ideal_gain[1:] != ideal_gain[:-1]) | (judged_q[1:] != judged_q[:-1])
    ends = np.flatnonzero(is_end)
    q_end = judged_q[ends]
    rank = ends - offsets[:-1][q_end] + 1
    depth = np.minimum(rank, lists.n_ret[q_end])
    has = depth > 0
    dcg_at = np.zeros(ends.size)
    dcg_at[has] = running[lists.offsets[:-1][q_end[has]] + depth[has] - 1]
    total = np.bincount(q_end, weights=dcg_at / ideal_running[ends], minlength=lists.n_queries).astype(np.float64)
    points = np.bincount(q_end, minlength=lists.n_queries).astype(np.float64)
    longer = (lists.n_ret >= n_pos + 2) & (n_pos > 0)
    total[longer] += lists.at_rank(running, lists.n_ret)[longer] / _at(offsets, ideal_running, n_pos)[longer]
    points[longer] += 1
    out = np.divide(total, points, out=np.zeros_like(total), where=points > 0)
    out[lists.num_rel(rel) == 0] = 0.0
    return out
