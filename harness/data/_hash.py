"""A fast, vectorised 64-bit fingerprint of every string in an Arrow array.

Used only to *find candidates* (duplicates, qrels matches); every candidate is then
confirmed by comparing the strings themselves, so a collision costs time, never a
wrong answer.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_K = (np.uint64(0x9E3779B97F4A7C15), np.uint64(0xC2B2AE3D27D4EB4F), np.uint64(0x165667B19E3779F9))


def _finalize(x: np.ndarray) -> np.ndarray:
    # splitmix64's finalizer: every input bit affects every output bit.
    x = x ^ (x >> np.uint64(30))
    x = x * _M1
    x = x ^ (x >> np.uint64(27))
    x = x * _M2
    return x ^ (x >> np.uint64(31))


def string_fingerprints(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """uint64 fingerprint per string from its length and its first, middle and last 8 bytes."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks() if values.num_chunks != 1 else values.chunk(0)
    if not (pa.types.is_string(values.type) or pa.types.is_large_string(values.type)):
        values = pc.cast(values, pa.large_string())
    n = len(values)
    if n == 0:
        return np.zeros(0, dtype=np.uint64)
    offset_type = np.int64 if pa.types.is_large_string(values.type) else np.int32
    buffers = values.buffers()
    raw_offsets = np.frombuffer(buffers[1], dtype=offset_type, count=n + 1, offset=values.offset * np.dtype(offset_type).itemsize)
    offsets: np.ndarray = raw_offsets.astype(np.int64)
    data = np.frombuffer(buffers[2], dtype=np.uint8) if buffers[2] is not None else np.zeros(0, np.uint8)
    padded = np.zeros(int(offsets[-1]) + 16, dtype=np.uint8)
    padded[: int(offsets[-1])] = data[: int(offsets[-1])]
    # An unaligned uint64 view at every byte offset: word[o] holds bytes o..o+7.
    words = np.ndarray(shape=(padded.size - 7,), dtype="<u8", buffer=padded, strides=(1,))
    start = offsets[:-1]
    length = offsets[1:] - start
    short = length < 8
    tail = np.maximum(length - 8, 0)
    first = words[start]
    # Bytes past the end of a short string belong to the next string: mask them.
    keep_bits = np.where(short, length * 8, 0).astype(np.uint64)
    mask = np.where(short, (np.uint64(1) << keep_bits) - np.uint64(1), np.uint64(0xFFFFFFFFFFFFFFFF))
    first = first & mask
    middle = np.where(short, first, words[start + tail // 2])
    last = np.where(short, first, words[start + tail])
    h = _finalize(first * _K[0] + length.astype(np.uint64))
    h = _finalize(h ^ (middle * _K[1]))
    return _finalize(h ^ (last * _K[2]))


def combine(codes: np.ndarray, fingerprints: np.ndarray) -> np.ndarray:
    """Fingerprint of the pair (integer code, string)."""
    return _finalize(fingerprints ^ (codes.astype(np.uint64) * _K[2] + _K[0]))
