"""Simulated per-query scores with realistic shapes, for calibration and power (seeded)."""

from __future__ import annotations

import numpy as np


def per_query_scores(
    shape: str, rng: np.random.Generator, trials: int, n: int, systems: int = 2, shift: float = 0.0
) -> np.ndarray:
    """(systems, trials, n) per-query values of systems drawn from the same distribution.

    A query's difficulty is shared by every system (that is what pairing exploits);
    each system adds its own noise. ``shift`` raises the last system's latent quality.
      continuous: an nDCG-like score in [0, 1];
      precision:  P@10, multiples of 0.1 with many zeros;
      rr:         reciprocal rank, 1/rank or 0 (0/1-heavy);
      binary:     a hit or not (Success@10), 0 or 1.
    """
    difficulty = rng.normal(size=(1, trials, n))
    quality = difficulty + 0.8 * rng.normal(size=(systems, trials, n))
    quality[-1] += shift
    if shape == "continuous":
        return np.asarray(1.0 / (1.0 + np.exp(-(quality - 0.5))))
    if shape == "precision":
        p = 1.0 / (1.0 + np.exp(-(quality - 1.0) * 1.5))
        return np.asarray(rng.binomial(10, p) / 10.0)
    if shape == "rr":
        p = 1.0 / (1.0 + np.exp(-(quality - 0.3) * 1.5))
        rank = rng.geometric(p)
        return np.asarray(np.where(rank <= 10, 1.0 / rank, 0.0))
    if shape == "binary":
        p = 1.0 / (1.0 + np.exp(-(quality - 0.2) * 1.5))
        return np.asarray((rng.random(p.shape) < p).astype(np.float64))
    raise ValueError(shape)
