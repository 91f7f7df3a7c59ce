"""Measures built for incomplete judgments: bpref and infAP.

>>> import numpy as np
>>> lists = RankedLists(offsets=np.array([0, 5]), label=np.array([0., 1, 0, 1, 1]),   # one query: ranks 2, 4, 5 relevant
...                     judged_offsets=np.array([0, 5]), judged_label=np.array([0., 1, 0, 1, 1]))
>>> round(float(bpref(lists)[0]), 4)   # R = 3, N = 2: (1 - 1/2) + (1 - 2/2) + (1 - 2/2), over R
0.1667
"""

from __future__ import annotations

import numpy as np

from harness.kernels._segments import RankedLists

INFAP_EPSILON = 0.00001  # trec_eval.h


def bpref(lists: RankedLists, rel: float | None = None) -> np.ndarray:
    """(1/R) * sum over retrieved relevant r of 1 - min(N_r, R) / min(N, R).

    N_r: judged non-relevant documents ranked above r; N: judged non-relevant for
    the query. Unjudged documents are skipped (Buckley and Voorhees, SIGIR 2004).
    """
    hits = lists.hits(rel)
    nonrel = lists.judged_nonrel(rel)
    above = lists.cumsum(nonrel)  # a relevant row adds 0, so inclusive == strictly above
    big_r = lists.num_rel(rel)
    big_n = lists.num_judged_nonrel(rel)
    q = lists.qidx
    denom = np.minimum(big_n, big_r)[q]
    share = np.divide(np.minimum(above, big_r[q]), denom, out=np.zeros_like(above), where=denom > 0)
    contrib = np.where(above > 0, 1.0 - share, 1.0)
    total = lists.sum(np.where(hits, contrib, 0.0))
    return np.divide(total, big_r, out=np.zeros_like(total), where=big_r > 0)


def inferred_ap(lists: RankedLists, rel: float | None = None) -> np.ndarray:
    """infAP (Yilmaz and Aslam, CIKM 2006), as trec_eval computes it.

    Unpooled documents count as non-relevant in the rank; pooled-but-unjudged ones
    (negative labels) are assumed relevant in the proportion of the judged ones.
    """
    hits = lists.hits(rel)
    nonrel = lists.judged_nonrel(rel)
    unjudged = lists.label < 0
    rel_above = lists.cumsum(hits) - hits
    nonrel_above = lists.cumsum(nonrel) - nonrel
    unj_above = lists.cumsum(unjudged) - unjudged
    j = lists.pos.astype(np.float64)
    safe_j = np.maximum(j, 1.0)
    later = 1.0 / (j + 1.0) + (j / (j + 1.0)) * ((rel_above + nonrel_above + unj_above) / safe_j) * (
        (rel_above + INFAP_EPSILON) / (rel_above + nonrel_above + 2 * INFAP_EPSILON)
    )
    contrib = np.where(j == 0, 1.0, later)
    total = lists.sum(np.where(hits, contrib, 0.0))
    big_r = lists.num_rel(rel)
    return np.divide(total, big_r, out=np.zeros_like(total), where=big_r > 0)
