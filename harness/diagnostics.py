"""Data diagnostics of one aligned run: what a reviewer checks before trusting a number."""

from __future__ import annotations

import numpy as np

from harness.data.align import Aligned, AlignStats
from harness.kernels.counts import judged_at


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
        tied[where] = aligned.scores_at(at_k[where]) == aligned.scores_at(at_k[where] + 1)
        parts[f"tied_{k}"] = tied
        parts[f"judged_{k}"] = judged_at(lists, k)
    return parts


def combine(stats: AlignStats, in_run: np.ndarray, parts: dict[str, np.ndarray], cutoffs: tuple[int, ...]) -> dict[str, object]:
    """The diagnostics of a run from its alignment counts and per-query parts (whole, or concatenated in query order)."""
    out: dict[str, object] = {
        "queries_evaluated": int(in_run.size),
        "queries_retrieved": int(in_run.sum()),
        "judged_queries_missing_from_run": stats.judged_queries_missing,
        "run_queries_without_judgments": stats.run_queries_unjudged,
        "run_rows": stats.run_rows,
        "run_queries": stats.run_queries,
        "duplicates_dropped": stats.duplicates_dropped,
        "rows_beyond_depth": stats.rows_beyond_depth,
        "mean_retrieved": float(parts["n_ret"].mean()) if in_run.size else 0.0,
    }
    for k in cutoffs or (10,):
        out[f"ties_straddling_at_{k}"] = int(parts[f"tied_{k}"].sum())
        judged = parts[f"judged_{k}"][in_run]
        out[f"judged_fraction_at_{k}"] = float(judged.mean()) if judged.size else 0.0
    return out


def diagnose(aligned: Aligned, cutoffs: tuple[int, ...]) -> dict[str, object]:
    """Counts for the report: queries evaluated, missing, dropped, duplicates, ties, judged fraction."""
    return combine(aligned.stats, aligned.in_run, per_query_parts(aligned, cutoffs), cutoffs)
