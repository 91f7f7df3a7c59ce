"""The compiled kernels check their arrays at the boundary (issue 43): bounds checks are off inside their loops, so a
too-short array must be an error, never a number read from memory it does not own."""

from __future__ import annotations

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
        (lambda: ranked.rank_weighted_sums(OFFSETS, VALUES[:4], np.ones(3), np.zeros(2), 0, 2), "the array holds 4"),
        (lambda: ranked.rank_weighted_sums(OFFSETS, VALUES, np.ones(2), np.zeros(2), 0, 2), "per_rank holds 2"),
        (lambda: ranked.rank_weighted_sums(OFFSETS, VALUES, np.ones(3), np.zeros(1), 0, 2), "need 3 offsets and 2 outputs"),
        (lambda: ranked.rank_weighted_sums(OFFSETS[:2], VALUES, np.ones(3), np.zeros(2), 0, 2), "need 3 offsets"),
        (
            lambda: ranked.rank_weighted_sums(np.array([0, 3, 2], dtype=np.int64), VALUES, np.ones(3), np.zeros(2), 0, 2),
            "offsets decrease at query 1",
        ),
        (lambda: ranked.precision_sums(OFFSETS, VALUES[:3], 1.0, -1, np.zeros(2), 0, 2), "the array holds 3"),
        (lambda: ranked.first_hits(OFFSETS, VALUES, 1.0, np.zeros(1, dtype=np.int64), 0, 2), "2 outputs"),
        (lambda: ranked.head_counts(OFFSETS, VALUES, 1.0, 2, np.zeros(2), 0, 3), "need 4 offsets"),
        (
            lambda: ranked.head_take(OFFSETS, VALUES, np.array([0, 2, 6], dtype=np.int64), np.zeros(6), 0, 2),
            "head is longer than the query",
        ),
        (lambda: ranked.head_rows(OFFSETS, np.array([0, 2, 4], dtype=np.int64), np.zeros(3, dtype=np.int64), 0, 2), "too short"),
    ],
)
def test_a_too_short_or_malformed_array_is_an_error(call, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=message):
        call()
