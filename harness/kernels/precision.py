"""Precision, recall and set measures over binary relevance (label >= level).

>>> import numpy as np
>>> lists = RankedLists(offsets=np.array([0, 5]), label=np.array([0., 1, 0, 1, 1]),   # one query: ranks 2, 4, 5 relevant
...                     judged_offsets=np.array([0, 5]), judged_label=np.array([0., 1, 0, 1, 1]))
>>> precision_at(lists, 2).tolist(), recall_at(lists, 2).tolist(), success_at(lists, 1).tolist()   # 1/2, 1/3, none
([0.5], [0.3333333333333333], [0.0])
"""

from __future__ import annotations

import numpy as np

from harness.kernels._segments import RankedLists


def _safe_div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    return np.divide(num, den, out=np.zeros(np.broadcast(num, den).shape), where=den > 0)


def hits_at(lists: RankedLists, k: int | None, rel: float | None = None) -> np.ndarray:
    """Relevant documents in the top k of each list (all of it when k is None)."""
    if lists.tie_group is None:  # each list's first k rows: count its relevant ones
        return lists.relevant_in_head(k, rel)
    lists = lists if k is None else lists.head(k)
    return lists.sum_top(lists.tie_mean(lists.hits(rel)), k)


def precision_at(lists: RankedLists, k: int | None, rel: float | None = None) -> np.ndarray:
    """P@k = relevant in the top k / k; a short list is padded with non-relevant (``m_P.c``), or divides by its
    length under ``short_lists: truncate``.

    Without a cutoff: relevant retrieved / retrieved (``set_P``).
    """
    if k is None:
        return _safe_div(hits_at(lists, None, rel), lists.n_ret)
    if lists.short_lists_truncate:  # a short list's k is its length (MLflow); an empty list scores 0
        return _safe_div(hits_at(lists, k, rel), np.minimum(lists.n_ret, k))
    return hits_at(lists, k, rel) / k


def recall_at(lists: RankedLists, k: int | None, rel: float | None = None) -> np.ndarray:
    """R@k = relevant in the top k / R; 0 when R = 0. Without a cutoff: ``set_recall``."""
    return _safe_div(hits_at(lists, k, rel), lists.num_rel(rel))


def relative_precision_at(lists: RankedLists, k: int | None, rel: float | None = None) -> np.ndarray:
    """relative_P@k = relevant in the top k / min(k, R). Without a cutoff: / min(num_ret, R)."""
    limit = lists.n_ret if k is None else np.full(lists.n_queries, k)
    return _safe_div(hits_at(lists, k, rel), np.minimum(limit, lists.num_rel(rel)))


def success_at(lists: RankedLists, k: int | None, rel: float | None = None) -> np.ndarray:
    """1 if a relevant document is in the top k, else 0 (``success``, Hit@k)."""
    first = lists.first_relevant_rank(rel)
    ok = first > 0 if k is None else (first > 0) & (first <= k)
    return ok.astype(np.float64)


def f_at(lists: RankedLists, k: int | None, rel: float | None = None, beta: float = 1.0) -> np.ndarray:
    """F-beta of P@k and R@k; 0 when both are 0. Without a cutoff: trec_eval ``set_F``."""
    p = precision_at(lists, k, rel)
    r = recall_at(lists, k, rel)
    b2 = beta * beta
    return _safe_div((1.0 + b2) * p * r, b2 * p + r)


def set_average_precision(lists: RankedLists, rel: float | None = None) -> np.ndarray:
    """set_P x set_recall (trec_eval ``set_map``)."""
    return precision_at(lists, None, rel) * recall_at(lists, None, rel)


def precision_at_ranks(lists: RankedLists, ranks: np.ndarray, rel: float | None = None) -> np.ndarray:
    """P at a per-query cutoff (padded with non-relevant); 0 where the cutoff is 0."""
    running = lists.cumsum(lists.hits(rel))
    found = lists.at_rank(running, ranks)
    return _safe_div(found, ranks)


def r_precision(lists: RankedLists, rel: float | None = None) -> np.ndarray:
    """P@R, R the number of relevant judgments (``Rprec``)."""
    return precision_at_ranks(lists, lists.num_rel(rel).astype(np.int64), rel)


def r_precision_mult(lists: RankedLists, mult: float, rel: float | None = None) -> np.ndarray:
    """P at ``mult`` x R documents, the cutoff rounded as trec_eval does: ``(long)(mult * R + 0.9)``."""
    cutoff = np.floor(mult * lists.num_rel(rel) + 0.9).astype(np.int64)
    return precision_at_ranks(lists, cutoff, rel)


def utility(lists: RankedLists, a: float, b: float, c: float, d: float, rel: float | None = None) -> np.ndarray:
    """a * rel_ret + b * nonrel_ret + c * rel_not_ret + d * nonrel_not_ret (``utility``).

    nonrel_not_ret is ``N + rel_ret - ret - R`` with N the collection size (trec_eval's
    ``-N``, 0 unless given, as in trec_eval).
    """
    ret = lists.n_ret.astype(np.float64)
    rel_ret = hits_at(lists, None, rel)
    big_r = lists.num_rel(rel)
    return a * rel_ret + b * (ret - rel_ret) + c * (big_r - rel_ret) + d * (lists.collection_size + rel_ret - ret - big_r)
