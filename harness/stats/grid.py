"""Exact, order-free sums: each comparison's values as integers on a fixed-point grid.

A float sum depends on the order it is taken in, so sums taken per partition and added
differ from the one-machine sum in the last bits, and a p-value that counts replicates
"at least as extreme" can flip. Integers add the same in any order. So each row of
values (one comparison) is put on a grid of 2^-52 of a bound on its magnitude, where the
bound comes from an order-free reduction (the row's largest magnitude: its binary
exponent ``e`` with ``max |x| < 2^e``), giving integers of at most 52 bits. For a matrix
product with small non-negative integer weights (random signs, Poisson counts) the
integers are split into limbs of ``bits`` bits, few enough that every product sum stays
below 2^53 and so is exact in float64, BLAS's own type.

>>> e = exponent(np.array([0.75]))
>>> int(e[0]), on_grid(np.array([[0.5, -0.25]]), e).tolist()
(0, [[2251799813685248, -1125899906842624]])
>>> limbs = split_limbs(np.array([5, -3, 1 << 40]), 20)   # 3 limbs, each product sum exact in float64
>>> int(combine_exactly(limbs.sum(axis=1), 20))   # 5 - 3 + 2^40, exactly
1099511627778
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from harness.stats import _keyed_compiled as kernels

PRECISION = 52  # bits of a value on the grid: |x| <= 2^52, as float64 carries


def exponent(bound: np.ndarray) -> np.ndarray:
    """Per row, the smallest e with bound < 2^e (int64; 0 for a bound of 0)."""
    return np.frexp(np.asarray(bound, dtype=np.float64))[1].astype(np.int64)


def on_grid(values: np.ndarray, e: np.ndarray) -> np.ndarray:
    """(F, n) int64: round(values * 2^(52 - e)) per row; |result| <= 2^52 when max |row| < 2^e."""
    return np.rint(np.ldexp(values, (PRECISION - e)[:, None])).astype(np.int64)


def limb_bits(weight_total: int) -> int:
    """Bits per limb so that a sum of limbs times weights totalling at most ``weight_total`` stays below 2^53."""
    return max(1, min(PRECISION, 53 - int(weight_total).bit_length()))


def n_limbs(bits: int, magnitude: int = PRECISION) -> int:
    """Limbs of ``bits`` bits that a value of |x| <= 2^magnitude (one bit more with its sign) needs."""
    return -(-(magnitude + 1) // bits)


def split_limbs(x: np.ndarray, bits: int, magnitude: int = PRECISION) -> np.ndarray:
    """(L, *x.shape) float64 limbs of int64 ``x`` (|x| <= 2^magnitude): x = sum_l limb_l * 2^(l * bits); all but the
    last in [0, 2^bits), the last signed."""
    count = n_limbs(bits, magnitude)
    out = np.empty((count, *x.shape))
    rest = x.copy()
    mask = (1 << bits) - 1
    for level in range(count - 1):
        out[level] = rest & mask
        rest >>= bits  # arithmetic shift: the sign stays with the top limb
    out[count - 1] = rest
    return out


def combine(limb_sums: np.ndarray, bits: int) -> np.ndarray:
    """sum_l limb_sums[l] * 2^(l * bits) in float64, from the top limb down: one fixed order, so the same bits for the
    same (exact) limb sums."""
    total = np.zeros(limb_sums.shape[1:])
    for level in range(limb_sums.shape[0] - 1, -1, -1):
        total = total + np.ldexp(limb_sums[level], level * bits)
    return total


def combine_exactly(limb_sums: np.ndarray, bits: int) -> np.ndarray:
    """The same sum as Python integers (object array): exact."""
    flat = limb_sums.reshape(limb_sums.shape[0], -1)
    out = np.empty(flat.shape[1], dtype=object)
    for j in range(flat.shape[1]):
        out[j] = sum(int(flat[level, j]) << (level * bits) for level in range(flat.shape[0]))
    return out.reshape(limb_sums.shape[1:])


SQUARE_LIMB = 18  # limbs for exact sums of squares: products below 2^36, summed CHUNK at a time in int64
CHUNK = 1 << 26


def integer_sums(x: np.ndarray, magnitude: int = PRECISION) -> tuple[np.ndarray, np.ndarray]:
    """(sum of x, sum of x^2) per row of int64 ``x`` (|x| <= 2^magnitude), as Python integers (object arrays): exact.

    >>> first, second = integer_sums(np.array([[3, -(1 << 52)]]))
    >>> int(first[0]) == 3 - 2**52, int(second[0]) == 9 + 2**104
    (True, True)
    """
    rows = x.shape[0]
    first, second = np.zeros(rows, dtype=object), np.zeros(rows, dtype=object)
    for start in range(0, max(x.shape[1], 1), CHUNK):
        limbs = split_limbs(x[:, start : start + CHUNK], SQUARE_LIMB, magnitude).astype(np.int64)
        count = limbs.shape[0]
        for i in range(count):
            first += np.array([int(v) << (SQUARE_LIMB * i) for v in limbs[i].sum(axis=1).tolist()], dtype=object)
            for j in range(i, count):
                twice = 1 if i == j else 2
                products = (limbs[i] * limbs[j]).sum(axis=1).tolist()
                second += np.array([(twice * int(v)) << (SQUARE_LIMB * (i + j)) for v in products], dtype=object)
    return first, second


def float_total(values: np.ndarray) -> tuple[int, int]:
    """The exact sum of finite float64 ``values`` as (integer, exponent): sum = integer * 2^exponent.

    Each value is its 53-bit integer mantissa times a power of two; the mantissas are summed per
    exponent in 3 limbs of 18 bits, as 64-bit integers in one compiled pass (exact below 2^45
    values), then shifted together as Python integers. Sums of parts add up exactly: ``add_totals``.

    >>> integer, exponent = float_total(np.array([0.1, 0.2, -0.3]))
    >>> integer * 2.0**exponent   # exactly 2^-55; float sums say 2^-54 or 2^-55 depending on the order
    2.7755575615628914e-17
    >>> 0.1 + 0.2 - 0.3, -0.3 + 0.2 + 0.1
    (5.551115123125783e-17, 2.7755575615628914e-17)
    """
    v = np.ascontiguousarray(values, dtype=np.float64).ravel()
    if not v.size:
        return 0, 0
    # value = mantissa * 2^(max(field, 1) - 1075): a compiled pass adds each limb per exponent field, as integers
    sums = np.zeros((3, 2048), dtype=np.int64)
    low = int(kernels.exponent_limb_sums(v, sums))
    total = 0
    for level in range(3):
        for field in np.flatnonzero(sums[level]).tolist():
            total += int(sums[level, field]) << (18 * level + field - low)
    return total, low - 1075


def add_totals(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    """The exact sum of two ``float_total`` results."""
    low = min(a[1], b[1])
    return (a[0] << (a[1] - low)) + (b[0] << (b[1] - low)), low


def total_over(total: tuple[int, int], n: int) -> float:
    """total / n, correctly rounded (the mean of the values whose exact sum is ``total``)."""

    integer, exponent = total
    value = Fraction(integer, n) * (Fraction(2) ** exponent)
    return float(value)
