"""Intent-aware (novelty and diversity) kernels, as ndeval computes them (TREC Web track; Clarke et al. 2008-2009).

Each ranked row carries a bit mask of the query's subtopics its document is relevant to
(:class:`IntentData`); the judged documents carry theirs, for the ideal ranking. With
c_s(r) the number of documents above rank r relevant to subtopic s, the gain at rank r is
sum over the subtopics s of the document of (1 - alpha)^c_s(r). S is the number of
subtopics with a relevant document; a query without one scores 0 everywhere.

The ideal ranking is ndeval's greedy one: at each rank the document with the largest gain
given those above it, ties to the larger document id. Every value is computed for any
cutoff (ndeval stops at 20).

>>> import numpy as np
>>> from harness.kernels._segments import RankedLists
>>> intents = IntentData(row_mask=np.array([0b01, 0b01, 0b10]), judged_mask=np.array([0b01, 0b10, 0b11]),
...                      judged_order=np.array([0, 1, 2]), n_subtopics=np.array([2]))
>>> lists = RankedLists(np.array([0, 3]), np.ones(3), np.array([0, 3]), np.ones(3), intents=intents)
>>> subtopic_recall(lists, 2).tolist(), precision_ia(lists, 3).tolist()   # 1 of 2 subtopics by rank 2; 3 / (3 x 2)
([0.5], [0.5])
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from harness.kernels._segments import RankedLists

MAX_SUBTOPICS = 62  # bits of an int64 mask


@dataclass(frozen=True, eq=False)
class IntentData:
    """The subtopics of the ranked and the judged documents, as bit masks (bit s: relevant to subtopic s).

    row_mask
        int64 per ranked row (0: relevant to none, or not judged).
    judged_mask, judged_order
        int64 per judged row (as ``RankedLists.judged_label``): its mask, and its document id's rank in byte order.
    n_subtopics
        int64 per query: S, the subtopics with a relevant document.
    """

    row_mask: np.ndarray
    judged_mask: np.ndarray
    judged_order: np.ndarray
    n_subtopics: np.ndarray
    _cache: dict[Any, Any] = field(default_factory=dict, repr=False)

    def subset_rows(self, keep: np.ndarray) -> IntentData:
        """The same judgments for a subset of the ranked rows (trec_eval -J)."""
        return dataclasses.replace(self, row_mask=self.row_mask[keep], _cache={})


def _intents(lists: RankedLists) -> IntentData:
    if lists.intents is None:
        raise ValueError("these lists carry no subtopic judgments")  # the evaluator attaches them; a caller bug otherwise
    return lists.intents


def _bits(masks: np.ndarray) -> np.ndarray:
    """(n x MAX_SUBTOPICS) 0/1 matrix of the masks' bits."""
    return ((masks[:, None] >> np.arange(MAX_SUBTOPICS, dtype=np.int64)) & 1).astype(np.float64)


def _gains(relevant: np.ndarray, alpha: float) -> np.ndarray:
    """Each row's novelty-discounted gain: sum over its subtopics of (1 - alpha)^(earlier rows with that subtopic)."""
    before = np.cumsum(relevant, axis=0) - relevant
    return (relevant * (1.0 - alpha) ** before).sum(axis=1)  # type: ignore[no-any-return]


def _ideal_gains(masks: np.ndarray, order: np.ndarray, alpha: float) -> np.ndarray:
    """ndeval's greedy ideal ranking of judged documents (``masks``, ids ranked ``order``): the gain at each rank."""
    keep = masks != 0
    masks, order = masks[keep], order[keep]
    by_id = np.argsort(order, kind="stable")
    relevant = _bits(masks[by_id])
    subtopic_gain = np.ones(MAX_SUBTOPICS)
    taken = np.zeros(relevant.shape[0], dtype=bool)
    gains = np.zeros(relevant.shape[0])
    for rank in range(relevant.shape[0]):
        scores = np.where(taken, -np.inf, relevant @ subtopic_gain)
        where = scores.size - 1 - int(np.argmax(scores[::-1]))  # the largest score; among equals, the larger id
        gains[rank] = scores[where]
        taken[where] = True
        subtopic_gain = np.where(relevant[where] > 0, subtopic_gain * (1.0 - alpha), subtopic_gain)
    return gains


def _discounts(n: int) -> np.ndarray:
    return np.log(2.0) / np.log(np.arange(n) + 2.0)  # type: ignore[no-any-return]  # ndeval's discount(i)


def _per_query(lists: RankedLists, key: tuple[Any, ...], compute: Any) -> np.ndarray:
    """``compute(q, run rows' masks, judged masks, judged order, S)`` for each query with S > 0, else 0; cached."""
    intents = _intents(lists)
    if key not in intents._cache:
        out = np.zeros(lists.n_queries)
        for q in np.flatnonzero(intents.n_subtopics > 0):
            rows = slice(lists.offsets[q], lists.offsets[q + 1])
            judged = slice(lists.judged_offsets[q], lists.judged_offsets[q + 1])
            out[q] = compute(
                intents.row_mask[rows], intents.judged_mask[judged], intents.judged_order[judged], int(intents.n_subtopics[q])
            )
        intents._cache[key] = out
    return intents._cache[key]  # type: ignore[no-any-return]


def _cumulative(gains: np.ndarray, weights: np.ndarray, k: int) -> float:
    terms = np.zeros(k)
    n = min(k, gains.size)
    terms[:n] = gains[:n] * weights[:n]
    return float(np.cumsum(terms)[-1])


def _ideal_ideal(s: int, weights: np.ndarray, alpha: float, k: int) -> float:
    """The "ideal ideal" normalisation: S (1 - alpha)^i at each rank i (every subtopic covered at every rank)."""
    return float(np.cumsum(s * np.cumprod(np.concatenate(([1.0], np.full(k - 1, 1.0 - alpha)))) * weights[:k])[-1])


def _normalised(kind: str, lists: RankedLists, k: int, alpha: float, ideal: str, rank1: str) -> np.ndarray:
    """alpha-DCG / ERR-IA at k over the ideal-ideal (``ideal="ideal_ideal"``) or over the greedy ideal ranking."""

    def compute(rows: np.ndarray, judged: np.ndarray, order: np.ndarray, s: int) -> float:
        weights = _discounts(k) if kind == "dcg" else 1.0 / np.arange(1.0, k + 1.0)
        got = _cumulative(_gains(_bits(rows), alpha), weights, k)
        if ideal == "greedy":
            best = _cumulative(_ideal_gains(judged, order, alpha), weights, k)
            return got / best if got != 0 and best > 0 else 0.0
        if k == 1 and rank1 == "ndeval":
            return got  # ndeval normalises from rank 2 on: its rank 1 is the raw gain
        return got / _ideal_ideal(s, weights, alpha, k)

    return _per_query(lists, (kind, k, alpha, ideal, rank1), compute)


def alpha_dcg(lists: RankedLists, k: int, alpha: float, rank1: str) -> np.ndarray:
    """ndeval's alpha-DCG@k: the novelty-discounted DCG over the ideal-ideal one (collection-independent)."""
    return _normalised("dcg", lists, k, alpha, "ideal_ideal", rank1)


def alpha_ndcg(lists: RankedLists, k: int, alpha: float) -> np.ndarray:
    """alpha-nDCG@k (Clarke et al. 2008): the same DCG over the greedy ideal ranking's."""
    return _normalised("dcg", lists, k, alpha, "greedy", "fixed")


def err_ia(lists: RankedLists, k: int, alpha: float, rank1: str) -> np.ndarray:
    """ndeval's ERR-IA@k: discount 1/rank, over the ideal-ideal (collection-independent)."""
    return _normalised("err", lists, k, alpha, "ideal_ideal", rank1)


def nerr_ia(lists: RankedLists, k: int, alpha: float) -> np.ndarray:
    """nERR-IA@k: ERR-IA over the greedy ideal ranking's."""
    return _normalised("err", lists, k, alpha, "greedy", "fixed")


def _nrbp(gains: np.ndarray, s: int, alpha: float, beta: float) -> float:
    decay = np.cumprod(np.concatenate(([1.0], np.full(max(gains.size - 1, 0), beta))))[: gains.size]
    return float(np.cumsum(gains * decay)[-1]) * (1 - (1 - alpha) * beta) / s if gains.size else 0.0


def nrbp(lists: RankedLists, alpha: float, beta: float, normalised: bool, empty_nan: bool = False) -> np.ndarray:
    """NRBP (Clarke et al. 2009) over the whole list: (1 - (1 - alpha) beta) / S x sum of gain(r) beta^(r - 1);
    ``normalised``: over the greedy ideal ranking's (nNRBP); ``empty_nan``: NaN for a query without a relevant
    subtopic (ndeval's 0 / 0), else 0."""
    if empty_nan:
        return np.where(_intents(lists).n_subtopics > 0, nrbp(lists, alpha, beta, normalised), np.nan)

    def compute(rows: np.ndarray, judged: np.ndarray, order: np.ndarray, s: int) -> float:
        got = _nrbp(_gains(_bits(rows), alpha), s, alpha, beta)
        if not normalised:
            return got
        best = _nrbp(_ideal_gains(judged, order, alpha), s, alpha, beta)
        return got / best if best > 0 else 0.0

    return _per_query(lists, ("nrbp", alpha, beta, normalised), compute)


def precision_ia(lists: RankedLists, k: int) -> np.ndarray:
    """P-IA@k: subtopic-relevant (document, subtopic) pairs in the top k over k x S."""
    return _per_query(lists, ("p", k), lambda rows, judged, order, s: float(_bits(rows[:k]).sum()) / (k * s))


def subtopic_recall(lists: RankedLists, k: int) -> np.ndarray:
    """S-recall@k: the subtopics covered by the top k over S."""

    def compute(rows: np.ndarray, judged: np.ndarray, order: np.ndarray, s: int) -> float:
        return float(np.bitwise_or.reduce(rows[:k], initial=0).bit_count()) / s

    return _per_query(lists, ("strec", k), compute)


def ap_ia(lists: RankedLists) -> np.ndarray:
    """MAP-IA's per-query value: each subtopic's average precision over the whole list (over its relevant judged
    documents), averaged over the S subtopics."""

    def compute(rows: np.ndarray, judged: np.ndarray, order: np.ndarray, s: int) -> float:
        relevant = _bits(rows)
        precision = np.cumsum(relevant, axis=0) / np.arange(1.0, rows.size + 1.0)[:, None]
        totals = (relevant * precision).sum(axis=0)
        per_subtopic = _bits(judged).sum(axis=0)
        present = per_subtopic > 0
        return float((totals[present] / per_subtopic[present]).sum()) / s

    return _per_query(lists, ("ap",), compute)
