"""Average precision (``map``, ``map_cut``) and its geometric-mean twin."""

from __future__ import annotations

import numpy as np

from harness.kernels._segments import RankedLists


def average_precision(lists: RankedLists, k: int | None = None, rel: float | None = None, min_r_k: bool = False) -> np.ndarray:
    """AP@k = (1/R) * sum over relevant ranks i <= k of P@i.

    ``min_r_k`` divides by min(R, k) instead (MS Recommenders, RecBole).

    >>> import numpy as np
    >>> lists = RankedLists(offsets=np.array([0, 5]), label=np.array([0., 1, 0, 1, 1]),
    ...                     judged_offsets=np.array([0, 5]), judged_label=np.array([0., 1, 0, 1, 1]))
    >>> round(float(average_precision(lists)[0]), 4)   # (1/2 + 2/4 + 3/5) / 3
    0.5333
    """
    # P@i at each relevant row only: its ordinal among its query's relevant rows over its rank (the same values, added
    # in the same order, as a running count over every row), in one compiled pass over each query's rows down to k
    total = lists.precision_sums(k, rel)
    big_r = lists.num_rel(rel)
    if min_r_k and k is not None:
        big_r = np.minimum(big_r, k)
    return np.divide(total, big_r, out=np.zeros_like(total), where=big_r > 0)
