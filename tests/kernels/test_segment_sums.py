"""The compiled per-user sums of the beyond-accuracy measures (``segment_sums``) against ``np.bincount`` with weights,
which they replaced: the same bits for any values, signed zeros, infinities and NaN included."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.kernels._lookup_compiled import segment_sums

_VALUES = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([0.0, -0.0, 0.1, 1e16, -1e16, 3.0]))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(_VALUES, max_size=12), max_size=8))
def test_segment_sums_are_bincounts_bit_for_bit(segments: list[list[float]]) -> None:
    lengths = np.array([len(s) for s in segments], dtype=np.int64)
    values = np.array([v for s in segments for v in s], dtype=np.float64)
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    expected = np.bincount(np.repeat(np.arange(lengths.size), lengths), weights=values, minlength=lengths.size)
    assert segment_sums(offsets, values).tobytes() == expected.astype(np.float64).tobytes()


def test_segment_sums_by_hand() -> None:
    """In order from 0.0: (0.1 + 0.2) + 0.3 is 0.6000000000000001, not 0.6; an empty segment sums to 0."""
    sums = segment_sums(np.array([0, 3, 3, 4]), np.array([0.1, 0.2, 0.3, -0.0]))
    assert sums.tolist() == [0.6000000000000001, 0.0, 0.0] and not np.signbit(sums[2])
