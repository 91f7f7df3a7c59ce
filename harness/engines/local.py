"""The local engine: every run of a dataset evaluated in this process, one thread per core.

Runs are independent and the kernels release the GIL in their array work, so threads use
every core (two 20M-row runs: 12 s instead of 27 s on 2 cores), and each run's values are
those of a serial run (``engine: {workers: 1}``; tested).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

from harness.config.schema import Engine as EngineSpec
from harness.config.schema import System
from harness.data.load import check_shares_judged, load_run
from harness.engines._common import DatasetWork, FilesWork, checked_run, run_result
from harness.evaluation.diagnostics import diagnose
from harness.evaluation.results import EvaluatedRun, RunResult, aggregate, long_tail_cutoff, recommendation_counts
from harness.kernels.relstring import relstrings


class LocalEngine:
    """Per-query values computed here, from runs read here."""

    reads_judgments = True  # the evaluator prepares them in this process

    def __init__(self, spec: EngineSpec) -> None:
        self.spec = spec

    def evaluate(self, work: DatasetWork) -> list[RunResult]:
        """Every run of ``work``, in its order."""
        judged = work.evaluator.prepared.judged

        def evaluate_one(system: System) -> RunResult:
            path = system.run_for(work.dataset.name)
            assert path is not None
            evaluator = work.evaluator
            run = checked_run(work.dataset, system, path, judged, work.progress, evaluator.reads_samples)
            aligned = evaluator.align(run)
            del run  # what the measures read of it is aligned; its other columns are memory they reuse (see below)
            lists = evaluator.item_lists(aligned)
            per_query = evaluator.evaluate_aligned(system.name, aligned, lists)
            work.advance()
            cutoff = long_tail_cutoff(evaluator.measures)
            counts = None if lists.items is None else recommendation_counts(lists, cutoff)
            cold = None if lists.items is None else lists.items.rows_outside()
            kept = lists if evaluator.system_measures else None  # system measures resample users from the lists
            return run_result(
                work.dataset,
                system,
                per_query,
                diagnose(aligned, work.experiment.cutoffs),
                work.segments,
                work.skipped,
                cold,
                kept,
                evaluator.system_measures,
                counts,
                cutoff,
            )

        workers = min(self.spec.workers or os.cpu_count() or 1, max(1, len(work.systems)))
        if workers > 1:
            with ThreadPoolExecutor(workers) as pool:
                return list(pool.map(evaluate_one, work.systems))
        return [evaluate_one(s) for s in work.systems]

    def evaluate_files(self, work: FilesWork) -> list[EvaluatedRun]:
        """Every run of ``work``, in order; all of them read and checked before any is evaluated."""
        evaluator = work.evaluator
        runs = [load_run(path, work.run_columns, samples=evaluator.reads_samples) for _, _, path in work.runs]
        judged = evaluator.prepared.judged
        for run in runs:
            check_shares_judged(run, judged, str(work.qrels_path))
        out = []
        runs.reverse()
        for label, given, _ in work.runs:
            # each run let go of once aligned: the rest of its columns (the query ids: 200 MB at 20M rows) is freed
            # memory the item measures then reuse, instead of first touches of fresh pages (0.45 s of system time
            # for the fairness measures on 200k users)
            run = runs.pop()
            name = run.name
            aligned = evaluator.align(run)
            del run
            lists = evaluator.item_lists(aligned)
            per_query = evaluator.evaluate_aligned(name, aligned, lists)
            system = {m: float(v[0]) for m, v in evaluator.system_values(lists).items()}  # one value per run
            aggregates = dict(aggregate(per_query))
            strings = {length: relstrings(aligned.lists, length) for length in work.relstring_lengths}
            out.append(
                EvaluatedRun(
                    label,
                    given,
                    name,
                    aligned.stats.judged_queries_missing,
                    per_query,
                    aggregates | system,
                    tuple(system),
                    strings,
                )
            )
        return out
