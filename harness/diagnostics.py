"""Data diagnostics of one aligned run: what a reviewer checks before trusting a number."""

from __future__ import annotations

import numpy as np

from harness.data.align import Aligned
from harness.kernels.counts import judged_at


def ties_straddling(aligned: Aligned, k: int) -> int:
    """Queries whose documents at ranks k and k + 1 have the same score.

    For them the order of tied documents (the ``ties`` convention) decides which
    of them counts at cutoff k.
    """
    lists = aligned.lists
    long_enough = np.flatnonzero(lists.n_ret > k)
    at_k = lists.offsets[long_enough] + k - 1
    return int((aligned.score[at_k] == aligned.score[at_k + 1]).sum())


def diagnose(aligned: Aligned, cutoffs: tuple[int, ...]) -> dict[str, object]:
    """Counts for the report: queries evaluated, missing, dropped, duplicates, ties, judged fraction."""
    stats = aligned.stats
    lists = aligned.lists
    out: dict[str, object] = {
        "queries_evaluated": len(aligned.query_ids),
        "queries_retrieved": int(aligned.in_run.sum()),
        "judged_queries_missing_from_run": stats.judged_queries_missing,
        "run_queries_without_judgments": stats.run_queries_unjudged,
        "run_rows": stats.run_rows,
        "run_queries": stats.run_queries,
        "duplicates_dropped": stats.duplicates_dropped,
        "rows_beyond_depth": stats.rows_beyond_depth,
        "mean_retrieved": float(lists.n_ret.mean()) if lists.n_queries else 0.0,
    }
    for k in cutoffs or (10,):
        out[f"ties_straddling_at_{k}"] = ties_straddling(aligned, k)
        judged = judged_at(lists, k)[aligned.in_run]
        out[f"judged_fraction_at_{k}"] = float(judged.mean()) if judged.size else 0.0
    return out
