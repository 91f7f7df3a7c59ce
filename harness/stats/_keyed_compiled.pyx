# cython: language_level=3, cdivision=True
"""The compiled kernels behind :mod:`harness.stats.keyed` (Cython, built ahead of time by the package's build).

Every draw is a pure function of a query's 64-bit key and the replicate's number:
splitmix64's finaliser of ``key + (block + 1) * GOLDEN``. No state passes from one
query to the next, so the draws of a query never depend on which others are present.
Each kernel fills rows ``lo .. hi`` of its output without the GIL, so threads split the rows.
"""

from libc.stdint cimport int64_t, uint8_t, uint16_t, uint64_t, int8_t
from libc.stdlib cimport free, malloc

cdef uint64_t GOLDEN = 0x9E3779B97F4A7C15ULL
cdef uint64_t FNV_PRIME = 0x100000001B3ULL
cdef uint64_t SHUFFLE_SALT = 0x5851F42D4C957F2DULL
cdef Py_ssize_t TILE = 512  # queries drawn together: rows of the output are written in runs this long


cdef inline uint64_t mix(uint64_t z) noexcept nogil:
    """splitmix64's finaliser: a bijection of 64-bit words that spreads every input bit."""
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL
    return z ^ (z >> 31)


cdef int check_rows(Py_ssize_t lo, Py_ssize_t hi, Py_ssize_t rows, Py_ssize_t columns, Py_ssize_t queries,
                    Py_ssize_t wanted) except -1:
    """Rows ``lo .. hi`` of an output of ``rows`` x ``columns`` exist, and its columns are the ``wanted`` ones (one per
    query, or per column of x): the kernels run without bounds checks, so a wrong shape is refused here, not read past."""
    if lo < 0 or hi < lo or hi > rows:
        raise ValueError(f"rows {lo}..{hi} of an output of {rows}")
    if columns != wanted:
        raise ValueError(f"an output of {columns} columns for {wanted} ({queries} queries)")
    return 0


def hash_strings(const int64_t[::1] offsets, const uint8_t[::1] data, uint64_t salt, Py_ssize_t lo, Py_ssize_t hi,
                 uint64_t[::1] out):
    """out[i] = mix(FNV-1a of string i's UTF-8 bytes, started from ``salt``), for i in lo..hi."""
    cdef Py_ssize_t i
    cdef int64_t j
    cdef uint64_t h
    if lo < 0 or hi < lo or hi > out.shape[0] or offsets.shape[0] < hi + 1:
        raise ValueError(f"strings {lo}..{hi}: {offsets.shape[0]} offsets, {out.shape[0]} outputs")
    if hi > lo and (offsets[lo] < 0 or offsets[hi] > data.shape[0]):
        raise ValueError(f"strings {lo}..{hi} span bytes {offsets[lo]}..{offsets[hi]} of {data.shape[0]}")
    for i in range(lo, hi):
        if offsets[i + 1] < offsets[i]:
            raise ValueError(f"offsets decrease at string {i}")
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
    check_rows(lo, hi, out.shape[0], out.shape[1], n, n)
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
    cdef uint64_t t0, t1, t2, t3, t4, t5
    cdef uint64_t salt, u
    check_rows(lo, hi, out.shape[0], out.shape[1], n, n)
    if top < 6:
        raise ValueError(f"{top} thresholds: the weights need at least 6")
    t0, t1, t2, t3, t4, t5 = thresholds[0], thresholds[1], thresholds[2], thresholds[3], thresholds[4], thresholds[5]
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
    check_rows(lo, hi, out.shape[0], out.shape[1], n, n)
    if m < 0 or m > 127 or out.shape[2] != m:
        raise ValueError(f"permutations of {m} systems into an output of {out.shape[2]} places (at most 127)")
    with nogil:
        for r in range(lo, hi):
            salt = trial_salt(first + r)
            for q in range(n):
                for i in range(m):
                    out[r, q, i] = <int8_t>i
                for i in range(m - 1, 0, -1):
                    word = mix((keys[q] ^ salt) + <uint64_t>i * GOLDEN) >> 32
                    j = (word * <uint64_t>(i + 1)) >> 32
                    held = out[r, q, i]
                    out[r, q, i] = out[r, q, j]
                    out[r, q, j] = held


cdef inline uint64_t trial_salt(int64_t trial) noexcept nogil:
    """What every query's draw in a trial of :func:`below` and :func:`shuffles` is mixed with."""
    return mix(<uint64_t>(trial + 1) * GOLDEN ^ SHUFFLE_SALT)


cdef inline uint64_t below_one(uint64_t key, uint64_t salt, uint64_t k) noexcept nogil:
    """A query's uniform integer in [0, k) in the trial of ``salt``: multiply-shift of 32 bits of mix(key ^ salt)."""
    return ((mix(key ^ salt) >> 32) * k) >> 32


def below(const uint64_t[:] keys, int64_t k, int64_t first, Py_ssize_t lo, Py_ssize_t hi, uint16_t[:, ::1] out):
    """out[r, q] for r in lo..hi: query q's uniform integer in [0, k) in trial first + r (multiply-shift of 32 bits)."""
    cdef Py_ssize_t n = keys.shape[0], r, q
    cdef uint64_t salt
    check_rows(lo, hi, out.shape[0], out.shape[1], n, n)
    if k < 1 or k > 65536:
        raise ValueError(f"integers below {k}: k must be 1 .. 65536")
    with nogil:
        for r in range(lo, hi):
            salt = trial_salt(first + r)
            for q in range(n):
                out[r, q] = <uint16_t>below_one(keys[q], salt, <uint64_t>k)


cdef extern from "_keyed_sums.h" nogil:
    enum:
        WIDTH "HARNESS_WIDTH"  # columns of x summed together: one table row, 8 doubles
        ROWS "HARNESS_ROWS"  # rows of a table: the sums of every subset of GROUP queries
    void add_rows "harness_add_rows"(const double* tables, const uint8_t* subsets, Py_ssize_t groups, Py_ssize_t count,
                                     double* out, Py_ssize_t stride)

cdef enum:
    GROUP = 8  # queries per table
    TILE_GROUPS = 32  # tables held at once: 32 x 256 x 8 doubles = 512 KiB, within a core's L2


cdef void _spread_bytes(uint64_t* spread) noexcept nogil:
    """spread[b]: the 8 bits of byte b moved to bits 0, 8, ..., 56 (bit i of b to the lowest bit of byte i)."""
    cdef int b, i
    for b in range(256):
        spread[b] = 0
        for i in range(8):
            spread[b] |= (<uint64_t>((b >> i) & 1)) << (8 * i)


cdef void _subset_tables(const double[:, ::1] x, Py_ssize_t q0, Py_ssize_t c0, Py_ssize_t groups,
                         double* tables) noexcept nogil:
    """tables[g, m, :] = the sum of x[q0 + 8 g + j, c0 : c0 + WIDTH] over the bits j of m (rows past x: zero).

    Each row is one earlier row plus one query's values: sums of at most 8 terms, exact for integers below 2^50."""
    cdef Py_ssize_t n = x.shape[0], g, m, c, q, low
    cdef double* table
    cdef double* source
    for g in range(groups):
        table = tables + g * ROWS * WIDTH
        for c in range(WIDTH):
            table[c] = 0.0
        for m in range(1, ROWS):
            low = 0
            while not (m >> low) & 1:
                low += 1
            q = q0 + g * GROUP + low
            source = table + (m & (m - 1)) * WIDTH
            for c in range(WIDTH):
                table[m * WIDTH + c] = source[c] + (x[q, c0 + c] if q < n else 0.0)


def sign_products(const uint64_t[::1] keys, const double[:, ::1] x, int64_t first, Py_ssize_t lo, Py_ssize_t hi,
                  double[:, ::1] out):
    """out[r, c] = sum over queries q of (query q's sign bit in replicate first + r) * x[q, c], for r in lo..hi.

    The sign bits are :func:`sign_bits`' (bit (first + r) % 64 of mix(key + ((first + r) // 64 + 1) * GOLDEN)), but
    never written out: for every 8 queries a table holds the sums of x over each of their 256 subsets, and a
    replicate adds the row its 8 sign bits name (one addition where the product of the bits with x takes eight).
    x's columns come in groups of WIDTH (the caller pads them). Every value added is an integer, so the sums are
    exact (and the same as any other order's) while each partial sum stays below 2^53: the caller's limbs see to it.
    """
    cdef Py_ssize_t n = x.shape[0], columns = x.shape[1], count = hi - lo, chunk, tile, c0, q0, groups, g, j, r, b
    cdef Py_ssize_t stop, c
    cdef int64_t replicate, word_of
    cdef uint64_t spread[256]
    cdef uint64_t packed[8]
    cdef uint64_t word
    cdef double* tables
    cdef uint8_t* subsets
    if columns % WIDTH:
        raise ValueError(f"x needs a multiple of {WIDTH} columns, not {columns}")
    if keys.shape[0] != n:
        raise ValueError(f"{keys.shape[0]} keys for {n} rows of x")
    check_rows(lo, hi, out.shape[0], out.shape[1], n, columns)
    tables = <double*>malloc(TILE_GROUPS * ROWS * WIDTH * sizeof(double))
    subsets = <uint8_t*>malloc(max(count, 1) * TILE_GROUPS)
    if tables == NULL or subsets == NULL:
        free(tables)
        free(subsets)
        raise MemoryError()
    with nogil:
        _spread_bytes(spread)
        for r in range(lo, hi):
            for c in range(columns):
                out[r, c] = 0.0
        for tile in range((n + TILE_GROUPS * GROUP - 1) // (TILE_GROUPS * GROUP)):
            q0 = tile * TILE_GROUPS * GROUP
            groups = min(<Py_ssize_t>TILE_GROUPS, (n - q0 + GROUP - 1) // GROUP)
            # subsets[groups * r + g], bit j: whether query j of group g keeps its sign in replicate first + lo + r
            r = lo
            while r < hi:
                replicate = first + r
                word_of = replicate // 64
                stop = min(hi - r, 64 - replicate % 64)  # the replicates this word serves
                for g in range(groups):
                    for c in range(8):
                        packed[c] = 0
                    for j in range(GROUP):
                        if q0 + g * GROUP + j < n:
                            word = mix(keys[q0 + g * GROUP + j] + <uint64_t>(word_of + 1) * GOLDEN)
                            for c in range(8):  # byte c of the word: replicates 8 c .. 8 c + 7 of the 64
                                packed[c] |= spread[(word >> (8 * c)) & 255] << j
                    for b in range(stop):
                        c = replicate % 64 + b
                        subsets[groups * (r - lo + b) + g] = <uint8_t>((packed[c >> 3] >> (8 * (c & 7))) & 255)
                r += stop
            for chunk in range(columns // WIDTH):
                c0 = chunk * WIDTH
                _subset_tables(x, q0, c0, groups, tables)
                if count:
                    add_rows(tables, subsets, groups, count, &out[lo, c0], columns)
    free(tables)
    free(subsets)


def sign_products_width():
    """The columns :func:`sign_products` sums together (its x has a multiple of them)."""
    return WIDTH


cdef extern from "_keyed_sums.h" nogil:
    enum:
        MOST_SLOTS "HARNESS_MOST_SLOTS"
    void slot_rows "harness_slot_rows"(const uint16_t* choice, Py_ssize_t count, const int8_t* table, int slots,
                                       const double* const* x, const Py_ssize_t* stride, double* acc)
    enum:
        PAIR_ROWS "HARNESS_PAIR_ROWS"
    void pair_table "harness_pair_table"(const int8_t* table, const double* const* x, const Py_ssize_t* stride,
                                         Py_ssize_t count, double* pairs)
    void add_pairs "harness_add_pairs"(const uint16_t* choice, Py_ssize_t count, const double* pairs, double* acc)

cdef enum:
    SLOT_BYTES = 1 << 18  # the queries' values a tile of :func:`slot_sums` reads for its trials: within a core's L2
    PAIR_QUERIES = 128  # three systems: the queries of a tile whose pair tables (288 KiB) are read for its trials


cdef inline void _group_rows(const double[:, :, :, ::1] x, Py_ssize_t h, Py_ssize_t q, Py_ssize_t top,
                             const double* zeros, const double** rows, Py_ssize_t* stride) noexcept nogil:
    """rows[j] for j < top: where system j's values of column group h start at query q, ``stride[j]`` (WIDTH) apart
    from one query to the next; a system beyond x's (x.shape[0]) a row of zeros that does not move (stride 0)."""
    cdef Py_ssize_t j
    for j in range(top):
        if j < x.shape[0]:
            rows[j] = &x[j, h, q, 0]
            stride[j] = WIDTH
        else:
            rows[j] = zeros
            stride[j] = 0


def slot_sums(const uint64_t[::1] keys, const int8_t[:, ::1] table, const double[:, :, :, ::1] x, int64_t first,
              Py_ssize_t lo, Py_ssize_t hi, double[:, :, ::1] out):
    """out[r, i, WIDTH * h + c] += the sum over queries q of x[table[p, i], h, q, c], for r in lo..hi, where p is query
    q's uniform integer below the rows of ``table`` in trial first + r (:func:`below`'s draw); a system ``table`` names
    beyond x's (x.shape[0]) adds nothing. x: systems x column groups x queries x WIDTH, so that a group's rows of a
    system's queries are read one after the other.

    The randomised Tukey HSD's slot sums, with ``table`` the m! permutations' first m - 1 slots (slot i holds system
    table[p, i]) and x each system's values less the last one's: each (trial, query) adds rows of x, where indicator
    matrices times x multiplied each of them by every 0 and 1. The queries go a tile at a time (``SLOT_BYTES`` of x),
    each tile read for every trial, x's columns WIDTH at a time (the caller pads them), a trial's sums in registers;
    for three systems (6 rows, 2 slots) through tables of each pair of queries' 36 rows (:func:`_pair_sums`).
    Every value added is an integer, so the sums are exact (and the same as any other order's) while each partial
    sum stays below 2^53: the caller's limbs see to it.
    """
    cdef Py_ssize_t n = keys.shape[0], k = table.shape[0], slots = table.shape[1], held = x.shape[0]
    cdef Py_ssize_t groups = x.shape[1], columns = x.shape[1] * WIDTH, width, q0, q1, q, r, i, c, h, top = 0
    cdef uint64_t salt
    cdef uint16_t* choice
    cdef double zeros[WIDTH]
    cdef const double* rows[128]
    cdef Py_ssize_t stride[128]
    cdef double acc[MOST_SLOTS * WIDTH]
    if lo < 0 or hi < lo or hi > out.shape[0]:
        raise ValueError(f"rows {lo}..{hi} of an output of {out.shape[0]}")
    if x.shape[2] != n or x.shape[3] != WIDTH or out.shape[1] != slots or out.shape[2] != columns:
        raise ValueError(f"{n} keys, x of {x.shape[0]} x {x.shape[1]} x {x.shape[2]} x {x.shape[3]} ({WIDTH} columns a "
                         f"group), and an output of {out.shape[1]} slots x {out.shape[2]} columns for a table of {slots} "
                         f"slots")
    if k < 1 or k > 65536 or slots > MOST_SLOTS:
        raise ValueError(f"a table of {k} rows (1 .. 65536) and {slots} slots (at most {MOST_SLOTS})")
    if table.strides[0] != slots or x.strides[2] != WIDTH * sizeof(double):  # read past a row as the next one
        raise ValueError("a table whose rows follow one another, and x whose queries' groups do")
    for r in range(k):
        for i in range(slots):
            if table[r, i] < 0:
                raise ValueError(f"table[{r}, {i}] = {table[r, i]}: a system's number is never negative")
            top = max(top, table[r, i] + 1)
    if n == 0 or columns == 0 or slots == 0 or hi == lo:
        return
    if k == 6 and slots == 2 and top <= 3:  # three systems: tables of query pairs
        _pair_sums(keys, table, x, first, lo, hi, out, top)
        return
    width = max(1, SLOT_BYTES // (8 * max(held, 1) * columns))
    choice = <uint16_t*>malloc(min(width, n) * sizeof(uint16_t))
    if choice == NULL:
        raise MemoryError()
    for c in range(WIDTH):
        zeros[c] = 0.0
    with nogil:
        q0 = 0
        while q0 < n:
            q1 = min(n, q0 + width)
            for r in range(lo, hi):
                salt = trial_salt(first + r)
                for q in range(q0, q1):
                    choice[q - q0] = <uint16_t>below_one(keys[q], salt, <uint64_t>k)
                for h in range(groups):
                    _group_rows(x, h, q0, top, zeros, rows, stride)
                    for c in range(slots * WIDTH):
                        acc[c] = 0.0
                    slot_rows(choice, q1 - q0, &table[0, 0], <int>slots, rows, stride, acc)
                    for i in range(slots):
                        for c in range(WIDTH):
                            out[r, i, h * WIDTH + c] += acc[i * WIDTH + c]
            q0 = q1
    free(choice)


cdef int _pair_sums(const uint64_t[::1] keys, const int8_t[:, ::1] table, const double[:, :, :, ::1] x, int64_t first,
                    Py_ssize_t lo, Py_ssize_t hi, double[:, :, ::1] out, Py_ssize_t top) except -1:
    """:func:`slot_sums` for three systems (the caller checked the arguments): a tile's draws for every trial made
    first, then for each column group a table of the 36 rows each pair of its queries can add (:func:`pair_table`),
    which each trial reads one row a pair of (:func:`add_pairs`); an odd last query adds its own rows."""
    cdef Py_ssize_t n = keys.shape[0], groups = x.shape[1], trials = hi - lo, q0, q1, count, r
    cdef Py_ssize_t q, h, c, i
    cdef uint64_t salt
    cdef double zeros[WIDTH]
    cdef const double* rows[3]
    cdef const double* last[3]
    cdef Py_ssize_t stride[3]
    cdef double acc[2 * WIDTH]
    cdef uint16_t* choice = <uint16_t*>malloc(trials * PAIR_QUERIES * sizeof(uint16_t))
    cdef double* pairs = <double*>malloc((PAIR_QUERIES // 2) * PAIR_ROWS * 2 * WIDTH * sizeof(double))
    if choice == NULL or pairs == NULL:
        free(choice)
        free(pairs)
        raise MemoryError()
    for c in range(WIDTH):
        zeros[c] = 0.0
    with nogil:
        q0 = 0
        while q0 < n:
            q1 = min(n, q0 + PAIR_QUERIES)
            count = q1 - q0
            for r in range(trials):
                salt = trial_salt(first + lo + r)
                for q in range(q0, q1):
                    choice[r * PAIR_QUERIES + q - q0] = <uint16_t>below_one(keys[q], salt, 6)
            for h in range(groups):
                _group_rows(x, h, q1 - 1, top, zeros, last, stride)  # an odd last query's own rows
                _group_rows(x, h, q0, top, zeros, rows, stride)
                pair_table(&table[0, 0], rows, stride, count, pairs)
                for r in range(trials):
                    for c in range(2 * WIDTH):
                        acc[c] = 0.0
                    add_pairs(&choice[r * PAIR_QUERIES], count, pairs, acc)
                    if count % 2:
                        slot_rows(&choice[r * PAIR_QUERIES + count - 1], 1, &table[0, 0], 2, last, stride, acc)
                    for i in range(2):
                        for c in range(WIDTH):
                            out[lo + r, i, h * WIDTH + c] += acc[i * WIDTH + c]
            q0 = q1
    free(choice)
    free(pairs)
    return 0


def exponent_limb_sums(const double[::1] values, int64_t[:, ::1] out):
    """For :func:`harness.stats.grid.float_total`: each value as its signed 53-bit integer mantissa times 2 to its
    exponent field (1 for a subnormal or zero), the mantissa's three limbs of 18 bits (the top one signed) added to
    ``out[level, exponent field]``; returns the least exponent field. Integers throughout, so the sums are exact (a
    limb is below 2^18: 2^45 values before one could overflow)."""
    cdef Py_ssize_t i, n = values.shape[0]
    cdef int64_t bits, mantissa, field, least = 2047
    cdef const int64_t* raw
    if out.shape[0] != 3 or out.shape[1] != 2048:
        raise ValueError(f"an output of {out.shape[0]} x {out.shape[1]} for 3 limbs x 2048 exponents")
    if n == 0:
        return least
    raw = <const int64_t*> &values[0]
    with nogil:
        for i in range(n):
            bits = raw[i]
            field = (bits >> 52) & 0x7FF
            mantissa = bits & 0xFFFFFFFFFFFFFLL
            if field > 0:
                mantissa = mantissa | 0x10000000000000LL
            else:
                field = 1
            if bits < 0:
                mantissa = -mantissa
            if field < least:
                least = field
            out[0, field] += mantissa & 0x3FFFF
            out[1, field] += (mantissa >> 18) & 0x3FFFF
            out[2, field] += mantissa >> 36
    return least
