"""Co-occurrence cosine summed over list pairs, compiled: ILD's and Serendipity's default similarity.

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

The kernels are C, compiled ahead of time by the package's build (``_cooccurrence_compiled.pyx``), and run
without bounds checks: :func:`earlier_pair_sums` and :func:`history_sums` check, once per call, every row range,
code and CSR index the kernels read (:func:`_check_lists`, :func:`_check_csr`), so a malformed input is a
ValueError, never a read past an array.

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

from harness.errors import HarnessError
from harness.kernels import _cooccurrence_compiled as kernels
from harness.kernels._parallel import run_split, split
from harness.kernels._parallel import threads as default_threads


def _csr_arrays(item_users: Any, user_items: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The two CSR matrices' index arrays in one integer width (the kernel is compiled for int32 and int64)."""
    arrays = (item_users.indptr, item_users.indices, user_items.indptr, user_items.indices)
    width = np.int64 if any(a.dtype != np.int32 for a in arrays) else np.int32
    iu_ptr, iu_idx, ui_ptr, ui_idx = (np.ascontiguousarray(a, dtype=width) for a in arrays)
    return iu_ptr, iu_idx, ui_ptr, ui_idx


def _offsets(array: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(array, dtype=np.int64)


def _check_lists(codes: np.ndarray, starts: np.ndarray, ends: np.ndarray, scale: np.ndarray, n_known: int) -> None:
    """Each list's rows ``starts[q]:ends[q]`` lie in ``codes``, their codes are not negative, and ``scale`` holds one
    weight per known item.

    >>> _check_lists(np.array([0, 1]), np.array([0]), np.array([3]), np.ones(2), 2)
    Traceback (most recent call last):
    ValueError: list 0's rows 0..3 are not within the 2 rows
    """
    if starts.shape != ends.shape:
        raise ValueError(f"{starts.size} list starts and {ends.size} ends")
    bad = np.flatnonzero((starts < 0) | (ends < starts) | (ends > codes.size))
    if bad.size:
        q = int(bad[0])
        raise ValueError(f"list {q}'s rows {starts[q]}..{ends[q]} are not within the {codes.size} rows")
    # the rows some list covers (lists may overlap): +1 where one starts, -1 where one ends, summed along the rows
    depth = np.cumsum(np.bincount(starts, minlength=codes.size + 1) - np.bincount(ends, minlength=codes.size + 1))
    listed = codes[depth[: codes.size] > 0]
    if listed.size and listed.min() < 0:
        raise ValueError(f"a listed row's code is negative ({listed.min()})")
    if scale.size < n_known:
        raise ValueError(f"{scale.size} scale weights for {n_known} known items")


def _check_csr(iu_ptr: np.ndarray, iu_idx: np.ndarray, ui_ptr: np.ndarray, ui_idx: np.ndarray, n_known: int) -> None:
    """The items' users and the users' items are CSR structures over ``n_known`` items: offsets in order within their
    indices, each user index a user, each item index a known item."""
    n_users = ui_ptr.size - 1
    for name, ptr, idx, rows, bound in (
        ("items' users", iu_ptr, iu_idx, n_known, n_users),
        ("users' items", ui_ptr, ui_idx, n_users, n_known),
    ):
        if ptr.size != rows + 1 or ptr[0] < 0 or ptr[-1] > idx.size or (np.diff(ptr) < 0).any():
            raise ValueError(f"the {name}' offsets do not describe {rows} rows within {idx.size} indices")
        used = idx[ptr[0] : ptr[-1]]
        if used.size and (used.min() < 0 or used.max() >= bound):
            raise ValueError(f"the {name} name an index out of 0..{bound - 1}")


def earlier_pair_sums(
    codes: np.ndarray,
    starts: np.ndarray,
    ends: np.ndarray,
    item_users: Any,
    user_items: Any,
    scale: np.ndarray,
    threads: int | None = None,
) -> np.ndarray:
    """For every listed row r: sum over the rows before it in its list of sim(code[r], code[r2]).

    ``starts``/``ends``: each list's row range (its first k rows); codes at or above
    ``item_users.shape[0]`` (cold items) have no users and similarity 0. Summed over a
    list's first j rows, these give the sum over the unordered pairs of its top j, for
    every j <= k at once. Rows outside the lists get 0. ``item_users``: binary CSR (known items x training users); ``user_items``
    its transpose, in CSR; ``scale``: 1 / sqrt(|U_i|) per code, 0 without users.
    """
    n_known = item_users.shape[0]
    # int32 codes: half the memory traffic of the pair loop
    codes = np.ascontiguousarray(codes, dtype=np.int32 if n_known < 2**31 - 1 else np.int64)
    starts, ends, scale = _offsets(starts), _offsets(ends), np.ascontiguousarray(scale, dtype=np.float64)
    if codes.size >= 2**31:  # rows are packed with their rank into 64 bits
        raise HarnessError(
            "co-occurrence similarity pairs at most 2^31 list rows in one process",
            hint="evaluate on the dask engine (engine: {name: dask}), whose partitions are smaller, or use a smaller cutoff",
        )
    csr = _csr_arrays(item_users, user_items)
    _check_lists(codes, starts, ends, scale, n_known)
    _check_csr(*csr, n_known)
    by_code, placed = kernels.rows_by_code(codes, starts, ends, n_known)
    out = np.zeros(codes.size)
    weight = np.diff(by_code).astype(np.float64)

    def task(lo: int, hi: int) -> None:
        kernels.earlier_pairs(codes, by_code, placed, lo, hi, scale, *csr, out)

    run_split(task, split(weight, threads or default_threads()))
    return out


def history_sums(
    codes: np.ndarray,
    starts: np.ndarray,
    ends: np.ndarray,
    history_offsets: np.ndarray,
    history_codes: np.ndarray,
    item_users: Any,
    user_items: Any,
    scale: np.ndarray,
    threads: int | None = None,
) -> np.ndarray:
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
    codes = np.ascontiguousarray(codes, dtype=np.int32 if n_known < 2**31 - 1 else np.int64)
    starts, ends, scale = _offsets(starts), _offsets(ends), np.ascontiguousarray(scale, dtype=np.float64)
    history_offsets, history_codes = _offsets(history_offsets), _offsets(history_codes)
    csr = _csr_arrays(item_users, user_items)
    _check_lists(codes, starts, ends, scale, n_known)
    _check_csr(*csr, n_known)
    if (
        history_offsets.size != starts.size + 1
        or history_offsets[0] < 0
        or history_offsets[-1] > history_codes.size
        or (np.diff(history_offsets) < 0).any()
    ):
        raise ValueError(f"the histories' offsets do not describe {starts.size} users within {history_codes.size} codes")
    used = history_codes[history_offsets[0] : history_offsets[-1]]
    if used.size and (used.min() < 0 or used.max() >= n_known):
        raise ValueError(f"a history names an item code out of 0..{n_known - 1}")
    out = np.zeros(codes.size)
    weight = (np.diff(history_offsets) * (ends - starts)).astype(np.float64)

    def task(lo: int, hi: int) -> None:
        kernels.history_pairs(codes, starts, ends, history_offsets, history_codes, lo, hi, n_known, scale, *csr, out)

    run_split(task, split(weight, threads or default_threads()))
    return out
