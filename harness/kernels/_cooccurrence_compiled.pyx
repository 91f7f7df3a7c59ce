# cython: language_level=3, cdivision=True
"""The compiled kernels behind :mod:`harness.kernels._cooccurrence` (Cython, built ahead of time).

Each kernel walks items ``c_lo .. c_hi`` (or users ``q_lo .. q_hi``) without the GIL and writes
only the output rows those own, so threads split the work; every sum runs in an order fixed
by its own user's rows.

The loops run without bounds checks. The Python functions of :mod:`harness.kernels._cooccurrence` check every row
range, code and CSR index once per call; each kernel here checks the ranges and lengths of its own call.
"""

import numpy as np

from libc.stdint cimport int32_t, int64_t

from harness.kernels._checks cimport check_length

cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define HARNESS_PREFETCH(address) __builtin_prefetch((address), 0, 3)
    #else
    #define HARNESS_PREFETCH(address) ((void)(address))
    #endif
    """
    void HARNESS_PREFETCH(const void *address) noexcept nogil

ctypedef fused code_t:
    int32_t
    int64_t

ctypedef fused index_t:
    int32_t
    int64_t

cdef int64_t MASK32 = 0xFFFFFFFF  # the low half of a placed row: its rank in its list
cdef Py_ssize_t PREFETCH_AHEAD = 8  # list rows are scattered in memory: start fetching the 8th next one


cdef inline void prefetch_range(const char *base, Py_ssize_t itemsize, Py_ssize_t lo, Py_ssize_t hi) noexcept nogil:
    """A prefetch hint for every cache line of base[lo:hi] (no effect on any value)."""
    cdef Py_ssize_t step = max(1, 64 // itemsize), i = lo
    while i < hi:
        HARNESS_PREFETCH(base + i * itemsize)
        i += step


def rows_by_code(const code_t[::1] codes, const int64_t[::1] starts, const int64_t[::1] ends, Py_ssize_t n_known):
    """(by_code, placed): the listed rows grouped by item (counting sort, rows ascending within an item), each
    entry ``row << 32 | (row - its list's first row)``: one 8-byte write per row where a row and a first row
    were two (rows below 2^31, so the packing is exact).

    Cold codes (>= n_known) are left out: they pair with nothing.
    """
    cdef Py_ssize_t q, r, c
    check_length(ends.shape[0], starts.shape[0], "rows_by_code: ends")
    for q in range(starts.shape[0]):
        if starts[q] < 0 or ends[q] < starts[q] or ends[q] > codes.shape[0]:
            raise ValueError(f"rows_by_code: list {q}'s rows {starts[q]}..{ends[q]} are not within {codes.shape[0]}")
    by_code_array = np.zeros(n_known + 1, np.int64)
    cdef int64_t[::1] by_code = by_code_array
    with nogil:
        for q in range(ends.shape[0]):
            for r in range(starts[q], ends[q]):
                if codes[r] < n_known:
                    by_code[codes[r] + 1] += 1
        for c in range(n_known):
            by_code[c + 1] += by_code[c]
    placed_array = np.empty(by_code[n_known], np.int64)
    fill_array = by_code_array[:n_known].copy()
    cdef int64_t[::1] placed = placed_array, fill = fill_array
    cdef int64_t start
    with nogil:
        for q in range(ends.shape[0]):
            start = starts[q]
            for r in range(start, ends[q]):
                c = codes[r]
                if c < n_known:
                    placed[fill[c]] = (<int64_t>r << 32) | (r - start)
                    fill[c] += 1
    return by_code_array, placed_array


cdef Py_ssize_t cooccurrence_row(Py_ssize_t c, const index_t[::1] iu_ptr, const index_t[::1] iu_idx,
                                 const index_t[::1] ui_ptr, const index_t[::1] ui_idx, int32_t[::1] count,
                                 int64_t[::1] touched) noexcept nogil:
    """count[j] += |U_c & U_j| for every j; the distinct j into ``touched``; returns how many."""
    cdef Py_ssize_t n = 0, a, b, end = iu_ptr[c + 1], ahead, j, user
    for a in range(iu_ptr[c], end):
        if a + PREFETCH_AHEAD < end:  # each user's items are elsewhere in memory
            ahead = iu_idx[a + PREFETCH_AHEAD]
            prefetch_range(<const char *>&ui_idx[0], sizeof(index_t), ui_ptr[ahead], ui_ptr[ahead + 1])
        user = iu_idx[a]
        for b in range(ui_ptr[user], ui_ptr[user + 1]):
            j = ui_idx[b]
            if count[j] == 0:
                touched[n] = j
                n += 1
            count[j] += 1
    return n


def earlier_pairs(const code_t[::1] codes, const int64_t[::1] by_code, const int64_t[::1] placed,
                  Py_ssize_t c_lo, Py_ssize_t c_hi, const double[::1] scale,
                  const index_t[::1] iu_ptr, const index_t[::1] iu_idx, const index_t[::1] ui_ptr,
                  const index_t[::1] ui_idx, double[::1] out):
    """out[r] for the listed rows of items c_lo .. c_hi: sim(code[r], each earlier row of its list), summed."""
    cdef Py_ssize_t n_known = by_code.shape[0] - 1
    if c_lo < 0 or c_hi < c_lo or c_hi > n_known:
        raise ValueError(f"earlier_pairs: items {c_lo}..{c_hi} of {n_known}")
    check_length(iu_ptr.shape[0], n_known + 1, "earlier_pairs: iu_ptr")
    check_length(scale.shape[0], n_known, "earlier_pairs: scale")
    check_length(out.shape[0], codes.shape[0], "earlier_pairs: out")
    if n_known > 0 and (by_code[0] < 0 or by_code[n_known] > placed.shape[0]):
        raise ValueError(f"earlier_pairs: by_code spans {by_code[0]}..{by_code[n_known]} of {placed.shape[0]} placed rows")
    cdef int32_t[::1] count = np.zeros(n_known, np.int32)
    cdef double[::1] scaled = np.zeros(n_known + 1)  # |U_c & U_j| / sqrt(|U_j|); the last cell: every cold item, 0
    cdef int64_t[::1] touched = np.empty(max(n_known, 1), np.int64)
    cdef Py_ssize_t c, lo, hi, n, x, j, e, r, code
    cdef int64_t row
    cdef double total
    with nogil:
        for c in range(c_lo, c_hi):
            lo, hi = by_code[c], by_code[c + 1]
            if lo == hi or iu_ptr[c] == iu_ptr[c + 1]:
                continue
            n = cooccurrence_row(c, iu_ptr, iu_idx, ui_ptr, ui_idx, count, touched)
            for x in range(n):
                j = touched[x]
                scaled[j] = count[j] * scale[j]
            for e in range(lo, hi):
                if e + PREFETCH_AHEAD < hi:  # the lists are scattered: fetch a later row's list while this one sums
                    row = placed[e + PREFETCH_AHEAD] >> 32
                    prefetch_range(<const char *>&codes[0], sizeof(code_t), row - (placed[e + PREFETCH_AHEAD] & MASK32),
                                   row)
                row = placed[e] >> 32
                total = 0.0
                for r in range(row - (placed[e] & MASK32), row):
                    code = codes[r]
                    total += scaled[min(code, n_known)]
                out[row] = total * scale[c]
            for x in range(n):
                j = touched[x]
                count[j] = 0
                scaled[j] = 0.0


def history_pairs(const code_t[::1] codes, const int64_t[::1] starts, const int64_t[::1] ends,
                  const int64_t[::1] h_off, const int64_t[::1] h_codes, Py_ssize_t q_lo, Py_ssize_t q_hi,
                  Py_ssize_t n_known, const double[::1] scale, const index_t[::1] iu_ptr, const index_t[::1] iu_idx,
                  const index_t[::1] ui_ptr, const index_t[::1] ui_idx, double[::1] out):
    """out[r] for the listed rows of users q_lo .. q_hi: sim(code[r], each training item of the user), summed."""
    if q_lo < 0 or q_hi < q_lo or q_hi > starts.shape[0] or ends.shape[0] != starts.shape[0]:
        raise ValueError(f"history_pairs: users {q_lo}..{q_hi} of {starts.shape[0]} (and {ends.shape[0]} ends)")
    check_length(h_off.shape[0], q_hi + 1, "history_pairs: h_off")
    check_length(iu_ptr.shape[0], n_known + 1, "history_pairs: iu_ptr")
    check_length(scale.shape[0], n_known, "history_pairs: scale")
    check_length(out.shape[0], codes.shape[0], "history_pairs: out")
    # users q_lo..q_hi grouped by training item (counting sort): each item's row is built once for all of them
    cdef int64_t[::1] by_item = np.zeros(n_known + 1, np.int64)
    cdef Py_ssize_t a, c, q, h, lo, hi, n, e, r, x, code
    cdef double scale_h
    with nogil:
        for a in range(h_off[q_lo], h_off[q_hi]):
            by_item[h_codes[a] + 1] += 1
        for c in range(n_known):
            by_item[c + 1] += by_item[c]
    cdef int64_t[::1] row_lo = np.empty(by_item[n_known], np.int64)  # each (item, user): the user's listed rows
    cdef int64_t[::1] row_hi = np.empty(by_item[n_known], np.int64)
    cdef int64_t[::1] fill = np.asarray(by_item[:n_known]).copy()
    cdef int32_t[::1] count = np.zeros(n_known + 1, np.int32)  # the last cell stands for every cold item: 0
    cdef int64_t[::1] touched = np.empty(max(n_known, 1), np.int64)
    with nogil:
        for q in range(q_lo, q_hi):
            for a in range(h_off[q], h_off[q + 1]):
                row_lo[fill[h_codes[a]]] = starts[q]
                row_hi[fill[h_codes[a]]] = ends[q]
                fill[h_codes[a]] += 1
        # each row's sum runs over its user's training items in item order: fixed by that user's rows alone
        for h in range(n_known):
            lo, hi = by_item[h], by_item[h + 1]
            if lo == hi or iu_ptr[h] == iu_ptr[h + 1]:
                continue
            n = cooccurrence_row(h, iu_ptr, iu_idx, ui_ptr, ui_idx, count, touched)
            scale_h = scale[h]
            for e in range(lo, hi):
                if e + PREFETCH_AHEAD < hi:
                    prefetch_range(<const char *>&codes[0], sizeof(code_t), row_lo[e + PREFETCH_AHEAD],
                                   row_hi[e + PREFETCH_AHEAD])
                    prefetch_range(<const char *>&out[0], sizeof(double), row_lo[e + PREFETCH_AHEAD],
                                   row_hi[e + PREFETCH_AHEAD])
                for r in range(row_lo[e], row_hi[e]):
                    code = codes[r]
                    out[r] += count[min(code, n_known)] * scale_h
            for x in range(n):
                count[touched[x]] = 0
        for q in range(q_lo, q_hi):
            for r in range(starts[q], ends[q]):
                code = codes[r]
                out[r] = out[r] * scale[code] if code < n_known else 0.0
