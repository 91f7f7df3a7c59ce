"""The compiled lookup of a run's items among the known ones (``positions_of``) against Arrow's ``take`` and
``index_in`` (``positions_in``), which it replaced in the item measures: the same positions for any strings."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.data._align_compiled import positions_of
from harness.data._arrow import positions_in

_IDS = st.text(alphabet=st.sampled_from(["a", "b", "é", "0", " ", "\x00"]), max_size=4)


@settings(max_examples=300, deadline=None)
@given(st.lists(_IDS, max_size=30), st.lists(_IDS, unique=True, max_size=12), st.data())
def test_positions_of_are_arrow_index_in(column: list[str], distinct: list[str], data: st.DataObject) -> None:
    """Empty strings, NUL bytes and multi-byte characters; rows repeated and in any order, int32 or int64; string or
    large string columns; a chunked column."""
    large = data.draw(st.booleans())
    kind = pa.large_string() if large else pa.string()
    values: pa.Array | pa.ChunkedArray = pa.array(column, kind)
    if data.draw(st.booleans()) and len(column) > 1:
        values = pa.chunked_array([values[:1], values[1:]])
    known = pa.array(distinct, data.draw(st.sampled_from([pa.string(), pa.large_string()])))
    if column and data.draw(st.booleans()):
        picks = data.draw(st.lists(st.integers(0, len(column) - 1), max_size=40))
        rows = np.array(picks, dtype=data.draw(st.sampled_from([np.int32, np.int64])))
        expected = positions_in(values.take(pa.array(rows.astype(np.int64))), known)
    else:
        rows, expected = None, positions_in(values, known)
    got = positions_of(values, known, rows)
    assert got.dtype == np.int64 and got.tolist() == expected.tolist()


def test_positions_of_many_rows_split_over_threads() -> None:
    """Above the size that is split over the cores, each row's answer still its own."""
    known = pa.array([f"D{i}" for i in range(1000)])
    rows = np.random.default_rng(3).integers(0, 1200, 200_000)
    column = pa.array([f"D{i}" for i in range(1200)])
    expected = np.where(rows < 1000, rows, -1)
    assert positions_of(column, known, rows).tolist() == expected.tolist()
