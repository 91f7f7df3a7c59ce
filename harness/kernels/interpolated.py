"""Interpolated precision at recall levels (``iprec_at_recall``, ``11pt_avg``).

>>> import numpy as np
>>> lists = RankedLists(offsets=np.array([0, 5]), label=np.array([0., 1, 0, 1, 1]),   # one query: ranks 2, 4, 5 relevant
...                     judged_offsets=np.array([0, 5]), judged_label=np.array([0., 1, 0, 1, 1]))
>>> iprec_at_recall(lists, [0.0, 1.0]).tolist()   # the best precision at recall >= r: 3/5, at rank 5
[[0.6, 0.6]]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from harness.kernels._segments import RankedLists, segment_suffix_max


def iprec_at_recall(lists: RankedLists, recalls: Sequence[float], rel: float | None = None) -> np.ndarray:
    """Interpolated precision at each recall level: (n_queries, len(recalls)).

    Int_Prec(r) = max P@i over ranks i at or after the c-th relevant document,
    c = lround(r * R), as trec_eval 10 rounds; with ``lists.iprec_plus_09`` c = (long)(r * R + 0.9), as trec_eval 9
    (inside pytrec_eval) truncated. 0 when fewer than c relevant documents are retrieved.
    """
    hits = lists.hits(rel)
    rows = np.flatnonzero(hits)
    q = lists.qidx[rows]
    counts = np.bincount(q, minlength=lists.n_queries)
    offsets = np.zeros(lists.n_queries + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    nth = np.arange(rows.size) - np.repeat(offsets[:-1], counts) + 1
    best_after = segment_suffix_max(nth / (lists.pos[rows] + 1.0), offsets, counts)
    big_r = lists.num_rel(rel)
    out = np.zeros((lists.n_queries, len(recalls)))
    for j, level in enumerate(recalls):  # a handful of recall levels, not a per-query loop
        cut = np.floor(level * big_r + (0.9 if lists.iprec_plus_09 else 0.5)).astype(np.int64)
        ok = (cut <= counts) & (counts > 0)
        m = np.maximum(cut, 1)
        out[ok, j] = best_after[offsets[:-1][ok] + m[ok] - 1]
    return out


def average_interpolated_precision(lists: RankedLists, recalls: Sequence[float], rel: float | None = None) -> np.ndarray:
    """Mean of the interpolated precision over ``recalls`` (``11pt_avg``)."""
    return np.asarray(iprec_at_recall(lists, recalls, rel).mean(axis=1))
