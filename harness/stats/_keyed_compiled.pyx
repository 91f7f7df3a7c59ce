# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The compiled kernels behind :mod:`harness.stats.keyed` (Cython, built ahead of time by the package's build).

Every draw is a pure function of a query's 64-bit key and the replicate's number:
splitmix64's finaliser of ``key + (block + 1) * GOLDEN``. No state passes from one
query to the next, so the draws of a query never depend on which others are present.
Each kernel fills rows ``lo .. hi`` of its output without the GIL, so threads split the rows.
"""

from libc.stdint cimport int64_t, uint8_t, uint16_t, uint64_t, int8_t

cdef uint64_t GOLDEN = 0x9E3779B97F4A7C15ULL
cdef uint64_t FNV_PRIME = 0x100000001B3ULL
cdef uint64_t SHUFFLE_SALT = 0x5851F42D4C957F2DULL
cdef Py_ssize_t TILE = 512  # queries drawn together: rows of the output are written in runs this long


cdef inline uint64_t mix(uint64_t z) noexcept nogil:
    """splitmix64's finaliser: a bijection of 64-bit words that spreads every input bit."""
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL
    return z ^ (z >> 31)


def hash_strings(const int64_t[::1] offsets, const uint8_t[::1] data, uint64_t salt, Py_ssize_t lo, Py_ssize_t hi,
                 uint64_t[::1] out):
    """out[i] = mix(FNV-1a of string i's UTF-8 bytes, started from ``salt``), for i in lo..hi."""
    cdef Py_ssize_t i
    cdef int64_t j
    cdef uint64_t h
    with nogil:
        for i in range(lo, hi):
            h = salt
            for j in range(offsets[i], offsets[i + 1]):
                h = (h ^ <uint64_t>data[j]) * FNV_PRIME
            out[i] = mix(h ^ <uint64_t>(offsets[i + 1] - offsets[i]))


def sign_bits(const uint64_t[:] keys, int64_t first, Py_ssize_t lo, Py_ssize_t hi, double[:, ::1] out):
    """Rows lo..hi of ``out`` (replicates first + lo ..): bit (r % 64) of mix(key + (r // 64 + 1) * GOLDEN), as 0.0 / 1.0."""
    cdef Py_ssize_t n = keys.shape[0], start, stop, r, q, j, run
    cdef int64_t replicate, word_of, bit
    cdef uint64_t word
    with nogil:
        for start in range(0, n, 512):  # TILE
            stop = min(n, start + TILE)
            r = lo
            while r < hi:
                replicate = first + r
                word_of = replicate // 64
                bit = replicate % 64
                run = min(hi - r, 64 - bit)  # the rows this word serves
                for q in range(start, stop):
                    word = mix(keys[q] + <uint64_t>(word_of + 1) * GOLDEN)
                    for j in range(run):
                        out[r + j, q] = <double>((word >> <uint64_t>(bit + j)) & 1)
                r += run


def poisson_weights(const uint64_t[:] keys, const uint64_t[::1] thresholds, int64_t first, Py_ssize_t lo,
                    Py_ssize_t hi, double[:, ::1] out):
    """Rows lo..hi of ``out``: each query's Poisson(1) weight in replicate first + r, by inversion of a 53-bit uniform.

    The weight is the number of thresholds at or below the uniform: the first six compared without a branch (a
    branch per comparison mispredicts often: the weight is 0, 1 or 2 about as often), the rest (1 draw in 1,700) in a loop.
    """
    cdef Py_ssize_t n = keys.shape[0], top = thresholds.shape[0], r, q, w
    cdef uint64_t t0 = thresholds[0], t1 = thresholds[1], t2 = thresholds[2]
    cdef uint64_t t3 = thresholds[3], t4 = thresholds[4], t5 = thresholds[5]
    cdef uint64_t salt, u
    with nogil:
        for r in range(lo, hi):
            salt = mix(<uint64_t>(first + r + 1) * GOLDEN)
            for q in range(n):
                u = mix(keys[q] ^ salt) >> 11
                w = (u >= t0) + (u >= t1) + (u >= t2) + (u >= t3) + (u >= t4) + (u >= t5)
                if w == 6:
                    while w < top and u >= thresholds[w]:
                        w += 1
                out[r, q] = <double>w


def shuffles(const uint64_t[:] keys, Py_ssize_t m, int64_t first, Py_ssize_t lo, Py_ssize_t hi,
             int8_t[:, :, ::1] out):
    """out[r, q] for r in lo..hi: a uniformly random permutation of range(m) (int8), query q's in trial first + r.

    Fisher-Yates, step i taking its index from the top bits of mix(key ^ mix(trial) + i) times (i + 1) (Lemire's
    multiply-shift: a bias below (i + 1) / 2^32, nothing at these sizes).
    """
    cdef Py_ssize_t n = keys.shape[0], r, q, i
    cdef uint64_t salt, word, j
    cdef int8_t held
    with nogil:
        for r in range(lo, hi):
            salt = mix(<uint64_t>(first + r + 1) * GOLDEN ^ SHUFFLE_SALT)
            for q in range(n):
                for i in range(m):
                    out[r, q, i] = <int8_t>i
                for i in range(m - 1, 0, -1):
                    word = mix((keys[q] ^ salt) + <uint64_t>i * GOLDEN) >> 32
                    j = (word * <uint64_t>(i + 1)) >> 32
                    held = out[r, q, i]
                    out[r, q, i] = out[r, q, j]
                    out[r, q, j] = held


def below(const uint64_t[:] keys, int64_t k, int64_t first, Py_ssize_t lo, Py_ssize_t hi, uint16_t[:, ::1] out):
    """out[r, q] for r in lo..hi: query q's uniform integer in [0, k) in trial first + r (multiply-shift of 32 bits)."""
    cdef Py_ssize_t n = keys.shape[0], r, q
    cdef uint64_t salt, word
    with nogil:
        for r in range(lo, hi):
            salt = mix(<uint64_t>(first + r + 1) * GOLDEN ^ SHUFFLE_SALT)
            for q in range(n):
                word = mix(keys[q] ^ salt) >> 32
                out[r, q] = <uint16_t>((word * <uint64_t>k) >> 32)
