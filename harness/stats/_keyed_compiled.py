"""The compiled kernels behind :mod:`harness.stats.keyed` (numba, cached on disk).

Every draw is a pure function of a query's 64-bit key and the replicate's number:
splitmix64's finaliser of ``key + (block + 1) * GOLDEN``. No state passes from one
query to the next, so the draws of a query never depend on which others are present.
"""

from __future__ import annotations

import numpy as np

from harness.kernels._numba import njit

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
FNV_PRIME = np.uint64(0x100000001B3)
TILE = 512  # queries drawn together: rows of the output are written in runs this long


@njit(cache=True, nogil=True)
def mix(z):  # type: ignore[no-untyped-def]
    """splitmix64's finaliser: a bijection of 64-bit words that spreads every input bit."""
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@njit(cache=True, nogil=True)
def hash_strings(offsets, data, salt, lo, hi, out):  # type: ignore[no-untyped-def]
    """out[i] = mix(FNV-1a of string i's UTF-8 bytes, started from ``salt``), for i in lo..hi."""
    for i in range(lo, hi):
        h = salt
        for j in range(offsets[i], offsets[i + 1]):
            h = (h ^ np.uint64(data[j])) * FNV_PRIME
        out[i] = mix(h ^ np.uint64(offsets[i + 1] - offsets[i]))


@njit(cache=True, nogil=True)
def sign_bits(keys, first, lo, hi, out):  # type: ignore[no-untyped-def]
    """Rows lo..hi of ``out`` (replicates first + lo ..): bit (r % 64) of mix(key + (r // 64 + 1) * GOLDEN), as 0.0 / 1.0."""
    n = keys.size
    for start in range(0, n, TILE):
        stop = min(n, start + TILE)
        r = lo
        while r < hi:
            replicate = first + r
            word_of = replicate // 64
            bit = replicate % 64
            run = min(hi - r, 64 - bit)  # the rows this word serves
            for q in range(start, stop):
                word = mix(keys[q] + np.uint64(word_of + 1) * GOLDEN)
                for j in range(run):
                    out[r + j, q] = np.float64((word >> np.uint64(bit + j)) & np.uint64(1))
            r += run


@njit(cache=True, nogil=True)
def poisson_weights(keys, thresholds, first, lo, hi, out):  # type: ignore[no-untyped-def]
    """Rows lo..hi of ``out``: each query's Poisson(1) weight in replicate first + r, by inversion of a 53-bit uniform.

    The weight is the number of thresholds at or below the uniform: the first six compared without a branch (a
    branch per comparison mispredicts often: the weight is 0, 1 or 2 about as often), the rest (1 draw in 1,700) in a loop.
    """
    n = keys.size
    top = thresholds.size
    t0, t1, t2, t3, t4, t5 = thresholds[0], thresholds[1], thresholds[2], thresholds[3], thresholds[4], thresholds[5]
    for r in range(lo, hi):
        salt = mix(np.uint64(first + r + 1) * GOLDEN)
        row = out[r]
        for q in range(n):
            u = mix(keys[q] ^ salt) >> np.uint64(11)
            w = (u >= t0) + (u >= t1) + (u >= t2) + (u >= t3) + (u >= t4) + (u >= t5)
            if w == 6:
                while w < top and u >= thresholds[w]:
                    w += 1
            row[q] = np.float64(w)


@njit(cache=True, nogil=True)
def shuffles(keys, m, first, lo, hi, out):  # type: ignore[no-untyped-def]
    """out[r, q] for r in lo..hi: a uniformly random permutation of range(m) (int8), query q's in trial first + r.

    Fisher-Yates, step i taking its index from the top bits of mix(key ^ mix(trial) + i) times (i + 1) (Lemire's
    multiply-shift: a bias below (i + 1) / 2^32, nothing at these sizes).
    """
    n = keys.size
    for r in range(lo, hi):
        salt = mix(np.uint64(first + r + 1) * GOLDEN ^ np.uint64(0x5851F42D4C957F2D))
        for q in range(n):
            row = out[r, q]
            for i in range(m):
                row[i] = i
            for i in range(m - 1, 0, -1):
                word = mix((keys[q] ^ salt) + np.uint64(i) * GOLDEN) >> np.uint64(32)
                j = (word * np.uint64(i + 1)) >> np.uint64(32)
                held = row[i]
                row[i] = row[j]
                row[j] = held


@njit(cache=True, nogil=True)
def below(keys, k, first, lo, hi, out):  # type: ignore[no-untyped-def]
    """out[r, q] for r in lo..hi: query q's uniform integer in [0, k) in trial first + r (multiply-shift of 32 bits)."""
    n = keys.size
    for r in range(lo, hi):
        salt = mix(np.uint64(first + r + 1) * GOLDEN ^ np.uint64(0x5851F42D4C957F2D))
        row = out[r]
        for q in range(n):
            word = mix(keys[q] ^ salt) >> np.uint64(32)
            row[q] = (word * np.uint64(k)) >> np.uint64(32)
