"""Gain schemes: how a relevance label becomes a gain in graded measures.

>>> import numpy as np
>>> labels = np.array([3.0, 1.0, 0.0, -1.0, np.nan])
>>> GainScheme.linear().gain_of(labels).tolist()
[3.0, 1.0, 0.0, 0.0, 0.0]
>>> GainScheme.exponential().gain_of(labels).tolist()
[7.0, 1.0, 0.0, 0.0, 0.0]
>>> GainScheme.custom({1: 3.0, 3: 0.5}).gain_of(labels).tolist()
[0.5, 3.0, 0.0, 0.0, 0.0]
>>> GainScheme.binary(2).gain_of(labels).tolist()       # RecBole, Microsoft Recommenders: a hit gains 1
[1.0, 0.0, 0.0, 0.0, 0.0]
>>> GainScheme.elliot(1).gain_of(labels).tolist()       # Elliot: 2^(label - t + 1) - 1 from the threshold t
[7.0, 1.0, 0.0, 0.0, 0.0]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class GainScheme:
    """``linear``: gain = label; ``exponential``: 2^label - 1; ``custom``: a table per level; ``binary``: 1 for
    a label at or above ``threshold``, else 0 (RecBole, Microsoft Recommenders); ``elliot``: 2^(label - threshold +
    1) - 1 at or above ``threshold``, else 0 (Elliot's discounted relevance).

    Levels missing from a custom table keep their linear gain, as in trec_eval's
    ``ndcg.1=3,2=9``. Unjudged documents (NaN or negative labels) always gain 0.
    """

    kind: str = "linear"
    table: tuple[tuple[float, float], ...] = ()
    threshold: float = 1.0  # binary and elliot: the lowest relevant label
    floor: float = 0.0  # linear and exponential: labels below it gain 0 (ranx drops the judgments below its level)

    @classmethod
    def linear(cls, floor: float = 0.0) -> GainScheme:
        return cls("linear", floor=float(floor))

    @classmethod
    def exponential(cls, floor: float = 0.0) -> GainScheme:
        return cls("exponential", floor=float(floor))

    @classmethod
    def custom(cls, table: dict[float, float]) -> GainScheme:
        return cls("custom", tuple(sorted((float(k), float(v)) for k, v in table.items())))

    @classmethod
    def binary(cls, threshold: float) -> GainScheme:
        return cls("binary", threshold=float(threshold))

    @classmethod
    def elliot(cls, threshold: float) -> GainScheme:
        return cls("elliot", threshold=float(threshold))

    def gain_of(self, labels: np.ndarray) -> np.ndarray:
        labels = np.asarray(labels, dtype=np.float64)
        judged = labels >= max(self.floor, 0.0) if self.kind in ("linear", "exponential") else labels >= 0  # NaN: False
        base = np.where(judged, labels, 0.0)
        if self.kind in ("binary", "elliot"):
            hit = judged & (labels >= self.threshold)
            if self.kind == "binary":
                return hit.astype(np.float64)
            return np.where(hit, np.exp2(base - self.threshold + 1.0) - 1.0, 0.0)
        if self.kind == "exponential":
            return np.where(judged, np.exp2(base) - 1.0, 0.0)
        if not self.table:
            return base
        gains = base.copy()
        for level, gain in self.table:
            gains[judged & (labels == level)] = gain
        return gains
