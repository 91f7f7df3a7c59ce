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
>>> from harness.kernels._segments import RankedLists
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

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from harness.kernels._segments import RankedLists

# Pair blocks: how many (item, item) similarities are gathered at once (bounds memory, not results).
PAIR_BLOCK = 1 << 22
# Largest dense co-occurrence table (int32 cells); beyond it, pairs are looked up in the sparse one.
DENSE_COOCCURRENCE_CELLS = 1 << 28


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
        each query's training items (CSR over queries), or None without training data.
    item_users
        scipy CSR (known codes x training users), binary: for co-occurrence similarity.
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
    cold_ids: Any = None  # Arrow strings: the ids of codes n_known.. (cold items), to join two runs' codes
    recbole_extra: Any = None  # Arrow strings: items RecBole counts beyond the known ones (qrels-only and cold)
    _cache: dict[Any, Any] = field(default_factory=dict, repr=False)

    @property
    def n_codes(self) -> int:
        return len(self.count)

    @property
    def n_known(self) -> int:
        return self.n_codes - (0 if self.cold_ids is None else len(self.cold_ids))

    def subset_rows(self, keep: np.ndarray) -> ItemData:
        """The same items for a subset of the ranked rows (trec_eval -J)."""
        import dataclasses

        return dataclasses.replace(self, code=self.code[keep], _cache={})


def _items(lists: RankedLists) -> ItemData:
    if lists.items is None:
        raise ValueError("these lists carry no item data")  # the evaluator attaches it; a caller bug otherwise
    return lists.items


def _cut(lists: RankedLists, k: int | None) -> np.ndarray:
    return np.ones(len(lists.label), dtype=bool) if k is None else lists.pos < k


def _defined_mean(sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
    out = np.full(sums.shape, np.nan)
    np.divide(sums, counts, out=out, where=counts > 0)
    return out


def _list_mean(lists: RankedLists, k: int | None, per_row: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
    """Mean of ``per_row`` over each user's first k rows (those in ``rows`` too); NaN for an empty list."""
    keep = _cut(lists, k) if rows is None else _cut(lists, k) & rows
    return _defined_mean(lists.sum(np.where(keep, per_row, 0.0)), lists.sum(keep))


# ---- popularity -----------------------------------------------------------------
def popularity(items: ItemData, pop: str) -> np.ndarray:
    """Per code: training rows (``rows``, RecBole) or distinct training users (``users``, Elliot)."""
    return items.count if pop == "rows" else items.users


def arp(lists: RankedLists, k: int | None, pop: str) -> np.ndarray:
    """Average recommendation popularity: mean over the list of the items' popularity (cold items 0)."""
    items = _items(lists)
    return _list_mean(lists, k, popularity(items, pop)[items.code])


def recbole_tail(items: ItemData, ratio: float | None, count: float | None) -> np.ndarray:
    """RecBole's tail set (per code): items with c_i <= count, or the max(int(n * ratio), 1) least-trained items.

    Only training items can be in the tail (RecBole's Counter has no others); ties at the cut go by
    item id (RecBole's go by its internal id, the order of first appearance in its files).
    """
    tail = np.zeros(items.n_codes, dtype=bool)
    trained = np.flatnonzero(items.in_train)
    if count is not None:
        tail[trained] = items.count[trained] <= count
        return tail
    assert ratio is not None
    size = max(int(len(trained) * ratio), 1)
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
    return _list_mean(lists, k, tail[_items(lists).code].astype(np.float64))


def tail_count(lists: RankedLists, k: int | None, tail: np.ndarray) -> np.ndarray:
    """Number of long-tail items in each list (Elliot ACLT); NaN for an empty list."""
    keep = _cut(lists, k)
    counts = lists.sum(keep)
    out = lists.sum(keep & tail[_items(lists).code])
    return np.where(counts > 0, out, np.nan)


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
    items = _items(lists)
    info, counted = self_information(items, cold)
    return _list_mean(lists, k, info[items.code], counted[items.code])


def _discounted(lists: RankedLists, k: int | None, per_row: np.ndarray, rel: float | None) -> np.ndarray:
    """Elliot's EFD/EPC frame: sum of rel x disc x per_row over the list / sum of disc; NaN without a relevant test item."""
    from harness.kernels._segments import discount

    keep = _cut(lists, k)
    disc = np.where(keep, discount(lists.pos), 0.0)
    relevant = lists.hits(rel)
    value = _defined_mean(lists.sum(np.where(relevant, disc * per_row, 0.0)), lists.sum(disc))
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
    return _discounted(lists, k, info[items.code], rel)


def epc(lists: RankedLists, k: int | None, rel: float | None) -> np.ndarray:
    """Expected popularity complement (Elliot): discounted, relevance-weighted 1 - pop_i / training users."""
    items = _items(lists)
    complement = 1.0 - items.users / max(items.n_train_users, 1)
    return _discounted(lists, k, complement[items.code], rel)


# ---- similarity -----------------------------------------------------------------
class _Cooccurrence:
    """|U_i & U_j| for pairs of items, from the binary item x training-user matrix.

    A dense table over the items that occur when it fits (int32: exact), else a sorted
    key lookup in the sparse product.
    """

    def __init__(self, items: ItemData, needed: np.ndarray) -> None:
        self.position = np.full(items.n_codes + 1, -1, dtype=np.int64)
        known = needed[(needed < items.item_users.shape[0]) & (items.users[needed] > 0)]
        self.position[known] = np.arange(known.size)
        sub = items.item_users[known]
        gram = (sub @ sub.T).tocsr()
        gram.sort_indices()
        self.n = known.size
        if self.n * self.n <= DENSE_COOCCURRENCE_CELLS:
            self.dense: np.ndarray | None = gram.toarray().astype(np.int32).reshape(-1)
        else:
            self.dense = None
            rows = np.repeat(np.arange(self.n, dtype=np.int64), np.diff(gram.indptr))
            self.keys = rows * self.n + gram.indices.astype(np.int64)
            self.values = gram.data.astype(np.float64)

    def __call__(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        pa_, pb = self.position[a], self.position[b]
        ok = (pa_ >= 0) & (pb >= 0)
        key = np.where(ok, pa_ * self.n + pb, 0)
        if self.dense is not None:
            return np.where(ok, self.dense[key] if self.dense.size else 0, 0).astype(np.float64)
        order = np.argsort(key, kind="stable")  # sorted needles: a searchsorted 5x faster (cache), same answers
        at = np.empty(key.size, dtype=np.int64)
        at[order] = np.searchsorted(self.keys, key[order])
        at = np.minimum(at, max(self.keys.size - 1, 0))
        found = ok & (self.keys.size > 0) & (self.keys[at] == key) if self.keys.size else np.zeros(key.size, dtype=bool)
        return np.where(found, self.values[at] if self.keys.size else 0.0, 0.0)


def _cooccurrence_cosine(items: ItemData):  # type: ignore[no-untyped-def]
    """sim(a, b) for arrays of codes: the cosine of the items' binary training-user vectors."""
    key = "cooccurrence"
    if key not in items._cache:  # one table per run: every listed and history item, shared by ILD and Serendipity
        items._cache[key] = _Cooccurrence(items, _needed_codes(items))
    counts = items._cache[key]
    with np.errstate(divide="ignore"):
        scale = np.where(items.users > 0, 1.0 / np.sqrt(items.users), 0.0)
    return lambda a, b: counts(a, b) * scale[a] * scale[b]


def _needed_codes(items: ItemData) -> np.ndarray:
    """Every item of the run's rows and of the users' histories: the co-occurrence table covers them all, once
    (ILD and Serendipity at every cutoff share it)."""
    present = np.bincount(items.code, minlength=items.n_codes) > 0
    if items.history_codes is not None:
        present |= np.bincount(items.history_codes, minlength=items.n_codes) > 0
    return np.flatnonzero(present)


def _blocks(per_user: np.ndarray) -> list[tuple[int, int]]:
    """Consecutive user ranges whose pair counts sum to about PAIR_BLOCK (a user is never split)."""
    ends = np.cumsum(per_user)
    out, start, done = [], 0, 0
    while start < len(per_user):
        stop = int(np.searchsorted(ends, done + PAIR_BLOCK, side="right"))
        stop = max(stop, start + 1)
        out.append((start, stop))
        done = int(ends[stop - 1])
        start = stop
    return out


def _list_matrix(lists: RankedLists, keep: np.ndarray, values: np.ndarray | None = None) -> Any:
    """Sparse (queries x codes): each user's cut list as a row (1, or ``values`` per row); rows in ranking order."""
    from scipy import sparse

    items = _items(lists)
    rows = np.flatnonzero(keep)
    counts = np.bincount(lists.qidx[rows], minlength=lists.n_queries)
    indptr = np.zeros(lists.n_queries + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    data = np.ones(rows.size) if values is None else np.asarray(values, dtype=np.float64)[rows]
    return sparse.csr_matrix((data, items.code[rows], indptr), shape=(lists.n_queries, items.n_codes))


def _history_matrix(items: ItemData, n_queries: int) -> Any:
    from scipy import sparse

    assert items.history_offsets is not None and items.history_codes is not None
    return sparse.csr_matrix((np.ones(items.history_codes.size), items.history_codes, items.history_offsets),
                             shape=(n_queries, items.n_codes))  # fmt: skip


def _row_dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.einsum("ij,ij->i", a, b)


def _cooccurrence_pair_sums(lists: RankedLists, keep: np.ndarray, m: np.ndarray, route: str | None = None) -> np.ndarray:
    """Sum over the unordered pairs of each list of the co-occurrence cosine, two exact ways, the cheaper one.

    * factored: with x_i = (binary user vector of i) / sqrt(|U_i|), the pairs sum to
      (|sum_i x_i|^2 - #items with users) / 2: one sparse product with the item x user matrix,
      costing sum over the lists' rows of |U_i|;
    * pairs: look each pair's |U_i & U_j| up in the items' co-occurrence table, costing about
      k(k-1)/2 lookups per user plus building the table (sum over training users of their items^2).
    """
    items = _items(lists)
    n_pairs = m * (m - 1) // 2
    rows = np.flatnonzero(keep)
    factored_cost = float(items.users[items.code[rows]].sum())
    per_user_items = np.bincount(items.item_users.indices, minlength=items.item_users.shape[1]).astype(np.float64)
    pairs_cost = 30.0 * float(n_pairs.sum()) + float((per_user_items**2).sum())
    sums = np.zeros(lists.n_queries)
    if route == "factored" or (route is None and factored_cost <= pairs_cost):
        from scipy import sparse

        with np.errstate(divide="ignore"):
            scale = np.where(items.users > 0, 1.0 / np.sqrt(items.users), 0.0)
        lists_scaled = _list_matrix(lists, keep, scale[items.code])
        n_users = items.item_users.shape[1]
        cold_rows = sparse.csr_matrix((items.n_codes - items.item_users.shape[0], n_users))
        user_vectors = sparse.vstack([items.item_users.astype(np.float64), cold_rows]).tocsr()
        with_users = lists.sum(keep & (items.users[items.code] > 0))
        row_budget = max(1, int(PAIR_BLOCK // max(factored_cost / max(lists.n_queries, 1), 1.0)))
        for lo in range(0, lists.n_queries, row_budget):
            summed = (lists_scaled[lo : lo + row_budget] @ user_vectors).tocsr()
            n = summed.shape[0]
            owner = np.repeat(np.arange(n), np.diff(summed.indptr))  # each user's squares summed in its own order
            squares = np.bincount(owner, weights=summed.data**2, minlength=n)
            sums[lo : lo + n] = (squares - with_users[lo : lo + n]) / 2.0
        return sums
    similarity = _cooccurrence_cosine(items)
    starts = lists.offsets[:-1]
    for lo, hi in _blocks(n_pairs):
        users = np.arange(lo, hi)
        users = users[n_pairs[users] > 0]
        if users.size == 0:
            continue
        # every row a of a list pairs with the rows after it: (m - 1 - a) partners each
        mu = m[users]
        row_count = np.repeat(mu, mu)
        within = np.arange(int(mu.sum())) - np.repeat(np.cumsum(mu) - mu, mu)
        first = np.repeat(starts[users], mu) + within
        partners = row_count - 1 - within
        a = np.repeat(first, partners)
        b = a + 1 + (np.arange(int(partners.sum())) - np.repeat(np.cumsum(partners) - partners, partners))
        owner = np.repeat(np.repeat(np.arange(users.size), mu), partners)
        values = similarity(items.code[a], items.code[b])
        sums[users] = np.bincount(owner, weights=values, minlength=users.size)
    return sums


def ild(lists: RankedLists, k: int | None, sim: str) -> np.ndarray:
    """Intra-list diversity: 1 - mean similarity over the unordered pairs of each list; NaN below 2 items."""
    items = _items(lists)
    keep = _cut(lists, k)
    m = np.minimum(lists.n_ret, k) if k is not None else lists.n_ret
    n_pairs = m * (m - 1) // 2
    if sim == "features":  # sum over pairs = (|sum of unit vectors|^2 - sum of |unit|^2) / 2: no pairs needed
        assert items.features is not None
        matrix = _list_matrix(lists, keep)
        total = np.asarray(matrix @ items.features)
        self_sq = np.asarray(matrix @ _row_dot(items.features, items.features))
        sums = (_row_dot(total, total) - self_sq) / 2.0
    else:
        sums = _cooccurrence_pair_sums(lists, keep, m)
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
    h_off, h_codes = items.history_offsets, items.history_codes
    h_len = np.diff(h_off)
    keep = _cut(lists, k)
    if sim == "features":
        # sum over the list of rel_i (1 - x_i . h / |H|) = sum rel_i - (sum rel_i x_i) . h / |H|, h the history's
        # unit vectors summed: two sparse products, no per-item similarity
        assert items.features is not None
        relevance = np.ones(len(lists.label)) if rel is None else lists.hits(rel).astype(np.float64)
        weighted = _list_matrix(lists, keep, relevance)
        history = np.asarray(_history_matrix(items, lists.n_queries) @ items.features)
        listed = np.asarray(weighted @ items.features)
        with np.errstate(invalid="ignore", divide="ignore"):
            total = np.asarray(weighted.sum(axis=1)).ravel() - _row_dot(listed, history) / h_len
        out = _defined_mean(total, lists.sum(keep))
        return np.where(h_len > 0, out, np.nan)
    rows = np.flatnonzero(keep)
    q = lists.qidx[rows]
    mean_sim = np.zeros(rows.size)
    similarity = _cooccurrence_cosine(items)
    per_row_pairs = h_len[q]
    for lo, hi in _blocks(per_row_pairs):  # each (recommended item, history item) pair looked up
        r = np.arange(lo, hi)
        count = per_row_pairs[r]
        a = np.repeat(items.code[rows[r]], count)
        start = np.repeat(h_off[q[r]], count)
        b = h_codes[start + np.arange(int(count.sum())) - np.repeat(np.cumsum(count) - count, count)]
        owner = np.repeat(np.arange(r.size), count)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean_sim[r] = np.bincount(owner, weights=similarity(a, b), minlength=r.size) / count
    relevance = np.ones(rows.size) if rel is None else lists.hits(rel)[rows].astype(np.float64)
    per_row = np.zeros(len(lists.label))
    per_row[rows] = (1.0 - mean_sim) * relevance
    out = _defined_mean(lists.sum(per_row), lists.sum(keep))
    return np.where(h_len > 0, out, np.nan)


def stack(parts: list[tuple[RankedLists, np.ndarray]]) -> RankedLists:
    """The lists of the chosen queries of several runs, one after the other, with their items in one code space.

    Known items keep their codes (they are the dataset's); each run's cold items are matched by id.
    Only what system measures read is kept (ranks, items): a comparison of two runs' system
    measures resamples users over this stack with one weight per (run, user).
    """
    import dataclasses

    import pyarrow as pa
    import pyarrow.compute as pc

    from harness.kernels._segments import RankedLists

    first = _items(parts[0][0])
    n_known = first.n_known
    cold = [p[0].items.cold_ids for p in parts if p[0].items is not None and p[0].items.cold_ids is not None]
    union = pa.chunked_array(cold, pa.string()).unique() if cold else pa.array([], pa.string())
    extra = [p[0].items.recbole_extra for p in parts if p[0].items is not None and p[0].items.recbole_extra is not None]
    recbole_extra = pa.chunked_array(extra, pa.string()).unique() if extra else pa.array([], pa.string())
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
        first, code=np.concatenate(codes), count=pad(first.count), users=pad(first.users), in_train=pad(first.in_train),
        in_catalog=pad(first.in_catalog), features=None if first.features is None else pad(first.features),
        cold_ids=union, recbole_extra=recbole_extra, n_recbole_items=n_known + len(recbole_extra) + 1,
        history_offsets=None, history_codes=None, _cache={},
    )  # fmt: skip
    empty = np.zeros(0)
    return RankedLists(offsets, np.zeros(int(offsets[-1])), np.zeros(n_ret.size + 1, dtype=np.int64), empty, items=items)


# ---- system measures: functions of the (weighted) recommendation counts -----------
def _incidence(lists: RankedLists, k: int | None) -> Any:
    """Sparse (codes x n_queries): each item's lists, among the users' cut lists (built once per cutoff)."""
    items = _items(lists)
    key = ("incidence", k)
    if key not in items._cache:
        items._cache[key] = _list_matrix(lists, _cut(lists, k)).T.tocsr()
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
    counts = np.asarray((_incidence(lists, k) @ np.asarray(weights, dtype=np.float64).T).T)
    items._cache["counts"] = (k, weights, counts)
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


def gini(counts: np.ndarray, size: int, form: str) -> np.ndarray:
    """Gini index of the recommendation counts over ``size`` items (zeros for items never recommended).

    ``recbole``: sum_j (2j - n - 1) x_(j) / (n N), 0 when equal. ``elliot``: 1 - that x n/(n - 1), 1 when equal.
    Recommended items outside the universe join it (``size`` counts them).
    """
    n = size
    x = np.sort(counts, axis=1)
    x = x[:, x.shape[1] - min(n, x.shape[1]) :]  # the largest counts; the universe's other items are zeros before them
    j = np.arange(n - x.shape[1] + 1, n + 1, dtype=np.float64)
    total = counts.sum(axis=1)
    g = ((2 * j - n - 1) * x).sum(axis=1) / (n * total)
    return g if form == "recbole" else 1.0 - g * n / (n - 1)


__all__ = [
    "ItemData", "arp", "coverage", "coverage_counts", "efd", "elliot_long_tail", "entropy", "epc", "gini", "ild",
    "novelty", "popularity", "recbole_tail", "self_information", "serendipity", "tail_count", "tail_share",
    "universe_size",
]  # fmt: skip
