# cython: language_level=3, cdivision=True
"""The compiled kernels of the alignment engine (:mod:`harness.data._align_compiled`), built ahead of time (Cython).

Strings are Arrow string columns read in place: int32 or int64 offsets into one byte buffer.
The block kernels work on blocks ``b_lo .. b_hi`` without the GIL and write only those blocks'
outputs, so threads split the blocks and a query's result never depends on the split.
"""

import numpy as np

from libc.math cimport INFINITY, NAN, isnan
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libc.string cimport memcpy

from harness.kernels._checks cimport check_all_offsets, check_indices, check_length, check_offsets

ctypedef fused offset_t:  # the run's (or the one column's) string offsets
    int32_t
    int64_t

ctypedef fused other_offset_t:  # the judgments' string offsets
    int32_t
    int64_t

ctypedef fused out_row_t:
    int32_t
    int64_t

# tie rules and kept copies, as harness.data._align_compiled names them
cdef int TIE_OPTIMISTIC = 1, TIE_PESSIMISTIC = 2, TIE_INPUT_ORDER = 3, TIE_DOCNO_ASCENDING = 4
cdef int KEEP_MAX = 1
cdef int RADIX_BITS = 24  # the window of key bits the radix sort orders by (3 passes of 8 bits)


cdef inline bint same(const offset_t *o1, const uint8_t *d1, int64_t i, const other_offset_t *o2, const uint8_t *d2,
                      int64_t j) noexcept nogil:
    cdef int64_t a = o1[i], b = o2[j], n = o1[i + 1] - o1[i], k
    if n != o2[j + 1] - b:
        return False
    for k in range(n):
        if d1[a + k] != d2[b + k]:
            return False
    return True


cdef inline int compare(const offset_t *o, const uint8_t *d, int64_t i, int64_t j) noexcept nogil:
    """strcmp's sign for strings i and j (byte order, a prefix first)."""
    cdef int64_t a = o[i], b = o[j], na = o[i + 1] - o[i], nb = o[j + 1] - o[j], k
    cdef uint8_t x, y
    for k in range(min(na, nb)):
        x, y = d[a + k], d[b + k]
        if x != y:
            return -1 if x < y else 1
    return (na > nb) - (na < nb)


cdef extern from *:
    """
    #if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    #define HARNESS_LITTLE_ENDIAN 0
    #else
    #define HARNESS_LITTLE_ENDIAN 1
    #endif
    """
    bint HARNESS_LITTLE_ENDIAN


cdef inline uint64_t hash_of(const offset_t *o, const uint8_t *d, int64_t i, int64_t d_len) noexcept nogil:
    # eight bytes at a time, each word mixed in by a multiply (ids are short: one or two words), then finished so that
    # the low bits (the table slot) depend on every byte; only finds candidates, which the bytes then confirm. A last
    # partial word is read whole where the buffer (``d_len`` bytes) goes on past it, its extra bytes masked off.
    cdef int64_t a = o[i], n = o[i + 1] - o[i], k
    cdef uint64_t h = 0x9E3779B97F4A7C15ULL ^ <uint64_t>n, w
    while n >= 8:
        memcpy(&w, d + a, 8)
        h = (h ^ w) * 0xBF58476D1CE4E5B9ULL
        h ^= h >> 31
        a += 8
        n -= 8
    if n > 0:
        if HARNESS_LITTLE_ENDIAN and a + 8 <= d_len:
            memcpy(&w, d + a, 8)
            w &= ((<uint64_t>1) << (8 * n)) - 1
        else:
            w = 0
            for k in range(n):
                w |= (<uint64_t>d[a + k]) << (8 * k)
        h = (h ^ w) * 0xBF58476D1CE4E5B9ULL
        h ^= h >> 31
    h *= 0x94D049BB133111EBULL
    return h ^ (h >> 29)


cdef inline int64_t table_size(int64_t n) noexcept nogil:
    """Slots of an open-addressing table for n keys: a power of two, at least 2n (short probes)."""
    cdef int64_t size = 1
    while size < 2 * n:
        size *= 2
    return size


cdef int64_t longest_block(const int64_t[::1] bounds, Py_ssize_t b_lo, Py_ssize_t b_hi) noexcept nogil:
    """The most rows a block of b_lo .. b_hi holds (at least 1): the size of the working space they share."""
    cdef int64_t longest = 1
    cdef Py_ssize_t b
    for b in range(b_lo, b_hi):
        longest = max(longest, bounds[b + 1] - bounds[b])
    return longest


cdef inline const int64_t *block_rows(const int64_t[::1] order, bint grouped, int64_t s, int64_t n,
                                      int64_t *local_rows) noexcept nogil:
    """A block's run rows in file order: s .. s + n written into ``local_rows`` when the rows are grouped already,
    else its slice of ``order``."""
    cdef int64_t k
    if not grouped:
        return &order[s]
    for k in range(n):
        local_rows[k] = s + k
    return local_rows


def block_starts(const offset_t[::1] offsets, const uint8_t[::1] data, Py_ssize_t n):
    """Where the id changes: the first row of every run of equal ids, then n."""
    check_length(offsets.shape[0], n + 1, "block_starts: offsets")
    bounds_array = np.empty(n + 1, np.int64)
    cdef int64_t[::1] bounds = bounds_array
    cdef Py_ssize_t m = 0, i
    with nogil:
        if n:
            bounds[0] = 0
            m = 1
        for i in range(1, n):
            if not same(&offsets[0], &data[0], i - 1, &offsets[0], &data[0], i):
                bounds[m] = i
                m += 1
        bounds[m] = n
    return bounds_array[: m + 1].copy()


cdef void counting_sort(const int64_t *codes, Py_ssize_t n, Py_ssize_t n_codes, int64_t *order, int64_t *bounds,
                        int64_t *position) noexcept nogil:
    cdef Py_ssize_t i, c
    for c in range(n_codes + 1):
        bounds[c] = 0
    for i in range(n):
        bounds[codes[i] + 1] += 1
    for c in range(n_codes):
        bounds[c + 1] += bounds[c]
    for c in range(n_codes):
        position[c] = bounds[c]
    for i in range(n):
        c = codes[i]
        order[position[c]] = i
        position[c] += 1


def group_rows(const int64_t[::1] codes, Py_ssize_t n_codes):
    """A stable counting sort: (rows grouped by code, each code's bounds)."""
    check_indices(codes, 0, codes.shape[0], n_codes, False, "group_rows: codes")
    order_array = np.empty(codes.shape[0], np.int64)
    bounds_array = np.zeros(n_codes + 1, np.int64)
    cdef int64_t[::1] order = order_array, bounds = bounds_array, position = np.empty(max(n_codes, 1), np.int64)
    with nogil:
        counting_sort(&codes[0] if codes.shape[0] else NULL, codes.shape[0], n_codes,
                      &order[0] if codes.shape[0] else NULL, &bounds[0], &position[0])
    return order_array, bounds_array


def hash_rows(const int64_t[::1] rows, const offset_t[::1] offsets, const uint8_t[::1] data, uint64_t[::1] hashes,
              Py_ssize_t lo, Py_ssize_t hi):
    """``hashes[k]`` for ``lo <= k < hi``: the hash of string ``rows[k]`` (the judged documents, grouped by query, as
    the join looks them up)."""
    cdef Py_ssize_t k
    check_length(hashes.shape[0], hi, "hash_rows: hashes")
    check_indices(rows, lo, hi, offsets.shape[0] - 1, False, "hash_rows: rows")
    with nogil:
        for k in range(lo, hi):
            hashes[k] = hash_of(&offsets[0], &data[0], rows[k], data.shape[0])


cdef int64_t find_repeats(const int64_t *rows, int64_t n, const offset_t *o, const uint8_t *d, int64_t d_len,
                          const double *prefer,
                          bint use_prefer, uint64_t *hashes, int64_t *slots, uint64_t *mask_out,
                          uint8_t *drop) noexcept nogil:
    """One block's documents in an open-addressing table; marks the copies that go (``drop``, by local row).

    ``rows``: the block's rows in file order; the kept copy is the first, or with ``use_prefer`` the highest
    ``prefer`` (by local row), the first of equals. Fills ``hashes`` and ``slots`` (one local row per document,
    for lookups, under ``mask_out``); returns the number dropped.
    """
    cdef int64_t size = table_size(n), k, r, other, n_dropped = 0
    cdef uint64_t mask = <uint64_t>(size - 1), h, slot
    for k in range(size):
        slots[k] = -1
    for k in range(n):
        r = rows[k]
        h = hash_of(o, d, r, d_len)
        hashes[k] = h
        slot = h & mask
        while slots[slot] >= 0 and not (hashes[slots[slot]] == h and same(o, d, rows[slots[slot]], o, d, r)):
            slot = (slot + 1) & mask
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
    mask_out[0] = mask
    return n_dropped


cdef int check_block_rows(Py_ssize_t b_lo, Py_ssize_t b_hi, const int64_t[::1] bounds, const int64_t[::1] order,
                          bint grouped, Py_ssize_t n_rows, str what) except -1:
    """Blocks ``b_lo .. b_hi`` have their bounds, and every row they name (``order[s:e]``, or ``s .. e`` itself when
    the rows are grouped already) is one of the ``n_rows`` the kernel reads."""
    check_offsets(bounds, b_lo, b_hi, n_rows if grouped else order.shape[0], what + ": bounds")
    if not grouped and b_hi > b_lo:
        check_indices(order, bounds[b_lo], bounds[b_hi], n_rows, False, what + ": order")
    return 0


def duplicate_blocks(Py_ssize_t b_lo, Py_ssize_t b_hi, const int64_t[::1] bounds, const int64_t[::1] order,
                     bint grouped, const offset_t[::1] o, const uint8_t[::1] d, const double[::1] prefer,
                     bint use_prefer, uint8_t[::1] drop):
    """Marks in ``drop`` every copy but the kept one of a document repeated within a block, for blocks b_lo .. b_hi."""
    cdef Py_ssize_t b, k, n, s, e
    cdef uint64_t mask
    cdef const int64_t *rows
    check_block_rows(b_lo, b_hi, bounds, order, grouped, min(drop.shape[0], o.shape[0] - 1), "duplicate_blocks")
    if use_prefer:
        check_length(prefer.shape[0], drop.shape[0], "duplicate_blocks: prefer")
    # working space for the longest block, reused by every block (numpy's: a MemoryError, not a crash, when short)
    cdef int64_t longest = longest_block(bounds, b_lo, b_hi)
    cdef int64_t[::1] slots = np.empty(table_size(longest), np.int64), local_rows = np.empty(longest, np.int64)
    cdef uint64_t[::1] hashes = np.empty(longest, np.uint64)
    cdef double[::1] local_prefer = np.zeros(longest)
    cdef uint8_t[::1] local_drop = np.empty(longest, np.uint8)
    with nogil:
        for b in range(b_lo, b_hi):
            s, e = bounds[b], bounds[b + 1]
            n = e - s
            rows = block_rows(order, grouped, s, n, &local_rows[0])
            if use_prefer:
                for k in range(n):
                    local_prefer[k] = prefer[rows[k]]
            for k in range(n):
                local_drop[k] = False
            find_repeats(rows, n, &o[0], &d[0], d.shape[0], &local_prefer[0], use_prefer, &hashes[0], &slots[0], &mask,
                         &local_drop[0])
            for k in range(n):
                if local_drop[k]:
                    drop[rows[k]] = True


cdef inline bint before(int64_t x, int64_t y, const double *score, const double *label, const int64_t *rows,
                        const offset_t *o, const uint8_t *d, int ties) noexcept nogil:
    """Does local row x rank strictly before local row y? A total order: the row number decides last."""
    cdef double lx, ly
    cdef int c
    if score[x] != score[y]:
        return score[x] > score[y]
    if ties == TIE_OPTIMISTIC or ties == TIE_PESSIMISTIC:
        lx = -INFINITY if isnan(label[x]) else label[x]
        ly = -INFINITY if isnan(label[y]) else label[y]
        if lx != ly:
            return (lx > ly) if ties == TIE_OPTIMISTIC else (lx < ly)
    if ties != TIE_INPUT_ORDER:
        c = compare(o, d, rows[x], rows[y])  # trec_eval: document id descending (pyndeval: ascending)
        if c != 0:
            return (c < 0) if ties == TIE_DOCNO_ASCENDING else (c > 0)
    return x < y


cdef void rank(int64_t *idx, int64_t n, const double *score, const double *label, const int64_t *rows,
               const offset_t *o, const uint8_t *d, int ties, int64_t *scratch) noexcept nogil:
    """Sort local rows ``idx`` in place: insertion sort in runs of 16, then merges (linear on ranked input).

    ``scratch``: at least ``n`` int64 of working space.
    """
    cdef int64_t run = 16, lo, hi, mid, i, j, k, v, width
    cdef int64_t *src
    cdef int64_t *dst
    cdef int64_t *held
    for lo in range(0, n, 16):
        hi = min(lo + run, n)
        for i in range(lo + 1, hi):
            v = idx[i]
            j = i - 1
            while j >= lo and before(v, idx[j], score, label, rows, o, d, ties):
                idx[j + 1] = idx[j]
                j -= 1
            idx[j + 1] = v
    if n <= run:
        return
    src, dst = idx, scratch
    width = run
    while width < n:
        lo = -2 * width
        while True:
            lo += 2 * width
            if lo >= n:
                break
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            if mid >= hi or not before(src[mid], src[mid - 1], score, label, rows, o, d, ties):
                memcpy(dst + lo, src + lo, (hi - lo) * sizeof(int64_t))  # already in order
                continue
            i, j, k = lo, mid, lo
            while i < mid and j < hi:
                if before(src[j], src[i], score, label, rows, o, d, ties):
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
        held = src
        src = dst
        dst = held
        width *= 2
    if src != idx:
        memcpy(idx, src, n * sizeof(int64_t))


cdef int radix_window(uint64_t *keys, int64_t *idx, int64_t n, uint64_t *keys_tmp, int64_t *idx_tmp,
                      int64_t *counts) noexcept nogil:
    """Order ``idx`` (in place, stably) by the 24 highest bits in which ``keys`` differ; returns the window's low bit.

    Keys that agree on the window are left in their input order: the caller finishes those runs with the full
    comparison. Three passes whatever the block size, and a window that starts at the first bit that varies, so
    scores of any range spread out.
    """
    cdef uint64_t differ = 0, digit
    cdef int top = 0, low, shift
    cdef int64_t i, j, total, c
    cdef uint64_t *src_k = keys
    cdef uint64_t *dst_k = keys_tmp
    cdef uint64_t *held_k
    cdef int64_t *src_i = idx
    cdef int64_t *dst_i = idx_tmp
    cdef int64_t *held_i
    for i in range(n):
        differ |= keys[i] ^ keys[0]
    while top < 64 and (differ >> top) != 0:
        top += 1
    low = max(0, top - RADIX_BITS)
    for shift in range(low, max(low, top), 8):
        for i in range(256):
            counts[i] = 0
        for i in range(n):
            counts[(src_k[i] >> shift) & 255] += 1
        total = 0
        for i in range(256):
            c = counts[i]
            counts[i] = total
            total += c
        for i in range(n):
            digit = (src_k[i] >> shift) & 255
            j = counts[digit]
            dst_k[j] = src_k[i]
            dst_i[j] = src_i[i]
            counts[digit] = j + 1
        held_k = src_k
        src_k = dst_k
        dst_k = held_k
        held_i = src_i
        src_i = dst_i
        dst_i = held_i
    if src_i != idx:
        memcpy(idx, src_i, n * sizeof(int64_t))
        memcpy(keys, src_k, n * sizeof(uint64_t))
    return low


cdef inline uint64_t descending_key(uint64_t bits) noexcept nogil:
    """From a float's bits (-0.0 given as 0.0), a uint64 that sorts ascending as the float sorts descending."""
    cdef uint64_t top = (<uint64_t>1) << 63
    cdef uint64_t ascending = ~bits if bits & top else bits | top
    return ~ascending


def rank_blocks(Py_ssize_t b_lo, Py_ssize_t b_hi, const int64_t[::1] bounds, const int64_t[::1] order, bint grouped,
                const int64_t[::1] judged, const uint8_t[::1] active, const offset_t[::1] ro, const uint8_t[::1] rd,
                const double[::1] run_score, const int64_t[::1] j_bounds, const int64_t[::1] j_rows,
                const uint64_t[::1] j_hashes, const other_offset_t[::1] qo, const uint8_t[::1] qd,
                const double[::1] q_labels, int keep, int ties, bint single, int64_t depth, const int64_t[::1] start,
                out_row_t[::1] out_rows, double[::1] out_labels, int64_t[::1] kept, int64_t[::1] dropped,
                int64_t[::1] beyond, int64_t[::1] first_dropped):
    """Label, deduplicate, rank and cut blocks b_lo .. b_hi, each written at ``start[b]`` of the outputs.

    ``single``: scores are ranked as C floats, as trec_eval stores them (two doubles one float apart tie)."""
    cdef Py_ssize_t b, k, p, i, m, t, t_end, take, to
    cdef int64_t longest, s, e, n, n_dropped, j, slot_row
    cdef uint64_t mask, h, slot, low, bits
    cdef bint in_order
    cdef const int64_t *rows
    cdef int64_t *local_rows
    cdef uint64_t *hashes
    cdef double *score
    cdef double *label
    cdef uint8_t *drop
    cdef int64_t *idx
    cdef int64_t *scratch
    cdef uint64_t *keys
    cdef uint64_t *keys_tmp
    cdef int64_t *counts
    cdef int64_t *slots
    check_block_rows(b_lo, b_hi, bounds, order, grouped, min(run_score.shape[0], ro.shape[0] - 1), "rank_blocks")
    for name, length in (("judged", judged.shape[0]), ("active", active.shape[0]), ("start", start.shape[0]),
                         ("kept", kept.shape[0]), ("dropped", dropped.shape[0]), ("beyond", beyond.shape[0]),
                         ("first_dropped", first_dropped.shape[0])):
        check_length(length, b_hi, "rank_blocks: " + name)
    check_indices(judged, b_lo, b_hi, j_bounds.shape[0] - 1, True, "rank_blocks: judged")
    check_all_offsets(j_bounds, j_rows.shape[0], "rank_blocks: j_bounds")
    check_indices(j_rows, 0, j_rows.shape[0], min(q_labels.shape[0], qo.shape[0] - 1), False, "rank_blocks: j_rows")
    check_length(j_hashes.shape[0], j_rows.shape[0], "rank_blocks: j_hashes")
    check_length(out_labels.shape[0], out_rows.shape[0], "rank_blocks: out_labels")
    for b in range(b_lo, b_hi):  # each active block's place in the outputs holds its rows, down to depth
        n = bounds[b + 1] - bounds[b]
        if active[b] and (start[b] < 0 or start[b] + (n if depth < 0 else min(n, depth)) > out_rows.shape[0]):
            raise ValueError(f"rank_blocks: block {b}'s {n} rows at {start[b]} of {out_rows.shape[0]} outputs")
    # working space for the longest block, reused by every block (numpy's: a MemoryError, not a crash, when short)
    longest = longest_block(bounds, b_lo, b_hi)
    cdef int64_t[::1] int64_space = np.empty(3 * longest + 256 + table_size(longest), np.int64)
    cdef uint64_t[::1] uint64_space = np.empty(3 * longest, np.uint64)
    cdef double[::1] double_space = np.empty(2 * longest)
    cdef uint8_t[::1] byte_space = np.empty(longest, np.uint8)
    local_rows, idx, scratch = &int64_space[0], &int64_space[longest], &int64_space[2 * longest]
    counts, slots = &int64_space[3 * longest], &int64_space[3 * longest + 256]
    hashes, keys, keys_tmp = &uint64_space[0], &uint64_space[longest], &uint64_space[2 * longest]
    score, label, drop = &double_space[0], &double_space[longest], &byte_space[0]
    with nogil:
        for b in range(b_lo, b_hi):
            if not active[b]:
                continue
            s, e = bounds[b], bounds[b + 1]
            n = e - s
            rows = block_rows(order, grouped, s, n, local_rows)
            for k in range(n):
                label[k] = NAN
                drop[k] = False
                if single:
                    score[k] = (<double>(<float>run_score[rows[k]])) + 0.0  # -0.0 becomes 0.0: equal scores, equal bits
                else:
                    score[k] = run_score[rows[k]] + 0.0

            # one open-addressing table of the block's documents: finds repeats, then serves the join
            n_dropped = find_repeats(rows, n, &ro[0], &rd[0], rd.shape[0], score, keep == KEEP_MAX, hashes, slots, &mask, drop)
            j = judged[b]
            if j >= 0:
                for p in range(j_bounds[j], j_bounds[j + 1]):
                    h = j_hashes[p]
                    slot = h & mask
                    while slots[slot] >= 0:
                        slot_row = slots[slot]
                        if hashes[slot_row] == h and same(&ro[0], &rd[0], rows[slot_row], &qo[0], &qd[0], j_rows[p]):
                            label[slot_row] = q_labels[j_rows[p]]
                            break
                        slot = (slot + 1) & mask

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
                if before(idx[i], idx[i - 1], score, label, rows, &ro[0], &rd[0], ties):
                    in_order = False
                    break
            if in_order:
                pass
            elif m > 32:  # a radix sort on the score's leading bits, then each run they leave equal by the full rule
                for i in range(m):
                    memcpy(&bits, &score[idx[i]], sizeof(uint64_t))
                    keys[i] = descending_key(bits)
                low = <uint64_t>radix_window(keys, idx, m, keys_tmp, scratch, counts)
                t = 0
                while t < m:
                    t_end = t + 1
                    while t_end < m and (keys[t_end] >> low) == (keys[t] >> low):
                        t_end += 1
                    if t_end - t > 1:
                        rank(idx + t, t_end - t, score, label, rows, &ro[0], &rd[0], ties, scratch)
                    t = t_end
            else:
                rank(idx, m, score, label, rows, &ro[0], &rd[0], ties, scratch)
            take = m if depth < 0 else min(m, depth)
            to = start[b]
            for i in range(take):
                out_rows[to + i] = <out_row_t>rows[idx[i]]
                out_labels[to + i] = label[idx[i]]
            kept[b] = take
            dropped[b] = n_dropped
            beyond[b] = m - take


def string_table(const offset_t[::1] offsets, const uint8_t[::1] data):
    """An open-addressing table of distinct strings 0 .. n - 1 (each slot: a string's index, -1 empty), found by
    their 64-bit hash, for :func:`find_strings`."""
    cdef Py_ssize_t n = offsets.shape[0] - 1, i
    cdef int64_t size = table_size(n)
    cdef uint64_t mask = <uint64_t>(size - 1), slot
    table_array = np.full(size, -1, dtype=np.int64)
    cdef int64_t[::1] table = table_array
    if n <= 0:
        return table_array
    with nogil:
        for i in range(n):
            slot = hash_of(&offsets[0], &data[0], i, data.shape[0]) & mask
            while table[slot] >= 0:
                slot = (slot + 1) & mask
            table[slot] = i
    return table_array


def first_repeat(const offset_t[::1] offsets, const uint8_t[::1] data):
    """The first string equal to an earlier one, or -1 when all are distinct: one open-addressing table of them, by
    their 64-bit hash, each candidate confirmed on the bytes (200,000 query ids: a few milliseconds)."""
    cdef Py_ssize_t n = offsets.shape[0] - 1, i
    cdef int64_t size = table_size(n), found = -1
    cdef uint64_t mask = <uint64_t>(size - 1), slot
    if n <= 1:
        return -1
    table_array = np.full(size, -1, dtype=np.int64)
    cdef int64_t[::1] table = table_array
    with nogil:
        for i in range(n):
            slot = hash_of(&offsets[0], &data[0], i, data.shape[0]) & mask
            while table[slot] >= 0 and not same(&offsets[0], &data[0], table[slot], &offsets[0], &data[0], i):
                slot = (slot + 1) & mask
            if table[slot] >= 0:
                found = i
                break
            table[slot] = i
    return found


def find_strings(const offset_t[::1] offsets, const uint8_t[::1] data, const out_row_t[::1] rows,
                 const other_offset_t[::1] t_offsets, const uint8_t[::1] t_data, const int64_t[::1] table,
                 int64_t[::1] out, Py_ssize_t lo, Py_ssize_t hi):
    """``out[i]`` for ``lo <= i < hi``: where string ``rows[i]`` of the column (string ``i`` when ``rows`` is empty)
    is among the table's strings (:func:`string_table`), -1 when it is not; each candidate the hash finds is
    confirmed on the bytes. Reads the strings in place: nothing is taken or copied."""
    cdef Py_ssize_t i
    cdef int64_t r, found
    cdef bint gathered = rows.shape[0] > 0
    cdef uint64_t mask = <uint64_t>(table.shape[0] - 1), slot
    cdef const uint8_t *tdata = &t_data[0] if t_data.shape[0] > 0 else NULL
    cdef const uint8_t *cdata = &data[0] if data.shape[0] > 0 else NULL
    check_length(out.shape[0], hi, "find_strings: out")
    if gathered:
        check_indices(rows, lo, hi, offsets.shape[0] - 1, False, "find_strings: rows")
    elif hi > offsets.shape[0] - 1:
        raise ValueError(f"find_strings: strings {lo}..{hi} of {offsets.shape[0] - 1}")
    check_indices(table, 0, table.shape[0], t_offsets.shape[0] - 1, True, "find_strings: table")
    if table.shape[0] < 1 or table.shape[0] & (table.shape[0] - 1):
        raise ValueError(f"find_strings: a table of {table.shape[0]} slots (a power of two)")
    with nogil:
        for i in range(lo, hi):
            r = rows[i] if gathered else i
            slot = hash_of(&offsets[0], cdata, r, data.shape[0]) & mask
            found = -1
            while table[slot] >= 0:
                if same(&offsets[0], cdata, r, &t_offsets[0], tdata, table[slot]):
                    found = table[slot]
                    break
                slot = (slot + 1) & mask
            out[i] = found
