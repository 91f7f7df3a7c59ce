"""numba for the compiled kernels: import ``njit`` from here, so the one JIT dependency has one door.

numba is imported only when a compiled kernel is first used (large runs, co-occurrence
similarity, keyed draws); nothing of numba's or any other library's state is changed.

>>> from harness.kernels._numba import njit
>>> njit(lambda x: x + 1)(1)
2
"""

from __future__ import annotations

from numba import njit, types

__all__ = ["njit", "types"]
