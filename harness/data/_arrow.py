"""Zero-copy numpy <-> Arrow for primitive columns.

pyarrow's own ``Array.to_numpy`` and ``pa.array(ndarray)`` import pandas (0.15 s)
to probe for pandas types; these helpers go through the buffers instead.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

_TYPES: dict[np.dtype[Any], pa.DataType] = {
    np.dtype(np.int64): pa.int64(),
    np.dtype(np.float64): pa.float64(),
    np.dtype(np.int32): pa.int32(),
    np.dtype(np.uint64): pa.uint64(),
}

_DTYPES: dict[pa.DataType, np.dtype[Any]] = {arrow: dtype for dtype, arrow in _TYPES.items()}


def to_numpy(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A numpy view of a primitive Arrow column without nulls (booleans are unpacked)."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks() if values.num_chunks != 1 else values.chunk(0)
    if values.null_count:
        raise ValueError("column has nulls")
    if pa.types.is_boolean(values.type):
        bits = np.frombuffer(values.buffers()[1], dtype=np.uint8)
        return np.unpackbits(bits, bitorder="little", count=values.offset + len(values))[values.offset :].astype(bool)
    dtype = _DTYPES[values.type]
    return np.frombuffer(values.buffers()[1], dtype=dtype, count=len(values), offset=values.offset * dtype.itemsize)


def float_values(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A float64 column as numpy, NaN for a null: pyarrow's own copying ``to_numpy`` imports pandas (0.2 s).

    >>> float_values(pa.array([1.5, None])).tolist()
    [1.5, nan]
    >>> float_values(pa.chunked_array([[1.5], [None, 2.0]])[1:]).tolist()
    [nan, 2.0]
    """
    values = contiguous(values)
    if not values.null_count:
        return to_numpy(values)
    # no fill_null: converting the NaN to an Arrow scalar imports pandas too
    out = np.frombuffer(values.buffers()[1], dtype=np.float64, count=len(values), offset=values.offset * 8).copy()
    out[to_numpy(pc.is_null(values))] = np.nan
    return out


def from_numpy(values: np.ndarray) -> pa.Array:
    """An Arrow array over a numpy array's memory (int64, int32, uint64 or float64)."""
    values = np.ascontiguousarray(values)
    return pa.Array.from_buffers(_TYPES[values.dtype], len(values), [None, pa.py_buffer(values)])


def string_array(values: list[str]) -> pa.Array:
    """An Arrow string array of Python strings, built from its buffers (``pa.array(list)`` imports pandas: 0.45 s).

    >>> string_array(["q1", "", "é"]).to_pylist()
    ['q1', '', 'é']
    """
    encoded = [v.encode() for v in values]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(e) for e in encoded], out=offsets[1:])
    data = pa.py_buffer(b"".join(encoded))
    return pa.Array.from_buffers(pa.large_string(), len(encoded), [None, pa.py_buffer(offsets), data]).cast(pa.string())


def contiguous(values: pa.Array | pa.ChunkedArray) -> pa.Array:
    """One array for a chunked string column (large_string past int32's 2 GiB of characters).

    The compiled alignment reads one buffer, so a run's ids are made contiguous once,
    when read, while the chunks can still be freed (peak memory 806 -> 660 MB at 7M rows).

    >>> contiguous(pa.chunked_array([["a"], ["b", "c"]])).to_pylist()
    ['a', 'b', 'c']
    """
    if not isinstance(values, pa.ChunkedArray):
        return values
    if values.num_chunks == 1:
        return values.chunk(0)
    try:
        return values.combine_chunks()
    except pa.ArrowCapacityError:  # offsets past int32
        return pa.chunked_array([c.cast(pa.large_string()) for c in values.chunks]).combine_chunks()


RELEASE_EVERY = 8  # chunks (of 4 MiB) copied between hand-backs of freed memory to the system
STRING_BYTES_MAX = 2**31 - 1  # characters a string array's int32 offsets reach: past them, large_string


def _take_each(chunks: list[pa.Array]) -> Iterator[pa.Array]:
    """The chunks, each taken out of the list as it is given, and the memory freed since handed back every few."""
    taken = 0
    while chunks:
        yield chunks.pop(0)
        taken += 1
        if taken % RELEASE_EVERY == 0 or not chunks:  # mimalloc keeps freed pages until later allocations
            pa.default_memory_pool().release_unused()


def drain_strings(chunks: list[pa.Array]) -> pa.Array:
    """One contiguous string array from ``chunks`` (without nulls), taking them out of the list as they are copied,
    so that each is freed at once when the list held its last reference (large_string past 2 GiB of characters).

    A run's columns are made contiguous, which the compiled engine reads, this way when read: a column is
    never held twice over (a 7M-row run's peak while reading: 591 -> 475 MB). ``contiguous`` copies a column
    still referenced elsewhere.

    >>> chunks = [string_array(["a", "bc"]), string_array(["d"])]
    >>> drain_strings(chunks).to_pylist(), chunks
    (['a', 'bc', 'd'], [])
    """
    if any(chunk.null_count for chunk in chunks):
        raise ValueError("column has nulls")

    def ends_of(chunk: pa.Array) -> np.ndarray:
        width = np.int64 if chunk.type == pa.large_string() else np.int32
        return np.frombuffer(chunk.buffers()[1], width, count=len(chunk) + 1, offset=chunk.offset * np.dtype(width).itemsize)

    n = sum(len(chunk) for chunk in chunks)
    size = sum(int(ends[-1]) - int(ends[0]) for ends in map(ends_of, chunks))
    large = size > STRING_BYTES_MAX
    offsets = np.empty(n + 1, np.int64 if large else np.int32)
    data = np.empty(max(size, 1), np.uint8)
    offsets[0] = row = byte = 0
    for chunk in _take_each(chunks):
        ends = ends_of(chunk)
        first, length = int(ends[0]), int(ends[-1]) - int(ends[0])
        # straight into place: a temporary of a chunk's size (0.5 MB) is mapped and unmapped
        # again for every chunk, and its page faults cost more than the copy
        np.subtract(ends[1:], np.int64(first - byte), out=offsets[row + 1 : row + len(chunk) + 1], casting="unsafe")
        if length:
            data[byte : byte + length] = np.frombuffer(chunk.buffers()[2], np.uint8, count=length, offset=first)
        row, byte = row + len(chunk), byte + length
    return strings_from(offsets, data)


def strings_from(offsets: np.ndarray, data: np.ndarray) -> pa.Array:
    """The string array whose row i is ``data[offsets[i]:offsets[i + 1]]``, on these buffers without a copy: string for
    int32 offsets, large_string for int64 ones.

    >>> strings_from(np.array([0, 1, 3], np.int32), np.frombuffer(b"abc", np.uint8)).to_pylist()
    ['a', 'bc']
    """
    kind = pa.large_string() if offsets.dtype == np.int64 else pa.string()
    return pa.Array.from_buffers(kind, len(offsets) - 1, [None, pa.py_buffer(offsets), pa.py_buffer(data)])


def drain_floats(chunks: list[pa.Array]) -> np.ndarray:
    """:func:`drain_strings` for a float64 column: one numpy array.

    >>> drain_floats([from_numpy(np.array([1.5])), from_numpy(np.array([2.5]))]).tolist()
    [1.5, 2.5]
    """
    numbers = np.empty(sum(len(chunk) for chunk in chunks), np.float64)
    row = 0
    for chunk in _take_each(chunks):
        numbers[row : row + len(chunk)] = to_numpy(chunk)
        row += len(chunk)
    return numbers


def positions_in(values: pa.Array | pa.ChunkedArray, distinct: pa.Array) -> np.ndarray:
    """Each value's position in ``distinct`` (int64), -1 where it is absent.

    >>> positions_in(string_array(["b", "z", "a"]), string_array(["a", "b"])).tolist()
    [1, -1, 0]
    """
    found = pc.index_in(values, value_set=distinct)
    if isinstance(found, pa.ChunkedArray):
        found = found.combine_chunks()
    if not found.null_count:
        return to_numpy(found).astype(np.int64)
    # not fill_null(-1): a Python scalar there imports pandas (0.45 s)
    position = np.frombuffer(found.buffers()[1], dtype=np.int32, count=len(found), offset=found.offset * 4)
    return np.where(to_numpy(found.is_valid()), position, -1).astype(np.int64)


def same_strings(parts: list[pa.Array]) -> pa.ChunkedArray:
    """Id arrays of strings and large strings (pandas 3's str columns) as one chunked array of one type: large only
    when one of them is.

    >>> same_strings([pa.array(["a"]), pa.array(["b"], pa.large_string())]).type
    DataType(large_string)
    """
    kind = pa.large_string() if any(pa.types.is_large_string(p.type) for p in parts) else pa.string()
    return pa.chunked_array([p.cast(kind) for p in parts], kind)
