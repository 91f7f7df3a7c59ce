"""Co-occurrence cosine summed over list pairs, compiled (numba): ILD's and Serendipity's default similarity.

sim(i, j) = |U_i & U_j| / sqrt(|U_i| |U_j|), U_i the training users of item i. A list of
k items has k(k-1)/2 pairs and a user with a history of h items k*h more: at 200,000
users x 100 items that is a billion pairs, too many to gather from a pair table in numpy.

Both kernels walk the items one at a time. For item c they build its co-occurrence row
|U_c & U_j| for every j (dense, in cache: the training users of c and their items), use
it for every list row that recommends c, and clear it. Building every row costs the
sum over training users of (their items)^2, whatever the lists; each pair then costs one
cached lookup. Every output element is written by one thread only and summed in an order
fixed by its own user's rows, so a user's value never depends on other users, nor on
how the work is split between threads.

Compiled on first use and cached on disk (numba ``cache=True``); imported only when a
co-occurrence measure is computed, so nothing else pays numba's import.

>>> import numpy as np
>>> from scipy import sparse
>>> item_users = sparse.csr_matrix(np.array([[1, 1, 0], [1, 0, 1], [0, 1, 1]], dtype=np.int32))  # 3 items x 3 users
>>> scale = 1 / np.sqrt(np.array([2.0, 2.0, 2.0]))
>>> codes = np.array([0, 1, 2])                                  # one user's list: items 0, 1, 2
>>> rows = earlier_pair_sums(codes, np.array([0]), np.array([3]), item_users, item_users.T.tocsr(), scale)
>>> rows.round(12).tolist()   # row 1 pairs with row 0 (they share 1 of 2 users each: 0.5); row 2 with rows 0 and 1
[0.0, 0.5, 1.0]
"""

from __future__ import annotations

from typing import Any

import numpy as np
from llvmlite import ir
from llvmlite.binding import llvm_version_info
from numba.core import cgutils
from numba.extending import intrinsic

from harness.kernels._numba import njit, types
from harness.kernels._parallel import run_split, split
from harness.kernels._parallel import threads as default_threads


def earlier_pair_sums(codes: np.ndarray, starts: np.ndarray, ends: np.ndarray, item_users: Any, user_items: Any,
                    scale: np.ndarray, threads: int | None = None) -> np.ndarray:  # fmt: skip
    """For every listed row r: sum over the rows before it in its list of sim(code[r], code[r2]).

    ``starts``/``ends``: each list's row range (its first k rows); codes at or above
    ``item_users.shape[0]`` (cold items) have no users and similarity 0. Summed over a
    list's first j rows, these give the sum over the unordered pairs of its top j, for
    every j <= k at once. Rows outside the lists get 0. ``item_users``: binary CSR (known items x training users); ``user_items``
    its transpose, in CSR; ``scale``: 1 / sqrt(|U_i|) per code, 0 without users.
    """
    n_known = item_users.shape[0]
    codes = codes.astype(np.int32) if n_known < 2**31 - 1 else codes  # half the memory traffic of the pair loop
    by_code, order, first = _rows_by_code(codes, starts, ends, n_known)
    out = np.zeros(codes.size)
    weight = np.diff(by_code).astype(np.float64)

    def task(lo: int, hi: int) -> None:
        _earlier_pairs(codes, by_code, order, first, lo, hi, scale, item_users.indptr, item_users.indices,
                     user_items.indptr, user_items.indices, out)  # fmt: skip

    run_split(task, split(weight, threads or default_threads()))
    return out


def history_sums(codes: np.ndarray, starts: np.ndarray, ends: np.ndarray, history_offsets: np.ndarray,
                 history_codes: np.ndarray, item_users: Any, user_items: Any, scale: np.ndarray,
                 threads: int | None = None) -> np.ndarray:  # fmt: skip
    """For every listed row r of user q: sum over q's training items h of sim(code[r], h).

    >>> import numpy as np
    >>> from scipy import sparse
    >>> item_users = sparse.csr_matrix(np.array([[1, 1], [1, 0]], dtype=np.int32))   # 2 items x 2 users
    >>> scale = 1 / np.sqrt(np.array([2.0, 1.0]))
    >>> history_sums(np.array([0, 1]), np.array([0]), np.array([2]), np.array([0, 1]), np.array([1]),
    ...              item_users, item_users.T.tocsr(), scale).round(4).tolist()       # history: item 1
    [0.7071, 1.0]
    """
    n_known = item_users.shape[0]
    codes = codes.astype(np.int32) if n_known < 2**31 - 1 else codes
    out = np.zeros(codes.size)
    weight = (np.diff(history_offsets) * (ends - starts)).astype(np.float64)

    def task(lo: int, hi: int) -> None:
        _history_pairs(codes, starts, ends, history_offsets, history_codes, lo, hi, n_known, scale, item_users.indptr,
                       item_users.indices, user_items.indptr, user_items.indices, out)  # fmt: skip

    run_split(task, split(weight, threads or default_threads()))
    return out


# ---- compiled kernels ---------------------------------------------------------------
PREFETCH_AHEAD = 8  # list rows are scattered in memory: start fetching the 8th next one (3x faster at 200k users)
_OPAQUE_POINTERS = llvm_version_info[0] >= 15


@intrinsic  # type: ignore[misc]
def _prefetch(typingctx, array, index):  # type: ignore[no-untyped-def]
    """LLVM's prefetch of array[index] (a hint: no effect on any value)."""

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        array_type = signature.args[0]
        view = context.make_array(array_type)(context, builder, args[0])
        pointer = cgutils.get_item_pointer(context, builder, array_type, view, [args[1]], wraparound=False)  # type: ignore[no-untyped-call]
        byte_pointer = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        name = "llvm.prefetch.p0" if _OPAQUE_POINTERS else "llvm.prefetch.p0i8"
        signature_ = ir.FunctionType(ir.VoidType(), [byte_pointer, i32, i32, i32])
        function = cgutils.get_or_insert_function(builder.module, signature_, name)  # type: ignore[no-untyped-call]
        read, high_locality, data_cache = (ir.Constant(i32, v) for v in (0, 3, 1))
        builder.call(function, [builder.bitcast(pointer, byte_pointer), read, high_locality, data_cache])
        return context.get_dummy_value()

    return types.void(array, index), codegen


@njit(cache=True, nogil=True, inline="always")  # type: ignore[misc]
def _prefetch_range(array, lo, hi):  # type: ignore[no-untyped-def]
    step = max(1, 64 // array.itemsize)  # one cache line at a time
    for i in range(lo, hi, step):
        _prefetch(array, i)  # type: ignore[call-arg]  # numba passes the typing context


@njit(cache=True, nogil=True)  # type: ignore[misc]
def _rows_by_code(codes, starts, ends, n_known):  # type: ignore[no-untyped-def]
    """The listed rows grouped by item (counting sort, rows ascending within an item), with their list's first row.

    Cold codes (>= n_known) are left out: they pair with nothing.
    """
    by_code = np.zeros(n_known + 1, np.int64)
    for q in range(ends.size):
        for r in range(starts[q], ends[q]):
            if codes[r] < n_known:
                by_code[codes[r] + 1] += 1
    for c in range(n_known):
        by_code[c + 1] += by_code[c]
    order = np.empty(by_code[-1], np.int64)
    first = np.empty(by_code[-1], np.int64)
    fill = by_code[:-1].copy()
    for q in range(ends.size):
        start = starts[q]
        for r in range(start, ends[q]):
            c = codes[r]
            if c < n_known:
                order[fill[c]] = r
                first[fill[c]] = start
                fill[c] += 1
    return by_code, order, first


@njit(cache=True, nogil=True)  # type: ignore[misc]
def _cooccurrence_row(c, iu_ptr, iu_idx, ui_ptr, ui_idx, count, touched):  # type: ignore[no-untyped-def]
    """count[j] += |U_c & U_j| for every j; the distinct j into ``touched``; returns how many."""
    n = 0
    end = iu_ptr[c + 1]
    for a in range(iu_ptr[c], end):
        if a + PREFETCH_AHEAD < end:  # each user's items are elsewhere in memory
            ahead = iu_idx[a + PREFETCH_AHEAD]
            _prefetch_range(ui_idx, ui_ptr[ahead], ui_ptr[ahead + 1])
        user = iu_idx[a]
        for b in range(ui_ptr[user], ui_ptr[user + 1]):
            j = ui_idx[b]
            if count[j] == 0:
                touched[n] = j
                n += 1
            count[j] += 1
    return n


@njit(cache=True, nogil=True)  # type: ignore[misc]
def _earlier_pairs(codes, by_code, order, first, c_lo, c_hi, scale, iu_ptr, iu_idx, ui_ptr, ui_idx, out):  # type: ignore[no-untyped-def]
    n_known = by_code.size - 1
    count = np.zeros(n_known, np.int32)
    scaled = np.zeros(n_known + 1)  # |U_c & U_j| / sqrt(|U_j|); the last cell stands for every cold item: 0
    touched = np.empty(n_known, np.int64)
    for c in range(c_lo, c_hi):
        lo, hi = by_code[c], by_code[c + 1]
        if lo == hi or iu_ptr[c] == iu_ptr[c + 1]:
            continue
        n = _cooccurrence_row(c, iu_ptr, iu_idx, ui_ptr, ui_idx, count, touched)
        for x in range(n):
            j = touched[x]
            scaled[j] = count[j] * scale[j]
        for e in range(lo, hi):
            if e + PREFETCH_AHEAD < hi:  # the lists are scattered: fetch a later row's list while this one sums
                _prefetch_range(codes, first[e + PREFETCH_AHEAD], order[e + PREFETCH_AHEAD])
            total = 0.0
            for r in range(first[e], order[e]):
                total += scaled[min(codes[r], n_known)]
            out[order[e]] = total * scale[c]
        for x in range(n):
            j = touched[x]
            count[j] = 0
            scaled[j] = 0.0


@njit(cache=True, nogil=True)  # type: ignore[misc]
def _history_pairs(codes, starts, ends, h_off, h_codes, q_lo, q_hi, n_known, scale, iu_ptr, iu_idx, ui_ptr, ui_idx, out):  # type: ignore[no-untyped-def]
    # users q_lo..q_hi grouped by training item (counting sort): each item's row is built once for all of them
    by_item = np.zeros(n_known + 1, np.int64)
    for a in range(h_off[q_lo], h_off[q_hi]):
        by_item[h_codes[a] + 1] += 1
    for c in range(n_known):
        by_item[c + 1] += by_item[c]
    row_lo = np.empty(by_item[-1], np.int64)  # each (item, user): the user's listed rows
    row_hi = np.empty(by_item[-1], np.int64)
    fill = by_item[:-1].copy()
    for q in range(q_lo, q_hi):
        for a in range(h_off[q], h_off[q + 1]):
            row_lo[fill[h_codes[a]]] = starts[q]
            row_hi[fill[h_codes[a]]] = ends[q]
            fill[h_codes[a]] += 1
    count = np.zeros(n_known + 1, np.int32)  # the last cell stands for every cold item: 0
    touched = np.empty(n_known, np.int64)
    # each row's sum runs over its user's training items in item order: fixed by that user's rows alone
    for h in range(n_known):
        lo, hi = by_item[h], by_item[h + 1]
        if lo == hi or iu_ptr[h] == iu_ptr[h + 1]:
            continue
        n = _cooccurrence_row(h, iu_ptr, iu_idx, ui_ptr, ui_idx, count, touched)
        scale_h = scale[h]
        for e in range(lo, hi):
            if e + PREFETCH_AHEAD < hi:
                _prefetch_range(codes, row_lo[e + PREFETCH_AHEAD], row_hi[e + PREFETCH_AHEAD])
                _prefetch_range(out, row_lo[e + PREFETCH_AHEAD], row_hi[e + PREFETCH_AHEAD])
            for r in range(row_lo[e], row_hi[e]):
                out[r] += count[min(codes[r], n_known)] * scale_h
        for x in range(n):
            count[touched[x]] = 0
    for q in range(q_lo, q_hi):
        for r in range(starts[q], ends[q]):
            c = codes[r]
            out[r] = out[r] * scale[c] if c < n_known else 0.0
