"""run_experiment: load -> align -> evaluate -> compare -> write results -> track -> report.

Results reach the disk (atomically, as a whole folder) before anything is sent to a
tracking server or rendered, so a failure there never loses them.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import platform
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from harness import __version__
from harness._atomic import sha256_path, size_of
from harness.comparison.compare import CompareSettings, compare, count_blocks, system_summary
from harness.config.schema import Dataset, Experiment, System
from harness.data.align import warm_up
from harness.data.load import check_shares_judged, expected_rows, judged_query_ids, load_qrels, load_run
from harness.data.model import Qrels, Run
from harness.decision.release import Decision, Plan, decide_release
from harness.errors import ConfigError, HarnessError, TrackingError
from harness.evaluation.diagnostics import diagnose
from harness.evaluation.evaluator import Evaluator
from harness.evaluation.results import (
    PerQuery,
    RemoteValues,
    RunResult,
    long_tail_cutoff,
    long_tail_rows,
    per_query_rows,
    recommendation_counts,
    summarize,
)
from harness.measures.registry import REGISTRY
from harness.measures.spec import Measure
from harness.progress import SILENT, Progress
from harness.records.previous import compared_inputs, load_previous, previous_result
from harness.records.previous import describe as describe_previous
from harness.records.store import SavedResults, write_results, write_tracking
from harness.stats import paired
from harness.stats.power import Sided

_quiet = SILENT


@dataclass
class Outcome:
    """What ``harness run`` reports: where the results went and what happened after."""

    results_dir: Path
    report: Path | None = None
    tracking_uri: str | None = None
    mlflow_run_id: str | None = None
    mlflow_url: str | None = None
    gate: str = "none"  # pass | fail | inconclusive | none: what the gate exits as (after release.on_inconclusive)
    gate_verdict: str = "none"  # the verdict itself: pass | fail | inconclusive | none
    gate_errors: str | None = None  # which error the verdict controls, and at what rate
    warnings: list[str] = field(default_factory=list)
    tracking_error: str | None = None
    report_error: str | None = None
    gate_line: str | None = None
    results: SavedResults | None = None  # everything written, as values

    @property
    def per_query(self) -> Any:
        """One row per dataset, system, query, segment and measure (a pandas DataFrame; read from the results folder
        when the workers wrote it there)."""
        return None if self.results is None else self.results.per_query_of()

    @property
    def summary(self) -> Any:
        return None if self.results is None else self.results.summary

    @property
    def comparisons(self) -> Any:
        return None if self.results is None else self.results.comparisons

    @property
    def diagnostics(self) -> Any:
        return None if self.results is None else self.results.diagnostics


def _load_qrels(dataset: Dataset) -> Qrels:
    c = dataset.qrels_columns
    return load_qrels(dataset.qrels, {"query": c.query, "doc": c.doc, "relevance": c.value}, dataset.qrels_format)


def _load_run(dataset: Dataset, path: Path, name: str) -> Run:
    c = dataset.run_columns
    return load_run(path, {"query": c.query, "doc": c.doc, "score": c.value}, name=name)


def _load_segments(dataset: Dataset) -> dict[str, str]:
    from harness.data.tables import read_table_columns

    assert dataset.segments is not None
    spec = dataset.segments
    return read_table_columns(spec.path, spec.query_column, spec.segment_column)


def _evaluator(experiment: Experiment, dataset: Dataset, measures: tuple[Measure, ...], progress: Progress,
               judgments: bool = True) -> Evaluator:  # fmt: skip
    """The dataset's judgments (and training data, catalogue), prepared once, under the experiment's conventions.
    ``judgments=False``: without them (the Dask workers read them), unless the items' context needs them."""
    from harness.data.items import read_items, read_train
    from harness.evaluation.evaluator import builds_item_context

    computed = experiment.measures_for(dataset)
    measures = tuple(m for m in measures if m in computed)
    if judgments or builds_item_context(measures, dataset.train is not None, dataset.items is not None):
        progress(f"loading qrels {dataset.qrels}")
        qrels = _load_qrels(dataset)
    else:
        qrels = Qrels.from_records([], str(dataset.qrels))
    conventions = dataclasses.replace(experiment.conventions, relevance_level=dataset.relevance_level)
    train = items = None
    if dataset.train is not None:
        progress(f"loading training interactions {dataset.train.path}")
        train = read_train(dataset.train.path, dataset.train.user, dataset.train.item)
    if dataset.items is not None:
        progress(f"loading items {dataset.items.path}")
        items = read_items(dataset.items.path, dataset.items.id)
    return Evaluator(qrels, measures, conventions, train=train, items=items)


def _runs(
    experiment: Experiment, dataset: Dataset, judged: set[str], progress: Progress
) -> Iterator[tuple[System, Path, Run, set[str]]]:
    """Each system's run on the dataset, loaded and checked to share queries with the judgments."""
    for system in experiment.systems:
        path = system.run_for(dataset.name)
        if path is not None:
            run = _checked_run(dataset, system, path, judged, progress)
            yield system, path, run, judged_query_ids(run, judged, _judgments_of(dataset))


def _judgments_of(dataset: Dataset) -> str:
    return f"dataset {dataset.name!r} ({dataset.qrels})"


def _checked_run(dataset: Dataset, system: System, path: Path, judged: set[str], progress: Progress) -> Run:
    """A system's run on a dataset; a user error when it shares no query with the judgments."""
    progress(f"reading {system.name} on {dataset.name}")
    run = _load_run(dataset, path, system.name)
    check_shares_judged(run, judged, _judgments_of(dataset))
    return run


def check_guard_segments(experiment: Experiment) -> None:
    """Every guard's segment exists in a segments file of its dataset(s): checked before anything is computed."""
    import difflib

    release = experiment.report.release
    if release is None:
        return
    for guard in release.guards:
        if guard.segment in (None, "all"):
            continue
        datasets = [experiment.dataset(guard.dataset)] if guard.dataset else list(experiment.datasets)
        known = sorted({s for d in datasets if d.segments is not None for s in _load_segments(d).values()})
        if guard.segment not in known:
            close = difflib.get_close_matches(str(guard.segment), known, n=1)
            where = f"dataset {guard.dataset!r}" if guard.dataset else "any dataset"
            raise ConfigError(
                f"guard segment {guard.segment!r} is not a segment of {where}",
                path=experiment.source,
                line=guard.line,
                hint=f"did you mean {close[0]!r}?"
                if close
                else (f"use one of {', '.join(known)}" if known else "add segments: to the dataset"),
            )


def evaluate_experiment(experiment: Experiment, progress: Progress = _quiet) -> list[RunResult]:
    """Every system on every dataset it has a run for, with its per-query values (gathered from a Dask cluster);
    raises on the first bad input."""
    with _evaluated(experiment, progress) as (results, _):
        return [r.here() for r in results]


@contextmanager
def _evaluated(experiment: Experiment, progress: Progress) -> Iterator[tuple[list[RunResult], Any]]:
    """(every run's result, where the paired tests are computed): on Dask, the cluster stays up while the caller
    compares, and the paired tests run there on the per-query tables it holds."""
    check_guard_segments(experiment)
    results: list[RunResult] = []
    earlier: dict[str, SavedResults] = {}
    total = sum(1 for d in experiment.datasets for s in experiment.systems if s.previous is not None or s.run_for(d.name))
    if experiment.engine.name == "dask":
        from harness.engines.dask import client_for

        remote: dict[str, Any] = {}
        with client_for(experiment.engine, progress) as client:
            with progress.task("evaluating", total) as advance:
                for dataset in experiment.datasets:
                    results.extend(_evaluate_dataset(experiment, dataset, earlier, progress, advance, client, remote))
            yield results, _ClusterTests(client, remote, results, compare_settings(experiment))
        return
    with progress.task("evaluating", total) as advance:
        for dataset in experiment.datasets:
            results.extend(_evaluate_dataset(experiment, dataset, earlier, progress, advance))
    yield results, None


class _ClusterTests:
    """``compare``'s tests from the cluster, for the datasets whose every run it holds (values reused from earlier
    results are sent there beside the runs it evaluated): each dataset's segments at once, on first asking."""

    def __init__(self, client: Any, remote: dict[str, Any], results: list[RunResult], settings: CompareSettings) -> None:
        self.client, self.remote, self.results, self.settings = client, remote, results, settings
        self.done: dict[str, dict[str, Any]] = {}

    def __call__(self, dataset: str, segment: str, systems: list[str], pairs: list[tuple[str, str]],
                 measures: tuple[Measure, ...]) -> Any:  # fmt: skip
        from harness.engines.dask_compare import tests_on_cluster

        runs = self.remote.get(dataset)
        mine = [r for r in self.results if r.dataset == dataset]
        if runs is None or any(r.system not in runs.pieces for r in mine):
            return None
        if dataset not in self.done:
            segments = mine[0].segment_names()
            self.done[dataset] = tests_on_cluster(self.client, dataset, runs, segments, systems, pairs, measures,
                                                  self.settings)  # fmt: skip
        return self.done[dataset].get(segment)


def _evaluate_dataset(
    experiment: Experiment,
    dataset: Dataset,
    earlier: dict[str, SavedResults],
    progress: Progress,
    advance: Callable[[], None],
    client: Any = None,
    remote: dict[str, Any] | None = None,
) -> list[RunResult]:
    """Every system on one dataset, in the config's order: recomputed from its run, or reused (``client``: on Dask)."""
    results: list[RunResult] = []
    with_runs = [s for s in experiment.systems if s.run_for(dataset.name) is not None]
    if client is None:  # the compiled engine loads while the judgments and the runs are read
        warm_up(max((expected_rows(path) for s in with_runs if (path := s.run_for(dataset.name))), default=0))
    evaluator = _evaluator(experiment, dataset, experiment.measures, progress, judgments=client is None)
    skipped = ", ".join(str(m) for m in experiment.measures if m not in evaluator.measures)
    if skipped:
        progress(f"not computed on {dataset.name} (no training data or catalogue there): {skipped}")
    segments = _load_segments(dataset) if dataset.segments is not None else {}
    judged = set(evaluator.prepared.index)

    def evaluate_one(system: System) -> RunResult:
        path = system.run_for(dataset.name)
        assert path is not None
        run = _checked_run(dataset, system, path, judged, progress)
        aligned = evaluator.align(run)
        lists = evaluator.item_lists(aligned)
        per_query = evaluator.evaluate_aligned(system.name, aligned, lists)
        advance()
        cutoff = long_tail_cutoff(evaluator.measures)
        counts = None if lists.items is None else recommendation_counts(lists.items.code, lists.pos, cutoff)
        return _run_result(dataset, system, per_query, diagnose(aligned, experiment.cutoffs), segments, skipped,
                           None if lists.items is None else lists.items.cold_rows(),
                           lists if evaluator.system_measures else None, evaluator.system_measures, counts, cutoff)  # fmt: skip

    # Runs are independent and the kernels release the GIL in their array work: threads use every core
    # (two 20M-row runs: 12 s instead of 27 s on 2 cores), and each run's values are those of a serial run.
    workers = min(experiment.engine.workers or os.cpu_count() or 1, max(1, len(with_runs)))
    if client is not None:
        evaluated = _evaluate_on_dask(experiment, dataset, evaluator, with_runs, segments, skipped, client, progress, advance,
                                      remote if remote is not None else {})  # fmt: skip
    elif workers > 1:
        with ThreadPoolExecutor(workers) as pool:
            evaluated = dict(zip([s.name for s in with_runs], pool.map(evaluate_one, with_runs), strict=True))
    else:
        evaluated = {s.name: evaluate_one(s) for s in with_runs}
    for system in experiment.systems:  # in the config's order, reused values beside recomputed ones
        if system.previous is not None:
            progress(f"reusing {system.name} on {dataset.name} from {describe_previous(system.previous)}")
            saved = load_previous(experiment, system, earlier)
            reused = previous_result(experiment, dataset, system, saved, segments)
            advance()
            if reused is not None:
                results.append(reused)
                if client is not None and remote is not None and dataset.name in remote:  # compared on the cluster too
                    from harness.engines.dask import scatter_values

                    runs = remote[dataset.name]
                    runs.pieces[system.name] = scatter_values(client, reused.here().per_query, runs.measures)
        elif system.name in evaluated:
            results.append(evaluated[system.name])
    return results


def _evaluate_on_dask(experiment: Experiment, dataset: Dataset, evaluator: Evaluator, systems: list[System],
                      segments: dict[str, str], skipped: str, client: Any, progress: Progress,
                      advance: Callable[[], None], remote: dict[str, Any]) -> dict[str, RunResult]:  # fmt: skip
    """The dataset's runs evaluated on the Dask cluster: the same per-query values, summaries and diagnostics as here.

    The per-query values stay on the workers: summaries and diagnostics come as exact sums, the
    per-query table is written by them. With system measures, each run's lists (down to their
    cutoff) and its query ids come here, to resample users. ``remote[dataset]``: the runs as the
    cluster holds them, for the comparisons."""
    import pandas as pd

    from harness.engines.dask import QrelsSource, RunSource, evaluate_runs, gather_values, summary_on_cluster, write_per_query
    from harness.engines.dask_compare import RemoteRuns

    c = dataset.run_columns
    runs: list[Any] = []
    for system in systems:  # read by the workers (TREC text streamed to Parquet first), never whole here
        path = system.run_for(dataset.name)
        assert path is not None
        runs.append(RunSource(path, system.name, {"query": c.query, "doc": c.doc, "score": c.value}))
    items = evaluator.items
    q = dataset.qrels_columns  # read by the workers too (streamed to Parquet first), never whole here
    judgments = QrelsSource(dataset.qrels, {"query": q.query, "doc": q.doc, "relevance": q.value}, dataset.qrels_format)
    done = evaluate_runs(client, judgments, runs, evaluator.query_measures, evaluator.prepared.conventions,
                         experiment.cutoffs, items, experiment.engine.partitions, progress, evaluator.system_measures,
                         gather=False)  # fmt: skip
    if not done:
        return {}
    # each query's segment, as a Series indexed by query id: mapped by index lookup on the workers, sent once
    segment_of = client.scatter(pd.Series(segments, dtype=object), broadcast=True) if segments else None
    names = sorted(set(segments.values()))
    remote[dataset.name] = RemoteRuns({s.name: e.pieces for s, e in zip(systems, done, strict=True)}, done[0].measures,
                                      segment_of, max(int(str(e.diagnostics["queries_evaluated"])) for e in done))
    out = {}
    for system, evaluated in zip(systems, done, strict=True):
        extra = (None if items is None else evaluated.cold_recommendations, evaluated.lists,
                 evaluator.system_measures if evaluated.lists is not None else (), evaluated.item_counts,
                 evaluated.item_counts_cutoff)  # fmt: skip
        progress(f"dask: summarising {system.name} on {dataset.name}")
        rows, present, unsegmented = summary_on_cluster(client, evaluated.pieces, evaluated.measures, segment_of, names)
        pieces, measures, name = evaluated.pieces, evaluated.measures, system.name

        def gather(pieces: list[Any] = pieces, measures: tuple[Measure, ...] = measures,
                   name: str = name) -> tuple[PerQuery, np.ndarray]:  # fmt: skip
            per_query = gather_values(client, pieces, name, measures)
            return per_query, _segments_of(per_query.query_ids, segments)

        def write(folder: Path, pieces: list[Any] = pieces, measures: tuple[Measure, ...] = measures,
                  name: str = name, prefix: str = _part_prefix(experiment, dataset, system)) -> int:  # fmt: skip
            return write_per_query(client, pieces, folder, prefix, dataset.name, name, measures, segment_of)

        values = RemoteValues(measures, present, tuple(rows), gather, write, evaluated.query_ids)
        diagnostics = _dataset_diagnostics(dataset, dict(evaluated.diagnostics), unsegmented if segments else None,
                                           skipped, extra[0])  # fmt: skip
        # with the lists here (system measures), their queries' segments too
        seg = None if evaluated.query_ids is None else _segments_of(evaluated.query_ids, segments)
        out[system.name] = RunResult(dataset.name, system.name, None, seg, diagnostics, *extra[1:], remote=values)
        advance()
    return out


def _part_prefix(experiment: Experiment, dataset: Dataset, system: System) -> str:
    """The name of a run's files in a per-query table written in parts: in the config's dataset, then system, order."""
    return f"part-{experiment.datasets.index(dataset):03d}-{experiment.systems.index(system):03d}"


def _segments_of(query_ids: np.ndarray, segments: dict[str, str]) -> np.ndarray:
    """Each query's segment ('' when it has none)."""
    return np.array([segments.get(q, "") for q in query_ids.tolist()], dtype=object)


def _dataset_diagnostics(dataset: Dataset, diagnostics: dict[str, object], unsegmented: int | None, skipped: str,
                         cold_rows: int | None) -> dict[str, object]:  # fmt: skip
    """A run's diagnostics with the dataset-level ones added."""
    diagnostics["queries_without_segment"] = unsegmented
    if cold_rows is not None and (dataset.train or dataset.items):  # recommendations of items neither knows
        diagnostics["cold_recommendations"] = cold_rows
    if skipped:
        diagnostics["measures_not_computed"] = skipped
    return diagnostics


def _run_result(dataset: Dataset, system: System, per_query: PerQuery, diagnostics: dict[str, object],
                segments: dict[str, str], skipped: str, cold_rows: int | None, lists: Any,
                system_measures: tuple[Measure, ...], counts: np.ndarray | None, cutoff: int | None) -> RunResult:  # fmt: skip
    """A run's result with its values here (evaluated on this machine): its queries' segments, and the dataset-level
    diagnostics."""
    seg = _segments_of(per_query.query_ids, segments)
    _dataset_diagnostics(dataset, diagnostics, int((seg == "").sum()) if segments else None, skipped, cold_rows)
    return RunResult(dataset.name, system.name, per_query, seg, diagnostics, lists, system_measures, counts, cutoff)


def _versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {"harness": __version__, "python": platform.python_version()}
    for package in ("numpy", "pandas", "pyarrow", "scipy", "pyyaml", "jinja2", "mlflow"):
        try:
            out[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            out[package] = None
    return out


def resolved_config(experiment: Experiment) -> dict[str, Any]:
    """The config after defaults, profile, environment and paths: what actually ran."""

    def plain(value: Any) -> Any:
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
        if isinstance(value, Path):
            return str(value)
        if isinstance(value, tuple):
            return [plain(v) for v in value]
        if hasattr(value, "value") and not isinstance(value, (int, float, str)):
            return value.value
        return value

    out = plain(experiment)
    out["measures"] = [str(m) for m in experiment.measures]
    out["conventions"] = experiment.conventions.as_dict()
    out["systems"] = [
        {"name": s.name, "description": s.description, "tags": dict(s.tags), "runs": {d: str(p) for d, p in s.runs}}
        for s in experiment.systems
    ]
    if experiment.report.release is not None:
        out["report"]["release"]["guards"] = [
            {**{k: v for k, v in plain(g).items() if k != "line"}, "measure": str(g.measure)}
            for g in experiment.report.release.guards
        ]
    out["gain_schemes"] = {name: text or "linear" for name, text in experiment.gain_schemes}
    return out


def config_hash(experiment: Experiment) -> str:
    return hashlib.sha256(json.dumps(resolved_config(experiment), sort_keys=True).encode()).hexdigest()[:16]


def provenance(experiment: Experiment, results: list[RunResult], started: datetime, argv: list[str]) -> dict[str, Any]:
    files: list[tuple[str, Path]] = [("config", experiment.source)]
    for d in experiment.datasets:
        files.extend(compared_inputs(d))
    for s in experiment.systems:
        files.extend((f"run:{s.name}:{d}", p) for d, p in s.runs)
        if s.previous is not None and s.previous.results is not None:
            files.append((f"previous:{s.name}", s.previous.results / "per_query.parquet"))
    return {
        "inputs": [{"role": role, "path": str(p), "sha256": sha256_path(p), "bytes": size_of(p)} for role, p in files],
        "rows": [
            {
                "dataset": r.dataset,
                "system": r.system,
                "run_rows": r.diagnostics.get("run_rows"),
                "queries": r.diagnostics.get("queries_evaluated"),
            }
            for r in results
        ],
        "versions": _versions(),
        "command": argv,
        "config_hash": config_hash(experiment),
        "started": started.isoformat(),
        "finished": datetime.now(UTC).isoformat(),
        "host": platform.node(),
    }


def _frames(results: list[RunResult], settings: CompareSettings | None = None) -> tuple[Any, Any, Any, Any]:
    import pandas as pd

    per_query = [per_query_rows(r.dataset, r.system, r.per_query.query_ids, r.segments, r.per_query.measures,
                                r.per_query.values) for r in results if r.per_query is not None and r.segments is not None]
    per_query_frame = pd.concat(per_query, ignore_index=True) if per_query else None
    settings = settings or CompareSettings()
    summary = pd.DataFrame([row for r in results for row in (*summarize(r), *system_summary(r, settings))])
    tail = [row for r in results for row in long_tail_rows(r)]
    diagnostics = pd.DataFrame([{"dataset": r.dataset, "system": r.system, **r.diagnostics} for r in results])
    return per_query_frame, summary, diagnostics, (pd.DataFrame(tail) if tail else None)


def decide_gate(experiment: Experiment, results: list[RunResult], comparisons: Any = None) -> Decision | None:
    """The release decision, from the results in memory; None when no release is configured."""
    if experiment.report.release is None:
        return None
    return decide_release(experiment.report.release, results, compare_settings(experiment), comparisons)


def save_results(
    experiment: Experiment,
    results: list[RunResult],
    tables: dict[str, Any],
    started: datetime,
    argv: list[str],
    verdict: Decision | None = None,
    frames: tuple[Any, Any, Any, Any] | None = None,
) -> SavedResults:
    """The results as one value, written (atomically) under ``<output>/<experiment>/<timestamp>-<id>/``."""
    per_query, summary, diagnostics, long_tail = frames if frames is not None else _frames(results, compare_settings(experiment))
    saved = SavedResults(
        folder=Path(),
        config=resolved_config(experiment),
        provenance=provenance(experiment, results, started, argv),
        per_query=per_query,
        summary=summary,
        diagnostics=diagnostics,
        comparisons=tables.get("comparisons"),
        anova=tables.get("anova"),
        long_tail=long_tail,
        verdict=verdict,
    )
    parts = [r.remote.write for r in results if r.remote is not None]
    return write_results(saved, experiment.output / experiment.name.replace(" ", "_"), started.strftime("%Y%m%d-%H%M%S"),
                         parts)


def run_experiment(experiment: Experiment, progress: Progress = _quiet, argv: list[str] | None = None) -> Outcome:
    started = datetime.now(UTC)
    t0 = time.perf_counter()
    with _evaluated(experiment, progress) as (results, tested_elsewhere):
        progress(f"evaluated {len(results)} runs in {time.perf_counter() - t0:.1f} s")
        tables = comparison_tables(experiment, results, progress, tested_elsewhere)
        frames = _frames(results, compare_settings(experiment))
        verdict = decide_gate(experiment, results, tables.get("comparisons"))
        progress("writing results")  # while a cluster is up: its workers write the per-query values they hold
        saved = save_results(experiment, results, tables, started, argv if argv is not None else sys.argv, verdict, frames)
    outcome = Outcome(results_dir=saved.folder, results=saved)
    if verdict is not None:  # decided and saved before anything is sent or rendered: nothing later can hide it
        outcome.gate = verdict.outcome.lower()
        outcome.gate_verdict = verdict.verdict.lower()
        outcome.gate_line = verdict.line()
        outcome.gate_errors = verdict.errors
    # Results are on disk: nothing after this point can lose them.
    if experiment.tracking.enabled:
        from harness.records.track import track_results

        progress("logging to MLflow")
        try:
            tracked = track_results(saved)
            saved = outcome.results = write_tracking(saved, tracked.as_dict())
            outcome.tracking_uri, outcome.mlflow_run_id, outcome.mlflow_url = tracked.tracking_uri, tracked.run_id, tracked.url
        except TrackingError as exc:
            outcome.tracking_error = str(exc)
    if experiment.report.enabled:  # once, after tracking, so that it links the MLflow run
        _report(saved, outcome, progress)
        if outcome.report is not None and outcome.mlflow_run_id is not None:
            from harness.records.track import log_report

            try:
                log_report(saved)
            except TrackingError as exc:
                outcome.tracking_error = str(exc)
    return outcome


def _report(saved: SavedResults, outcome: Outcome, progress: Progress) -> None:
    from harness.report.render import write_report

    progress("rendering the report")
    try:
        path, _ = write_report(saved)
    except Exception as exc:
        outcome.report_error = f"{type(exc).__name__}: {exc}"
        return
    outcome.report = path


def compare_settings(experiment: Experiment) -> CompareSettings:
    s = experiment.stats
    return CompareSettings(
        tests=s.tests, primary=s.primary, correction=s.correction, family=s.family, mode=s.mode, alpha=s.alpha,
        permutations=s.permutations, resamples=s.resamples, system_resamples=s.system_resamples,
        seed=s.seed, nan=s.nan, baseline=experiment.baseline,
        extra_pairs=((release.production, release.candidate),) if (release := experiment.report.release) else (),
    )  # fmt: skip


def comparison_tables(experiment: Experiment, results: list[RunResult], progress: Progress = _quiet,
                      tested_elsewhere: Any = None) -> dict[str, Any]:  # fmt: skip
    """The comparisons (and ANOVA) tables, empty when statistics are off or there is one system.
    ``tested_elsewhere``: where the tests are computed, when not here (:func:`compare`)."""
    import pandas as pd

    if not experiment.stats.enabled or len({r.system for r in results}) < 2:
        return {}
    settings = compare_settings(experiment)
    progress(f"comparing systems ({experiment.stats.permutations} permutations, seed {experiment.stats.seed})")
    with progress.task("comparing (pair x segment)", count_blocks(results, settings)) as advance:
        rows, anova_rows = compare(results, experiment.measures, settings, advance, tested_elsewhere)
    tables = {"comparisons": pd.DataFrame(rows)}
    if anova_rows:
        tables["anova"] = pd.DataFrame(anova_rows)
    return tables


def validate_experiment(experiment: Experiment, progress: Progress = _quiet) -> dict[str, Any]:
    """Read every file and check it parses and overlaps, without computing measures."""
    check_guard_segments(experiment)
    earlier: dict[str, SavedResults] = {}
    report: dict[str, Any] = {
        "experiment": experiment.name,
        "measures": len(experiment.measures),
        "measure_names": [str(m) for m in experiment.measures],
        "datasets": [],
    }
    for dataset in experiment.datasets:
        evaluator = _evaluator(experiment, dataset, (), progress)
        judged = set(evaluator.prepared.index)
        entry: dict[str, Any] = {
            "name": dataset.name,
            "judgments": int(evaluator.prepared.codes.size),
            "queries": len(judged),
            "runs": [],
        }
        segments = _load_segments(dataset) if dataset.segments is not None else {}
        if dataset.segments is not None:
            entry["segmented_queries"] = len(judged & set(segments))
        for system, _, run, run_ids in _runs(experiment, dataset, judged, progress):
            evaluator.align(run)  # duplicates, ties and depth are checked as a real run would be
            entry["runs"].append(
                {
                    "system": system.name,
                    "rows": len(run),
                    "queries": len(run_ids),
                    "judged_queries_retrieved": len(run_ids & judged),
                }
            )
        for system in experiment.systems:  # reused values: checked for comparability as a run would be
            if system.previous is not None:
                reused = previous_result(experiment, dataset, system, load_previous(experiment, system, earlier), segments)
                if reused is not None and reused.per_query is not None:
                    n = len(reused.per_query.query_ids)
                    entry["runs"].append({"system": system.name, "rows": 0, "queries": n, "judged_queries_retrieved": n,
                                          "reused_from": describe_previous(system.previous)})  # fmt: skip
        report["datasets"].append(entry)
    return report


__all__ = ["Outcome", "evaluate_experiment", "run_experiment", "validate_experiment"]


def plan_from_results(saved: SavedResults, measure: str, margin: float, systems: Sequence[str] | None = None,
                      dataset: str | None = None, segment: str = "all", alpha: float = 0.05, target: float = 0.8,
                      sided: Sided = "one") -> Plan:  # fmt: skip
    """A :class:`Plan` whose sd is that of the per-user differences between two systems in a results folder
    (production and candidate of its release gate unless ``systems`` names two)."""
    from harness.measures.parse import labeller, parse_measure

    config = saved.config
    release = (config.get("report") or {}).get("release") or {}
    pair = list(systems) if systems else [release.get("production"), release.get("candidate")]
    if len(pair) != 2 or None in pair:
        raise HarnessError(f"{saved.folder} has no release gate to take production and candidate from",
                           hint="name the two systems: --systems A B")  # fmt: skip
    datasets = sorted({d["name"] for d in config.get("datasets", [])})
    if dataset is None:
        if len(datasets) != 1:
            raise HarnessError(f"{saved.folder} has {len(datasets)} datasets", hint=f"name one: --dataset {datasets[0]}")
        dataset = datasets[0]
    elif dataset not in datasets:
        raise HarnessError(f"dataset {dataset!r} is not in {saved.folder}", hint=f"use one of {', '.join(datasets)}")
    label = labeller({name: "" if text == "linear" else text for name, text in (config.get("gain_schemes") or {}).items()})
    canonical = {label(m): m for m in config.get("measures", [])} | {m: m for m in config.get("measures", [])}
    if measure not in canonical:
        import difflib

        close = difflib.get_close_matches(measure, list(canonical), n=3, cutoff=0.4)
        raise HarnessError(f"measure {measure!r} was not computed in {saved.folder}",
                           hint=f"did you mean {', '.join(map(repr, close))}?" if close else
                           "harness validate lists them")  # fmt: skip
    parsed = parse_measure(canonical[measure])
    definition = REGISTRY.definition(parsed)
    if definition.aggregate != "mean" or definition.is_system(parsed):
        raise HarnessError(f"{measure} is not averaged over users: a paired t-test plan does not describe it",
                           hint="plan a measure averaged over users (nDCG, AP, P, R, ...)")  # fmt: skip
    columns = []
    for system in pair:
        rows = saved.per_query_of(dataset, system, canonical[measure])
        if segment != "all":
            rows = rows[rows["segment"] == segment]
        if rows.empty:
            raise HarnessError(f"no per-query values of {system!r} for {measure} on {dataset!r}"
                               + ("" if segment == "all" else f" in segment {segment!r}"),
                               hint="check the system, dataset and segment names")  # fmt: skip
        columns.append(rows.set_index("query_id")["value"])
    joined = columns[0].to_frame("a").join(columns[1].to_frame("b"), how="inner").dropna()
    if len(joined) < 2:
        raise HarnessError("fewer than 2 users with values for both systems", hint="check the segment and systems")
    differences = (joined["b"] - joined["a"]).to_numpy(dtype=np.float64)
    t = paired.run_tests(differences, None, ("t",)).t  # the sd from exact sums, as the tests compute it
    sd = paired.interval_sd(len(differences), float(t.ci_low[0]), float(t.ci_high[0]))
    where = f"{pair[1]} against {pair[0]} on {dataset}" + ("" if segment == "all" else f" / {segment}")
    return Plan.of(sd, margin, alpha, target, sided, f"estimated from {where} in {saved.folder.name}", len(differences))
