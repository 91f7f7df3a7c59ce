"""Fairness, exposure and propensity kernels: group parity (Elliot), exposure Gini (LensKit), PSP (pyxclib).

Pure functions over arrays, like :mod:`harness.kernels.beyond`. A system measure that
is a function of sums over users (REO, RSP, pyxclib's normalised PSP, Item MAD) is
split in two: ``*_parts`` gives each user's terms (queries x m), which depend on that
user's rows only, and ``*_finish`` turns their weighted sums (B x m, one row per
resample of the users) into values. So the run's value, every bootstrap replicate and
every swap of a paired test come from one set of per-user terms, which the Dask engine
computes in its partitions like any per-query value.

The definitions, the peers' variants and their bugs are in ``docs/fairness.md``.

>>> import numpy as np
>>> from harness.kernels._segments import ItemData, RankedLists
>>> items = ItemData(code=np.array([0, 1, 1, 2]), count=np.array([2.0, 1.0, 0.0]), users=np.array([2.0, 1.0, 0.0]),
...                  in_train=np.array([True, True, False]), in_catalog=np.ones(3, dtype=bool),
...                  n_train_rows=3, n_train_users=2, n_recbole_items=4, judged_code=np.array([1, 2]))
>>> lists = RankedLists(np.array([0, 2, 4]), np.array([np.nan, 1.0, np.nan, 1.0]), np.array([0, 1, 2]),
...                     np.array([1.0, 1.0]), items=items)
>>> exposure(lists, 2, "uniform", 0.85, np.ones((1, 2))).tolist()   # item 1 in both lists
[[1.0, 2.0, 1.0]]
"""

from __future__ import annotations

import math

import numpy as np

from harness.kernels._lookup_compiled import (
    grouped_rows,
    in_sorted_lists,
    segment_group_cells,
)
from harness.kernels._segments import ItemData, RankedLists, RowTerms, discount, largest_sums
from harness.kernels.beyond import _cut_view, _defined_mean, _items


def _judged_code(lists: RankedLists) -> np.ndarray:
    code = _items(lists).judged_code
    if code is None:
        raise ValueError("these lists carry no judged item codes")  # the evaluator attaches them for these measures
    return code


def weighted_sums(weights: np.ndarray, per_user: np.ndarray | RowTerms) -> np.ndarray:
    """(B x m): each row of user weights (B x queries) times the users' terms (queries x m, dense or sparse)."""
    if isinstance(per_user, RowTerms):
        return per_user.weighted_sums(weights)
    return np.asarray(np.atleast_2d(np.asarray(weights, dtype=np.float64)) @ per_user)


# ---- propensity-scored measures (Jain et al. 2016; pyxclib) --------------------------
def inverse_propensity(items: ItemData, a: float, b: float, users: np.ndarray | None = None) -> np.ndarray:
    """1/p = 1 + C (n_i + B)^-A with C = (ln N - 1)(B + 1)^A: n_i the item's training users, N the training users.

    ``users``: n_i per entry (default: per code). Items without training users (cold) get the largest weight.

    >>> items = ItemData(code=np.zeros(0, dtype=np.int64), count=np.array([3.0, 0.0]), users=np.array([3.0, 0.0]),
    ...                  in_train=np.array([True, False]), in_catalog=np.ones(2, dtype=bool), n_train_rows=3,
    ...                  n_train_users=3, n_recbole_items=3)
    >>> inverse_propensity(items, 0.55, 1.5).round(4).tolist()   # C = (ln 3 - 1) 2.5^0.55 = 0.1632; 1 + C 4.5^-0.55
    [1.0714, 1.1306]
    """
    n_i = items.users if users is None else users
    c = (np.log(items.n_train_users) - 1.0) * (b + 1.0) ** a
    return 1.0 + c * (n_i + b) ** -a  # type: ignore[no-any-return]


def _ideal_sums(lists: RankedLists, rel: float | None, a: float, b: float, k: int, discounted: bool = False) -> np.ndarray:
    """Per user: its relevant judged items' inverse propensities, largest first, the first k summed (each times
    1/log2(rank + 1) when ``discounted``): the ideal list of PSP and PSnDCG, computed once for all that share it.
    One small sort per user, compiled."""
    items = _items(lists)
    key = ("ideal propensity sums", lists.level(rel), a, b, k, discounted)
    if key not in items._cache:
        code = _judged_code(lists)
        # each item's weight once (a power per item, not per judgment); code -1, an item nothing else knows, takes the
        # appended weight of an item without training users
        weight = np.append(inverse_propensity(items, a, b), inverse_propensity(items, a, b, np.zeros(1)))[code]
        relevant = (lists.judged_label >= lists.level(rel)).view(np.uint8)
        per_rank = discount(np.arange(k)) if discounted else np.zeros(0)
        items._cache[key] = largest_sums(_int64(lists.judged_offsets), weight, relevant, k, per_rank)
    return items._cache[key]  # type: ignore[no-any-return]


def psp_parts(lists: RankedLists, k: int, rel: float | None, a: float, b: float) -> np.ndarray:
    """(queries x 2): PSP@k of each list (sum of the relevant items' 1/p in the top k, over k) and of its ideal
    (the user's relevant items by decreasing 1/p), as pyxclib's ``psprecision`` forms them."""
    cut = _cut_view(lists, k)
    got = cut.gathered_sum(inverse_propensity(_items(lists), a, b), lists.label, lists.level(rel)) / k
    return np.column_stack([got, _ideal_sums(lists, rel, a, b, k) / k])


def psndcg_parts(lists: RankedLists, k: int, rel: float | None, a: float, b: float) -> np.ndarray:
    """(queries x 2): PSnDCG@k of each list and of its propensity-ideal list (pyxclib's ``psndcg``): the DCG of the
    relevant items' 1/p (discount 1/log2(rank + 1)) over the binary ideal DCG of min(R, k) relevant items."""
    cut = _cut_view(lists, k)
    gains = cut.gathered_sum(inverse_propensity(_items(lists), a, b), lists.label, lists.level(rel), cut.rank_discounts())
    norm = np.concatenate(([0.0], np.cumsum(discount(np.arange(k)))))[np.minimum(lists.num_rel(rel), k).astype(np.int64)]
    dcgs = np.column_stack([gains, _ideal_sums(lists, rel, a, b, k, discounted=True)])
    out = np.zeros_like(dcgs)
    np.divide(dcgs, norm[:, None], out=out, where=norm[:, None] > 0)
    return out


def ratio_finish(sums: np.ndarray) -> np.ndarray:
    """(B,): the ratio of the two summed terms (pyxclib's ratio of means); NaN where the ideal sums to 0."""
    return _defined_mean(sums[:, 0], sums[:, 1])


# ---- exposure (LensKit) ----------------------------------------------------------------
def rank_weight(pos: np.ndarray, weight: str, patience: float) -> np.ndarray:
    """Exposure of a 0-based position: ``geometric`` patience^pos, ``log`` 1/log2(max(rank, 2)), ``uniform`` 1."""
    if weight == "geometric":
        return patience ** pos.astype(np.float64)  # type: ignore[no-any-return]
    if weight == "log":
        return 1.0 / np.log2(np.maximum(pos + 1.0, 2.0))  # type: ignore[no-any-return]
    return np.ones(pos.size)


def exposure(lists: RankedLists, k: int | None, weight: str, patience: float, weights: np.ndarray) -> np.ndarray:
    """(B x codes): each item's exposure summed over the lists holding it within k, for each row of user weights."""
    items = _items(lists)
    cut = _cut_view(lists, k)
    per_row = rank_weight(cut.positions(), weight, patience)
    w = np.atleast_2d(np.asarray(weights, dtype=np.float64))
    if w.shape[0] == 1:
        return np.bincount(cut.code, weights=per_row * w[0][cut.qidx], minlength=items.n_codes)[None, :]
    key = ("exposure", k, weight, patience)
    if key not in items._cache:
        from scipy import sparse  # only for resamples: the run's own value needs no matrix

        items._cache[key] = sparse.csr_matrix((per_row, (cut.code, cut.qidx)), shape=(items.n_codes, lists.n_queries))
    return np.asarray(items._cache[key] @ w.T).T


def group_exposure_shares(
    lists: RankedLists, k: int | None, group: np.ndarray, n_groups: int, weight: str, patience: float
) -> np.ndarray:
    """(G,): each item group's share of all the exposure the lists give in their top k (items in no group count in
    the total only): ExposureShare of every category at once."""
    per_code = exposure(lists, k, weight, patience, np.ones((1, lists.n_queries)))[0]
    grouped = group >= 0
    totals = np.bincount(group[grouped], weights=per_code[grouped], minlength=n_groups)
    return _defined_mean(totals, np.full(n_groups, per_code.sum()))  # type: ignore[no-any-return]


def exposure_share_parts(
    lists: RankedLists, k: int | None, group: np.ndarray, value: int, weight: str, patience: float
) -> np.ndarray:
    """(queries x 2): per user, the exposure its top k gives the items of group ``value``, and to all its items."""
    cut = _cut_view(lists, k)
    exposure_of_row = rank_weight(cut.positions(), weight, patience)
    in_group = group[cut.code] == value
    return np.column_stack([cut.sum(np.where(in_group, exposure_of_row, 0.0)), cut.sum(exposure_of_row)])


# ---- group parity (Elliot) -------------------------------------------------------------
def item_groups(items: ItemData, column: str) -> tuple[np.ndarray, int]:
    """(group index per code, -1 for none; number of groups): the distinct values of a catalogue column, in order."""
    values = items.columns[column]
    listed = ~np.isnan(values)
    distinct, index = np.unique(values[listed], return_inverse=True)
    group = np.full(values.size, -1, dtype=np.int64)
    group[listed] = index
    return group, distinct.size


def popularity_groups(long_tail: np.ndarray, in_train: np.ndarray) -> np.ndarray:
    """Elliot's two popularity groups per code: 0 short head, 1 long tail; -1 for items not in training."""
    return np.where(in_train, long_tail.astype(np.int64), -1)


def _in_history(lists: RankedLists, qidx: np.ndarray, code: np.ndarray) -> np.ndarray:
    """Whether each (user, item) pair is in that user's training history.

    >>> items = ItemData(code=np.zeros(0, dtype=np.int64), count=np.ones(3), users=np.ones(3), in_train=np.ones(3, bool),
    ...                  in_catalog=np.ones(3, bool), n_train_rows=3, n_train_users=2, n_recbole_items=4,
    ...                  history_offsets=np.array([0, 2, 3]), history_codes=np.array([0, 2, 1]))
    >>> lists = RankedLists(np.array([0, 0, 0]), np.zeros(0), np.array([0, 0, 0]), np.zeros(0), items=items)
    >>> _in_history(lists, np.array([0, 0, 1, 1]), np.array([0, 1, 1, 2])).tolist()
    [True, False, True, False]
    """
    items = _items(lists)
    if items.history_offsets is None or items.history_codes is None or not items.history_codes.size:
        return np.zeros(code.size, dtype=bool)
    offsets, history = _int64(items.history_offsets), _int64(items.history_codes)  # each user's items ascending
    return in_sorted_lists(_int64(qidx), _int64(code), offsets, history).view(bool)


def _judged_in_history(lists: RankedLists) -> np.ndarray:
    """Whether each judged (user, item) pair is in that user's training history (REO and PopREO share it)."""
    items = _items(lists)
    if "judged in history" not in items._cache:
        items._cache["judged in history"] = _in_history(lists, lists.judged_qidx, np.maximum(_judged_code(lists), 0))
    return items._cache["judged in history"]  # type: ignore[no-any-return]


def parity_parts(
    lists: RankedLists, k: int | None, group: np.ndarray, n_groups: int, opportunity: bool, rel: float | None
) -> np.ndarray:
    """(queries x 2G): per user and group g, the numerator and denominator of P_g (Zhu et al. 2020, as Elliot).

    RSP (``opportunity`` False): |top-k in g| and |g minus the user's training items|.
    REO: |top-k in g and relevant| and |relevant judged items of g not in training|.
    """
    items = _items(lists)
    n_q = lists.n_queries
    cut = _cut_view(lists, k)
    level = lists.level(rel)
    every, no_label, no_rows = np.zeros(0, dtype=np.uint8), np.zeros(0), np.zeros(0, dtype=np.int64)
    code, group = cut.code, _int64(group)
    if opportunity:  # the relevant rows of the top k; an unknown judged item (code -1) is in no group
        rows = no_rows if cut.rows is None else _int64(cut.rows)
        num = segment_group_cells(cut.offsets, code, group, n_groups, every, lists.label, rows, level)
        den = segment_group_cells(
            _int64(lists.judged_offsets),
            _int64(_judged_code(lists)),
            group,
            n_groups,
            (~_judged_in_history(lists)).view(np.uint8),
            lists.judged_label,
            no_rows,
            level,
        )
    else:
        num = segment_group_cells(cut.offsets, code, group, n_groups, every, no_label, no_rows, 0.0)
        den = np.zeros((n_q, n_groups)) + np.bincount(group[group >= 0], minlength=n_groups)[None, :]
        if items.history_offsets is not None and items.history_codes is not None:
            den -= segment_group_cells(
                _int64(items.history_offsets), _int64(items.history_codes), group, n_groups, every, no_label, no_rows, 0.0
            )
    return np.hstack([num, den])


def _int64(values: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(values, dtype=np.int64)


def _cells(qidx: np.ndarray, group: np.ndarray, n_q: int, n_groups: int) -> np.ndarray:
    """(queries x groups): how many (query, group) pairs fall in each cell (whole numbers: exact)."""
    flat = np.asarray(qidx, dtype=np.int64) * n_groups + group
    return np.bincount(flat, minlength=n_q * n_groups).astype(np.float64).reshape(n_q, n_groups)


def parity_probabilities(sums: np.ndarray) -> np.ndarray:
    """(B x G): P_g = summed numerator / summed denominator; NaN where the denominator is 0 (also each user group's
    mean score from UserMAD's sums)."""
    g = sums.shape[1] // 2
    return _defined_mean(sums[:, :g], sums[:, g:])


def parity_finish(sums: np.ndarray) -> np.ndarray:
    """(B,): std(P) / mean(P) over the groups, population std (Elliot); NaN when a group's P is undefined."""
    p = parity_probabilities(sums)
    with np.errstate(invalid="ignore", divide="ignore"):
        return p.std(axis=1) / p.mean(axis=1)  # type: ignore[no-any-return]


def item_mad_parts(lists: RankedLists, k: int | None, group: np.ndarray, gain: str, rel: float | None, users: str) -> RowTerms:
    """Sparse (queries x 2 known codes): per user, each grouped item's gain and recommendation count in its top k.

    ``gain``: ``ranking`` 2^(r - t + 1) - 1 for a relevant item (t the relevance threshold), else 0;
    ``rating`` the run's score for a relevant item, else 0. ``users``: ``relevant`` counts only
    users with a relevant judged item (Elliot's U+), ``all`` every user.
    """
    items = _items(lists)
    cut = _cut_view(lists, k)
    user_ok = (lists.num_rel(rel) > 0).view(np.uint8) if users == "relevant" else np.zeros(0, dtype=np.uint8)
    # CSR straight from the rows, which come by user: each row's gain at its item, its count (1, not stored) at
    # n + its item (an item is once in a list, so no entries to sum); only the rows of grouped items
    indptr, rows = grouped_rows(cut.offsets, cut.code, _int64(group), user_ok)
    at = rows if cut.rows is None else cut.rows[rows]
    label = lists.label[at]
    level = lists.level(rel)
    hits = label >= level
    values = np.zeros(rows.size)
    if gain == "ranking":
        values[hits] = 2.0 ** (label[hits] - level + 1.0) - 1.0
    else:
        assert items.score is not None
        values[hits] = items.score[at][hits]
    n = items.n_known  # cold items are in no group: the columns are the same for every run of the dataset
    return RowTerms(indptr, cut.code[rows], (values, None), n)


def mad_finish(sums: np.ndarray, group: np.ndarray, n_groups: int, empty_groups: str) -> np.ndarray:
    """(B,): Item MAD from the summed parts: each recommended item's mean gain, averaged per group, then the mean
    absolute difference over the pairs of groups. ``empty_groups``: ``skip`` leaves a group without a recommended
    item out of the pairs (NaN below two groups); ``nan`` makes the value NaN, as Elliot does."""
    return mean_absolute_difference(item_group_gains(sums, group, n_groups), empty_groups)


def item_group_gains(sums: np.ndarray, group: np.ndarray, n_groups: int) -> np.ndarray:
    """(B x G): each item group's average of its recommended items' mean gain, from Item MAD's summed parts (NaN for
    a group without a recommended item)."""
    n = sums.shape[1] // 2
    group = group[:n]
    gains, counts = sums[:, :n], sums[:, n:]
    recommended = counts > 0
    mean_gain = np.zeros_like(gains)
    np.divide(gains, counts, out=mean_gain, where=recommended)
    member = np.zeros((n, n_groups))
    grouped = group >= 0
    member[np.flatnonzero(grouped), group[grouped]] = 1.0
    return _defined_mean(mean_gain @ member, recommended.astype(np.float64) @ member)


def mean_absolute_difference(averages: np.ndarray, empty_groups: str) -> np.ndarray:
    """(B,): the mean of |a_g - a_h| over the unordered pairs of groups (B x G averages, NaN for an empty group)."""
    out = np.full(averages.shape[0], np.nan)
    g = averages.shape[1]
    first, second = np.triu_indices(g, k=1)
    for row in range(averages.shape[0]):
        a = averages[row]
        if empty_groups == "nan":
            if g >= 2 and not np.isnan(a).any():
                out[row] = np.abs(a[first] - a[second]).mean()
            continue
        present = a[~np.isnan(a)]
        if present.size >= 2:
            i, j = np.triu_indices(present.size, k=1)
            out[row] = np.abs(present[i] - present[j]).mean()
    return out


def user_mad_parts(lists: RankedLists, k: int | None, gain: str, rel: float | None, users: str) -> np.ndarray:
    """(queries x 2G): per user, its score and 1 in its user group's columns (Elliot's UserMAD).

    ``gain``: ``ranking`` the user's nDCG@k with Elliot's graded gains 2^(r - t + 1) - 1 and ideal DCG over the
    user's relevant items; ``rating`` the mean predicted score of its top k (relevance ignored, as Elliot does).
    ``users``: ``relevant`` counts users with a relevant judged item, ``all`` every user in a group.
    """
    items = _items(lists)
    assert items.user_group is not None
    n_q, n_groups = lists.n_queries, len(items.user_group_names)
    cut = _cut_view(lists, k)
    level = lists.level(rel)
    if gain == "ranking":
        label = cut.take(lists.label)
        gains = np.where(label >= level, 2.0 ** (np.nan_to_num(label) - level + 1.0) - 1.0, 0.0)
        weights = np.log(2.0) / np.log(cut.positions() + 2.0)
        dcg = cut.sum(gains * weights)
        judged = lists.judged_label
        ideal_gain = np.where(judged >= level, 2.0 ** (judged - level + 1.0) - 1.0, 0.0)
        depth = int(np.diff(lists.judged_offsets).max(initial=1)) if k is None else k
        # each user's positive judged gains, largest first, the first `depth` summed with Elliot's weights
        ideal = largest_sums(
            _int64(lists.judged_offsets),
            ideal_gain,
            (ideal_gain > 0).view(np.uint8),
            depth,
            np.log(2.0) / np.log(np.arange(depth) + 2.0),
        )
        score = np.zeros(n_q)
        np.divide(dcg, ideal, out=score, where=dcg > 0)
    else:
        assert items.score is not None
        score = np.nan_to_num(cut.mean(cut.take(items.score)))
    member = items.user_group >= 0
    if users == "relevant":
        member &= lists.num_rel(rel) > 0
    rows = np.flatnonzero(member)
    totals = _cells(rows, items.user_group[rows], n_q, n_groups)
    return np.hstack([totals * score[:, None], totals])


def user_mad_finish(sums: np.ndarray, empty_groups: str) -> np.ndarray:
    """(B,): the mean absolute difference between the user groups' mean scores."""
    return mean_absolute_difference(parity_probabilities(sums), empty_groups)


def bias_parts(lists: RankedLists, k: int | None, group: np.ndarray, value: int, user_group: int) -> np.ndarray:
    """(queries x 2): per user of ``user_group``, its top-k items of category ``value`` and its items with any category
    (Tsintzou et al.'s bias in recommendations, as Elliot counts it)."""
    items = _items(lists)
    assert items.user_group is not None
    cut = _cut_view(lists, k)
    row_group = group[cut.code]
    member = (items.user_group == user_group)[cut.qidx]
    grouped = member & (row_group >= 0)
    in_category = grouped & (row_group == value)
    n_q = lists.n_queries
    return np.column_stack(
        [
            np.bincount(cut.qidx[in_category], minlength=n_q).astype(np.float64),
            np.bincount(cut.qidx[grouped], minlength=n_q).astype(np.float64),
        ]
    )


def bias(items: ItemData, group: np.ndarray, value: int, user_group: int, kind: str, sums: np.ndarray) -> np.ndarray:
    """(B,): BR = (share of the category in the user group's recommendations) / P(C), BS the same over the group's
    training pairs (every training user), BD = (BR - BS) / BS; P(C) = the category's share of the grouped items."""
    known = group[: items.n_known]
    prior = float((known == value).sum() / (known >= 0).sum())
    source = math.nan
    if items.group_training is not None:
        trained = items.group_training[user_group]  # the group's training pairs per known code
        grouped = trained[known >= 0].sum()
        source = float(trained[known == value].sum() / grouped) / prior if grouped > 0 else math.nan
    if kind == "BS":
        return np.full(sums.shape[0], source)
    recommended = _defined_mean(sums[:, 0], sums[:, 1]) / prior
    if kind == "BR":
        return recommended
    return (recommended - source) / source  # type: ignore[no-any-return]
