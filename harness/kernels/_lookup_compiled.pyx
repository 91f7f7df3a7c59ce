# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Per-user lookups and counts of the fairness kernels (Cython, built ahead of time).

``in_sorted_lists``: is item ``value[i]`` among user ``owner[i]``'s? One binary search in that
user's few entries instead of one over every (user, item) key: the lookups of 2M judged pairs
among 4M training pairs take 0.02 s, not 0.45 s. ``group_cells``: the (user, item group) counts
of REO and RSP in one pass, without the gathered, masked and flattened copies numpy needs.
"""

import numpy as np

from libc.stdint cimport int64_t, uint8_t


def in_sorted_lists(const int64_t[::1] owner, const int64_t[::1] value, const int64_t[::1] offsets,
                    const int64_t[::1] lists):
    """uint8 per i: 1 when ``value[i]`` is in ``lists[offsets[owner[i]]:offsets[owner[i] + 1]]`` (sorted ascending)."""
    cdef Py_ssize_t n = owner.shape[0], i
    cdef int64_t lo, hi, mid, want
    out = np.zeros(n, dtype=np.uint8)
    cdef uint8_t[::1] found = out
    with nogil:
        for i in range(n):
            lo = offsets[owner[i]]
            hi = offsets[owner[i] + 1]
            want = value[i]
            while lo < hi:
                mid = lo + (hi - lo) // 2
                if lists[mid] < want:
                    lo = mid + 1
                else:
                    hi = mid
            found[i] = lo < offsets[owner[i] + 1] and lists[lo] == want
    return out


def group_cells(const int64_t[::1] owner, const int64_t[::1] code, const int64_t[::1] group, const uint8_t[::1] keep,
                Py_ssize_t n_owners, Py_ssize_t n_groups):
    """(owners x groups) float64: how many rows i (``keep[i]``, every row when ``keep`` is empty) of each owner fall in
    each group ``group[code[i]]``; rows whose code is negative or whose group is negative count nowhere. Whole numbers:
    the same values however they are summed."""
    cdef Py_ssize_t n = owner.shape[0], i
    cdef int64_t g
    cdef bint every = keep.shape[0] == 0
    out = np.zeros((n_owners, n_groups), dtype=np.float64)
    cdef double[:, ::1] cells = out
    with nogil:
        for i in range(n):
            if (every or keep[i]) and code[i] >= 0:
                g = group[code[i]]
                if g >= 0:
                    cells[owner[i], g] += 1.0
    return out
