"""Reciprocal rank of the first relevant document (``recip_rank``, RR@k).

>>> import numpy as np
>>> lists = RankedLists(offsets=np.array([0, 5]), label=np.array([0., 1, 0, 1, 1]),   # one query: ranks 2, 4, 5 relevant
...                     judged_offsets=np.array([0, 5]), judged_label=np.array([0., 1, 0, 1, 1]))
>>> reciprocal_rank(lists).tolist(), reciprocal_rank(lists, k=1).tolist()   # first relevant at rank 2
([0.5], [0.0])
"""

from __future__ import annotations

import numpy as np

from harness.kernels._segments import RankedLists


def reciprocal_rank(lists: RankedLists, k: int | None = None, rel: float | None = None) -> np.ndarray:
    """1 / rank of the first relevant document within k; 0 when there is none.

    trec_eval's ``recip_rank`` has no cutoff; RR@10 is MS MARCO's MRR@10.
    """
    first = lists.first_relevant_rank(rel).astype(np.float64)
    ok = first > 0 if k is None else (first > 0) & (first <= k)
    return np.divide(1.0, first, out=np.zeros_like(first), where=ok)
