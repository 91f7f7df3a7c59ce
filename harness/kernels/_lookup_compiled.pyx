# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Membership in per-user sorted lists (Cython, built ahead of time): is item ``value[i]`` among user ``owner[i]``'s?

One binary search in that user's few entries instead of one over every (user, item) key: the
lookups of 2M judged pairs among 4M training pairs take 0.02 s, not 0.45 s.
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
