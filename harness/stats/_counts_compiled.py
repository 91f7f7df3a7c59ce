"""The compiled count behind :func:`harness.stats._counts.resample_counts` (numba, cached on disk)."""

from __future__ import annotations

from harness.kernels._numba import njit


@njit(cache=True, nogil=True)
def count_rows(draws, lo, hi, out):  # type: ignore[no-untyped-def]
    """Rows lo..hi of ``out``: each row's counts of that row of ``draws``."""
    for r in range(lo, hi):
        row = out[r]
        row[:] = 0.0
        for k in range(draws.shape[1]):
            row[draws[r, k]] += 1.0
