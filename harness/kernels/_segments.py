"""Ranked lists of all queries as flat arrays, and segment operations over them.

Rows are sorted by query, then rank; ``offsets[q]:offsets[q + 1]`` are query q's rows.

>>> import numpy as np
>>> lists = RankedLists(
...     offsets=np.array([0, 3, 3]), label=np.array([1.0, np.nan, 2.0]),
...     judged_offsets=np.array([0, 2, 3]), judged_label=np.array([1.0, 2.0, 1.0]))
>>> lists.n_queries, lists.pos.tolist(), lists.num_rel().tolist()
(2, [0, 1, 2], [2.0, 1.0])
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from harness.kernels import _lookup_compiled as lookup
from harness.kernels import _ranked_compiled as ranked
from harness.kernels._lookup_compiled import segment_counts
from harness.kernels._parallel import run_split, split, threads
from harness.kernels.gains import GainScheme

PARALLEL_FROM_ROWS = 1 << 18  # rows: shorter lists are read in this thread, where a thread's start would cost more


@dataclass(frozen=True, eq=False)
class RankedLists:
    """The aligned input of every kernel.

    offsets
        int64 (Q + 1): row range of each query (sorted by rank within it).
    label
        float64 (N): relevance label of each retrieved document; NaN when the
        document is not in the qrels (not pooled), negative when pooled but
        unjudged (trec_eval's ``RELVALUE_UNJUDGED``).
    judged_offsets, judged_label
        every qrels label of each query, retrieved or not, in the same query order.
    relevance_level
        a document is relevant when ``label >= relevance_level`` (trec_eval ``-l``).
    tie_group
        when ties are averaged: int64 (N) id of each row's group of equal scores.
    ideal_from_run
        build the ideal ranking from the retrieved documents only (scikit-learn).
    ap_min_r_k
        the default denominator of AP@k: min(R, k) instead of R.
    """

    offsets: np.ndarray
    label: np.ndarray
    judged_offsets: np.ndarray
    judged_label: np.ndarray
    relevance_level: float = 1
    tie_group: np.ndarray | None = None
    ideal_from_run: bool = False
    ap_min_r_k: bool = False  # AP@k divides by min(R, k) unless a measure says otherwise
    short_lists_truncate: bool = False  # a list shorter than k cuts k to its length (P@k, IDCG@k): MLflow
    graded_below_level_zero: bool = False  # linear and exponential gains are 0 below the relevance level (ranx)
    iprec_plus_09: bool = False  # recall level r stands at the (long)(r R + 0.9)-th relevant (trec_eval 9), not lround
    collection_size: int = 0  # documents in the collection (trec_eval -N), for utility
    items: ItemData | None = None  # each row's item and the item statistics (beyond-accuracy measures)
    intents: Any = None  # harness.kernels.intent.IntentData: the rows' subtopics (intent-aware measures)
    samples: Any = None  # harness.kernels.exposure.SampleData: a stochastic run's rankings (expected exposure)

    def judged_subset(self) -> RankedLists:
        """The same lists with only the judged documents, relevant or not (trec_eval -J, form_res_rels.c).

        Documents absent from the qrels (NaN) and pooled but unjudged ones (negative labels)
        are removed; the others keep their order.

        >>> labels = np.array([1.0, np.nan, -1.0, 0.0])
        >>> lists = RankedLists(np.array([0, 4]), labels, np.array([0, 2]), np.array([1.0, 0.0]))
        >>> lists.judged_subset().label.tolist(), lists.judged_subset().offsets.tolist()
        ([1.0, 0.0], [0, 2])
        """
        keep = self.label >= 0  # NaN compares False
        counts = np.bincount(self.qidx[keep], minlength=self.n_queries)
        offsets = np.zeros(self.n_queries + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        tie_group = None
        if self.tie_group is not None:  # renumber the groups that keep a row
            kept = self.tie_group[keep]
            tie_group = np.unique(kept, return_inverse=True)[1].astype(np.int64)
        items = None if self.items is None else self.items.subset_rows(keep)
        intents = None if self.intents is None else self.intents.subset_rows(keep)
        return dataclasses.replace(
            self, offsets=offsets, label=self.label[keep], tie_group=tie_group, items=items, intents=intents
        )

    def head(self, k: int) -> RankedLists:
        """The first k rows of each query, for measures that read no further (these lists when none is longer).

        A sum over the head adds the same values in the same order as a sum over the
        whole lists that zeroes the rows past k: the same bits, from k rows per query
        instead of all of them. Not when ties are averaged: a tie group that straddles
        the cutoff is averaged over all its rows.

        >>> lists = RankedLists(np.array([0, 3, 4]), np.array([1.0, 0.0, 2.0, 1.0]), np.array([0, 0, 0]), np.zeros(0))
        >>> lists.head(2).offsets.tolist(), lists.head(2).label.tolist()
        ([0, 2, 3], [1.0, 0.0, 1.0])
        """
        if self._whole_head(k):
            return self
        heads: dict[int, RankedLists] = self.__dict__.setdefault("_heads", {})
        if k not in heads:
            head_offsets = self._head_offsets(k)
            label = np.empty(int(head_offsets[-1]), dtype=np.float64)
            offsets, values = self._offsets64, self._label64
            by_queries(offsets, lambda lo, hi: ranked.head_take(offsets, values, head_offsets, label, lo, hi))
            heads[k] = dataclasses.replace(self, offsets=head_offsets, label=label, items=None, intents=None)
        return heads[k]

    def head_rows(self, k: int | None) -> np.ndarray | None:
        """The rows of :meth:`head` (k): each query's first k, in row order; None when that is every row.

        >>> lists = RankedLists(np.array([0, 3, 4]), np.zeros(4), np.array([0, 0, 0]), np.zeros(0))
        >>> lists.head_rows(2).tolist(), lists.head_rows(3), lists.head_rows(None)
        ([0, 1, 3], None, None)
        """
        if k is None or self._whole_head(k):
            return None
        rows: dict[int, np.ndarray] = self.__dict__.setdefault("_head_rows", {})
        if k not in rows:
            head_offsets = self._head_offsets(k)
            rows[k] = np.empty(int(head_offsets[-1]), dtype=np.int64)
            offsets = self._offsets64
            by_queries(offsets, lambda lo, hi: ranked.head_rows(offsets, head_offsets, rows[k], lo, hi))
        return rows[k]

    def _whole_head(self, k: int) -> bool:
        """Is the head of k these lists themselves (no list longer than k), or not to be taken (ties averaged)?"""
        return self.tie_group is not None or k >= self.n_ret.max(initial=0)

    def _head_offsets(self, k: int) -> np.ndarray:
        """The offsets of each list's first k rows, laid end to end."""
        cache: dict[int, np.ndarray] = self.__dict__.setdefault("_head_offsets_by_k", {})
        if k not in cache:
            head_offsets = np.zeros(self.n_queries + 1, dtype=np.int64)
            np.cumsum(np.minimum(self.n_ret, k), out=head_offsets[1:])
            cache[k] = head_offsets
        return cache[k]

    # ---- shape --------------------------------------------------------------
    @property
    def n_queries(self) -> int:
        return len(self.offsets) - 1

    @cached_property
    def _offsets64(self) -> np.ndarray:
        """The offsets as the compiled kernels read them (contiguous int64)."""
        return np.ascontiguousarray(self.offsets, dtype=np.int64)

    @cached_property
    def _label64(self) -> np.ndarray:
        """The labels as the compiled kernels read them (contiguous float64)."""
        return np.ascontiguousarray(self.label, dtype=np.float64)

    @cached_property
    def n_ret(self) -> np.ndarray:
        """Number of retrieved documents per query (int64)."""
        return np.diff(self.offsets)

    @cached_property
    def qidx(self) -> np.ndarray:
        """Query index of each row."""
        return np.repeat(np.arange(self.n_queries), self.n_ret)

    @cached_property
    def pos(self) -> np.ndarray:
        """0-based rank of each row within its query."""
        return np.arange(len(self.label)) - np.repeat(self.offsets[:-1], self.n_ret)

    @cached_property
    def judged_qidx(self) -> np.ndarray:
        return np.repeat(np.arange(self.n_queries), np.diff(self.judged_offsets))

    # ---- relevance ----------------------------------------------------------
    def level(self, rel: float | None) -> float:
        return self.relevance_level if rel is None else rel

    def hits(self, rel: float | None = None) -> np.ndarray:
        """Relevant retrieved rows (NaN compares False: unpooled is non-relevant)."""
        return self.label >= self.level(rel)

    def judged_nonrel(self, rel: float | None = None) -> np.ndarray:
        """Rows judged non-relevant: 0 <= label < level."""
        return (self.label >= 0) & (self.label < self.level(rel))

    def num_rel(self, rel: float | None = None) -> np.ndarray:
        """R: judged relevant documents per query, retrieved or not."""
        return self._judged_count(self.judged_label >= self.level(rel))

    def num_judged_nonrel(self, rel: float | None = None) -> np.ndarray:
        judged = self.judged_label
        return self._judged_count((judged >= 0) & (judged < self.level(rel)))

    def _judged_count(self, mask: np.ndarray) -> np.ndarray:
        """Per-query number of True judged rows (float64, exact)."""
        return _counts(self.judged_offsets, mask)

    # ---- segment reductions -------------------------------------------------
    def sum(self, values: np.ndarray) -> np.ndarray:
        """Per-query sum of a per-row array."""
        return np.bincount(self.qidx, weights=np.asarray(values, dtype=np.float64), minlength=self.n_queries).astype(np.float64)

    def sum_top(self, values: np.ndarray, k: int | None) -> np.ndarray:
        """Per-query sum over the first k rows (all rows when k is None)."""
        if k is None:
            return self.sum(values)
        return self.sum(np.where(self.pos < k, values, 0.0))

    def judged_sum(self, values: np.ndarray) -> np.ndarray:
        return np.bincount(self.judged_qidx, weights=np.asarray(values, dtype=np.float64), minlength=self.n_queries).astype(
            np.float64
        )

    def cumsum(self, values: np.ndarray) -> np.ndarray:
        """Inclusive running sum within each query."""
        return segment_cumsum(np.asarray(values, dtype=np.float64), self.offsets, self.n_ret)

    def at_rank(self, per_row: np.ndarray, rank: np.ndarray, fill: float = 0.0) -> np.ndarray:
        """``per_row`` at 1-based ``rank`` of each query, clipped to the list; ``fill`` for rank 0."""
        rank = np.minimum(np.asarray(rank, dtype=np.int64), self.n_ret)
        ok = rank > 0
        out = np.full(self.n_queries, fill, dtype=np.float64)
        out[ok] = per_row[self.offsets[:-1][ok] + rank[ok] - 1]
        return out

    def count(self, mask: np.ndarray) -> np.ndarray:
        """Per-query number of True rows (float64; exact, as a sum of the 0/1 values in any order is)."""
        return _counts(self.offsets, mask)

    def first_relevant_rank(self, rel: float | None = None) -> np.ndarray:
        """1-based rank of the first relevant row (:meth:`hits`) of each query; 0 when none. Each query's rows are
        read down to that row only, in compiled code.

        >>> RankedLists(np.array([0, 3, 5]), np.array([0.0, 2.0, 1.0, np.nan, 0.0]), np.array([0, 0, 0]),
        ...             np.zeros(0)).first_relevant_rank().tolist()
        [2, 0]
        """
        return per_query(self._offsets64, ranked.first_hits, self._label64, float(self.level(rel)), dtype=np.int64)

    def relevant_in_head(self, k: int | None, rel: float | None = None) -> np.ndarray:
        """Per query, how many of its first k rows (all of them when k is None) are relevant (float64, exact): one
        compiled pass over those rows, without the head or a mask of every row.

        >>> RankedLists(np.array([0, 3, 5]), np.array([1.0, 0.0, 2.0, np.nan, 1.0]), np.array([0, 0, 0]),
        ...             np.zeros(0)).relevant_in_head(2).tolist()
        [1.0, 1.0]
        """
        return per_query(self._offsets64, ranked.head_counts, self._label64, float(self.level(rel)), _depth(k))

    def precision_sums(self, k: int | None, rel: float | None = None) -> np.ndarray:
        """Per query, the sum over its relevant rows at rank <= k (every rank when k is None) of P at that rank: the
        row's ordinal among its query's relevant rows over its rank, added from 0.0 in rank order (AP's numerator).

        >>> RankedLists(np.array([0, 5]), np.array([0.0, 1, 0, 1, 1]), np.array([0, 0]), np.zeros(0)
        ...             ).precision_sums(None).tolist()  # 1/2 + 2/4 + 3/5
        [1.6]
        """
        return per_query(self._offsets64, ranked.precision_sums, self._label64, float(self.level(rel)), _depth(k))

    def rank_weighted_sum(self, values: np.ndarray, per_rank: np.ndarray) -> np.ndarray:
        """Per query, ``values`` (one per row) each times ``per_rank`` at its 0-based rank, added from 0.0 in rank order:
        ``sum(values * per_rank[pos])`` without the rank, product and owner columns (``per_rank`` covers the longest
        list)."""
        return per_query(
            self._offsets64,
            ranked.rank_weighted_sums,
            np.ascontiguousarray(values, dtype=np.float64),
            np.ascontiguousarray(per_rank, dtype=np.float64),
        )

    # ---- tie handling -------------------------------------------------------
    def tie_mean(self, values: np.ndarray) -> np.ndarray:
        """Each row's value replaced by the mean over its tie group (identity when ties are not averaged).

        The expected value, over all orders of the tied documents, of any sum of
        per-position values: what scikit-learn's ``ndcg_score`` computes for ties.
        """
        if self.tie_group is None:
            return np.asarray(values, dtype=np.float64)
        sums = np.bincount(self.tie_group, weights=np.asarray(values, dtype=np.float64)).astype(np.float64)
        counts = np.bincount(self.tie_group)
        return (sums / counts)[self.tie_group]

    # ---- gains and the ideal ranking ----------------------------------------
    def gains(self, scheme: GainScheme) -> np.ndarray:
        """Gain of each retrieved row (0 for unjudged)."""
        return scheme.gain_of(self.label)

    def ideal(self, scheme: GainScheme) -> tuple[np.ndarray, np.ndarray]:
        """(offsets, gains): each query's positive gains, in decreasing order.

        Built from every judgment of the query (trec_eval), or from the retrieved
        documents only when ``ideal_from_run``.
        """
        if self.ideal_from_run:
            labels, qidx = self.label, self.qidx
        else:
            labels, qidx = self.judged_label, self.judged_qidx
        gains = scheme.gain_of(labels)
        keep = gains > 0
        gains, qidx = gains[keep], qidx[keep]
        order = np.lexsort((-gains, qidx))
        counts = np.bincount(qidx, minlength=self.n_queries)
        offsets = np.zeros(self.n_queries + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        return offsets, gains[order]


def by_queries(offsets: np.ndarray, task: Callable[[int, int], object]) -> None:
    """``task(lo, hi)`` over ranges of the queries of about equal rows, side by side on the cores when the lists are
    long (:data:`PARALLEL_FROM_ROWS`): for the compiled kernels that write only their queries' outputs, which are then
    the bits of one pass however the queries are split.

    >>> seen = []
    >>> by_queries(np.array([0, 2, 2, 5]), lambda lo, hi: seen.append((lo, hi)))
    >>> seen
    [(0, 3)]
    """
    n = len(offsets) - 1
    if n <= 0:
        return
    if int(offsets[-1] - offsets[0]) < PARALLEL_FROM_ROWS:
        task(0, n)
        return
    run_split(task, split(np.diff(offsets).astype(np.float64) + 1.0, threads()))


def per_query(offsets: np.ndarray, kernel: Callable[..., object], *args: object, dtype: type = np.float64) -> np.ndarray:
    """One value per query from a compiled kernel that writes ``out[s]`` for each query s of ``lo .. hi``:
    ``kernel(offsets, *args, out, lo, hi)`` over :func:`by_queries`' ranges (``offsets``: contiguous int64).

    >>> def lengths(offsets, out, lo, hi):
    ...     out[lo:hi] = np.diff(offsets[lo : hi + 1])
    >>> per_query(np.array([0, 2, 2, 5]), lengths, dtype=np.int64).tolist()
    [2, 0, 3]
    """
    out: np.ndarray = np.empty(max(len(offsets) - 1, 0), dtype=dtype)
    by_queries(offsets, lambda lo, hi: kernel(offsets, *args, out, lo, hi))
    return out


def _depth(k: int | None) -> int:
    """A cutoff as the compiled kernels read it: -1 for none."""
    return -1 if k is None else int(k)


def largest_sums(offsets: np.ndarray, values: np.ndarray, keep: np.ndarray, k: int, per_rank: np.ndarray) -> np.ndarray:
    """float64 per segment: its kept values (``keep``, uint8; every one when empty), largest first, the first k summed
    from 0.0 in that order, each times ``per_rank`` at its place (unweighted when empty): an ideal DCG from each query's
    judgments, one small sort per query, compiled, over the cores.

    >>> largest_sums(np.array([0, 3, 3]), np.array([1.0, 3.0, 2.0]), np.zeros(0, np.uint8), 2, np.zeros(0)).tolist()
    [5.0, 0.0]
    """
    return per_query(
        np.ascontiguousarray(offsets, dtype=np.int64),
        lookup.largest_sums,
        np.ascontiguousarray(values, dtype=np.float64),
        np.ascontiguousarray(keep, dtype=np.uint8),
        k,
        np.ascontiguousarray(per_rank, dtype=np.float64),
    )


def _counts(offsets: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Per segment, how many of ``mask`` are True (float64, exact): one compiled pass, no float column or owner index."""
    return segment_counts(np.ascontiguousarray(offsets, dtype=np.int64), np.ascontiguousarray(mask, dtype=bool).view(np.uint8))


def segment_rows(starts: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(offsets, rows): segments ``starts[i]:starts[i] + lengths[i]`` of some array laid end to end, the offsets of
    each in the result and the rows to take for it.

    >>> offsets, rows = segment_rows(np.array([5, 0, 2]), np.array([2, 0, 3]))
    >>> offsets.tolist(), rows.tolist()
    ([0, 2, 2, 5], [5, 6, 2, 3, 4])
    """
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return offsets, np.repeat(starts - offsets[:-1], lengths) + np.arange(int(offsets[-1]), dtype=np.int64)


def segment_cumsum(values: np.ndarray, offsets: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Inclusive cumulative sum restarting at every segment start, bit for bit per segment.

    Each segment's running sum starts from 0 and adds its own values left to right,
    so the result for one query never depends on the queries before it (a global
    cumsum minus each segment's start would carry their rounding error). Segments
    are laid out as rows of a zero-padded matrix, bucketed by length (powers of 2,
    so padding at most doubles the memory), and summed along the rows.

    >>> segment_cumsum(np.array([1.0, 2, 3, 4]), np.array([0, 2, 4]), np.array([2, 2])).tolist()
    [1.0, 3.0, 3.0, 7.0]
    >>> bool(segment_cumsum(np.array([0.1, 0.2, 0.1]), np.array([0, 2, 3]), np.array([2, 1]))[2] == 0.1)
    True
    """
    values = np.asarray(values, dtype=np.float64)
    counts = np.asarray(counts, dtype=np.int64)
    n = counts.size
    if n and values.size == n * int(counts[0]) and bool((counts == counts[0]).all()):
        # every segment has the same length (a recommender's top-k, a fixed-depth run): no gather
        return np.cumsum(values.reshape(n, -1), axis=1).reshape(-1) if values.size else values.copy()
    if bool((values == np.rint(values)).all()) and float(np.abs(values).sum()) < 2.0**53:
        # integers (hit counts): every partial sum is exact, so the global running sum is too
        total = np.cumsum(values)
        before = np.concatenate(([0.0], total))[offsets[:-1]]
        return total - np.repeat(before, counts)
    out = np.empty_like(values)
    present = np.flatnonzero(counts > 0)
    if present.size == 0:
        return out
    lengths = counts[present]
    distinct = np.unique(lengths)
    # few distinct lengths: one exact-width matrix per length; else buckets (2^(b-1), 2^b]
    group = np.searchsorted(distinct, lengths) if distinct.size <= 8 else np.ceil(np.log2(lengths)).astype(np.int64)
    for g in np.unique(group).tolist():
        segs = present[group == g]
        seg_counts = counts[segs]
        width = int(seg_counts.max())
        n_rows = int(seg_counts.sum())
        within = np.arange(n_rows, dtype=np.int64) - np.repeat(np.cumsum(seg_counts) - seg_counts, seg_counts)
        source = np.repeat(offsets[:-1][segs], seg_counts) + within
        padded = np.repeat(np.arange(segs.size, dtype=np.int64) * width, seg_counts) + within
        matrix = np.zeros((segs.size, width))
        matrix.reshape(-1)[padded] = values[source]
        np.cumsum(matrix, axis=1, out=matrix)
        out[source] = matrix.reshape(-1)[padded]
    return out


def segment_suffix_max(values: np.ndarray, offsets: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """max(values[i:end of segment]) for every i, exactly.

    >>> segment_suffix_max(np.array([0.5, 0.2, 0.3, 0.9, 0.1]), np.array([0, 3, 5]), np.array([3, 2])).tolist()
    [0.5, 0.3, 0.3, 0.9, 0.1]
    """
    if values.size == 0:
        return values.astype(np.float64)
    # Work on integer ranks so that lifting each segment above the later ones is exact:
    # a running max over the reversed array then never crosses a segment boundary.
    distinct, rank = np.unique(values, return_inverse=True)
    seg = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
    lifted = rank.astype(np.int64) + (len(counts) - seg) * (distinct.size + 1)
    suffix = np.maximum.accumulate(lifted[::-1])[::-1]
    return np.asarray(distinct[suffix - (len(counts) - seg) * (distinct.size + 1)], dtype=np.float64)


def discount(pos: np.ndarray) -> np.ndarray:
    """1 / log2(rank + 1) for 0-based positions."""
    return 1.0 / np.log2(pos + 2.0)


@dataclass(frozen=True, eq=False)
class RowTerms:
    """Sparse per-user terms (users x ``width * len(blocks)``) as CSR arrays: user u's entries are ``columns[indptr[u]
    :indptr[u + 1]]``, and entry i holds ``blocks[b][i]`` at column ``b * width + columns[i]`` for each block b (a
    block of None holds 1 everywhere: a count, never stored). A system measure's terms when most of a user's row is
    zero (Item MAD's per-item gains and counts); scipy is imported only when more than one row of weights multiplies
    them, which the run's own value never needs.

    >>> terms = RowTerms(np.array([0, 2, 3]), np.array([0, 2, 1]), (np.array([1.0, 2.0, 3.0]), None), width=3)
    >>> terms.toarray().tolist()
    [[1.0, 0.0, 2.0, 1.0, 0.0, 1.0], [0.0, 3.0, 0.0, 0.0, 1.0, 0.0]]
    >>> terms.weighted_sums(np.array([[1.0, 10.0]])).tolist()   # user 0 + 10 x user 1
    [[1.0, 30.0, 2.0, 1.0, 10.0, 1.0]]
    >>> terms[np.array([1, 1])].weighted_sums(np.ones((2, 2))).tolist()
    [[0.0, 6.0, 0.0, 0.0, 2.0, 0.0], [0.0, 6.0, 0.0, 0.0, 2.0, 0.0]]
    """

    indptr: np.ndarray
    columns: np.ndarray
    blocks: tuple[np.ndarray | None, ...]
    width: int

    @property
    def shape(self) -> tuple[int, int]:
        return self.indptr.size - 1, self.width * len(self.blocks)

    def __getitem__(self, rows: np.ndarray) -> RowTerms:
        """The terms of ``rows`` (user indexes, repeats allowed), in that order."""
        rows = np.asarray(rows, dtype=np.int64)
        indptr, take = segment_rows(self.indptr[rows], np.diff(self.indptr)[rows])
        return RowTerms(indptr, self.columns[take], tuple(None if b is None else b[take] for b in self.blocks), self.width)

    @staticmethod
    def stack(chunks: list[RowTerms], zero_rows: int = 0) -> RowTerms:
        """The chunks' rows one after the other, then ``zero_rows`` users without an entry."""
        lengths = np.concatenate([np.diff(c.indptr) for c in chunks] + [np.zeros(zero_rows, dtype=np.int64)])
        indptr = np.zeros(lengths.size + 1, dtype=np.int64)
        np.cumsum(lengths, out=indptr[1:])
        blocks = tuple(
            None if chunks[0].blocks[b] is None else np.concatenate([c.blocks[b] for c in chunks])
            for b in range(len(chunks[0].blocks))
        )  # type: ignore[misc]
        return RowTerms(indptr, np.concatenate([c.columns for c in chunks]), blocks, chunks[0].width)

    def _owner(self) -> np.ndarray:
        return np.repeat(np.arange(self.indptr.size - 1), np.diff(self.indptr))

    def toarray(self) -> np.ndarray:
        """The dense terms, entries in one cell added."""
        out = np.zeros((self.indptr.size - 1, self.width, len(self.blocks)))
        owner = self._owner()
        for b, data in enumerate(self.blocks):
            np.add.at(out[:, :, b], (owner, self.columns), 1.0 if data is None else data)
        return np.concatenate([out[:, :, b] for b in range(len(self.blocks))], axis=1)

    def weighted_sums(self, weights: np.ndarray) -> np.ndarray:
        """(B x width * blocks): each row of user weights (B x users) times the terms. Every sum adds its entries in
        user order from 0, one row of weights or many, so the run's value and its resamples share their bits."""
        w = np.atleast_2d(np.asarray(weights, dtype=np.float64))
        if w.shape[0] == 1:
            per_entry = w[0][self._owner()]
            return np.concatenate(
                [
                    np.bincount(self.columns, weights=per_entry if data is None else data * per_entry, minlength=self.width)
                    for data in self.blocks
                ]
            )[None, :]
        from scipy import sparse

        sums = []
        for data in self.blocks:
            values = np.ones(self.columns.size) if data is None else data
            matrix = sparse.csr_matrix((values, self.columns, self.indptr), shape=(self.indptr.size - 1, self.width))
            sums.append(np.asarray(matrix.T @ w.T).T)
        return np.hstack(sums)


@dataclass(frozen=True, eq=False)
class ItemData:
    """Items of a run's rows and their statistics, indexed by item code.

    Codes below ``n_known`` are items of the training data or the catalogue (sorted by
    id); codes above are items the run recommends that neither knows (cold items).

    code
        int64 per ranked row: its item.
    count, users
        float64 per code: training rows with the item (c_i), distinct training users (pop_i); 0 for cold items.
    in_train, in_catalog
        bool per code.
    features
        (codes x F) unit feature vectors (rows of zeros for items without features, or all-zero ones), or None.
    history_offsets, history_codes
        each query's distinct training items, ascending (CSR over queries), or None without training data.
    item_users
        scipy CSR (known codes x training users), binary: for co-occurrence similarity.
    pair_depth
        the deepest cutoff of the co-occurrence measures asked for: each row's similarities
        are computed once to this depth and shared by every shallower cutoff (None: each
        measure's own).
    """

    code: np.ndarray
    count: np.ndarray
    users: np.ndarray
    in_train: np.ndarray
    in_catalog: np.ndarray
    n_train_rows: int
    n_train_users: int
    n_recbole_items: int  # RecBole's num_items: distinct items of train, test and catalogue, + 1 for [PAD]
    features: np.ndarray | None = None
    history_offsets: np.ndarray | None = None
    history_codes: np.ndarray | None = None
    item_users: Any = None
    user_items: Any = None  # item_users transposed (CSR), prepared once per dataset
    pair_depth: int | None = None
    pair_of_runs: int | None = None  # stacked lists of two runs over the same users (``stack``): users per run
    cold_ids: Any = None  # Arrow strings: the ids of codes n_known.. (cold items), to join two runs' codes
    recbole_extra: Any = None  # Arrow strings: items RecBole counts beyond the known ones (qrels-only and cold)
    user_group: np.ndarray | None = None  # per query: its user group (a segment), -1 for none; None without groups
    user_group_names: tuple[str, ...] = ()  # the groups' names, sorted: ``user_group`` indexes them
    group_training: Any = None  # (user groups x codes): distinct training (user, item) pairs of each group's users
    train_first: np.ndarray | None = None  # per code: its place in the training items' order of first appearance (inf: none)
    judged_code: np.ndarray | None = None  # per judged row (as ``judged_label``): its item's code, -1 when unknown
    columns: Any = None  # {catalogue column: float64 per code, NaN where the item is not listed}: item groups
    labels: Any = None  # {text group column: its labels, sorted}: its column holds each item's index into them
    score: np.ndarray | None = None  # per ranked row: the run's score (rating-based fairness measures)
    user_parts: Any = None  # {measure: (queries x m) per-user sums}: what a system measure resamples (see the registry)
    _cache: dict[Any, Any] = field(default_factory=dict, repr=False)

    @property
    def n_codes(self) -> int:
        return len(self.count)

    @property
    def n_known(self) -> int:
        return self.n_codes - (0 if self.cold_ids is None else len(self.cold_ids))

    def cold_rows(self) -> int:
        """Rows recommending an item that neither the training data nor the catalogue knows."""
        return int((~(self.in_train | self.in_catalog)[self.code]).sum())

    def rows_outside(self) -> dict[str, int]:
        """The rows recommending an item outside each item universe a measure can divide by: the training items
        (Coverage's default: such items push it above 1) and the catalogue; and the cold ones, outside both."""
        return {
            "cold_recommendations": self.cold_rows(),
            "recommendations_outside_train": int((~self.in_train[self.code]).sum()),
            "recommendations_outside_catalogue": int((~self.in_catalog[self.code]).sum()),
        }

    def subset_rows(self, keep: np.ndarray) -> ItemData:
        """The same items for a subset of the ranked rows (trec_eval -J)."""
        score = None if self.score is None else self.score[keep]
        return dataclasses.replace(self, code=self.code[keep], score=score, _cache={})
