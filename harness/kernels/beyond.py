"""Beyond-accuracy kernels: coverage, entropy, Gini, novelty, diversity, serendipity, popularity.

Pure functions over arrays. Every ranked row carries the code of its item
(:class:`ItemData`); the item statistics (training counts, distinct users, features,
each user's history) are arrays indexed by that code. Lists are cut at k in ranking
order (the conventions' tie order) before anything is counted.

Per-user kernels return one value per query, NaN where the measure is undefined for
that user (an empty list; ILD with fewer than 2 items; serendipity without history;
EFD/EPC without a relevant test item), as the peers leave such users out.
System kernels take user weights ``W`` (B x n_queries: 1 for the run itself, bootstrap
multiplicities for a resample) and return one value per row of ``W``.

The definitions, and where Microsoft Recommenders, RecBole and Elliot disagree, are in
the README's "Beyond-accuracy measures" section.

>>> import numpy as np
>>> from harness.kernels._segments import ItemData, RankedLists
>>> items = ItemData(code=np.array([0, 1, 0, 2]), count=np.array([3.0, 1.0, 0.0]), users=np.array([3.0, 1.0, 0.0]),
...                  in_train=np.array([True, True, False]), in_catalog=np.array([True, True, True]),
...                  n_train_rows=4, n_train_users=3, n_recbole_items=4)
>>> lists = RankedLists(np.array([0, 2, 4]), np.zeros(4), np.array([0, 0, 0]), np.zeros(0), items=items)
>>> arp(lists, None, "rows").tolist()      # user 1: (3 + 1) / 2; user 2: (3 + 0) / 2
[2.0, 1.5]
>>> coverage_counts(lists, None, np.ones((1, 2))).tolist()   # items 0, 1, 2 recommended 2, 1, 1 times
[[2.0, 1.0, 1.0]]
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from harness.kernels._lookup_compiled import code_weights, cut_sums, feature_sums, segment_sums, unexpected_sums
from harness.kernels._parallel import over_rows, run_split, split, threads
from harness.kernels._segments import ItemData, RankedLists, RowTerms, discount, segment_rows


def _items(lists: RankedLists) -> ItemData:
    if lists.items is None:
        raise ValueError("these lists carry no item data")  # the evaluator attaches it; a caller bug otherwise
    return lists.items


@dataclass(frozen=True)
class _Cut:
    """The rows of each user's first k, in row order (the per-user kernels touch only these).

    ``rows`` None: every row (the lists are no deeper than k), so nothing is gathered.
    """

    rows: np.ndarray | None
    code: np.ndarray  # int64, contiguous: each cut row's item, as the compiled passes read it
    length: np.ndarray  # float64 per user: items in its cut list
    n_queries: int
    offsets: np.ndarray  # int64: user u's cut rows are u's rows offsets[u]:offsets[u + 1] of this view

    @cached_property
    def qidx(self) -> np.ndarray:
        """The user of each cut row (built on first use: the compiled per-user passes read the offsets instead)."""
        return np.repeat(np.arange(self.n_queries), np.diff(self.offsets))

    def take(self, per_row: np.ndarray) -> np.ndarray:
        return per_row if self.rows is None else per_row[self.rows]

    def sum(self, values: np.ndarray) -> np.ndarray:
        """Per-user sum over the cut rows, from 0.0 in row order: the sum over all rows with the others at 0, bit for
        bit, and what ``np.bincount(qidx, weights)`` adds (one sequential pass, compiled)."""
        return segment_sums(self.offsets, np.ascontiguousarray(values, dtype=np.float64))

    def gathered_sum(
        self, per_code: np.ndarray, label: np.ndarray | None = None, level: float = 0.0, per_rank: np.ndarray | None = None
    ) -> np.ndarray:
        """``self.sum(per_rank[rank] * per_code[self.code])`` (without ``per_rank``: of ``per_code[self.code]``), with
        the rows whose ``label`` (a value per row of the whole lists) is below ``level`` at 0.0: the same bits, in one
        compiled pass that builds none of those columns.

        >>> cut = _Cut(None, np.array([1, 0, 1]), np.array([2.0, 1.0]), 2, np.array([0, 2, 3]))
        >>> cut.gathered_sum(np.array([10.0, 1.0]), label=np.array([1.0, np.nan, 2.0]), level=1.0).tolist()
        [1.0, 1.0]
        """
        none = np.zeros(0)
        return cut_sums(
            self.offsets,
            self.code,
            np.ascontiguousarray(per_code, dtype=np.float64),
            none if label is None else np.ascontiguousarray(label, dtype=np.float64),
            np.zeros(0, dtype=np.int64) if self.rows is None else np.ascontiguousarray(self.rows, dtype=np.int64),
            float(level),
            none if per_rank is None else np.ascontiguousarray(per_rank, dtype=np.float64),
        )

    def positions(self) -> np.ndarray:
        """0-based rank of each cut row (the cut rows are each user's first rows, in order)."""
        return np.arange(self.code.size) - np.repeat(self.offsets[:-1], np.diff(self.offsets))  # type: ignore[no-any-return]

    def rank_discounts(self) -> np.ndarray:
        """1/log2(rank + 1) for each 0-based rank of the cut lists, once per rank (``per_rank`` of :meth:`gathered_sum`)."""
        return discount(np.arange(int(self.length.max(initial=0))))

    def mean(self, values: np.ndarray, counted: np.ndarray | None = None) -> np.ndarray:
        """Per-user mean over the cut rows (only the ``counted`` ones); NaN when none count."""
        if counted is None:
            return _defined_mean(self.sum(values), self.length)
        return _defined_mean(self.sum(np.where(counted, values, 0.0)), self.sum(counted))


def _cut_view(lists: RankedLists, k: int | None) -> _Cut:
    items = _items(lists)
    key = ("cut", k)
    if key not in items._cache:
        length = lists.n_ret if k is None else np.minimum(lists.n_ret, k)
        if k is None or int(lists.n_ret.max(initial=0)) <= k:
            offsets = np.ascontiguousarray(lists.offsets, dtype=np.int64)
            code = np.ascontiguousarray(items.code, dtype=np.int64)
            items._cache[key] = _Cut(None, code, length.astype(np.float64), lists.n_queries, offsets)
        else:
            # the first min(n, k) rows of each list, from the offsets: k rows a user, not a pass over every row
            offsets, rows = segment_rows(lists.offsets[:-1], length)
            code = np.ascontiguousarray(items.code[rows], dtype=np.int64)
            items._cache[key] = _Cut(rows, code, length.astype(np.float64), lists.n_queries, offsets)
    return items._cache[key]  # type: ignore[no-any-return]


def _defined_mean(sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
    out = np.full(sums.shape, np.nan)
    np.divide(sums, counts, out=out, where=counts > 0)
    return out


# ---- popularity -----------------------------------------------------------------
def popularity(items: ItemData, pop: str) -> np.ndarray:
    """Per code: training rows (``rows``, RecBole) or distinct training users (``users``, Elliot)."""
    return items.count if pop == "rows" else items.users


def arp(lists: RankedLists, k: int | None, pop: str) -> np.ndarray:
    """Average recommendation popularity: mean over the list of the items' popularity (cold items 0)."""
    cut = _cut_view(lists, k)
    return _defined_mean(cut.gathered_sum(popularity(_items(lists), pop)), cut.length)


def recbole_tail(items: ItemData, ratio: float | None, count: float | None, ties: str = "id") -> np.ndarray:
    """RecBole's tail set (per code): items with c_i <= count, or the max(int(n * ratio), 1) least-trained items.

    Only training items can be in the tail (RecBole's Counter has no others). Ties at the cut go by
    item id (``ties="id"``), or as RecBole's do (``"recbole"``): by its internal id, the order of first
    appearance in its files, training first, so among training items the training file's order.
    """
    tail = np.zeros(items.n_codes, dtype=bool)
    trained = np.flatnonzero(items.in_train)
    if count is not None:
        tail[trained] = items.count[trained] <= count
        return tail
    assert ratio is not None
    size = max(int(len(trained) * ratio), 1)
    if ties == "recbole" and items.train_first is not None:
        order = trained[np.lexsort((items.train_first[trained], items.count[trained]))]  # by count, then first row
    else:
        order = trained[np.lexsort((trained, items.count[trained]))]  # by count, then code (= id order)
    tail[order[:size]] = True
    return tail


def elliot_long_tail(items: ItemData, head: float) -> np.ndarray:
    """Elliot's long tail (per code): training items outside the short head.

    The short head is the most popular items (distinct users, ties by item id) taken until their
    popularity reaches ``head`` x training rows, the item that reaches it included.
    """
    trained = np.flatnonzero(items.in_train)
    order = trained[np.lexsort((trained, -items.users[trained]))]
    reached = np.cumsum(items.users[order]) >= head * items.n_train_rows
    size = int(np.argmax(reached)) + 1 if reached.any() else len(order)
    tail = np.zeros(items.n_codes, dtype=bool)
    tail[order[size:]] = True
    return tail


def tail_share(lists: RankedLists, k: int | None, tail: np.ndarray) -> np.ndarray:
    """Share of each list in the tail set (RecBole TailPercentage, Elliot APLT)."""
    cut = _cut_view(lists, k)
    return _defined_mean(cut.gathered_sum(tail.astype(np.float64)), cut.length)


def tail_count(lists: RankedLists, k: int | None, tail: np.ndarray) -> np.ndarray:
    """Number of long-tail items in each list (Elliot ACLT); NaN for an empty list."""
    cut = _cut_view(lists, k)
    return np.where(cut.length > 0, cut.gathered_sum(tail.astype(np.float64)), np.nan)


# ---- novelty --------------------------------------------------------------------
def self_information(items: ItemData, cold: str) -> tuple[np.ndarray, np.ndarray]:
    """(-log2(c_i / T) per code, which codes count). Cold items: ``max`` -log2(1/T), ``zero`` 0 (msrec), ``skip``."""
    with np.errstate(divide="ignore"):
        info = -np.log2(items.count / items.n_train_rows)
    seen = items.count > 0
    info[~seen] = np.log2(items.n_train_rows) if cold == "max" else 0.0
    return info, (seen if cold == "skip" else np.ones(items.n_codes, dtype=bool))


def novelty(lists: RankedLists, k: int | None, cold: str) -> np.ndarray:
    """Mean self-information of each list (msrec's novelty called on one user's rows)."""
    info, counted = self_information(_items(lists), cold)
    cut = _cut_view(lists, k)
    return _defined_mean(cut.gathered_sum(np.where(counted, info, 0.0)), cut.gathered_sum(counted.astype(np.float64)))


def _discounted(lists: RankedLists, k: int | None, per_code: np.ndarray, rel: float | None) -> np.ndarray:
    """Elliot's EFD/EPC frame: sum of rel x disc x per_row over the list / sum of disc; NaN without a relevant test item."""

    cut = _cut_view(lists, k)
    per_rank = cut.rank_discounts()
    value = _defined_mean(
        cut.gathered_sum(per_code, lists.label, lists.level(rel), per_rank),
        cut.gathered_sum(np.ones(per_code.size), per_rank=per_rank),
    )
    value = np.where(np.isnan(value), 0.0, value)  # an empty list scores 0 for a user with relevant items
    return np.where(lists.num_rel(rel) > 0, value, np.nan)


def efd(lists: RankedLists, k: int | None, rel: float | None) -> np.ndarray:
    """Expected free discovery (Elliot): discounted, relevance-weighted -log2(pop_i / sum pop)."""
    items = _items(lists)
    trained = items.in_train
    total = items.users[trained].sum()
    with np.errstate(divide="ignore"):
        info = -np.log2(items.users / total)
    info[~trained] = -np.log2(items.users[trained].min() / total) if trained.any() else 0.0  # Elliot's max novelty
    return _discounted(lists, k, info, rel)


def epc(lists: RankedLists, k: int | None, rel: float | None) -> np.ndarray:
    """Expected popularity complement (Elliot): discounted, relevance-weighted 1 - pop_i / training users."""
    items = _items(lists)
    complement = 1.0 - items.users / max(items.n_train_users, 1)
    return _discounted(lists, k, complement, rel)


# ---- similarity -----------------------------------------------------------------
def _user_vectors(items: ItemData) -> tuple[Any, Any, np.ndarray]:
    """The co-occurrence cosine's inputs: items x training users (CSR), its transpose (CSR), and 1 / sqrt(|U_i|)
    per code (0 for items without training users). Built once per run: ILD and Serendipity at every cutoff share it."""
    if "user_vectors" not in items._cache:
        with np.errstate(divide="ignore"):
            scale = np.where(items.users > 0, 1.0 / np.sqrt(items.users), 0.0)
        transposed = items.user_items if items.user_items is not None else items.item_users.T.tocsr()
        items._cache["user_vectors"] = (items.item_users, transposed, scale)
    return items._cache["user_vectors"]  # type: ignore[no-any-return]


def _cooccurrence_rows(lists: RankedLists, kind: str, k: int | None) -> np.ndarray:
    """Per listed row, its co-occurrence cosines summed (compiled): to the rows before it in its list ("pairs"),
    or to its user's training items ("history"). A row's sum does not depend on the cutoff, so it is computed
    once, to the deepest cutoff asked for, and every cutoff reads its first k rows."""
    from harness.kernels import _cooccurrence  # compiled; loaded only for co-occurrence similarity

    items = _items(lists)
    depth = k if k is None or items.pair_depth is None else max(k, items.pair_depth)
    done = items._cache.setdefault(("cooccurrence", kind), {})
    for computed, values in done.items():
        if computed is None or (depth is not None and computed >= depth):
            return values  # type: ignore[no-any-return]
    starts = lists.offsets[:-1]
    ends = starts + (lists.n_ret if depth is None else np.minimum(lists.n_ret, depth))
    if kind == "pairs":
        values = _cooccurrence.earlier_pair_sums(items.code, starts, ends, *_user_vectors(items))
    else:
        assert items.history_offsets is not None and items.history_codes is not None
        values = _cooccurrence.history_sums(
            items.code, starts, ends, items.history_offsets, items.history_codes, *_user_vectors(items)
        )
    done[depth] = values
    return values


def _list_matrix(lists: RankedLists, k: int | None, values: np.ndarray | None = None) -> Any:
    """Sparse (queries x codes): each user's cut list as a row (1, or ``values`` per row); rows in ranking order."""
    from scipy import sparse

    cut = _cut_view(lists, k)
    indptr = np.zeros(lists.n_queries + 1, dtype=np.int64)
    np.cumsum(cut.length.astype(np.int64), out=indptr[1:])
    data = np.ones(cut.code.size) if values is None else cut.take(np.asarray(values, dtype=np.float64))
    return sparse.csr_matrix((data, cut.code, indptr), shape=(lists.n_queries, _items(lists).n_codes))


def _feature_sums(lists: RankedLists, k: int | None) -> np.ndarray:
    """(queries x F): each user's cut list's unit feature vectors summed; ILD and Serendipity share it."""
    items = _items(lists)
    key = ("feature sums", k)
    if key not in items._cache:
        assert items.features is not None
        cut = _cut_view(lists, k)  # compiled: the list matrix's product with the features, the same additions
        items._cache[key] = _summed_features(cut.offsets, cut.code, items.features)
    return items._cache[key]  # type: ignore[no-any-return]


def _summed_features(offsets: np.ndarray, code: np.ndarray, features: np.ndarray) -> np.ndarray:
    """(segments x F): each segment's feature vectors summed in order (:func:`feature_sums`), its segments split over
    the cores by their lengths; a segment's row is one thread's, so the bits do not depend on the split.

    >>> _summed_features(np.array([0, 2, 3]), np.array([1, 0, 1]), np.array([[1.0, 0.0], [0.5, 0.5]])).tolist()
    [[1.5, 0.5], [0.5, 0.5]]
    """
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    code = np.ascontiguousarray(code, dtype=np.int64)
    features = np.ascontiguousarray(features, dtype=np.float64)
    out = np.zeros((offsets.size - 1, features.shape[1]), dtype=np.float64)

    def task(lo: int, hi: int) -> None:
        feature_sums(offsets, code, features, out, lo, hi)

    run_split(task, split(np.diff(offsets).astype(np.float64) + 1.0, threads()))
    return out


def _row_dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.einsum("ij,ij->i", a, b)


def ild(lists: RankedLists, k: int | None, sim: str) -> np.ndarray:
    """Intra-list diversity: 1 - mean similarity over the unordered pairs of each list; NaN below 2 items."""
    items = _items(lists)
    cut = _cut_view(lists, k)
    n_pairs = cut.length * (cut.length - 1) / 2
    if sim == "features":  # sum over pairs = (|sum of unit vectors|^2 - sum of |unit|^2) / 2: no pairs needed
        assert items.features is not None
        total = _feature_sums(lists, k)
        self_sq = cut.gathered_sum(_row_dot(items.features, items.features))
        sums = (_row_dot(total, total) - self_sq) / 2.0
    else:  # each row's similarities to the rows before it (k(k-1)/2 pairs per user, compiled), summed per user
        sums = cut.sum(cut.take(_cooccurrence_rows(lists, "pairs", k)))
    out = np.full(lists.n_queries, np.nan)
    ok = n_pairs > 0
    out[ok] = 1.0 - sums[ok] / n_pairs[ok]
    return out


def serendipity(lists: RankedLists, k: int | None, sim: str, rel: float | None) -> np.ndarray:
    """Mean over the list of (1 - mean similarity to the user's training items) x relevance.

    ``rel`` None: every item counts as relevant (unexpectedness); else relevant iff its test
    label >= rel. NaN for a user without training history or without items.
    """
    items = _items(lists)
    if items.history_offsets is None or items.history_codes is None:
        raise ValueError("serendipity needs each user's training history")
    h_len = np.diff(items.history_offsets)
    cut = _cut_view(lists, k)
    if sim == "features":
        # sum over the list of rel_i (1 - x_i . h / |H|) = sum rel_i - (sum rel_i x_i) . h / |H|, h the history's
        # unit vectors summed: two sparse products, no per-item similarity
        assert items.features is not None
        if rel is None:
            listed, weight = _feature_sums(lists, k), cut.length
        else:
            relevance = lists.hits(rel).astype(np.float64)
            listed, weight = np.asarray(_list_matrix(lists, k, relevance) @ items.features), cut.sum(cut.take(relevance))
        if "history features" not in items._cache:
            assert items.history_offsets is not None and items.history_codes is not None
            items._cache["history features"] = _summed_features(items.history_offsets, items.history_codes, items.features)
        history = items._cache["history features"]
        with np.errstate(invalid="ignore", divide="ignore"):
            total = weight - _row_dot(listed, history) / h_len
        return np.where(h_len > 0, _defined_mean(total, cut.length), np.nan)
    # each row's 1 - (its similarities to the history) / |H|, 0 where not relevant, summed per user in row order
    similarity = np.ascontiguousarray(_cooccurrence_rows(lists, "history", k), dtype=np.float64)
    rows = np.zeros(0, dtype=np.int64) if cut.rows is None else np.ascontiguousarray(cut.rows, dtype=np.int64)
    label = np.zeros(0) if rel is None else np.ascontiguousarray(lists.label, dtype=np.float64)
    sums = np.zeros(lists.n_queries, dtype=np.float64)
    history_length = np.ascontiguousarray(h_len, dtype=np.int64)

    def task(lo: int, hi: int) -> None:
        unexpected_sums(cut.offsets, rows, similarity, history_length, label, 0.0 if rel is None else float(rel), sums, lo, hi)

    run_split(task, split(cut.length + 1.0, threads()))
    return np.where(h_len > 0, _defined_mean(sums, cut.length), np.nan)


def stack(parts: list[tuple[RankedLists, np.ndarray]]) -> RankedLists:
    """The lists of the chosen queries of several runs, one after the other, with their items in one code space.

    Known items keep their codes (they are the dataset's); each run's cold items are matched by id.
    Only what system measures read is kept (ranks, items, the per-user terms): a comparison of two runs' system
    measures resamples users over this stack with one weight per (run, user).
    """

    import pyarrow as pa
    import pyarrow.compute as pc

    first = _items(parts[0][0])
    n_known = first.n_known
    cold = [p[0].items.cold_ids for p in parts if p[0].items is not None and p[0].items.cold_ids is not None]
    # empty arrays as nulls(0): pa.array([]) imports pandas (0.2 s)
    union = pa.chunked_array(cold, pa.string()).unique() if cold else pa.nulls(0, pa.string())
    extra = [p[0].items.recbole_extra for p in parts if p[0].items is not None and p[0].items.recbole_extra is not None]
    recbole_extra = pa.chunked_array(extra, pa.string()).unique() if extra else pa.nulls(0, pa.string())
    codes, counts = [], []
    for lists, queries in parts:
        items = _items(lists)
        n = lists.n_ret[queries]
        rows = np.repeat(lists.offsets[:-1][queries] - np.concatenate(([0], np.cumsum(n)[:-1])), n) + np.arange(int(n.sum()))
        code = items.code[rows].copy()
        if items.cold_ids is not None and len(items.cold_ids):
            remap = n_known + pc.index_in(items.cold_ids, value_set=union).to_numpy(zero_copy_only=False).astype(np.int64)
            is_cold = code >= n_known
            code[is_cold] = remap[code[is_cold] - n_known]
        codes.append(code)
        counts.append(n)
    n_ret = np.concatenate(counts)
    offsets = np.zeros(n_ret.size + 1, dtype=np.int64)
    np.cumsum(n_ret, out=offsets[1:])
    n_cold = len(union)

    def pad(values: np.ndarray) -> np.ndarray:
        known = values[:n_known]
        return np.concatenate([known, np.zeros((n_cold, *known.shape[1:]), dtype=known.dtype)])

    items = dataclasses.replace(
        first,
        code=np.concatenate(codes),
        user_parts=_stacked_parts(parts),
        count=pad(first.count),
        users=pad(first.users),
        in_train=pad(first.in_train),
        in_catalog=pad(first.in_catalog),
        features=None if first.features is None else pad(first.features),
        cold_ids=union,
        recbole_extra=recbole_extra,
        n_recbole_items=n_known + len(recbole_extra) + 1,
        history_offsets=None,
        history_codes=None,
        _cache={},
        pair_of_runs=int(counts[0].size) if len(parts) == 2 and counts[0].size == counts[1].size else None,
    )
    empty = np.zeros(0)
    return RankedLists(offsets, np.zeros(int(offsets[-1])), np.zeros(n_ret.size + 1, dtype=np.int64), empty, items=items)


def stack_terms(chunks: list[Any], zero_rows: int = 0) -> Any:
    """Blocks of a system measure's per-user terms (dense, or sparse :class:`RowTerms`), one after the other, then
    ``zero_rows`` rows of zeros.

    >>> stack_terms([np.ones((1, 2)), np.full((1, 2), 2.0)], zero_rows=1).tolist()
    [[1.0, 1.0], [2.0, 2.0], [0.0, 0.0]]
    """
    if isinstance(chunks[0], RowTerms):
        return RowTerms.stack(chunks, zero_rows)
    return np.vstack([*chunks, np.zeros((zero_rows, chunks[0].shape[1]))])


def _stacked_parts(parts: list[tuple[RankedLists, np.ndarray]]) -> dict[Any, Any] | None:
    """The system measures' per-user terms of the chosen queries of each run, one run after the other."""
    first = _items(parts[0][0]).user_parts
    if not first:
        return None
    return {measure: stack_terms([_items(lists).user_parts[measure][queries] for lists, queries in parts]) for measure in first}


# ---- system measures: functions of the (weighted) recommendation counts -----------
def _incidence(lists: RankedLists, k: int | None) -> Any:
    """Sparse (codes x n_queries): each item's lists, among the users' cut lists (built once per cutoff).

    Its entries are 1 in float32 (exact), so resampling multiplies it as it is (:func:`_weighted`).
    """
    items = _items(lists)
    key = ("incidence", k)
    if key not in items._cache:
        items._cache[key] = _list_matrix(lists, k).T.tocsr().astype(np.float32)
    return items._cache[key]


def coverage_counts(lists: RankedLists, k: int | None, weights: np.ndarray) -> np.ndarray:
    """(B x codes): r_i, the weighted number of lists holding each item, for each row of weights.

    The last result is kept for the same weights object (held, so never confused with another):
    Coverage, RecItems, Entropy and Gini at one cutoff share one product per block of resamples.
    """
    items = _items(lists)
    cached = items._cache.get("counts")
    if cached is not None and cached[0] == k and cached[1] is weights:
        return cached[2]  # type: ignore[no-any-return]
    w = np.asarray(weights, dtype=np.float64)
    if w.shape[0] == 1:  # the run itself: one pass over its rows (the product sums the same terms in the same order)
        cut = _cut_view(lists, k)
        counts = code_weights(cut.offsets, cut.code, np.ascontiguousarray(w[0]), items.n_codes)[None, :]
    elif items.pair_of_runs is not None:
        counts = _pair_counts(lists, k, w, items.pair_of_runs)
    else:
        counts = _weighted(_incidence(lists, k), w)
    items._cache["counts"] = (k, weights, counts)
    return counts


def top_sums(lists: RankedLists, k: int | None, per_code: np.ndarray) -> np.ndarray:
    """Per user: ``per_code`` of the items in its top k, summed in rank order from 0.0 (what a sum over every row with
    the rows below k at 0.0 gives, bit for bit), without a column over every row."""
    return _cut_view(lists, k).gathered_sum(per_code)


def recommendations(lists: RankedLists, k: int | None) -> np.ndarray:
    """float64 per code: how many lists hold the item in their top k (whole numbers: exact).

    >>> items = ItemData(code=np.array([2, 0, 0]), count=np.zeros(3), users=np.zeros(3), in_train=np.ones(3, bool),
    ...                  in_catalog=np.ones(3, bool), n_train_rows=0, n_train_users=0, n_recbole_items=4)
    >>> lists = RankedLists(np.array([0, 2, 3]), np.zeros(3), np.zeros(2, dtype=np.int64), np.zeros(0), items=items)
    >>> recommendations(lists, 1).tolist()   # the first rows: item 2 (user 0's), item 0 (user 1's)
    [1.0, 0.0, 1.0]
    """
    cut = _cut_view(lists, k)
    return code_weights(cut.offsets, cut.code, np.zeros(0), _items(lists).n_codes)


def _weighted(incidence: Any, w: np.ndarray) -> np.ndarray:
    """(B x items): incidence (items x users) times each row of user weights.

    Whole-number weights whose rows sum below 2^24 (resampled or swapped users) give whole
    counts that float32 holds exactly at every partial sum: the product runs in float32,
    twice as fast, to the same numbers. Anything else runs in float64.

    >>> from scipy import sparse
    >>> incidence = sparse.csr_matrix(np.array([[1.0, 1.0, 0.0], [0.0, 1.0, 1.0]]))
    >>> _weighted(incidence, np.array([[2.0, 0.0, 1.0], [0.5, 0.5, 0.5]])).tolist()
    [[2.0, 1.0], [1.0, 1.0]]
    """
    if w.size and np.abs(w).sum(axis=1).max() < 2.0**24 and np.array_equal(w, np.round(w)):
        matrix = incidence if incidence.dtype == np.float32 else incidence.astype(np.float32)  # cached ones are already
    else:
        matrix = incidence.astype(np.float64)
    out = np.empty((w.shape[0], matrix.shape[0]))

    def rows(lo: int, hi: int) -> None:  # scipy's sparse product runs without the GIL: the replicates split over cores
        out[lo:hi] = np.asarray(matrix @ np.ascontiguousarray(w[lo:hi].T, dtype=matrix.dtype)).T

    # each output sum runs over the same nonzeros in the same order however the replicates are split: the same bits
    if w.shape[0] >= 8:
        over_rows(w.shape[0], rows)
    else:
        rows(0, w.shape[0])
    return out


def _pair_counts(lists: RankedLists, k: int | None, w: np.ndarray, n: int) -> np.ndarray:
    """coverage_counts of two stacked runs A | B over the same n users, by algebra instead of one product over both.

    * A swap of the randomization test, weights [1 - c | c] (or [c | 1 - c]): with D = inc_B - inc_A (items x
      users; where both lists hold an item for a user, it cancels), the counts are T_A + D c (or T_B - D c), and
      the two calls of a replicate block share D c;
    * otherwise (the bootstrap's [drawn | 0], fractional weights) each run's own product, a run weighted 0 skipped.

    Integer weights give the same integers as the product over both (exactly); fractional sums are summed per run.
    """
    items = _items(lists)
    first, second = w[:, :n], w[:, n:]
    key = ("pair", k)
    if key not in items._cache:  # each run's incidence, their difference and totals: once per cutoff
        inc = _incidence(lists, k)
        inc_a, inc_b = inc[:, :n].tocsr(), inc[:, n:].tocsr()
        totals = tuple(np.asarray(m.sum(axis=1, dtype=np.float64)).ravel() for m in (inc_a, inc_b))  # exact past 2^24
        items._cache[key] = (inc_a, inc_b, (inc_b - inc_a).tocsr(), totals)
    inc_a, inc_b, difference, (total_a, total_b) = items._cache[key]
    if first.shape == second.shape and bool(np.all(np.add(first, second) == 1.0)):  # a swap: no matrix of ones made
        shared = items._cache.get(("pair product", k))
        if shared is not None and np.array_equal(shared[0], first):  # [c | 1 - c]: run B keeps 1 - c
            return total_b[None, :] - shared[1]
        if shared is not None and np.array_equal(shared[0], second):
            return total_a[None, :] + shared[1]
        product = _weighted(difference, second)
        items._cache[("pair product", k)] = (second.copy(), product)
        return total_a[None, :] + product
    counts = np.zeros((w.shape[0], inc_a.shape[0]))
    for part, incidence in ((first, inc_a), (second, inc_b)):
        if part.any():
            counts += _weighted(incidence, part)
    return counts


def universe_size(items: ItemData, catalog: str) -> int:
    """|I|: training items (msrec, Elliot), catalogue items, or RecBole's num_items (+1 for [PAD])."""
    if catalog == "train":
        return int(items.in_train.sum())
    if catalog == "items":
        return int(items.in_catalog.sum())
    return items.n_recbole_items


def coverage(counts: np.ndarray, size: int) -> np.ndarray:
    """Distinct recommended items / |I| (msrec can exceed 1: recommended items outside I count)."""
    return (counts > 0).sum(axis=1) / size


def entropy(counts: np.ndarray, form: str, user_share: np.ndarray | None = None, n_users: np.ndarray | None = None) -> np.ndarray:
    """Shannon entropy of the recommendation shares p_i = r_i / N.

    ``msrec``: -sum p log2 p (bits). ``recbole``: the mean of -p ln p over the distinct
    recommended items (RecBole's code). ``elliot``: (1/|U|) sum_i w_i (-log2 p_i), with
    w_i = sum over lists holding i of 1/|L_u| (``user_share``) and |U| users (``n_users``).
    """
    total = counts.sum(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = counts / total
        log_p = np.where(counts > 0, np.log(np.where(counts > 0, p, 1.0)), 0.0)
    if form == "msrec":
        return -(p * log_p).sum(axis=1) / np.log(2)
    if form == "recbole":
        return -(p * log_p).sum(axis=1) / np.maximum((counts > 0).sum(axis=1), 1)
    assert user_share is not None and n_users is not None
    return -(user_share * log_p).sum(axis=1) / np.log(2) / n_users


def gini(counts: np.ndarray, size: int | np.ndarray, form: str) -> np.ndarray:
    """Gini index of each row's recommendation counts over ``size`` items (zeros for items never recommended).

    ``recbole``: sum_j (2j - n - 1) x_(j) / (n N), 0 when equal. ``elliot``: 1 - that x n/(n - 1), 1 when equal.
    ``size`` is one n for every row or one per row; it counts every item a row recommends (recommended items
    outside the universe join it), so only zeros fall outside the n largest.

    >>> gini(np.array([[0.0, 0.0, 2.0], [1.0, 1.0, 0.0]]), np.array([4, 2]), "recbole").round(4).tolist()
    [0.75, 0.0]
    """
    n = np.broadcast_to(np.asarray(size, dtype=np.float64), counts.shape[:1])
    x = np.sort(counts, axis=1)
    # the k-th largest count is x_(n - k); positions below 1 hold zeros (the row's other items), which add nothing
    j = n[:, None] - np.arange(x.shape[1] - 1, -1, -1, dtype=np.float64)[None, :]
    total = counts.sum(axis=1)
    g = ((2 * j - n[:, None] - 1) * x).sum(axis=1) / (n * total)
    return g if form == "recbole" else 1.0 - g * n / (n - 1)


__all__ = [
    "ItemData",
    "arp",
    "coverage",
    "coverage_counts",
    "efd",
    "elliot_long_tail",
    "entropy",
    "epc",
    "gini",
    "ild",
    "novelty",
    "popularity",
    "recbole_tail",
    "self_information",
    "serendipity",
    "stack_terms",
    "tail_count",
    "tail_share",
    "universe_size",
]
