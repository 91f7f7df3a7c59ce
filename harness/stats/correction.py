"""Multiple-comparison corrections on arrays of p-values.

>>> holm(np.array([0.01, 0.04, 0.03, 0.005])).tolist()
[0.03, 0.06, 0.06, 0.02]
>>> benjamini_hochberg(np.array([0.01, 0.04, 0.03, 0.005])).tolist()
[0.02, 0.04, 0.04, 0.02]
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def bonferroni(p: np.ndarray) -> np.ndarray:
    """p x m, capped at 1."""
    p = np.asarray(p, dtype=np.float64)
    return np.minimum(p * p.size, 1.0)


def holm(p: np.ndarray) -> np.ndarray:
    """Holm's step-down: the i-th smallest p times (m - i + 1), made monotone, capped at 1."""
    p = np.asarray(p, dtype=np.float64)
    m = p.size
    if m == 0:
        return p
    order = np.argsort(p, kind="stable")
    stepped = np.maximum.accumulate(p[order] * (m - np.arange(m)))
    out = np.empty(m)
    out[order] = np.minimum(stepped, 1.0)
    return out


def benjamini_hochberg(p: np.ndarray) -> np.ndarray:
    """Benjamini-Hochberg step-up (false discovery rate): p_(i) x m / i, made monotone from the top."""
    p = np.asarray(p, dtype=np.float64)
    m = p.size
    if m == 0:
        return p
    order = np.argsort(p, kind="stable")
    scaled = p[order] * m / np.arange(1, m + 1)
    stepped = np.minimum.accumulate(scaled[::-1])[::-1]
    out = np.empty(m)
    out[order] = np.minimum(stepped, 1.0)
    return out


def no_correction(p: np.ndarray) -> np.ndarray:
    return np.asarray(p, dtype=np.float64)


CORRECTIONS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "holm": holm,
    "bonferroni": bonferroni,
    "bh": benjamini_hochberg,
    "none": no_correction,
}


def correct(p: np.ndarray, method: str) -> np.ndarray:
    """Adjust one family of p-values; NaN p-values stay NaN and do not count in the family."""
    p = np.asarray(p, dtype=np.float64)
    out = np.full(p.size, np.nan)
    ok = ~np.isnan(p)
    out[ok] = CORRECTIONS[method](p[ok])
    return out
