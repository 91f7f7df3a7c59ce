"""The compiled kernels of the training histories and the item-group counts against the numpy code they replaced:
``distinct_pairs`` against a sort of (user, item) keys and bincounts, ``gather_segments`` against numpy's
concatenated slices, ``grouped_rows`` against a mask, ``flatnonzero`` and ``bincount``, and ``segment_group_cells``
against the gathered labels, masks and flattened (user, group) bincount it replaced."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.kernels._lookup_compiled import (
    distinct_pairs,
    gather_segments,
    grouped_rows,
    segment_group_cells,
)


@st.composite
def training_rows(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, int]:
    """(user code, item index, code of each item index, users, codes): repeats, users without rows, and a user with
    a history longer than the insertion sort's (qsort's branch) among them."""
    n_users = draw(st.integers(1, 6))
    n_items = draw(st.integers(1, 50))
    n_codes = n_items + draw(st.integers(0, 3))
    code_of_item = np.array(draw(st.permutations(range(n_codes)))[:n_items], dtype=np.int64)
    n_rows = draw(st.integers(0, 120))
    user = np.array(draw(st.lists(st.integers(0, n_users - 1), min_size=n_rows, max_size=n_rows)), dtype=np.int32)
    item = np.array(draw(st.lists(st.integers(0, n_items - 1), min_size=n_rows, max_size=n_rows)), dtype=np.int32)
    return user, item, code_of_item, n_users, n_codes


@settings(max_examples=300, deadline=None)
@given(training_rows())
def test_distinct_pairs_are_the_sorted_unique_keys(case: tuple[np.ndarray, np.ndarray, np.ndarray, int, int]) -> None:
    """What ItemContext computed before: the distinct (user, item) keys sorted, their users' offsets, and each code's
    rows and distinct users by bincount."""
    user, item, code_of_item, n_users, n_codes = case
    code = code_of_item[item]
    keys = np.unique(user.astype(np.int64) * n_codes + code)
    pair_user, pair_code = keys // n_codes, keys % n_codes
    indptr, codes, rows, users = distinct_pairs(user, item, code_of_item, n_users, n_codes)
    assert indptr.tolist() == np.searchsorted(pair_user, np.arange(n_users + 1)).tolist()
    assert codes.dtype == np.int32 and codes.tolist() == pair_code.tolist()
    assert rows.tolist() == np.bincount(code, minlength=n_codes).astype(np.float64).tolist()
    assert users.tolist() == np.bincount(pair_code, minlength=n_codes).astype(np.float64).tolist()


def test_distinct_pairs_by_hand() -> None:
    """User 0 rated item b twice and a once; user 1 nothing; user 2 a. Codes: a 5, b 3."""
    indptr, codes, rows, users = distinct_pairs(
        np.array([0, 0, 2, 0], np.int32), np.array([1, 0, 0, 1], np.int32), np.array([5, 3], np.int64), 3, 6
    )
    assert indptr.tolist() == [0, 2, 2, 3] and codes.tolist() == [3, 5, 5]
    assert rows.tolist() == [0, 0, 0, 2, 0, 2] and users.tolist() == [0, 0, 0, 1, 0, 2]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 5), min_size=1, max_size=6), st.lists(st.integers(-1, 5), max_size=10))
def test_gather_segments_are_the_concatenated_slices(lengths: list[int], picks: list[int]) -> None:
    indptr = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    values = np.arange(int(indptr[-1]), dtype=np.int32) * 7 % 11
    which = np.array([p if p < len(lengths) else -1 for p in picks], dtype=np.int64)
    offsets, gathered = gather_segments(indptr, values, which)
    pieces = [values[indptr[w] : indptr[w + 1]] if w >= 0 else values[:0] for w in which]
    assert gathered.dtype == np.int64 and gathered.tolist() == np.concatenate([values[:0], *pieces]).tolist()
    assert offsets.tolist() == [0, *np.cumsum([p.size for p in pieces]).tolist()]


@st.composite
def grouped_lists(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(offsets, code per row, group per code, -1 for none)."""
    n_codes = draw(st.integers(1, 6))
    lengths = draw(st.lists(st.integers(0, 6), min_size=1, max_size=6))
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    code = np.array(
        draw(st.lists(st.integers(0, n_codes - 1), min_size=int(offsets[-1]), max_size=int(offsets[-1]))), dtype=np.int64
    )
    group = np.array(draw(st.lists(st.integers(-1, 2), min_size=n_codes, max_size=n_codes)), dtype=np.int64)
    return offsets, code, group


@settings(max_examples=300, deadline=None)
@given(grouped_lists(), st.one_of(st.none(), st.lists(st.booleans(), min_size=6, max_size=6)))
def test_grouped_rows_are_the_masked_rows(case: tuple[np.ndarray, np.ndarray, np.ndarray], ok: list[bool] | None) -> None:
    """Item MAD's rows as numpy chose them: grouped items, of the users that count, and each user's start."""
    offsets, code, group = case
    n_users = offsets.size - 1
    owner = np.repeat(np.arange(n_users), np.diff(offsets))
    user_ok = np.zeros(0, dtype=np.uint8) if ok is None else np.array(ok[:n_users], dtype=np.uint8)
    keep = group[code] >= 0
    if ok is not None:
        keep &= user_ok.astype(bool)[owner]
    rows = np.flatnonzero(keep)
    indptr, kept = grouped_rows(offsets, code, group, user_ok)
    assert kept.tolist() == rows.tolist()
    assert indptr.tolist() == [0, *np.cumsum(np.bincount(owner[rows], minlength=n_users)).tolist()]


@settings(max_examples=300, deadline=None)
@given(grouped_lists(), st.data())
def test_segment_group_cells_are_the_masked_bincount(
    case: tuple[np.ndarray, np.ndarray, np.ndarray], data: st.DataObject
) -> None:
    """REO's and RSP's counts as numpy formed them: each kept row with a relevant label (read through ``rows`` when
    given, NaN never relevant) and a grouped item (unknown items, code -1, in none) at (its user, its item's group)."""
    offsets, code, group = case
    n_users, n_groups, n = offsets.size - 1, 3, code.size
    code = np.where(np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool), -1, code)
    owner = np.repeat(np.arange(n_users, dtype=np.int64), np.diff(offsets))
    keep = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    labels = np.array(data.draw(st.lists(st.sampled_from([0.0, 1.0, 2.0, np.nan]), min_size=n + 2, max_size=n + 2)))
    rows = np.array(data.draw(st.lists(st.integers(0, n + 1), min_size=n, max_size=n)), dtype=np.int64)
    no_keep, no_label, no_rows = np.zeros(0, dtype=np.uint8), np.zeros(0), np.zeros(0, dtype=np.int64)

    def expected(counted: np.ndarray) -> list[list[float]]:
        counted = counted & (code >= 0) & (group[np.maximum(code, 0)] >= 0)
        flat = owner[counted] * n_groups + group[code[counted]]
        return np.bincount(flat, minlength=n_users * n_groups).astype(np.float64).reshape(n_users, n_groups).tolist()

    every = np.ones(n, dtype=bool)
    assert segment_group_cells(offsets, code, group, n_groups, no_keep, no_label, no_rows, 0.0).tolist() == expected(every)
    assert segment_group_cells(offsets, code, group, n_groups, keep.view(np.uint8), no_label, no_rows, 0.0).tolist() == expected(
        keep
    )
    assert segment_group_cells(offsets, code, group, n_groups, no_keep, labels[:n], no_rows, 1.0).tolist() == expected(
        labels[:n] >= 1.0
    )
    assert segment_group_cells(offsets, code, group, n_groups, keep.view(np.uint8), labels, rows, 2.0).tolist() == expected(
        keep & (labels[rows] >= 2.0)
    )
