"""Random draws keyed by query: a query's random signs and bootstrap weights depend on its key only.

A resampling test's draws usually come from one generator walked along the queries, so
query q's draw depends on how many queries came before it: split the queries over
partitions, or drop one, and every later draw changes. Here each query has a 64-bit
key, a hash of (seed, the comparison's identity, the query id), and its draw in
replicate r is a hash of (key, r). The p-values are then functions of the per-query
values and ids alone, the same in any order and in any partitioning (with the exact
sums of :mod:`harness.stats.grid`).

* Randomisation: query q's sign in replicate r is bit r % 64 of
  ``mix(key + (r // 64 + 1) * GOLDEN)`` (one hash serves 64 replicates).
* Bootstrap: query q's weight in replicate r is Poisson(1), by inversion of the top 53
  bits of ``mix(key ^ mix((r + 1) * GOLDEN))`` (the Poisson bootstrap: each query is
  drawn a Poisson(1) number of times, independently, instead of n draws with replacement).
* Tukey HSD: query q's permutation of m systems in trial r is one of the m! drawn
  uniformly (m <= 6, :func:`uniform_matrix`) or a Fisher-Yates shuffle (:func:`shuffle_matrix`).

``mix`` is splitmix64's finaliser and the string hash FNV-1a over the id's UTF-8 bytes:
fixed here, so the draws (and the p-values) never change with a library version.

>>> keys = query_keys(7, ("ratings", "all"), np.array(["q1", "q2", "q3"], dtype=object))
>>> bool((query_keys(7, ("ratings", "all"), np.array(["q3", "q1"], dtype=object)) == keys[[2, 0]]).all())
True
>>> sign_matrix(keys[[2, 0]], 0, 5).tolist() == sign_matrix(keys, 0, 5)[:, [2, 0]].tolist()
True
"""

from __future__ import annotations

import hashlib
from fractions import Fraction

import numpy as np
import pyarrow as pa

from harness.kernels._parallel import over_rows
from harness.stats import _keyed_compiled as kernels


def _poisson_thresholds(count: int = 18) -> np.ndarray:
    """Poisson(1)'s distribution function at 0, 1, ..., count - 1 as 53-bit integers: P(X <= k) * 2^53, rounded down,
    in exact arithmetic from the correctly rounded e^-1 (a literal: no libm's last bit decides a draw). Past the last
    one the mass is below 2^-53."""
    e_inv, term, total, out = Fraction(0.36787944117144233), Fraction(1), Fraction(0), []
    for k in range(count):
        total += term  # sum of 1/j! for j <= k
        out.append(int(e_inv * total * 2**53))
        term /= k + 1
    return np.array(out, dtype=np.uint64)


POISSON_THRESHOLDS = _poisson_thresholds()
MAX_WEIGHT = POISSON_THRESHOLDS.size  # the largest weight a draw can take


# The kernels below fill ranges of rows over the cores (over_rows): they release the GIL, and each row's draws
# depend on its key and replicate only, so the split never changes a value.


def _salt(seed: int, identity: tuple[str, ...]) -> np.uint64:
    digest = hashlib.blake2b("\x1f".join((str(seed), *identity)).encode(), digest_size=8).digest()
    return np.frombuffer(digest, dtype=np.uint64)[0]


def query_keys(seed: int, identity: tuple[str, ...], query_ids: np.ndarray | pa.Array) -> np.ndarray:
    """Each query's 64-bit key: a hash of (seed, identity, its id); uint64, in the order of ``query_ids``."""
    ids = query_ids if isinstance(query_ids, pa.Array) else pa.array(np.asarray(query_ids, dtype=object).tolist(), pa.string())
    ids = ids.cast(pa.large_string())  # one offsets width for the compiled hash
    offsets = np.frombuffer(ids.buffers()[1], dtype=np.int64)[ids.offset : ids.offset + len(ids) + 1]
    data = np.frombuffer(ids.buffers()[2], dtype=np.uint8) if ids.buffers()[2] is not None else np.zeros(0, np.uint8)
    out = np.empty(len(ids), dtype=np.uint64)
    salt = _salt(seed, identity)
    over_rows(len(ids), lambda lo, hi: kernels.hash_strings(offsets, data, salt, lo, hi, out))
    return out


def sign_matrix(keys: np.ndarray, first: int, count: int, out: np.ndarray | None = None) -> np.ndarray:
    """(count x n) float64 0/1: query q's sign bit in replicates first .. first + count (1 = keep, 0 = swap).

    ``out``: a buffer of at least ``count`` rows to fill (a block's memory is asked for once).
    """
    out = np.empty((count, keys.size)) if out is None else out[:count]
    over_rows(count, lambda lo, hi: kernels.sign_bits(keys, first, lo, hi, out))
    return out


SUMMED_COLUMNS = kernels.sign_products_width()
"""The columns of x the compiled sums (:func:`sign_products`, :func:`slot_sums`) add together: x has a multiple of them."""


def sign_products(keys: np.ndarray, x: np.ndarray, count: int, first: int = 0) -> np.ndarray:
    """(count x C): ``sign_matrix(keys, first, count) @ x`` for an (n x C) ``x`` of integers, without the matrix.

    Each replicate adds, for every 8 queries, the precomputed sum of x over the ones its sign bits keep
    (``_keyed_compiled.sign_products``): one addition where the product takes eight. The sums are exact, so
    equal to the product's bit for bit, while every partial sum of |x| stays below 2^53.

    >>> keys = numbered_keys(5, 20)
    >>> x = np.arange(40.0).reshape(20, 2)
    >>> bool((sign_products(keys, x, 100, first=30) == sign_matrix(keys, 30, 100) @ x).all())
    True
    """
    n, columns = x.shape
    width = SUMMED_COLUMNS
    padded = np.zeros((n, -(-columns // width) * width))
    padded[:, :columns] = x
    out = np.empty((count, padded.shape[1]))
    over_rows(count, lambda lo, hi: kernels.sign_products(keys, padded, first, lo, hi, out))
    return out[:, :columns]


def slot_sums(keys: np.ndarray, table: np.ndarray, x: np.ndarray, lo: int, hi: int, out: np.ndarray) -> np.ndarray:
    """Rows (trials) ``lo .. hi`` of ``out`` (trials x slots x C) added to, in this thread: in each trial, each query
    draws a row of ``table`` (rows x slots, int8; :func:`uniform_matrix`'s draw below its rows) and adds system
    ``table[row, i]``'s values of query q to slot i where that system is one of x's (``_keyed_compiled.slot_sums``).
    x holds integers as systems x column groups x n x :data:`SUMMED_COLUMNS` (C = groups x SUMMED_COLUMNS). The sums
    are exact, so equal bit for bit to the indicator matrices' products with x, while every partial sum of |x| stays
    below 2^53.

    >>> from itertools import permutations
    >>> keys, table = numbered_keys(5, 20), np.array(list(permutations(range(3))), dtype=np.int8)[:, :2]
    >>> x, out = np.arange(640.0).reshape(2, 2, 20, 8), np.zeros((9, 2, 16))
    >>> choice = uniform_matrix(keys, len(table), 0, 9)
    >>> wide = x.transpose(0, 2, 1, 3).reshape(2, 20, 16)  # each system's (n, C)
    >>> products = [sum((table[choice, i] == j).astype(float) @ wide[j] for j in range(2)) for i in range(2)]
    >>> bool((slot_sums(keys, table, x, 3, 9, out)[3:] == np.stack(products, axis=1)[3:]).all()), bool(out[:3].any())
    (True, False)
    """
    kernels.slot_sums(np.ascontiguousarray(keys, dtype=np.uint64), np.ascontiguousarray(table), x, 0, lo, hi, out)
    return out


def poisson_matrix(keys: np.ndarray, first: int, count: int, out: np.ndarray | None = None) -> np.ndarray:
    """(count x n) float64: query q's Poisson(1) weight in replicates first .. first + count."""
    out = np.empty((count, keys.size)) if out is None else out[:count]
    over_rows(count, lambda lo, hi: kernels.poisson_weights(keys, POISSON_THRESHOLDS, first, lo, hi, out))
    return out


def poisson_rows(keys: np.ndarray, first: int, out: np.ndarray) -> np.ndarray:
    """``out`` (count x n) filled with :func:`poisson_matrix`'s rows first .. first + count, in this thread (for a
    caller that splits the work over the cores itself)."""
    kernels.poisson_weights(keys, POISSON_THRESHOLDS, first, 0, out.shape[0], out)
    return out


def numbered_keys(seed: object, n: int) -> np.ndarray:
    """Keys of n queries known by their number only (0 .. n - 1), e.g. simulated ones.

    >>> numbered_keys(3, 4).tolist() == query_keys(3, ("numbered",), np.array(["0", "1", "2", "3"], dtype=object)).tolist()
    True
    """
    seed_number = (
        int(seed)
        if isinstance(seed, int | np.integer)
        else int.from_bytes(hashlib.blake2b(repr(seed).encode(), digest_size=8).digest(), "little")
    )
    return query_keys(seed_number, ("numbered",), pa.array(np.arange(n).astype(str)))


def shuffle_matrix(keys: np.ndarray, m: int, first: int, count: int) -> np.ndarray:
    """(count x n x m) int8: a uniformly random permutation of m systems for every query in trials first .. first + count."""
    out = np.empty((count, keys.size, m), dtype=np.int8)
    over_rows(count, lambda lo, hi: kernels.shuffles(keys, m, first, lo, hi, out))
    return out


def uniform_matrix(keys: np.ndarray, k: int, first: int, count: int) -> np.ndarray:
    """(count x n) uint16: each query's uniform integer in [0, k) (k <= 65536) in trials first .. first + count."""
    out = np.empty((count, keys.size), dtype=np.uint16)
    over_rows(count, lambda lo, hi: kernels.below(keys, k, first, lo, hi, out))
    return out
