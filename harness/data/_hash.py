"""Fast, vectorised 64-bit fingerprints of strings and (query, doc) pairs.

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
    # splitmix64's finalizer (in place): every input bit affects every output bit.
    x ^= x >> np.uint64(30)
    x *= _M1
    x ^= x >> np.uint64(27)
    x *= _M2
    x ^= x >> np.uint64(31)
    return x


def _rotl(x: np.ndarray, r: int) -> np.ndarray:
    return (x << np.uint64(r)) | (x >> np.uint64(64 - r))


def string_fingerprints(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """uint64 per string from its length and its first, middle and last 8 bytes."""
    if isinstance(values, pa.ChunkedArray):  # chunk by chunk: no copy of the whole column
        if values.num_chunks == 0:
            return np.zeros(0, dtype=np.uint64)
        return np.concatenate([_fingerprints(chunk) for chunk in values.chunks])
    return _fingerprints(values)


def _fingerprints(values: pa.Array) -> np.ndarray:
    if not (pa.types.is_string(values.type) or pa.types.is_large_string(values.type)):
        values = pc.cast(values, pa.large_string())
    n = len(values)
    if n == 0:
        return np.zeros(0, dtype=np.uint64)
    offset_type = np.int64 if pa.types.is_large_string(values.type) else np.int32
    buffers = values.buffers()
    raw_offsets = np.frombuffer(buffers[1], dtype=offset_type, count=n + 1, offset=values.offset * np.dtype(offset_type).itemsize)
    offsets: np.ndarray = raw_offsets.astype(np.int64)
    end = int(offsets[-1])
    data = np.frombuffer(buffers[2], dtype=np.uint8, count=end) if buffers[2] is not None else np.zeros(0, np.uint8)
    padded = np.zeros(end + 16, dtype=np.uint8)
    padded[:end] = data
    # An unaligned uint64 view at every byte offset: words[o] holds bytes o..o+7.
    words = np.ndarray(shape=(padded.size - 7,), dtype="<u8", buffer=padded, strides=(1,))
    start = offsets[:-1]
    length = offsets[1:] - start
    h = words[start] * _K[0]  # the first 8 bytes (a copy: safe to update in place)
    # Bytes past the end of a short string belong to the next string: mask them.
    short = np.flatnonzero(length < 8)
    if short.size:
        bits = (length[short] * 8).astype(np.uint64)
        h[short] = (words[start[short]] & ((np.uint64(1) << bits) - np.uint64(1))) * _K[0]
    longer = np.flatnonzero(length > 8)  # the last 8 bytes add something only past 8
    if longer.size:
        h[longer] ^= _rotl(words[start[longer] + length[longer] - 8] * _K[2], 41)
    long = np.flatnonzero(length > 16)  # and the middle ones only past 16
    if long.size:
        h[long] ^= _rotl(words[start[long] + (length[long] - 8) // 2] * _K[1], 23)
    h += length.astype(np.uint64)
    return _finalize(h)


def pair_keys(query_fingerprints: np.ndarray, doc_fingerprints: np.ndarray) -> np.ndarray:
    """Fingerprint of each (query, doc) pair, from each row's query and doc fingerprints (consumed)."""
    doc_fingerprints ^= _rotl(query_fingerprints * _K[2], 29)
    return _finalize(doc_fingerprints)


def sort_with_rows(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Sort keys carrying their row numbers: (sorted key prefixes, rows, dropped low bits).

    The row number replaces the key's low bits so that one SIMD ``np.sort`` of
    uint64 does the work of an ``argsort`` several times slower. Prefixes keep at
    least 40 bits: equal prefixes are candidates, to be confirmed on the strings.
    """
    n = keys.size
    bits = max(1, (n - 1).bit_length())
    shift = np.uint64(bits)
    packed = keys >> shift
    packed <<= shift
    packed |= np.arange(n, dtype=np.uint64)
    packed.sort()
    rows = (packed & np.uint64((1 << bits) - 1)).astype(np.int64)
    packed >>= shift  # in place: the sorted prefixes
    return packed, rows, bits
