"""The local engine: every run of a dataset evaluated in this process, one thread per core.

Runs are independent and the kernels release the GIL in their array work, so threads use
every core (two 20M-row runs: 12 s instead of 27 s on 2 cores), and each run's values are
those of a serial run (``engine: {workers: 1}``; tested).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from harness.config.schema import Engine as EngineSpec
from harness.config.schema import System
from harness.data.align import warm_up
from harness.data.load import expected_rows
from harness.engines._common import DatasetWork, checked_run, run_result
from harness.evaluation.diagnostics import diagnose
from harness.evaluation.results import RunResult, long_tail_cutoff, recommendation_counts


class LocalEngine:
    """Per-query values computed and kept here; the comparisons run on them here."""

    reads_judgments = True  # the evaluator prepares them in this process

    def __init__(self, spec: EngineSpec) -> None:
        self.spec = spec

    def evaluate(self, work: DatasetWork) -> dict[str, RunResult]:
        """Every system of ``work`` with a run, by name."""
        paths = [path for s in work.systems if (path := s.run_for(work.dataset.name)) is not None]
        warm_up(max((expected_rows(p) for p in paths), default=0))  # the compiled engine loads while the runs are read
        judged = set(work.evaluator.prepared.index)

        def evaluate_one(system: System) -> RunResult:
            path = system.run_for(work.dataset.name)
            assert path is not None
            evaluator = work.evaluator
            run = checked_run(work.dataset, system, path, judged, work.progress)
            aligned = evaluator.align(run)
            lists = evaluator.item_lists(aligned)
            per_query = evaluator.evaluate_aligned(system.name, aligned, lists)
            work.advance()
            cutoff = long_tail_cutoff(evaluator.measures)
            counts = None if lists.items is None else recommendation_counts(lists.items.code, lists.pos, cutoff)
            cold = None if lists.items is None else lists.items.cold_rows()
            kept = lists if evaluator.system_measures else None  # system measures resample users from the lists
            return run_result(work.dataset, system, per_query, diagnose(aligned, work.experiment.cutoffs), work.segments,
                              work.skipped, cold, kept, evaluator.system_measures, counts, cutoff)  # fmt: skip

        workers = min(self.spec.workers or os.cpu_count() or 1, max(1, len(work.systems)))
        if workers > 1:
            with ThreadPoolExecutor(workers) as pool:
                return dict(zip([s.name for s in work.systems], pool.map(evaluate_one, work.systems), strict=True))
        return {s.name: evaluate_one(s) for s in work.systems}

    def hold(self, dataset: str, reused: RunResult) -> None:
        """A system's values reused from earlier results: here already, nothing to send."""

    def paired_tests(self, results: list[RunResult], settings: Any) -> None:
        """The comparisons' tests run here, on the values in memory: no other place to ask."""
        return None
