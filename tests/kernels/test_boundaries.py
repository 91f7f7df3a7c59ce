"""The compiled kernels check their arrays at the boundary (issue 43): bounds checks are off inside their loops, so a
too-short array must be an error, never a number read from memory it does not own."""

from __future__ import annotations

import os
import re
from typing import Any

import numpy as np
import pytest

from harness.kernels import _ranked_compiled as ranked

OFFSETS = np.array([0, 2, 5], dtype=np.int64)  # two queries: rows 0-1 and 2-4
VALUES = np.array([1.0, 0.0, 1.0, 1.0, 0.0])


def test_a_well_formed_call_gives_the_sums_by_hand() -> None:
    out = np.zeros(2)
    ranked.rank_weighted_sums(OFFSETS, VALUES, np.array([1.0, 0.5, 0.25]), out, 0, 2)
    assert out.tolist() == [1.0, 1.0 + 0.5]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: ranked.rank_weighted_sums(OFFSETS, VALUES[:4], np.ones(3), np.zeros(2), 0, 2), "span rows 0..5 of 4"),
        (lambda: ranked.rank_weighted_sums(OFFSETS, VALUES, np.ones(2), np.zeros(2), 0, 2), "per_rank holds 2"),
        (
            lambda: ranked.rank_weighted_sums(OFFSETS, VALUES, np.ones(3), np.zeros(1), 0, 2),
            "out: 1 entries, and the kernel needs 2",
        ),
        (lambda: ranked.rank_weighted_sums(OFFSETS[:2], VALUES, np.ones(3), np.zeros(2), 0, 2), "need 3 offsets, got 2"),
        (
            lambda: ranked.rank_weighted_sums(np.array([0, 3, 2], dtype=np.int64), VALUES, np.ones(3), np.zeros(2), 0, 2),
            "offsets decrease at segment 1",
        ),
        (lambda: ranked.precision_sums(OFFSETS, VALUES[:3], 1.0, -1, np.zeros(2), 0, 2), "span rows 0..5 of 3"),
        (
            lambda: ranked.first_hits(OFFSETS, VALUES, 1.0, np.zeros(1, dtype=np.int64), 0, 2),
            "out: 1 entries, and the kernel needs 2",
        ),
        (lambda: ranked.head_counts(OFFSETS, VALUES, 1.0, 2, np.zeros(2), 0, 3), "need 4 offsets, got 3"),
        (
            lambda: ranked.head_take(OFFSETS, VALUES, np.array([0, 2, 6], dtype=np.int64), np.zeros(6), 0, 2),
            "head is longer than the query",
        ),
        (lambda: ranked.head_rows(OFFSETS, np.array([0, 2, 4], dtype=np.int64), np.zeros(3, dtype=np.int64), 0, 2), "too short"),
    ],
)
def test_a_too_short_or_malformed_array_is_an_error(call, message: str) -> None:  # type: ignore[no-untyped-def]
    with refused(message):
        call()


# the per-user lookups of the beyond-accuracy and fairness measures: each index array checked against what it indexes
I64 = np.int64


def refused(message: str) -> Any:
    """A ValueError whose message holds ``message`` as it is written."""
    return pytest.raises(ValueError, match=re.escape(message))


def _lookup():  # type: ignore[no-untyped-def]
    from harness.kernels import _lookup_compiled

    return _lookup_compiled


def test_well_formed_lookups_give_the_values_by_hand() -> None:
    lookup = _lookup()
    codes = np.array([0, 2, 1, 2, 0], dtype=I64)  # rows of two users: 0-1 and 2-4
    assert lookup.cut_sums(
        OFFSETS, codes, np.array([1.0, 10.0, 100.0]), np.zeros(0), np.zeros(0, dtype=I64), 1.0, np.zeros(0)
    ).tolist() == [101.0, 111.0]
    assert lookup.code_weights(OFFSETS, codes, np.array([1.0, 0.5]), 3).tolist() == [1.5, 0.5, 1.5]
    group = np.array([0, -1, 1], dtype=I64)  # code 1 is in no group
    cells = lookup.segment_group_cells(
        OFFSETS, codes, group, 2, np.zeros(0, dtype=np.uint8), np.zeros(0), np.zeros(0, dtype=I64), 1.0
    )
    assert cells.tolist() == [[1.0, 1.0], [1.0, 1.0]]
    found = lookup.in_sorted_lists(
        np.array([0, 1], dtype=I64), np.array([2, 2], dtype=I64), OFFSETS, np.array([1, 2, 0, 1, 3], dtype=I64)
    )
    assert found.tolist() == [1, 0]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda lk: lk.segment_sums(OFFSETS, VALUES[:4]), "span rows 0..5 of 4"),
        (lambda lk: lk.segment_counts(np.array([0, 3, 2], dtype=I64), np.ones(5, dtype=np.uint8)), "decrease at segment 1"),
        (
            lambda lk: lk.cut_sums(
                OFFSETS, np.array([0, 2, 1, 3, 0], dtype=I64), np.ones(3), np.zeros(0), np.zeros(0, dtype=I64), 1.0, np.zeros(0)
            ),
            "cut_sums: code: 3 at row 3 is out of 0..2",
        ),
        (
            lambda lk: lk.cut_sums(
                OFFSETS, np.zeros(5, dtype=I64), np.ones(3), np.zeros(0), np.zeros(0, dtype=I64), 1.0, np.ones(2)
            ),
            "per_rank: 2 entries, and the kernel needs 3",
        ),
        (
            lambda lk: lk.cut_sums(
                OFFSETS, np.zeros(5, dtype=I64), np.ones(3), np.ones(4), np.zeros(0, dtype=I64), 1.0, np.zeros(0)
            ),
            "cut_sums: label: 4 entries",
        ),
        (
            lambda lk: lk.cut_sums(
                OFFSETS, np.zeros(5, dtype=I64), np.ones(3), np.ones(4), np.array([0, 1, 2, 3, 4], dtype=I64), 1.0, np.zeros(0)
            ),
            "cut_sums: rows: 4 at row 4",
        ),
        (lambda lk: lk.code_weights(OFFSETS, np.array([0, 2, 1, 5, 0], dtype=I64), np.zeros(0), 3), "code: 5 at row 3"),
        (lambda lk: lk.code_weights(OFFSETS, np.zeros(5, dtype=I64), np.ones(1), 3), "user_weight: 1 entries"),
        (
            lambda lk: lk.segment_group_cells(
                OFFSETS,
                np.zeros(5, dtype=I64),
                np.array([0, 2], dtype=I64),
                2,
                np.zeros(0, dtype=np.uint8),
                np.zeros(0),
                np.zeros(0, dtype=I64),
                1.0,
            ),
            "group: 2 at row 1 is out of 0..1",
        ),
        (
            lambda lk: lk.segment_group_cells(
                OFFSETS,
                np.zeros(5, dtype=I64),
                np.zeros(1, dtype=I64),
                1,
                np.ones(3, dtype=np.uint8),
                np.zeros(0),
                np.zeros(0, dtype=I64),
                1.0,
            ),
            "keep: 3 entries",
        ),
        (
            lambda lk: lk.grouped_rows(
                OFFSETS, np.array([0, 1, -1, 0, 0], dtype=I64), np.zeros(2, dtype=I64), np.zeros(0, dtype=np.uint8)
            ),
            "code: -1 at row 2",
        ),
        (
            lambda lk: lk.in_sorted_lists(np.array([0, 2], dtype=I64), np.zeros(2, dtype=I64), OFFSETS, np.zeros(5, dtype=I64)),
            "owner: 2 at row 1 is out of 0..1",
        ),
        (
            lambda lk: lk.gather_segments(OFFSETS, np.zeros(5, dtype=np.int32), np.array([1, -1, 2], dtype=I64)),
            "which: 2 at row 2",
        ),
        (
            lambda lk: lk.distinct_pairs(
                np.array([0, 1], dtype=np.int32), np.array([0, 1], dtype=np.int32), np.array([0, 4], dtype=I64), 2, 3
            ),
            "item 1's code 4",
        ),
        (
            lambda lk: lk.distinct_pairs(
                np.array([0, 2], dtype=np.int32), np.array([0, 1], dtype=np.int32), np.array([0, 1], dtype=I64), 2, 3
            ),
            "user: 2 at row 1",
        ),
        (
            lambda lk: lk.largest_sums(OFFSETS, VALUES, np.zeros(0, dtype=np.uint8), 3, np.ones(2), np.zeros(2), 0, 2),
            "per_rank: 2 entries, and the kernel needs 3",
        ),
        (
            lambda lk: lk.largest_sums(OFFSETS, VALUES, np.zeros(0, dtype=np.uint8), 3, np.zeros(0), np.zeros(1), 0, 2),
            "out: 1 entries",
        ),
        (
            lambda lk: lk.feature_sums(OFFSETS, np.array([0, 1, 2, 0, 1], dtype=I64), np.ones((2, 3)), np.zeros((2, 3)), 0, 2),
            "feature_sums: code: 2 at row 2",
        ),
        (
            lambda lk: lk.feature_sums(OFFSETS, np.zeros(5, dtype=I64), np.ones((2, 3)), np.zeros((2, 2)), 0, 2),
            "2 columns for 3 features",
        ),
        (
            lambda lk: lk.unexpected_sums(
                OFFSETS, np.zeros(0, dtype=I64), np.ones(5), np.ones(1, dtype=I64), np.zeros(0), 1.0, np.zeros(2), 0, 2
            ),
            "history_length: 1 entries",
        ),
        (
            lambda lk: lk.unexpected_sums(
                OFFSETS,
                np.array([0, 1, 2, 3, 9], dtype=I64),
                np.ones(5),
                np.ones(2, dtype=I64),
                np.zeros(0),
                1.0,
                np.zeros(2),
                0,
                2,
            ),
            "rows: 9 at row 4",
        ),
    ],
)
def test_a_lookup_given_an_index_out_of_range_is_an_error(call, message: str) -> None:  # type: ignore[no-untyped-def]
    with refused(message):
        call(_lookup())


def test_the_readers_and_the_alignment_refuse_what_they_cannot_hold() -> None:
    """The data readers' kernels: a block or string index out of range, an output too short, a column without room
    for the limits it is given: each a ValueError naming the argument."""
    from harness.data import _align_kernels as align
    from harness.data import _reader_kernels as reader

    offsets, data = np.array([0, 1, 2, 3], dtype=np.int32), np.frombuffer(b"aba", dtype=np.uint8)  # "a", "b", "a"
    with refused("group_rows: codes: 3 at row 1 is out of 0..2"):
        align.group_rows(np.array([0, 3], dtype=I64), 3)
    with refused("hash_rows: rows: 3 at row 0"):
        align.hash_rows(np.array([3], dtype=I64), offsets, data, np.zeros(1, dtype=np.uint64), 0, 1)
    with refused("hash_rows: hashes"):
        align.hash_rows(np.array([0, 1], dtype=I64), offsets, data, np.zeros(1, dtype=np.uint64), 0, 2)
    with refused("duplicate_blocks: order: 5 at row 1"):
        align.duplicate_blocks(
            0,
            1,
            np.array([0, 2], dtype=I64),
            np.array([0, 5], dtype=I64),
            False,
            offsets,
            data,
            np.zeros(0),
            False,
            np.zeros(3, dtype=np.uint8),
        )
    with refused("duplicate_blocks: bounds: segments 0..1 span rows 0..4 of 3"):
        align.duplicate_blocks(
            0,
            1,
            np.array([0, 4], dtype=I64),
            np.zeros(0, dtype=I64),
            True,
            offsets,
            data,
            np.zeros(0),
            False,
            np.zeros(3, dtype=np.uint8),
        )
    table = align.string_table(offsets[:3], data[:2])  # "a", "b"
    found = np.zeros(3, dtype=I64)
    align.find_strings(offsets, data, np.zeros(0, dtype=I64), offsets[:3], data[:2], table, found, 0, 3)
    assert found.tolist() == [0, 1, 0]
    with refused("find_strings: strings 0..4 of 3"):
        align.find_strings(offsets, data, np.zeros(0, dtype=I64), offsets[:3], data[:2], table, np.zeros(4, dtype=I64), 0, 4)
    with refused("move_bytes: 2 bytes from 2 to 0 in a column of 3"):
        reader.move_bytes(np.zeros(3, dtype=np.uint8), 2, 0, 2)


def test_the_cooccurrence_sums_refuse_malformed_lists_and_matrices() -> None:
    from scipy import sparse

    from harness.kernels._cooccurrence import earlier_pair_sums, history_sums

    item_users = sparse.csr_matrix(np.array([[1, 1], [1, 0]], dtype=np.int32))
    scale = np.ones(2)
    args = (item_users, item_users.T.tocsr(), scale)
    with refused("list 0's rows 0..3 are not within the 2 rows"):
        earlier_pair_sums(np.array([0, 1]), np.array([0]), np.array([3]), *args)
    with refused("a listed row's code is negative"):
        earlier_pair_sums(np.array([0, -1]), np.array([0]), np.array([2]), *args)
    with refused("1 scale weights for 2 known items"):
        earlier_pair_sums(np.array([0, 1]), np.array([0]), np.array([2]), item_users, item_users.T.tocsr(), np.ones(1))
    with refused("a history names an item code out of 0..1"):
        history_sums(np.array([0, 1]), np.array([0]), np.array([2]), np.array([0, 1]), np.array([2]), *args)
    with refused("the histories' offsets do not describe 1 users"):
        history_sums(np.array([0, 1]), np.array([0]), np.array([2]), np.array([0, 2]), np.array([1]), *args)
    wrong = sparse.csr_matrix((np.ones(2), np.array([0, 3]), np.array([0, 1, 2])), shape=(2, 4))  # a 4th user nobody has
    with refused("the items' users name an index out of 0..1"):
        earlier_pair_sums(np.array([0, 1]), np.array([0]), np.array([2]), wrong, item_users.T.tocsr(), scale)


@pytest.mark.skipif(os.environ.get("HARNESS_KERNEL_CHECKS") != "1", reason="the checked build: make kernel-checks")
def test_this_build_checks_every_access() -> None:
    """Under ``make kernel-checks`` the kernel tests run on a build with Cython's bounds checks on every access:
    this holds it to that build."""
    assert ranked.BOUNDS_CHECKED
