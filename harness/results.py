"""Frozen result types: per-query values and their aggregates."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from harness.measures.registry import REGISTRY
from harness.measures.spec import Measure

if TYPE_CHECKING:
    import pandas as pd

MIN_GEO_MEAN = 0.00001  # trec_eval.h: the floor of a value in a geometric mean


@dataclass(frozen=True, eq=False)
class PerQuery:
    """One run's values: ``values[i, j]`` is measure j on query i.

    ``query_ids`` are in trec_eval's order (byte order of the ids); ``in_run``
    tells which queries the run retrieved anything for (the others are zero-filled).
    """

    run: str
    query_ids: np.ndarray
    measures: tuple[Measure, ...]
    values: np.ndarray
    in_run: np.ndarray

    def column(self, measure: Measure) -> np.ndarray:
        return self.values[:, self.measures.index(measure)]

    def to_frame(self, wide: bool = False) -> pd.DataFrame:
        """Tidy table: ``run, query_id, measure, value`` (or one column per measure)."""
        import pandas as pd

        if wide:
            frame = pd.DataFrame(self.values, columns=[str(m) for m in self.measures])
            frame.insert(0, "query_id", self.query_ids.astype(str))
            frame.insert(0, "run", self.run)
            return frame
        n_q, n_m = self.values.shape
        return pd.DataFrame(
            {
                "run": np.full(n_q * n_m, self.run, dtype=object),
                "query_id": np.repeat(self.query_ids.astype(str), n_m),
                "measure": np.tile(np.array([str(m) for m in self.measures], dtype=object), n_q),
                "value": self.values.reshape(-1),
            }
        )


def aggregate_values(measure: Measure, values: np.ndarray) -> float:
    """Aggregate one measure's per-query values the way its registry entry says.

    >>> aggregate_values(Measure("AP"), np.array([0.5, 0.25]))
    0.375
    >>> round(aggregate_values(Measure("GMAP"), np.array([0.5, 0.0])), 6)  # floor 1e-5
    0.002236
    """
    kind = REGISTRY.definition(measure).aggregate
    if values.size == 0:
        return 0.0
    if kind == "sum":
        return float(values.sum())
    if kind == "count":
        return float(values.size)
    if kind == "gmean":
        return float(np.exp(np.log(np.maximum(values, MIN_GEO_MEAN)).mean()))
    return float(values.mean())


def aggregate(per_query: PerQuery) -> dict[Measure, float]:
    """The summary of a run: one number per measure."""
    return {m: aggregate_values(m, per_query.values[:, j]) for j, m in enumerate(per_query.measures)}
