# cython: language_level=3
# The checks a compiled kernel makes at its boundary, once per call. The kernels' loops run without bounds checks
# (for speed), so what they index is checked here, before the loop: a too-short array or an index out of range is a
# ValueError naming the argument, never a number read from (or written to) memory the array does not own.

from libc.stdint cimport int32_t, int64_t

ctypedef fused index_t:
    int32_t
    int64_t


cdef inline int check_offsets(const int64_t[::1] offsets, Py_ssize_t lo, Py_ssize_t hi, Py_ssize_t rows,
                              str what) except -1:
    """Segments ``lo .. hi`` of ``offsets`` exist, and their rows lie in ``0 .. rows``, in order."""
    cdef Py_ssize_t s
    if lo < 0 or hi < lo or (hi > lo and offsets.shape[0] < hi + 1):
        raise ValueError(f"{what}: segments {lo}..{hi} need {hi + 1} offsets, got {offsets.shape[0]}")
    if hi > lo and (offsets[lo] < 0 or offsets[hi] > rows):
        raise ValueError(f"{what}: segments {lo}..{hi} span rows {offsets[lo]}..{offsets[hi]} of {rows}")
    for s in range(lo, hi):
        if offsets[s + 1] < offsets[s]:
            raise ValueError(f"{what}: the offsets decrease at segment {s}: {offsets[s]} then {offsets[s + 1]}")
    return 0


cdef inline int check_all_offsets(const int64_t[::1] offsets, Py_ssize_t rows, str what) except -1:
    """Every segment of ``offsets`` (none when it holds fewer than 2) lies in ``0 .. rows``, in order."""
    return check_offsets(offsets, 0, max(offsets.shape[0] - 1, 0), rows, what)


cdef inline int check_indices(const index_t[::1] index, Py_ssize_t start, Py_ssize_t stop, int64_t bound,
                              bint negatives_skipped, str what) except -1:
    """``index[start:stop]`` exist and each is below ``bound`` and not negative (a negative one allowed where the
    kernel skips it: ``negatives_skipped``)."""
    cdef Py_ssize_t i, bad = -1
    cdef int64_t value
    if start < 0 or stop < start or stop > index.shape[0]:
        raise ValueError(f"{what}: rows {start}..{stop} of an array of {index.shape[0]}")
    with nogil:
        for i in range(start, stop):
            value = index[i]
            if value >= bound or (value < 0 and not negatives_skipped):
                bad = i
                break
    if bad >= 0:
        raise ValueError(f"{what}: {index[bad]} at row {bad} is out of 0..{bound - 1}")
    return 0


cdef inline int check_length(Py_ssize_t length, Py_ssize_t needed, str what) except -1:
    """An array of ``length`` holds the ``needed`` entries a kernel reads or writes."""
    if length < needed:
        raise ValueError(f"{what}: {length} entries, and the kernel needs {needed}")
    return 0
