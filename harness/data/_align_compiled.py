"""The compiled alignment engine (numba): every phase after the universe, one query at a time.

The Arrow engine sorts and joins all rows at once: a sort of 64-bit keys for duplicates, a
three-key sort for the ranking, a searched join. At 7M rows that is 3 s. Runs are almost
always written one query after another, so this engine works inside each query's block of
rows, where everything is small and in cache:

1. the blocks: rows where the query id changes (one pass over the id bytes); when a
   query's rows are split over several blocks, a stable counting sort groups them first;
2. per block, in compiled code on every core: an open-addressing table of the block's
   documents (a 64-bit hash, confirmed on the bytes) finds the repeated lines and then
   serves the join, each of the query's judgments looking itself up; a block already in
   rank order (as most run files list it) is confirmed in one pass, any other is ranked
   by a radix sort on the leading bits in which the block's scores differ, each run those
   bits leave equal finished by a merge sort on (score, tie rule); the first ``depth``
   rows are written straight into the block's place in the output.

A query's rows, label and rank depend on that query's rows only. Strings are read in
place from the Arrow buffers; nothing per row passes through Python. At 7M rows (7,000
queries x 1,000) this takes 0.2-0.5 s (ranked or shuffled blocks) where the Arrow engine
takes 2.2 s.

Compiled on first use and cached on disk (numba ``cache=True``); imported only for runs
large enough to repay numba's start-up (:data:`harness.data.align.COMPILED_FROM_ROWS`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from harness.data._arrow import contiguous, from_numpy, to_numpy
from harness.kernels._numba import njit
from harness.kernels._parallel import run_split, split, threads

# tie rules, as the kernel sees them
TIE_TREC_EVAL, TIE_OPTIMISTIC, TIE_PESSIMISTIC, TIE_INPUT_ORDER = 0, 1, 2, 3
TIES = {"optimistic": TIE_OPTIMISTIC, "pessimistic": TIE_PESSIMISTIC, "input_order": TIE_INPUT_ORDER}  # else trec_eval's
# which copy of a repeated (query, doc) stays: the first line, or the highest score (the first of equals)
KEEP_FIRST, KEEP_MAX = 0, 1


@dataclass(frozen=True)
class Strings:
    """An Arrow string column as the kernels read it: offsets into one byte buffer."""

    offsets: np.ndarray  # int32 or int64, n + 1
    data: np.ndarray  # uint8

    @classmethod
    def of(cls, values: pa.Array | pa.ChunkedArray) -> Strings:
        values = contiguous(values)
        if not (pa.types.is_string(values.type) or pa.types.is_large_string(values.type)):
            values = pc.cast(values, pa.string())
        width = np.int64 if pa.types.is_large_string(values.type) else np.int32
        buffers = values.buffers()
        offsets = np.frombuffer(buffers[1], dtype=width, count=len(values) + 1, offset=values.offset * np.dtype(width).itemsize)
        data = np.frombuffer(buffers[2], dtype=np.uint8) if buffers[2] is not None and buffers[2].size else np.zeros(1, np.uint8)
        return cls(offsets, data)


@dataclass(frozen=True)
class JudgmentIndex:
    """Each judged query's judgments, with their document hashes: what the join looks up."""

    bounds: np.ndarray  # judged query j's judgments are rows[bounds[j]:bounds[j + 1]]
    rows: np.ndarray  # judgment rows (into the prepared judgments)
    hashes: np.ndarray  # their document hashes
    docs: Strings


def judgment_index(codes: np.ndarray, n_queries: int, docs: pa.Array | pa.ChunkedArray) -> JudgmentIndex:
    """Index the judgments (``codes``: each one's judged-query code) for :func:`rank_blocks`."""
    strings = Strings.of(docs)
    bounds, rows, hashes = _judgment_index(codes.astype(np.int64), n_queries, strings.offsets, strings.data)
    return JudgmentIndex(bounds, rows, hashes, strings)


def query_blocks(query_id: pa.Array | pa.ChunkedArray) -> tuple[np.ndarray | None, np.ndarray, pa.Array]:
    """(row order, block bounds, each block's query id): rows grouped into one block per query.

    The row order is None (the file order) when each query's rows are contiguous, the
    usual layout; otherwise a stable counting sort groups them, keeping file order
    within a query. Blocks appear in order of first appearance.

    >>> order, bounds, ids = query_blocks(pa.array(["b", "b", "a", "b"]))
    >>> order.tolist(), bounds.tolist(), ids.to_pylist()
    ([0, 1, 3, 2], [0, 3, 4], ['b', 'a'])
    """
    n = len(query_id)
    strings = Strings.of(query_id)
    starts = _block_starts(strings.offsets, strings.data, n)
    ids = contiguous(query_id.take(from_numpy(starts[:-1])))
    if pc.count_distinct(ids).as_py() == len(ids):
        return None, starts, ids
    encoded = pc.dictionary_encode(query_id)
    if isinstance(encoded, pa.ChunkedArray):
        encoded = encoded.combine_chunks()
    order, bounds = _group_rows(to_numpy(encoded.indices).astype(np.int64), len(encoded.dictionary))
    return order, bounds, encoded.dictionary


def duplicate_rows(order: np.ndarray | None, bounds: np.ndarray, docs: pa.Array | pa.ChunkedArray,
                   prefer: np.ndarray | None) -> np.ndarray:  # fmt: skip
    """Rows (ascending) that repeat a document within their block: every copy but the one kept.

    The kept copy is the first, or with ``prefer`` (a judgment's label) the highest, the
    first of equals. ``order``/``bounds``: the blocks, as :func:`query_blocks` gives them.

    >>> order, bounds, _ = query_blocks(pa.array(["q", "q", "r", "q"]))
    >>> duplicate_rows(order, bounds, pa.array(["a", "b", "a", "a"]), np.array([0.0, 1.0, 1.0, 2.0])).tolist()
    [0]
    """
    strings = Strings.of(docs)
    drop = np.zeros(len(docs), np.bool_)
    rows = np.zeros(0, np.int64) if order is None else order
    values = np.zeros(0) if prefer is None else np.asarray(prefer, dtype=np.float64)

    def task(lo: int, hi: int) -> None:
        _duplicate_blocks(lo, hi, bounds, rows, order is None, strings.offsets, strings.data, values, prefer is not None, drop)

    run_split(task, split(np.diff(bounds).astype(np.float64), threads()))
    return np.flatnonzero(drop)


@dataclass(frozen=True)
class Ranked:
    """The kept rows of every block, ranked, block after block in the order asked for."""

    rows: np.ndarray  # run row of each ranked row
    labels: np.ndarray
    kept: np.ndarray  # per block: rows kept (after duplicates and depth)
    dropped: np.ndarray  # per block: duplicate copies dropped
    beyond: np.ndarray  # per block: rows cut at depth
    first_dropped: int  # the first dropped copy's run row, -1 when none


def rank_blocks(order: np.ndarray | None, bounds: np.ndarray, judged: np.ndarray, position: np.ndarray,
                docs: pa.Array | pa.ChunkedArray, score: np.ndarray, index: JudgmentIndex, labels: np.ndarray,
                keep: int, ties: int, depth: int) -> Ranked:  # fmt: skip
    """Label, deduplicate, rank and cut the blocks; ``position``: each block's place in the output, -1 to leave it out.

    ``judged``: each block's judged-query code, or -1. Every block is given room for all
    its rows (``depth`` at most) and written straight into the output; only when
    duplicates leave a block shorter are the outputs closed up.
    """
    strings = Strings.of(docs)
    n_blocks = bounds.size - 1
    room = np.diff(bounds) if depth < 0 else np.minimum(np.diff(bounds), depth)
    room = np.where(position >= 0, room, 0)
    start = np.zeros(n_blocks, np.int64)
    placed = np.flatnonzero(position >= 0)
    placed = placed[np.argsort(position[placed])]
    start[placed] = np.cumsum(room[placed]) - room[placed]
    total = int(room.sum())
    # run rows fit int32 below 2^31 rows: 4 bytes a row less for as long as the lists live (28 MB at 7M rows)
    out_rows = np.empty(total, np.int32 if len(docs) < 2**31 else np.int64)
    out_labels = np.empty(total, np.float64)
    kept = np.zeros(n_blocks, np.int64)
    dropped = np.zeros(n_blocks, np.int64)
    beyond = np.zeros(n_blocks, np.int64)
    first_dropped = np.full(n_blocks, -1, np.int64)
    rows = np.zeros(0, np.int64) if order is None else order

    def task(lo: int, hi: int) -> None:
        _rank_blocks(lo, hi, bounds, rows, order is None, judged, position >= 0, strings.offsets, strings.data, score,
                     index.bounds, index.rows, index.hashes, index.docs.offsets, index.docs.data, labels,
                     keep, ties, depth, start, out_rows, out_labels, kept, dropped, beyond, first_dropped)  # fmt: skip

    run_split(task, split(np.where(position >= 0, np.diff(bounds), 0).astype(np.float64), threads()))
    if (kept < room).any():  # duplicates dropped: close up the gaps they left
        filled = np.repeat(kept[placed], room[placed]) > np.arange(total) - np.repeat(start[placed], room[placed])
        out_rows, out_labels = out_rows[filled], out_labels[filled]
    any_dropped = first_dropped[first_dropped >= 0]
    return Ranked(out_rows, out_labels, kept, dropped, beyond, int(any_dropped.min()) if any_dropped.size else -1)


# ---- compiled kernels ---------------------------------------------------------------
@njit(cache=True, nogil=True, inline="always")
def _same(o1, d1, i, o2, d2, j):  # type: ignore[no-untyped-def]
    a, b = o1[i], o2[j]
    n = o1[i + 1] - a
    if n != o2[j + 1] - b:
        return False
    for k in range(n):  # noqa: SIM110 (an explicit loop compiles to a plain byte loop in numba)
        if d1[a + k] != d2[b + k]:
            return False
    return True


@njit(cache=True, nogil=True, inline="always")
def _compare(o, d, i, j):  # type: ignore[no-untyped-def]
    """strcmp's sign for strings i and j (byte order, a prefix first)."""
    a, b = o[i], o[j]
    na, nb = o[i + 1] - a, o[j + 1] - b
    for k in range(min(na, nb)):
        x, y = d[a + k], d[b + k]
        if x != y:
            return -1 if x < y else 1
    return (na > nb) - (na < nb)


@njit(cache=True, nogil=True, inline="always")
def _hash(o, d, i):  # type: ignore[no-untyped-def]
    # FNV-1a over the bytes, then mixed so the low bits (the table slot) depend on every byte;
    # only finds candidates, which the bytes then confirm
    h = np.uint64(0xCBF29CE484222325)
    for k in range(o[i], o[i + 1]):
        h = (h ^ np.uint64(d[k])) * np.uint64(0x100000001B3)
    h ^= h >> np.uint64(32)
    h *= np.uint64(0xD6E8FEB86659FD93)
    return h ^ (h >> np.uint64(32))


@njit(cache=True, nogil=True)
def _block_starts(o, d, n):  # type: ignore[no-untyped-def]
    bounds = np.empty(n + 1, np.int64)
    m = 0
    if n:
        bounds[0] = 0
        m = 1
    for i in range(1, n):
        if not _same(o, d, i - 1, o, d, i):
            bounds[m] = i
            m += 1
    bounds[m] = n
    return bounds[: m + 1].copy()


@njit(cache=True, nogil=True)
def _group_rows(codes, n_codes):  # type: ignore[no-untyped-def]
    """A stable counting sort: (rows grouped by code, each code's bounds)."""
    bounds = np.zeros(n_codes + 1, np.int64)
    for c in codes:
        bounds[c + 1] += 1
    for c in range(n_codes):
        bounds[c + 1] += bounds[c]
    position = bounds[:-1].copy()
    order = np.empty(codes.size, np.int64)
    for i in range(codes.size):
        c = codes[i]
        order[position[c]] = i
        position[c] += 1
    return order, bounds


@njit(cache=True, nogil=True, inline="always")
def _table_size(n):  # type: ignore[no-untyped-def]
    """Slots of an open-addressing table for n keys: a power of two, at least 2n (short probes)."""
    size = 1
    while size < 2 * n:
        size *= 2
    return size


@njit(cache=True, nogil=True, inline="always")
def _find_repeats(rows, o, d, prefer, use_prefer, hashes, slots_all, drop):  # type: ignore[no-untyped-def]
    """One block's documents in an open-addressing table; marks the copies that go (``drop``, by local row).

    ``rows``: the block's rows in file order; the kept copy is the first, or with
    ``use_prefer`` the highest ``prefer`` (by local row), the first of equals. Fills
    ``hashes`` and returns (the table, its mask, the number dropped); the table then
    holds one local row per document, for lookups.
    """
    n = rows.size
    size = _table_size(n)
    mask = np.uint64(size - 1)
    slots = slots_all[:size]
    slots[:] = -1
    n_dropped = 0
    for k in range(n):
        r = rows[k]
        h = _hash(o, d, r)
        hashes[k] = h
        slot = h & mask
        while slots[slot] >= 0 and not (hashes[slots[slot]] == h and _same(o, d, rows[slots[slot]], o, d, r)):
            slot = (slot + np.uint64(1)) & mask
        if slots[slot] < 0:
            slots[slot] = k
            continue
        other = slots[slot]  # a repeat of an earlier line: keep one copy
        n_dropped += 1
        if use_prefer and prefer[k] > prefer[other]:
            drop[other] = True
            slots[slot] = k
        else:
            drop[k] = True
    return slots, mask, n_dropped


@njit(cache=True, nogil=True)
def _duplicate_blocks(b_lo, b_hi, bounds, order, grouped, o, d, prefer, use_prefer, drop):  # type: ignore[no-untyped-def]
    longest = 1
    for b in range(b_lo, b_hi):
        longest = max(longest, bounds[b + 1] - bounds[b])
    slots_all = np.empty(_table_size(longest), np.int64)
    hashes, local_prefer, local_drop = np.empty(longest, np.uint64), np.zeros(longest), np.empty(longest, np.bool_)
    for b in range(b_lo, b_hi):
        s, e = bounds[b], bounds[b + 1]
        rows = np.arange(s, e) if grouped else order[s:e]  # file order within the block
        n = e - s
        if use_prefer:
            for k in range(n):
                local_prefer[k] = prefer[rows[k]]
        block_drop = local_drop[:n]
        block_drop[:] = False
        _find_repeats(rows, o, d, local_prefer, use_prefer, hashes, slots_all, block_drop)
        for k in range(n):
            if block_drop[k]:
                drop[rows[k]] = True


@njit(cache=True, nogil=True)
def _judgment_index(codes, n_queries, o, d):  # type: ignore[no-untyped-def]
    rows, bounds = _group_rows(codes, n_queries)
    hashes = np.empty(codes.size, np.uint64)
    for k in range(codes.size):
        hashes[k] = _hash(o, d, rows[k])
    return bounds, rows, hashes


@njit(cache=True, nogil=True, inline="always")
def _before(x, y, score, label, rows, o, d, ties):  # type: ignore[no-untyped-def]
    """Does local row x rank strictly before local row y? A total order: the row number decides last."""
    if score[x] != score[y]:
        return score[x] > score[y]
    if ties == TIE_OPTIMISTIC or ties == TIE_PESSIMISTIC:  # noqa: SIM109 (scalar compares in numba)
        lx = -np.inf if np.isnan(label[x]) else label[x]
        ly = -np.inf if np.isnan(label[y]) else label[y]
        if lx != ly:
            return (lx > ly) if ties == TIE_OPTIMISTIC else (lx < ly)
    if ties != TIE_INPUT_ORDER:
        c = _compare(o, d, rows[x], rows[y])  # trec_eval: document id descending
        if c != 0:
            return c > 0
    return x < y


@njit(cache=True, nogil=True)
def _rank(idx, score, label, rows, o, d, ties, scratch):  # type: ignore[no-untyped-def]
    """Sort local rows ``idx`` in place: insertion sort in runs of 16, then merges (linear on ranked input).

    ``scratch``: at least ``idx.size`` int64 of working space.
    """
    n = idx.size
    run = 16
    for lo in range(0, n, run):
        hi = min(lo + run, n)
        for i in range(lo + 1, hi):
            v = idx[i]
            j = i - 1
            while j >= lo and _before(v, idx[j], score, label, rows, o, d, ties):
                idx[j + 1] = idx[j]
                j -= 1
            idx[j + 1] = v
    if n <= run:
        return
    src, dst = idx, scratch[:n]
    width = run
    while width < n:
        for lo in range(0, n, 2 * width):
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            if mid >= hi or not _before(src[mid], src[mid - 1], score, label, rows, o, d, ties):
                dst[lo:hi] = src[lo:hi]  # already in order
                continue
            i, j, k = lo, mid, lo
            while i < mid and j < hi:
                if _before(src[j], src[i], score, label, rows, o, d, ties):
                    dst[k] = src[j]
                    j += 1
                else:
                    dst[k] = src[i]
                    i += 1
                k += 1
            while i < mid:
                dst[k] = src[i]
                i += 1
                k += 1
            while j < hi:
                dst[k] = src[j]
                j += 1
                k += 1
        src, dst = dst, src
        width *= 2
    if src.ctypes.data != idx.ctypes.data:
        idx[:] = src


RADIX_BITS = 24  # the window of key bits the radix sort orders by (3 passes of 8 bits)


@njit(cache=True, nogil=True)
def _radix_window(keys, idx, keys_tmp, idx_tmp, counts):  # type: ignore[no-untyped-def]
    """Order ``idx`` (in place, stably) by the 24 highest bits in which ``keys`` differ; returns the window's low bit.

    Keys that agree on the window are left in their input order: the caller finishes
    those runs with the full comparison. Three passes whatever the block size, and a
    window that starts at the first bit that varies, so scores of any range spread out.
    """
    n = keys.size
    differ = np.uint64(0)
    for i in range(n):
        differ |= keys[i] ^ keys[0]
    top = 0
    while top < 64 and (differ >> np.uint64(top)) != np.uint64(0):
        top += 1
    low = max(0, top - RADIX_BITS)
    src_k, src_i, dst_k, dst_i = keys, idx, keys_tmp[:n], idx_tmp[:n]
    for shift in range(low, max(low, top), 8):
        counts[:] = 0
        sh = np.uint64(shift)
        for i in range(n):
            counts[(src_k[i] >> sh) & np.uint64(255)] += 1
        total = 0
        for digit in range(256):
            c = counts[digit]
            counts[digit] = total
            total += c
        for i in range(n):
            digit = (src_k[i] >> sh) & np.uint64(255)
            j = counts[digit]
            dst_k[j] = src_k[i]
            dst_i[j] = src_i[i]
            counts[digit] = j + 1
        src_k, dst_k = dst_k, src_k
        src_i, dst_i = dst_i, src_i
    if src_i.ctypes.data != idx.ctypes.data:
        idx[:] = src_i
        keys[:] = src_k
    return low


@njit(cache=True, nogil=True, inline="always")
def _descending_key(bits):  # type: ignore[no-untyped-def]
    """From a float's bits (-0.0 given as 0.0), a uint64 that sorts ascending as the float sorts descending."""
    top = np.uint64(1) << np.uint64(63)
    ascending = ~bits if bits & top else bits | top
    return ~ascending


@njit(cache=True, nogil=True)
def _rank_blocks(  # type: ignore[no-untyped-def]
    b_lo, b_hi, bounds, order, grouped, judged, active, ro, rd, run_score, j_bounds, j_rows, j_hashes, qo, qd,
    q_labels, keep, ties, depth, start, out_rows, out_labels, kept, dropped, beyond, first_dropped,
):  # fmt: skip
    longest = 0
    for b in range(b_lo, b_hi):
        longest = max(longest, bounds[b + 1] - bounds[b])
    # working space for the longest block, reused by every block
    hashes_all, score_all = np.empty(longest, np.uint64), np.empty(longest, np.float64)
    label_all, drop_all = np.empty(longest, np.float64), np.empty(longest, np.bool_)
    idx_all, scratch, keys_all = np.empty(longest, np.int64), np.empty(longest, np.int64), np.empty(longest, np.uint64)
    keys_tmp, counts = np.empty(longest, np.uint64), np.empty(256, np.int64)
    slots_all = np.empty(_table_size(longest), np.int64)
    for b in range(b_lo, b_hi):
        if not active[b]:
            continue
        s, e = bounds[b], bounds[b + 1]
        n = e - s
        rows = np.arange(s, e) if grouped else order[s:e]  # run rows, in file order
        hashes, score, label, drop = hashes_all[:n], score_all[:n], label_all[:n], drop_all[:n]
        label[:] = np.nan
        drop[:] = False
        for k in range(n):
            score[k] = run_score[rows[k]] + 0.0  # -0.0 becomes 0.0: equal scores, equal bits

        # one open-addressing table of the block's documents: finds repeats, then serves the join
        slots, mask, n_dropped = _find_repeats(rows, ro, rd, score, keep == KEEP_MAX, hashes, slots_all, drop)
        j = judged[b]
        if j >= 0:
            for p in range(j_bounds[j], j_bounds[j + 1]):
                h = j_hashes[p]
                slot = h & mask
                while slots[slot] >= 0:
                    k = slots[slot]
                    if hashes[k] == h and _same(ro, rd, rows[k], qo, qd, j_rows[p]):
                        label[k] = q_labels[j_rows[p]]
                        break
                    slot = (slot + np.uint64(1)) & mask

        idx = idx_all[: n - n_dropped]
        m = 0
        for k in range(n):
            if drop[k]:
                if first_dropped[b] < 0:
                    first_dropped[b] = rows[k]
            else:
                idx[m] = k
                m += 1
        in_order = True  # runs mostly list each query's documents ranked already: one pass confirms it
        for i in range(1, m):
            if _before(idx[i], idx[i - 1], score, label, rows, ro, rd, ties):
                in_order = False
                break
        if in_order:
            pass
        elif m > 32:  # a radix sort on the score's leading bits, then each run they leave equal by the full rule
            keys = keys_all[:m]
            bits = score.view(np.uint64)
            for i in range(m):
                keys[i] = _descending_key(bits[idx[i]])
            low = np.uint64(_radix_window(keys, idx, keys_tmp, scratch, counts))
            t = 0
            while t < m:
                t_end = t + 1
                while t_end < m and (keys[t_end] >> low) == (keys[t] >> low):
                    t_end += 1
                if t_end - t > 1:
                    _rank(idx[t:t_end], score, label, rows, ro, rd, ties, scratch)
                t = t_end
        else:
            _rank(idx, score, label, rows, ro, rd, ties, scratch)
        take = m if depth < 0 else min(m, depth)
        to = start[b]
        for i in range(take):
            out_rows[to + i] = rows[idx[i]]
            out_labels[to + i] = label[idx[i]]
        kept[b] = take
        dropped[b] = n_dropped
        beyond[b] = m - take
