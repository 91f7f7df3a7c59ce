"""numba for the compiled kernels, without its BLAS probe: import ``njit`` from here.

numba's first compilation or cache load imports ``numba.np.arraymath``, which checks
that a BLAS is there by importing ``scipy.linalg``: 0.2 s and about 40 MB, a quarter of
numba's start-up, for nothing here, since no compiled kernel of harness calls a BLAS
routine (``np.dot``, ``@``). Unless ``scipy.linalg`` is already loaded, the check is
answered "absent" once, which only makes numba use its own loop for inner products.

>>> from harness.kernels._numba import njit
>>> njit(lambda x: x + 1)(1)
2
"""

from __future__ import annotations

import sys

import numba.np.linalg as _linalg
from numba import njit, types

__all__ = ["njit", "types"]


def _absent() -> None:
    raise ImportError("not probed: harness's compiled kernels call no BLAS")


def _skip_blas_probe() -> None:
    if "scipy.linalg" in sys.modules or "numba.np.arraymath" in sys.modules:
        return  # nothing to save, or the probe has run already
    probe = _linalg.ensure_blas
    _linalg.ensure_blas = _absent
    try:
        import numba.np.arraymath as arraymath  # runs the probe, once per process
    finally:
        _linalg.ensure_blas = probe
    setattr(arraymath, "ensure_blas", probe)  # noqa: B010  (numba does not export the name)


_skip_blas_probe()
