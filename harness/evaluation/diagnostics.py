"""Data diagnostics of one aligned run: what a reviewer checks before trusting a number."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harness.data.align import Aligned, AlignStats
from harness.kernels.counts import judged_at
from harness.stats.grid import add_totals, float_total, total_over


def per_query_parts(aligned: Aligned, cutoffs: tuple[int, ...]) -> dict[str, np.ndarray]:
    """The per-query ingredients of :func:`diagnose`, in the aligned query order.

    Each is a function of one query's rows, so pieces of a run evaluated apart (Dask
    partitions) concatenate into exactly the whole run's arrays.
    """
    lists = aligned.lists
    parts: dict[str, np.ndarray] = {"n_ret": lists.n_ret.astype(np.int64)}
    for k in cutoffs or (10,):
        long_enough = lists.n_ret > k
        at_k = lists.offsets[:-1] + k - 1
        tied = np.zeros(lists.n_queries, dtype=bool)
        where = np.flatnonzero(long_enough)
        tied[where] = aligned.ranked_scores_at(at_k[where]) == aligned.ranked_scores_at(at_k[where] + 1)
        parts[f"tied_{k}"] = tied
        parts[f"judged_{k}"] = judged_at(lists, k)
    return parts


@dataclass(frozen=True)
class DiagnosticSums:
    """What a run's diagnostics add up over its queries: the sums of some queries' parts (:func:`per_query_parts`).
    Those of any partitioning add up (``+``) to the whole run's, exactly.

    >>> parts = {"n_ret": np.array([3, 0]), "tied_2": np.array([True, False]), "judged_2": np.array([0.5, 0.0])}
    >>> whole = DiagnosticSums.of(np.array([True, False]), parts, (2,))
    >>> whole.queries, whole.retrieved, whole.n_ret, whole.tied
    (2, 1, 3, (1,))
    """

    queries: int
    retrieved: int
    n_ret: int
    tied: tuple[int, ...]  # per cutoff: queries whose ranking ties across it
    judged: tuple[tuple[int, int], ...]  # per cutoff: the exact total of the judged fractions of retrieved queries

    @classmethod
    def empty(cls, cutoffs: tuple[int, ...]) -> DiagnosticSums:
        """The sums over no query (what ``+`` starts from)."""
        ks = cutoffs or (10,)
        return cls(0, 0, 0, (0,) * len(ks), ((0, 0),) * len(ks))

    @classmethod
    def of(cls, in_run: np.ndarray, parts: dict[str, np.ndarray], cutoffs: tuple[int, ...]) -> DiagnosticSums:
        ks = cutoffs or (10,)
        return cls(
            int(in_run.size),
            int(in_run.sum()),
            int(parts["n_ret"].sum()),
            tuple(int(parts[f"tied_{k}"].sum()) for k in ks),
            tuple(float_total(parts[f"judged_{k}"][in_run].astype(np.float64)) for k in ks),
        )

    def __add__(self, other: DiagnosticSums) -> DiagnosticSums:
        return DiagnosticSums(
            self.queries + other.queries,
            self.retrieved + other.retrieved,
            self.n_ret + other.n_ret,
            tuple(a + b for a, b in zip(self.tied, other.tied, strict=True)),
            tuple(add_totals(a, b) for a, b in zip(self.judged, other.judged, strict=True)),
        )


def combine(stats: AlignStats, sums: DiagnosticSums, cutoffs: tuple[int, ...]) -> dict[str, object]:
    """The diagnostics of a run from its alignment counts and the sums of its queries' parts."""

    out: dict[str, object] = {
        "queries_evaluated": sums.queries,
        "queries_retrieved": sums.retrieved,
        "judged_queries_missing_from_run": stats.judged_queries_missing,
        "run_queries_without_judgments": stats.run_queries_unjudged,
        "run_rows": stats.run_rows,
        "run_queries": stats.run_queries,
        "duplicates_dropped": stats.duplicates_dropped,
        "rows_beyond_depth": stats.rows_beyond_depth,
        "mean_retrieved": sums.n_ret / sums.queries if sums.queries else 0.0,
    }
    for k, tied, judged in zip(cutoffs or (10,), sums.tied, sums.judged, strict=True):
        out[f"ties_straddling_at_{k}"] = tied
        out[f"judged_fraction_at_{k}"] = total_over(judged, sums.retrieved) if sums.retrieved else 0.0
    return out


def diagnose(aligned: Aligned, cutoffs: tuple[int, ...]) -> dict[str, object]:
    """Counts for the report: queries evaluated, missing, dropped, duplicates, ties, judged fraction."""
    return combine(aligned.stats, DiagnosticSums.of(aligned.in_run, per_query_parts(aligned, cutoffs), cutoffs), cutoffs)
