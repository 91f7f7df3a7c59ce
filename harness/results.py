"""Frozen result types: per-query values and their aggregates."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from harness.measures.registry import REGISTRY
from harness.measures.spec import Measure, deepest_cutoff

if TYPE_CHECKING:
    import pandas as pd

    from harness.kernels._segments import RankedLists

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

    def __repr__(self) -> str:
        names = ", ".join(str(m) for m in self.measures[:4]) + (", ..." if len(self.measures) > 4 else "")
        return f"PerQuery({self.run!r}: {len(self.query_ids)} queries x {len(self.measures)} measures: {names})"

    def column(self, measure: Measure | str) -> np.ndarray:
        if isinstance(measure, str):
            from harness.measures.parse import parse_measure

            measure = parse_measure(measure)
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

    Sums are exact and rounded once (the mean is the correctly rounded mean), so an aggregate
    never depends on the queries' order, nor on how a cluster split them.

    >>> aggregate_values(Measure("AP"), np.array([0.5, 0.25]))
    0.375
    >>> round(aggregate_values(Measure("GMAP"), np.array([0.5, 0.0])), 6)  # floor 1e-5
    0.002236
    """
    definition = REGISTRY.definition(measure)
    if definition.undefined_skipped:  # beyond accuracy: users for whom the measure is undefined are left out
        values = values[~np.isnan(values)]
        if values.size == 0:
            return float("nan")
    if values.size and not np.isfinite(values).all():  # NaN or infinite: no exact sum, and the float one as undefined
        return float(values.sum() if definition.aggregate == "sum" else values.mean())
    return aggregate_from_total(measure, aggregate_total(measure, values), values.size)


def aggregate_total(measure: Measure, values: np.ndarray) -> tuple[int, int]:
    """The exact sum an aggregate divides (values, or their floored logs for a geometric mean), as
    :func:`harness.stats.grid.float_total`; the totals of parts add up (``grid.add_totals``)."""
    from harness.stats.grid import float_total

    if REGISTRY.definition(measure).aggregate == "gmean":
        return float_total(np.log(np.maximum(values, MIN_GEO_MEAN)))
    return float_total(values)


def aggregate_from_total(measure: Measure, total: tuple[int, int], n: int) -> float:
    """A measure's aggregate over n values from their exact total: rounded once."""
    from harness.stats.grid import total_over

    kind = REGISTRY.definition(measure).aggregate
    if n == 0:
        return float("nan") if REGISTRY.definition(measure).undefined_skipped else 0.0
    if kind == "count":
        return float(n)
    if kind == "sum":
        return total_over(total, 1)
    if kind == "gmean":
        return float(np.exp(total_over(total, n)))
    return total_over(total, n)


class Aggregates(dict[Measure, float]):
    """One number per measure, indexable by the Measure or by its name as written.

    >>> values = Aggregates({Measure("AP"): 0.5})
    >>> values["AP"], values[Measure("AP")], "AP" in values
    (0.5, 0.5, True)
    """

    @staticmethod
    def _key(key: object) -> object:
        if isinstance(key, str):
            from harness.measures.parse import parse_measure

            return parse_measure(key)
        return key

    def __getitem__(self, key: object) -> float:
        return super().__getitem__(self._key(key))  # type: ignore[index]

    def __contains__(self, key: object) -> bool:
        return super().__contains__(self._key(key))

    def get(self, key: object, default: float | None = None) -> float | None:  # type: ignore[override,unused-ignore]
        return super().get(self._key(key), default)  # type: ignore[call-overload]

    def to_dict(self) -> dict[str, float]:
        """Plain ``{measure name: value}``."""
        return {str(m): v for m, v in self.items()}


def aggregate(per_query: PerQuery) -> Aggregates:
    """The summary of a run: one number per measure (its mean, sum or geometric mean, as the registry says)."""
    return Aggregates({m: aggregate_values(m, per_query.values[:, j]) for j, m in enumerate(per_query.measures)})


@dataclass(frozen=True, eq=False)
class RunResult:
    """One system on one dataset: its per-query values, segments and data diagnostics."""

    dataset: str
    system: str
    per_query: PerQuery
    segments: np.ndarray  # segment name per query ('' when the query has none)
    diagnostics: dict[str, object]
    # system measures (coverage, entropy, Gini) are functions of the lists as a whole: kept to resample users
    lists: RankedLists | None = None  # the ranked lists with their items, in per_query's query order
    system_measures: tuple[Measure, ...] = ()
    item_counts: np.ndarray | None = None  # recommendations of each recommended item, descending (the long tail)
    item_counts_cutoff: int | None = None  # the lists' cutoff they were counted at (None: whole lists)

    @property
    def resamples_lists(self) -> bool:
        """Its system measures are resampled over its lists (not when reused from an earlier evaluation)."""
        return bool(self.system_measures) and self.lists is not None

    def segment_masks(self) -> list[tuple[str, np.ndarray]]:
        """('all', every query), then (segment, its queries) for each segment, sorted by name."""
        masks = [("all", np.ones(len(self.segments), dtype=bool))]
        masks += [(str(s), self.segments == s) for s in sorted(set(self.segments.tolist()) - {""})]
        return masks


def long_tail_cutoff(measures: tuple[Measure, ...]) -> int | None:
    """The cutoff the long tail is counted at: the largest of the beyond-accuracy measures' (None: whole lists)."""
    return deepest_cutoff(m for m in measures if REGISTRY.definition(m).beyond_accuracy)


def recommendation_counts(codes: np.ndarray, pos: np.ndarray, cutoff: int | None) -> np.ndarray:
    """How often each recommended item is recommended within ``cutoff``, descending (the long tail)."""
    counts = np.bincount(codes if cutoff is None else codes[pos < cutoff])
    return np.sort(counts[counts > 0])[::-1].astype(np.float64)


def long_tail_rows(result: RunResult, points: int = 200) -> list[dict[str, object]]:
    """The recommendation-count curve of a run, at most ``points`` ranks (log-spaced, first and last kept)."""
    if result.item_counts is None or result.item_counts.size == 0:
        return []
    counts = result.item_counts
    ranks = np.unique(np.geomspace(1, counts.size, num=min(points, counts.size)).round().astype(np.int64))
    cumulative = np.cumsum(counts) / counts.sum()
    return [{"dataset": result.dataset, "system": result.system, "cutoff": result.item_counts_cutoff or 0,
             "rank": int(r), "recommendations": float(counts[r - 1]), "cumulative_share": float(cumulative[r - 1]),
             "items_recommended": int(counts.size)} for r in ranks.tolist()]  # fmt: skip


def mean_ci(values: np.ndarray, confidence: float = 0.95) -> tuple[float, float, float]:
    """(mean, low, high): Student's t interval of the mean; NaN bounds below 2 values.

    >>> [round(v, 4) for v in mean_ci(np.array([0.2, 0.4, 0.6]))]
    [0.4, -0.0968, 0.8968]
    """
    n = values.size
    if n == 0:
        return float("nan"), float("nan"), float("nan")
    if not np.isfinite(values).all():
        return float(values.mean()), float("nan"), float("nan")
    from harness.stats import grid

    mean = grid.total_over(grid.float_total(values), n)  # exact sums, as the aggregates: in any order, the same bits
    if n < 2:
        return mean, float("nan"), float("nan")
    from scipy import special

    e = grid.exponent(np.abs(values).max(keepdims=True))
    first, second = grid.integer_sums(grid.on_grid(values[None, :], e))
    s1, s2 = int(first[0]), int(second[0])
    variance = (n * s2 - s1 * s1) / (n * (n - 1)) * float(np.ldexp(1.0, 2 * (int(e[0]) - grid.PRECISION)))
    half = float(special.stdtrit(n - 1, 0.5 + confidence / 2) * np.sqrt(variance / n))
    return mean, mean - half, mean + half


def summarize(result: RunResult) -> list[dict[str, object]]:
    """Summary rows of one run: every measure over all queries and within each segment.

    ``value`` is the measure's own aggregate (mean, sum or geometric mean); ``mean``
    and its 95% interval describe the per-query values whatever the aggregate.
    """
    rows: list[dict[str, object]] = []
    for segment, mask in result.segment_masks():
        for j, measure in enumerate(result.per_query.measures):
            values = result.per_query.values[mask, j]
            if REGISTRY.definition(measure).undefined_skipped:
                values = values[~np.isnan(values)]
            mean, low, high = mean_ci(values)
            rows.append(
                {
                    "dataset": result.dataset,
                    "system": result.system,
                    "segment": segment,
                    "measure": str(measure),
                    "value": aggregate_values(measure, values),
                    "mean": mean,
                    "ci_low": low,
                    "ci_high": high,
                    "n_queries": int(values.size),
                }
            )
    return rows
