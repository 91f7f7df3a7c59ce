# cython: language_level=3, cdivision=True
"""Per-user lookups and counts of the fairness kernels (Cython, built ahead of time).

``in_sorted_lists``: is item ``value[i]`` among user ``owner[i]``'s? One binary search in that
user's few entries instead of one over every (user, item) key: the lookups of 2M judged pairs
among 4M training pairs take 0.02 s, not 0.45 s. ``segment_group_cells``: the (user, item group)
counts of REO and RSP in one pass, without the gathered, masked and flattened copies numpy needs.
``largest_sums``: each user's k largest values, summed largest first (PSP's and PSnDCG's ideal),
by one small sort per user instead of one sort of every judgment. ``segment_sums``: each user's rows summed in order
(the beyond-accuracy measures' per-user sums), one sequential pass; ``cut_sums``: the same over a value gathered
per item, weighted per rank and masked by relevance, without building that column.

Each kernel checks what its loops index at its boundary, once per call (:mod:`harness.kernels._checks`): a
too-short array or an index out of range is a ValueError, never a read past an array.

>>> import numpy as np
>>> segment_sums(np.array([0, 2, 3]), np.array([0.5, 0.25, 1.0])).tolist()
[0.75, 1.0]
>>> segment_sums(np.array([0, 4]), np.array([0.5, 0.25, 1.0]))
Traceback (most recent call last):
ValueError: segment_sums: segments 0..1 span rows 0..4 of 3
"""

import numpy as np

from libc.stdint cimport int32_t, int64_t, uint8_t
from libc.stdlib cimport qsort

from harness.kernels._checks cimport check_all_offsets, check_indices, check_length, check_offsets


cdef int _descending(const void* a, const void* b) noexcept nogil:
    cdef double x = (<const double*>a)[0], y = (<const double*>b)[0]
    return (x < y) - (x > y)


def in_sorted_lists(const int64_t[::1] owner, const int64_t[::1] value, const int64_t[::1] offsets,
                    const int64_t[::1] lists):
    """uint8 per i: 1 when ``value[i]`` is in ``lists[offsets[owner[i]]:offsets[owner[i] + 1]]`` (sorted ascending)."""
    cdef Py_ssize_t n = owner.shape[0], i
    cdef int64_t lo, hi, mid, want
    check_all_offsets(offsets, lists.shape[0], "in_sorted_lists: offsets")
    check_length(value.shape[0], n, "in_sorted_lists: value")
    check_indices(owner, 0, n, max(offsets.shape[0] - 1, 0), False, "in_sorted_lists: owner")
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


def largest_sums(const int64_t[::1] offsets, const double[::1] values, const uint8_t[::1] keep, Py_ssize_t k,
                 const double[::1] per_rank, double[::1] out, Py_ssize_t lo, Py_ssize_t hi):
    """``out[s]`` for segments ``lo .. hi``: its kept values (``keep[i]``, every one when ``keep`` is empty), largest
    first, the first k of them summed from 0.0 in that order, each times ``per_rank[j]`` at 0-based place j (unweighted
    when ``per_rank`` is empty). Equal values are interchangeable, so the sum is the same however the sort orders them:
    for k up to 32, or a segment of up to 32 rows, the k largest are kept in order as the values pass (a cutoff's
    ideal; an insertion sort when k is larger than the segment), else the kept values are sorted by ``qsort``."""
    cdef Py_ssize_t s, i, j, m, longest = 0
    cdef bint every = keep.shape[0] == 0, weighted = per_rank.shape[0] > 0
    cdef double total, v
    check_offsets(offsets, lo, hi, values.shape[0], "largest_sums: offsets")
    check_length(out.shape[0], hi, "largest_sums: out")
    for s in range(lo, hi):
        longest = max(longest, offsets[s + 1] - offsets[s])
    if not every and hi > lo:
        check_length(keep.shape[0], offsets[hi], "largest_sums: keep")
    if weighted:
        check_length(per_rank.shape[0], min(max(k, 0), longest), "largest_sums: per_rank")
    scratch = np.empty(max(longest, 1), dtype=np.float64)  # numpy's memory: a shortage is a MemoryError, not a crash
    cdef double[::1] buffer = scratch
    with nogil:
        for s in range(lo, hi):
            m = 0
            if k <= 0:
                pass
            elif k <= 32 or offsets[s + 1] - offsets[s] <= 32:
                # the k largest so far, larger first (as _descending orders them): a value below all k is passed over
                for i in range(offsets[s], offsets[s + 1]):
                    if every or keep[i]:
                        v = values[i]
                        if m == k and not v > buffer[k - 1]:
                            continue
                        j = m if m < k else k - 1
                        while j > 0 and v > buffer[j - 1]:
                            buffer[j] = buffer[j - 1]
                            j -= 1
                        buffer[j] = v
                        m += m < k
            else:
                for i in range(offsets[s], offsets[s + 1]):
                    if every or keep[i]:
                        buffer[m] = values[i]
                        m += 1
                qsort(&buffer[0], m, sizeof(double), _descending)
            out[s] = 0.0
            if m == 0:
                continue
            total = 0.0
            for j in range(min(m, k)):
                total += buffer[j] * per_rank[j] if weighted else buffer[j]
            out[s] = total


def segment_sums(const int64_t[::1] offsets, const double[::1] values):
    """float64 per segment s: ``values[offsets[s]:offsets[s + 1]]`` summed from 0.0 in order, which is what
    ``np.bincount`` with weights adds for rows grouped by segment, bit for bit, in one sequential pass instead of a
    scatter through a weighted histogram (20M rows: 0.01 s, not 0.07 s)."""
    cdef Py_ssize_t n_segments = offsets.shape[0] - 1, s, i
    cdef double total
    check_all_offsets(offsets, values.shape[0], "segment_sums")
    out = np.zeros(max(n_segments, 0), dtype=np.float64)
    cdef double[::1] sums = out
    with nogil:
        for s in range(n_segments):
            total = 0.0
            for i in range(offsets[s], offsets[s + 1]):
                total += values[i]
            sums[s] = total
    return out


def cut_sums(const int64_t[::1] offsets, const int64_t[::1] code, const double[::1] table, const double[::1] label,
             const int64_t[::1] rows, double level, const double[::1] per_rank):
    """float64 per user s, over its cut rows i in ``offsets[s]:offsets[s + 1]`` (each user's first rows, in order):
    the sum from 0.0, in row order, of ``per_rank[i - offsets[s]] * table[code[i]]`` (``table[code[i]]`` when
    ``per_rank`` is empty), and of 0.0 instead for a row whose label (``label[rows[i]]``, ``label[i]`` when ``rows``
    is empty) is not at least ``level`` when ``label`` is given. What ``segment_sums`` gives for the gathered,
    weighted and masked column numpy would build, bit for bit, without building it: at 20M rows each such column is
    160 MB of fresh memory, and first touches cost more than the arithmetic here."""
    cdef Py_ssize_t n_users = offsets.shape[0] - 1, s, i
    cdef bint masked = label.shape[0] > 0, gathered = rows.shape[0] > 0, weighted = per_rank.shape[0] > 0
    cdef double total, value, row_label
    cdef Py_ssize_t first, last, longest = 0
    check_all_offsets(offsets, code.shape[0], "cut_sums: offsets")
    first, last = 0, 0
    if n_users > 0:
        first, last = offsets[0], offsets[n_users]
    check_indices(code, first, last, table.shape[0], False, "cut_sums: code")
    for s in range(max(n_users, 0)):
        longest = max(longest, offsets[s + 1] - offsets[s])
    if weighted:
        check_length(per_rank.shape[0], longest, "cut_sums: per_rank")
    if masked and gathered:
        check_indices(rows, first, last, label.shape[0], False, "cut_sums: rows")
    elif masked:
        check_length(label.shape[0], last, "cut_sums: label")
    out = np.zeros(max(n_users, 0), dtype=np.float64)
    cdef double[::1] sums = out
    with nogil:
        for s in range(n_users):
            total = 0.0
            for i in range(offsets[s], offsets[s + 1]):
                value = per_rank[i - offsets[s]] * table[code[i]] if weighted else table[code[i]]
                if masked:
                    row_label = label[rows[i]] if gathered else label[i]
                    if not (row_label >= level):  # NaN (unjudged) is not relevant, as numpy's comparison says
                        value = 0.0
                total += value
            sums[s] = total
    return out


cdef int _ascending_int32(const void* a, const void* b) noexcept nogil:
    cdef int32_t x = (<const int32_t*>a)[0], y = (<const int32_t*>b)[0]
    return (x > y) - (x < y)


cdef void _sort_small(int32_t* values, Py_ssize_t m) noexcept nogil:
    """Ascending, in place: insertion sort for the few items of one user, qsort for a long history."""
    cdef Py_ssize_t i, j
    cdef int32_t v
    if m > 32:
        qsort(values, m, sizeof(int32_t), _ascending_int32)
        return
    for i in range(1, m):
        v = values[i]
        j = i - 1
        while j >= 0 and values[j] > v:
            values[j + 1] = values[j]
            j -= 1
        values[j + 1] = v


def distinct_pairs(const int32_t[::1] user, const int32_t[::1] item, const int64_t[::1] code_of_item,
                   Py_ssize_t n_users, Py_ssize_t n_codes):
    """The training rows (``user[i]``, item code ``code_of_item[item[i]]``) summarised in two counting passes:
    (indptr int64, codes int32, rows float64 per code, users float64 per code). User u's distinct item codes are
    ``codes[indptr[u]:indptr[u + 1]]``, ascending: the rows' distinct pairs sorted by user, then item, as CSR;
    ``rows``: each code's training rows; ``users``: its distinct users. Whole numbers: exact."""
    cdef Py_ssize_t n = user.shape[0], i, u, start, end, j, write = 0
    cdef int32_t last = 0
    check_length(item.shape[0], n, "distinct_pairs: item")
    check_indices(user, 0, n, n_users, False, "distinct_pairs: user")
    check_indices(item, 0, n, code_of_item.shape[0], False, "distinct_pairs: item")
    cdef int64_t code
    for i in range(n):  # the codes the rows name (an item no row names may have none)
        code = code_of_item[item[i]]
        if code < 0 or code >= n_codes or code > 2**31 - 1:
            raise ValueError(f"distinct_pairs: item {item[i]}'s code {code} is out of 0..{n_codes - 1}")
    indptr_array = np.zeros(n_users + 1, dtype=np.int64)
    codes_array = np.empty(n, dtype=np.int32)
    rows_array = np.zeros(n_codes, dtype=np.float64)
    users_array = np.zeros(n_codes, dtype=np.float64)
    fill_array = np.empty(n_users, dtype=np.int64)
    cdef int64_t[::1] indptr = indptr_array, fill = fill_array
    cdef int32_t[::1] codes = codes_array
    cdef double[::1] rows = rows_array, users = users_array
    with nogil:
        for i in range(n):
            indptr[user[i] + 1] += 1
        for u in range(n_users):
            indptr[u + 1] += indptr[u]
            fill[u] = indptr[u]
        for i in range(n):  # each user's rows gathered, in file order
            codes[fill[user[i]]] = <int32_t>code_of_item[item[i]]
            fill[user[i]] += 1
            rows[code_of_item[item[i]]] += 1.0
        for u in range(n_users):  # sorted and deduplicated in place: the write position never passes the read one
            start, end = indptr[u], indptr[u + 1]
            if end > start:  # (a user without rows has no first code to point at)
                _sort_small(&codes[start], end - start)
            indptr[u] = write
            for j in range(start, end):
                if j == start or codes[j] != last:
                    last = codes[j]
                    codes[write] = last
                    users[last] += 1.0
                    write += 1
        indptr[n_users] = write
    return indptr_array, codes_array[:write].copy(), rows_array, users_array


def gather_segments(const int64_t[::1] indptr, const int32_t[::1] values, const int64_t[::1] which):
    """(offsets int64, gathered int64): segment ``values[indptr[w]:indptr[w + 1]]`` of each w in ``which`` (none for a
    negative w) laid end to end, and where each starts; what numpy's concatenation of the slices gives, without the
    index arrays it would build."""
    cdef Py_ssize_t n = which.shape[0], s, i, w = 0
    check_all_offsets(indptr, values.shape[0], "gather_segments: indptr")
    check_indices(which, 0, n, max(indptr.shape[0] - 1, 0), True, "gather_segments: which")
    offsets_array = np.zeros(n + 1, dtype=np.int64)
    cdef int64_t[::1] offsets = offsets_array
    with nogil:
        for s in range(n):
            offsets[s + 1] = offsets[s] + (indptr[which[s] + 1] - indptr[which[s]] if which[s] >= 0 else 0)
    gathered_array = np.empty(offsets[n], dtype=np.int64)
    cdef int64_t[::1] gathered = gathered_array
    with nogil:
        for s in range(n):
            if which[s] >= 0:
                for i in range(indptr[which[s]], indptr[which[s] + 1]):
                    gathered[w] = values[i]
                    w += 1
    return offsets_array, gathered_array


def grouped_rows(const int64_t[::1] offsets, const int64_t[::1] code, const int64_t[::1] group,
                 const uint8_t[::1] user_ok):
    """(indptr int64, kept int64): per user s (each one with ``user_ok[s]``; every user when it is empty), its rows i in
    ``offsets[s]:offsets[s + 1]`` whose item is in a group (``group[code[i]] >= 0``), in order, and where each user's
    start among them. What numpy's mask, ``flatnonzero`` and ``bincount`` give, in one pass."""
    cdef Py_ssize_t n_users = offsets.shape[0] - 1, s, i, w = 0
    cdef bint every = user_ok.shape[0] == 0
    check_all_offsets(offsets, code.shape[0], "grouped_rows: offsets")
    if n_users > 0:
        check_indices(code, offsets[0], offsets[n_users], group.shape[0], False, "grouped_rows: code")
    if not every:
        check_length(user_ok.shape[0], n_users, "grouped_rows: user_ok")
    indptr_array = np.zeros(n_users + 1, dtype=np.int64)
    kept_array = np.empty(offsets[n_users] - offsets[0] if n_users > 0 else 0, dtype=np.int64)
    cdef int64_t[::1] indptr = indptr_array, kept = kept_array
    with nogil:
        for s in range(n_users):
            if every or user_ok[s]:
                for i in range(offsets[s], offsets[s + 1]):
                    if group[code[i]] >= 0:
                        kept[w] = i
                        w += 1
            indptr[s + 1] = w
    return indptr_array, kept_array[:w]


def segment_group_cells(const int64_t[::1] offsets, const int64_t[::1] code, const int64_t[::1] group,
                        Py_ssize_t n_groups, const uint8_t[::1] keep, const double[::1] label, const int64_t[::1] rows,
                        double level):
    """(segments x groups) float64: how many entries i of each segment ``offsets[s]:offsets[s + 1]`` fall in each
    group ``group[code[i]]``. An entry counts nowhere when its code or group is negative, when ``keep[i]`` is 0
    (``keep`` given), or when its label (``label[rows[i]]``, ``label[i]`` when ``rows`` is empty; ``label`` given) is
    not at least ``level``. REO's and RSP's (user, item group) counts in one pass over each user's rows, without the
    owner, gathered-label and mask columns numpy needs. Whole numbers: exact."""
    cdef Py_ssize_t n_segments = offsets.shape[0] - 1, s, i
    cdef int64_t g
    cdef bint every = keep.shape[0] == 0, masked = label.shape[0] > 0, gathered = rows.shape[0] > 0
    cdef double row_label
    cdef Py_ssize_t first, last
    check_all_offsets(offsets, code.shape[0], "segment_group_cells: offsets")
    first, last = 0, 0
    if n_segments > 0:
        first, last = offsets[0], offsets[n_segments]
    check_indices(code, first, last, group.shape[0], True, "segment_group_cells: code")
    check_indices(group, 0, group.shape[0], n_groups, True, "segment_group_cells: group")
    if not every:
        check_length(keep.shape[0], last, "segment_group_cells: keep")
    if masked and gathered:
        check_indices(rows, first, last, label.shape[0], False, "segment_group_cells: rows")
    elif masked:
        check_length(label.shape[0], last, "segment_group_cells: label")
    out = np.zeros((max(n_segments, 0), n_groups), dtype=np.float64)
    cdef double[:, ::1] cells = out
    with nogil:
        for s in range(n_segments):
            for i in range(offsets[s], offsets[s + 1]):
                if code[i] < 0 or not (every or keep[i]):
                    continue
                if masked:
                    row_label = label[rows[i]] if gathered else label[i]
                    if not (row_label >= level):  # NaN (unjudged) is not relevant, as numpy's comparison says
                        continue
                g = group[code[i]]
                if g >= 0:
                    cells[s, g] += 1.0
    return out


def segment_counts(const int64_t[::1] offsets, const uint8_t[::1] mask):
    """float64 per segment s: how many of ``mask[offsets[s]:offsets[s + 1]]`` are set (whole numbers: exact), in one
    pass, without the float column and owner index a weighted ``np.bincount`` reads."""
    cdef Py_ssize_t n_segments = offsets.shape[0] - 1, s, i
    cdef int64_t total
    check_all_offsets(offsets, mask.shape[0], "segment_counts")
    out = np.zeros(max(n_segments, 0), dtype=np.float64)
    cdef double[::1] counts = out
    with nogil:
        for s in range(n_segments):
            total = 0
            for i in range(offsets[s], offsets[s + 1]):
                total += mask[i] != 0
            counts[s] = <double>total
    return out


def code_weights(const int64_t[::1] offsets, const int64_t[::1] code, const double[::1] user_weight,
                 Py_ssize_t n_codes):
    """float64 per code c: ``user_weight[s]`` added from 0.0, in row order, for every row i of every user s
    (``offsets[s] <= i < offsets[s + 1]``) with ``code[i] == c`` (1.0 for each when ``user_weight`` is empty). What
    ``np.bincount(code, weights=user_weight[owner])`` adds, bit for bit, without the per-row owner and weight
    columns (at 20M rows, 320 MB of fresh memory)."""
    cdef Py_ssize_t n_users = offsets.shape[0] - 1, s, i
    cdef bint weighted = user_weight.shape[0] > 0
    cdef double w
    check_all_offsets(offsets, code.shape[0], "code_weights: offsets")
    if n_users > 0:
        check_indices(code, offsets[0], offsets[n_users], n_codes, False, "code_weights: code")
    if weighted:
        check_length(user_weight.shape[0], n_users, "code_weights: user_weight")
    out = np.zeros(n_codes, dtype=np.float64)
    cdef double[::1] sums = out
    with nogil:
        for s in range(n_users):
            w = user_weight[s] if weighted else 1.0
            for i in range(offsets[s], offsets[s + 1]):
                sums[code[i]] += w
    return out


def feature_sums(const int64_t[::1] offsets, const int64_t[::1] code, const double[:, ::1] features,
                 double[:, ::1] sums, Py_ssize_t s_lo, Py_ssize_t s_hi):
    """Rows ``s_lo .. s_hi`` of ``sums`` (segments x F, zeros): row ``s`` is ``features[code[i]]`` added from 0.0 for
    each entry i of segment ``offsets[s]:offsets[s + 1]``, in order: what scipy's CSR product with a matrix of ones
    gives (each entry times 1.0, added in row order), bit for bit, without the ones, the index copies and the matrix.
    Each row is one range's, so threads over ranges of segments give the same bits."""
    cdef Py_ssize_t n_features = features.shape[1], s, i, f
    cdef int64_t c
    check_offsets(offsets, s_lo, s_hi, code.shape[0], "feature_sums: offsets")
    if s_hi > s_lo:
        check_indices(code, offsets[s_lo], offsets[s_hi], features.shape[0], False, "feature_sums: code")
    check_length(sums.shape[0], s_hi, "feature_sums: sums")
    if sums.shape[1] != n_features:
        raise ValueError(f"feature_sums: sums has {sums.shape[1]} columns for {n_features} features")
    with nogil:
        for s in range(s_lo, s_hi):
            for i in range(offsets[s], offsets[s + 1]):
                c = code[i]
                for f in range(n_features):
                    sums[s, f] += features[c, f]


def unexpected_sums(const int64_t[::1] offsets, const int64_t[::1] rows, const double[::1] similarity,
                    const int64_t[::1] history_length, const double[::1] label, double level, double[::1] sums,
                    Py_ssize_t s_lo, Py_ssize_t s_hi):
    """``sums[s]`` for users ``s_lo .. s_hi``: over user s's cut rows j (``offsets[s]:offsets[s + 1]``; row ``rows[j]``
    of the whole lists, or j itself when ``rows`` is empty), ``1.0 - similarity[row] / history_length[s]``, 0.0 where
    ``label[row] >= level`` fails (NaN included) when ``label`` is given, added from 0.0 in row order. Serendipity's
    numpy (``cut.sum(np.where(..., 1.0 - cut.take(similarity) / h_len[cut.qidx], 0.0))``), bit for bit: the same
    division, subtraction and additions in the same order, without the four 20M-row columns it built."""
    cdef Py_ssize_t s, j, r
    cdef bint gathered = rows.shape[0] > 0, labelled = label.shape[0] > 0
    cdef double total, h, u
    check_offsets(offsets, s_lo, s_hi, rows.shape[0] if gathered else similarity.shape[0], "unexpected_sums: offsets")
    if gathered and s_hi > s_lo:
        check_indices(rows, offsets[s_lo], offsets[s_hi], similarity.shape[0], False, "unexpected_sums: rows")
    if labelled:
        check_length(label.shape[0], similarity.shape[0], "unexpected_sums: label")
    check_length(history_length.shape[0], s_hi, "unexpected_sums: history_length")
    check_length(sums.shape[0], s_hi, "unexpected_sums: sums")
    with nogil:
        for s in range(s_lo, s_hi):
            total = 0.0
            h = <double>history_length[s]
            for j in range(offsets[s], offsets[s + 1]):
                r = rows[j] if gathered else j
                u = 1.0 - similarity[r] / h
                if labelled and not (label[r] >= level):
                    u = 0.0
                total += u
            sums[s] = total
