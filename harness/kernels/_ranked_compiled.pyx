# cython: language_level=3, cdivision=True
"""Per-query passes of the accuracy measures over the ranked lists (Cython, built ahead of time).

Query s's rows are ``offsets[s]:offsets[s + 1]``, best first. Each kernel writes ``out[s]`` for the
queries ``lo .. hi`` only and reads nothing of the others, so threads over ranges of queries give
the bits of one pass. Each adds what the numpy it replaced added (a relevant-row column, a head's
gathered labels, an owner index and a weighted ``np.bincount``), in the same order, from 0.0, without
building those columns: at 20M rows each was 20-160 MB of fresh memory, and the measures of a
200,000-user run took 0.36 s where these take a few hundredths.

A row is relevant when its label is at least the level; a NaN label (not judged) never is.

Bounds checks are off inside the loops (for speed); each kernel checks at its boundary, once, that the arrays it is
given hold every row and output its loops touch (:func:`check_spans`), and raises ValueError otherwise: a too-short
array is an error, never a number read from memory it does not own.
"""

from libc.stdint cimport int64_t

from harness.kernels._checks cimport check_length, check_offsets

cdef extern from *:
    """
    #ifdef HARNESS_KERNEL_CHECKS
    #define HARNESS_BOUNDS_CHECKED 1
    #else
    #define HARNESS_BOUNDS_CHECKED 0
    #endif
    """
    const int HARNESS_BOUNDS_CHECKED

# whether this build checks every array access (HARNESS_KERNEL_CHECKS=1 at build time: setup.py), as the kernel tests
# run under make kernel-checks; an ordinary build checks at each kernel's boundary only
BOUNDS_CHECKED = bool(HARNESS_BOUNDS_CHECKED)


cdef int check_spans(const int64_t[::1] offsets, Py_ssize_t rows, Py_ssize_t written, Py_ssize_t lo,
                     Py_ssize_t hi) except -1:
    """Queries ``lo .. hi`` have their offsets, their rows lie in ``0 .. rows`` in order, and ``written`` outputs
    hold ``out[s]`` for each."""
    check_offsets(offsets, lo, hi, rows, "queries")
    check_length(written, hi, "out")
    return 0


cdef int check_heads(const int64_t[::1] offsets, const int64_t[::1] head_offsets, Py_ssize_t written, Py_ssize_t lo,
                     Py_ssize_t hi) except -1:
    """Each query's head is no longer than the query, and ``written`` outputs hold every head."""
    cdef Py_ssize_t s
    if head_offsets.shape[0] < hi + 1 or (hi > lo and (head_offsets[lo] < 0 or head_offsets[hi] > written)):
        raise ValueError(f"queries {lo}..{hi}: the heads' offsets or outputs are too short")
    for s in range(lo, hi):
        if head_offsets[s + 1] < head_offsets[s] or head_offsets[s + 1] - head_offsets[s] > offsets[s + 1] - offsets[s]:
            raise ValueError(f"query {s}'s head is longer than the query, or its offsets decrease")
    return 0


cdef inline Py_ssize_t head_end(const int64_t[::1] offsets, Py_ssize_t s, int64_t k) noexcept nogil:
    """The end of query s's first k rows (of all of them when k < 0)."""
    if 0 <= k < offsets[s + 1] - offsets[s]:
        return offsets[s] + k
    return offsets[s + 1]


def precision_sums(const int64_t[::1] offsets, const double[::1] label, double level, int64_t k, double[::1] out,
                   Py_ssize_t lo, Py_ssize_t hi):
    """AP's numerator of queries ``lo .. hi``: over each query's relevant rows at rank <= k (every rank when k < 0),
    the row's ordinal among them over its rank (both as float64), added from 0.0 in rank order."""
    cdef Py_ssize_t s, i
    cdef int64_t found
    cdef double total
    check_spans(offsets, label.shape[0], out.shape[0], lo, hi)
    with nogil:
        for s in range(lo, hi):
            total = 0.0
            found = 0
            for i in range(offsets[s], head_end(offsets, s, k)):
                if label[i] >= level:
                    found += 1
                    total += <double>found / <double>(i - offsets[s] + 1)
            out[s] = total


def first_hits(const int64_t[::1] offsets, const double[::1] label, double level, int64_t[::1] out, Py_ssize_t lo,
               Py_ssize_t hi):
    """The 1-based rank of each query's first relevant row (0 when it has none), for queries ``lo .. hi``: each query's
    rows are read only down to that row."""
    cdef Py_ssize_t s, i
    check_spans(offsets, label.shape[0], out.shape[0], lo, hi)
    with nogil:
        for s in range(lo, hi):
            out[s] = 0
            for i in range(offsets[s], offsets[s + 1]):
                if label[i] >= level:
                    out[s] = i - offsets[s] + 1
                    break


def head_counts(const int64_t[::1] offsets, const double[::1] label, double level, int64_t k, double[::1] out,
                Py_ssize_t lo, Py_ssize_t hi):
    """How many of each query's first k rows (every row when k < 0) are relevant, as float64 (whole numbers: exact),
    for queries ``lo .. hi``."""
    cdef Py_ssize_t s, i
    cdef int64_t total
    check_spans(offsets, label.shape[0], out.shape[0], lo, hi)
    with nogil:
        for s in range(lo, hi):
            total = 0
            for i in range(offsets[s], head_end(offsets, s, k)):
                total += label[i] >= level
            out[s] = <double>total


def rank_weighted_sums(const int64_t[::1] offsets, const double[::1] values, const double[::1] per_rank,
                       double[::1] out, Py_ssize_t lo, Py_ssize_t hi):
    """For queries ``lo .. hi``: ``values[i] * per_rank[i - offsets[s]]`` over each query's rows, added from 0.0 in
    rank order (DCG: each gain times its rank's discount). ``per_rank`` holds at least the longest query's ranks."""
    cdef Py_ssize_t s, i
    cdef double total
    check_spans(offsets, values.shape[0], out.shape[0], lo, hi)
    for s in range(lo, hi):
        if offsets[s + 1] - offsets[s] > per_rank.shape[0]:
            raise ValueError(f"query {s} has {offsets[s + 1] - offsets[s]} rows, and per_rank holds {per_rank.shape[0]}")
    with nogil:
        for s in range(lo, hi):
            total = 0.0
            for i in range(offsets[s], offsets[s + 1]):
                total += values[i] * per_rank[i - offsets[s]]
            out[s] = total


def head_rows(const int64_t[::1] offsets, const int64_t[::1] head_offsets, int64_t[::1] rows, Py_ssize_t lo,
              Py_ssize_t hi):
    """For queries ``lo .. hi``: the rows of each one's first ``head_offsets[s + 1] - head_offsets[s]``, written from
    ``head_offsets[s]``."""
    cdef Py_ssize_t s, j
    check_spans(offsets, offsets[hi] if offsets.shape[0] > hi else 0, hi, lo, hi)
    check_heads(offsets, head_offsets, rows.shape[0], lo, hi)
    with nogil:
        for s in range(lo, hi):
            for j in range(head_offsets[s + 1] - head_offsets[s]):
                rows[head_offsets[s] + j] = offsets[s] + j


def head_take(const int64_t[::1] offsets, const double[::1] values, const int64_t[::1] head_offsets, double[::1] out,
              Py_ssize_t lo, Py_ssize_t hi):
    """For queries ``lo .. hi``: the values of each one's first ``head_offsets[s + 1] - head_offsets[s]`` rows, written
    from ``head_offsets[s]`` (``values[head_rows]`` without the rows)."""
    cdef Py_ssize_t s, j
    check_spans(offsets, values.shape[0], hi, lo, hi)
    check_heads(offsets, head_offsets, out.shape[0], lo, hi)
    with nogil:
        for s in range(lo, hi):
            for j in range(head_offsets[s + 1] - head_offsets[s]):
                out[head_offsets[s] + j] = values[offsets[s] + j]
