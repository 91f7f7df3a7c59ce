"""Counting measures: num_ret, num_rel, num_rel_ret, judged and unjudged fractions.

>>> import numpy as np
>>> lists = RankedLists(offsets=np.array([0, 5]), label=np.array([0., 1, 0, 1, 1]),   # one query: ranks 2, 4, 5 relevant
...                     judged_offsets=np.array([0, 5]), judged_label=np.array([0., 1, 0, 1, 1]))
>>> [f(lists).tolist() for f in (num_ret, num_rel, num_rel_ret, num_nonrel_judged_ret)]
[[5.0], [3.0], [3.0], [2.0]]
"""

from __future__ import annotations

import numpy as np

from harness.kernels._segments import RankedLists


def num_ret(lists: RankedLists) -> np.ndarray:
    """Documents retrieved for the query (trec_eval ``num_ret``)."""
    return lists.n_ret.astype(np.float64)


def num_rel(lists: RankedLists, rel: float | None = None) -> np.ndarray:
    """Relevant documents in the judgments, retrieved or not (``num_rel``)."""
    return lists.num_rel(rel)


def num_rel_ret(lists: RankedLists, rel: float | None = None) -> np.ndarray:
    """Relevant documents retrieved (``num_rel_ret``)."""
    return lists.sum(lists.hits(rel))


def num_nonrel_judged_ret(lists: RankedLists, rel: float | None = None) -> np.ndarray:
    """Retrieved documents judged non-relevant (``num_nonrel_judged_ret``)."""
    return lists.sum(lists.judged_nonrel(rel))


def judged_at(lists: RankedLists, k: int | None) -> np.ndarray:
    """Fraction of the top min(k, n) documents that appear in the judgments (ir_measures ``Judged@k``).

    Divides by the number actually retrieved within k, so it is not 1 - unj@k.
    """
    shown = lists.n_ret if k is None else np.minimum(lists.n_ret, k)
    if lists.tie_group is None:  # a count of the head's labels (NaN, unjudged, is below every level), compiled
        found = lists.relevant_in_head(k, -np.inf)
    else:
        found = lists.sum_top(lists.tie_mean(~np.isnan(lists.label)), k)
    return np.divide(found, shown, out=np.zeros_like(found), where=shown > 0)


def unjudged_at(lists: RankedLists, k: int) -> np.ndarray:
    """Unjudged (unpooled or negative label) documents in the top k, over k (trec_eval ``unj.k``)."""
    if lists.tie_group is None:  # the head's rows less its judged ones (label >= 0), counted in one compiled pass
        return (np.minimum(lists.n_ret, k) - lists.relevant_in_head(k, 0.0)) / k
    unjudged = lists.tie_mean(~(lists.label >= 0))
    return lists.sum_top(unjudged, k) / k
