"""run_experiment: load -> align -> evaluate -> compare -> write results -> track -> report.

Results reach the disk (atomically, as a whole folder) before anything is sent to a
tracking server or rendered, so a failure there never loses them.
"""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import hashlib
import json
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from functools import partial
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from harness._atomic import sha256_path, size_of
from harness._version import __version__
from harness.comparison import judged
from harness.comparison.compare import CompareSettings, compare, count_blocks, system_summary
from harness.comparison.rows import Comparisons
from harness.comparison.versions import is_seeded, runs_by_system, version_summary, versions
from harness.config.schema import Dataset, Experiment, System
from harness.data.items import read_items, read_train
from harness.data.load import judged_query_ids, load_qrels
from harness.data.model import Intents, Qrels, Run
from harness.data.tables import read_table_columns
from harness.decision.release import decide_release, gate_keys
from harness.decision.verdict import Decision
from harness.engines import DatasetWork, Engine, open_engine
from harness.engines._common import checked_run, judgments_of, qrels_columns
from harness.errors import ConfigError, ReportError, ResultsNotWritten, TrackingError
from harness.evaluation.evaluator import Evaluator, builds_item_context
from harness.evaluation.results import (
    RunResult,
    group_rows,
    joined_result,
    long_tail_rows,
    per_query_rows,
    summarize,
)
from harness.measures.conventions import Conventions
from harness.measures.registry import REGISTRY
from harness.measures.spec import Measure
from harness.pipeline.judged import joined, labellings
from harness.progress import SILENT, Progress
from harness.records.looks import LEDGER, LookRecord, earlier_looks, new_look_id, next_look, record_look
from harness.records.mlflow_names import runs_table_url
from harness.records.mlflow_store import UI_ADDRESS, Destination, destination
from harness.records.previous import Earlier, compared_inputs, evaluation_store, load_previous, previous_result
from harness.records.previous import describe as describe_previous
from harness.records.recorder import Recorder, TrackingProcess
from harness.records.registry import resolve_model
from harness.records.store import (
    SavedResults,
    prepare_output,
    recorded_path,
    write_promotion,
    write_results,
    write_tracking,
)
from harness.records.track import log_report, promote_release, track_results
from harness.report.render import RenderedReport, render_report, write_rendered, write_report
from harness.stats.looks import Look

_quiet = SILENT


def _quiet_advance() -> None:
    """Counts nothing: a run evaluated again for measures under conventions of their own is one run to the bar."""


if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True, repr=False)
class Outcome:
    """What ``harness run`` reports: where the results went and what happened after (each stage's outcome a new
    value)."""

    results_dir: Path | None  # None: the results could not be written (results_error says why)
    report: Path | None = None
    tracking_uri: str | None = None
    mlflow_run_id: str | None = None
    mlflow_url: str | None = None
    mlflow_runs_url: str | None = None  # the experiment's runs table in the MLflow UI (model-training mode)
    gate: str = "none"  # PASS | FAIL | INCONCLUSIVE | none: what the gate exits as (after release.on_inconclusive)
    gate_verdict: str = "none"  # the verdict itself: PASS | FAIL | INCONCLUSIVE | none
    gate_errors: str | None = None  # which error the verdict controls, and at what rate
    gate_controls: str | None = None  # that error as a field: "false PASS", "false FAIL" or "none"
    gate_alpha: float | None = None  # its rate
    gate_approximate: bool | None = None  # whether the rate rests on an approximation (t-test, bootstrap)
    warnings: tuple[str, ...] = ()
    tracking_error: str | None = None
    interrupted: bool = False  # Ctrl-C after the results were written: the rest was cut short
    cut_short: frozenset[str] = frozenset()  # the later stages the interruption stopped before they ended
    tracking_notes: tuple[str, ...] = ()  # what tracking did that the user should know (a half-made store set aside)
    report_error: str | None = None
    results_error: str | None = None
    gate_line: str | None = None
    results: SavedResults | None = None  # everything written, as values
    decision: Decision | None = None  # the release decision itself (its guards' numbers), as this run computed it
    promotion: str | None = None  # what release.promote did (the alias moved, or why not); None without it

    @property
    def gate_production(self) -> str | None:
        """The evaluation production's values were reused from, if they were (the decision's
        ``production_evidence``)."""
        return None if self.decision is None else self.decision.production_evidence or None

    def __repr__(self) -> str:
        """One line: where the results went and what the gate decided (the tables are attributes: ``.summary``, ...).

        >>> Outcome(Path("out/demo/20261128-101500-ab12cd"), gate="PASS", gate_verdict="PASS")
        Outcome(results_dir='out/demo/20261128-101500-ab12cd', gate=PASS)
        """
        parts = [f"results_dir={None if self.results_dir is None else str(self.results_dir)!r}"]
        if self.gate != "none":
            parts.append(f"gate={self.gate}" + (f" (verdict {self.gate_verdict})" if self.gate != self.gate_verdict else ""))
        for name in ("mlflow_run_id", "promotion", "results_error", "tracking_error", "report_error"):
            if getattr(self, name):
                parts.append(f"{name}={getattr(self, name)!r}")
        return f"Outcome({', '.join(parts)})"

    def _repr_html_(self) -> str:
        """A notebook's view: the verdict box and the guards' table, then links to the results, the report and the
        MLflow run, and anything that failed after the results were written."""
        from html import escape

        def link(label: str, target: str, href: str | None) -> str:
            shown = escape(target)
            return f"<li>{label}: " + (f'<a href="{escape(href)}">{shown}</a>' if href else f"<code>{shown}</code>") + "</li>"

        items = []
        if self.results_dir is not None:
            items.append(link("results", str(self.results_dir), self.results_dir.resolve().as_uri()))
        if self.report is not None:
            items.append(link("report", str(self.report), self.report.resolve().as_uri()))
        if self.mlflow_run_id is not None:
            items.append(link("MLflow run", self.mlflow_run_id, self.mlflow_url or self.mlflow_runs_url))
        for label, text in (
            ("production's values reused from", self.gate_production),
            ("promotion", self.promotion),
            ("results not written", self.results_error),
            ("tracking failed", self.tracking_error),
            ("report failed", self.report_error),
        ):
            if text:
                items.append(f"<li>{label}: {escape(text)}</li>")
        box = self.decision._repr_html_() if self.decision is not None else "<p>No release gate is configured.</p>"
        return f"{box}<ul>{''.join(items)}</ul>"

    @property
    def per_query(self) -> pd.DataFrame | None:
        """One row per dataset, system, query, segment and measure (a pandas DataFrame; read from the results folder
        when the workers wrote it there)."""
        return None if self.results is None else self.results.per_query_of()

    @property
    def summary(self) -> pd.DataFrame | None:
        return None if self.results is None else self.results.summary

    @property
    def comparisons(self) -> pd.DataFrame | None:
        return None if self.results is None else self.results.comparisons

    @property
    def diagnostics(self) -> pd.DataFrame | None:
        return None if self.results is None else self.results.diagnostics


def _load_qrels(dataset: Dataset) -> Qrels | Intents:
    return load_qrels(dataset.qrels, qrels_columns(dataset.qrels_columns), dataset.qrels_format)


def _load_segments(dataset: Dataset) -> dict[str, str]:
    assert dataset.segments is not None
    spec = dataset.segments
    return read_table_columns(spec.path, spec.query_column, spec.segment_column)


def _evaluator(
    experiment: Experiment, dataset: Dataset, measures: tuple[Measure, ...], progress: Progress, judgments: bool = True
) -> Evaluator:
    """The dataset's judgments (and training data, catalogue), prepared once, under the experiment's conventions.
    ``judgments=False``: without them (the Dask workers read them), unless the items' context needs them."""
    (evaluator,) = _evaluators(experiment, dataset, measures, progress, judgments, apart=False).values()
    return evaluator


def _evaluators(
    experiment: Experiment,
    dataset: Dataset,
    measures: tuple[Measure, ...],
    progress: Progress,
    judgments: bool = True,
    apart: bool = True,
    segments: dict[str, str] | None = None,
) -> dict[Conventions, Evaluator]:
    """An evaluator per set of conventions the measures are evaluated under (``apart``: the profile's tool computes
    some under conventions of their own, :meth:`Experiment.conventions_for`), the experiment's first; the judgments,
    training data and catalogue read once, the items' context prepared once and shared. ``segments``: the dataset's
    segment file as read already (UserMAD's groups), else read here."""

    computed = experiment.measures_for(dataset)
    measures = tuple(m for m in measures if m in computed)
    conventions = dataclasses.replace(experiment.conventions, relevance_level=dataset.relevance_level)
    # the experiment's own conventions first (its diagnostics are the run's), unless no measure is under them
    groups = {conventions: [], **experiment.by_conventions(measures, dataset)} if apart else {conventions: list(measures)}
    if not groups[conventions] and len(groups) > 1:
        del groups[conventions]
    if judgments or builds_item_context(measures, dataset.train is not None, dataset.items is not None):
        progress(f"loading qrels {dataset.qrels}")
        qrels = _load_qrels(dataset)
    else:  # of the right kind: the intent-aware measures check that subtopic judgments come
        empty = Intents if dataset.qrels_format == "ndeval" else Qrels
        qrels = empty.from_records([], str(dataset.qrels))
    train = items = None
    if dataset.train is not None:
        progress(f"loading training interactions {dataset.train.path}")
        train = read_train(dataset.train.path, dataset.train.user, dataset.train.item)
    if dataset.items is not None:
        progress(f"loading items {dataset.items.path}")
        items = read_items(dataset.items.path, dataset.items.id, groups=dataset.items.groups)
    user_groups = segments if segments is not None or dataset.segments is None else _load_segments(dataset)  # UserMAD's
    out: dict[Conventions, Evaluator] = {}
    context = None
    for group_conventions, group in groups.items():
        evaluator = Evaluator(
            qrels, group, group_conventions, train=train, items=items, user_groups=user_groups, item_context=context
        )
        context = context or evaluator.items
        out[group_conventions] = evaluator
    return out


def _runs(
    experiment: Experiment, dataset: Dataset, judged: AbstractSet[str], progress: Progress
) -> Iterator[tuple[System, Path, Run, set[str]]]:
    """Each system's run on the dataset, loaded and checked to share queries with the judgments (a stochastic run with
    its samples when a measure reads them: its first sample is what the alignment checks)."""
    samples = REGISTRY.reads_samples(experiment.measures_for(dataset))
    for system in experiment.systems:
        for one in system.each_run(dataset.name):  # each of its seeds
            path = one.runs[0][1]
            run = checked_run(dataset, one, path, judged, progress, samples)
            yield one, path, run, judged_query_ids(run, judged, judgments_of(dataset))


def check_guard_segments(experiment: Experiment) -> None:
    """Every guard's segment exists in a segments file of its dataset(s): checked before anything is computed."""

    release = experiment.release
    if release is None:
        return
    for guard in release.guards:
        if guard.segment in (None, "all"):
            continue
        if "user_groups" in REGISTRY.definition(guard.measure).inputs(guard.measure):
            # the user groups are the segments: inside one segment there is one group, and a measure between
            # groups (UserMAD), or of another group (BiasDisparity's user_group), has no value there
            group = guard.measure.param("user_group")
            if guard.segment == "each" or group is None or str(group) != guard.segment:
                between = "between the user groups" if group is None else f"of the user group {group!r}"
                inside = "inside each segment" if guard.segment == "each" else f"inside segment {guard.segment!r}"
                raise ConfigError(
                    f"{guard.measure} is a measure {between}, and the user groups are the segments: {inside} "
                    "there is no other group, so it has no value there",
                    path=experiment.source,
                    line=guard.line,
                    hint="guard it over every user (remove segment:), where it compares the groups",
                )
        if guard.segment == "each":  # a guard per segment of each dataset: they must have segments
            if not any(d.segments is not None for d in experiment.datasets if guard.dataset in (None, d.name)):
                raise ConfigError(
                    "segment: each needs segments",
                    path=experiment.source,
                    line=guard.line,
                    hint="add segments: to the dataset, or name one segment",
                )
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


def pin_models(experiment: Experiment, progress: Progress = _quiet) -> Experiment:
    """The experiment with every registered model it names resolved and pinned (an alias to the version it names
    now), before any work: the record then says which version each system was, whatever the alias names later."""
    named = [s for s in experiment.systems if s.model is not None or (s.previous and s.previous.model)]
    if not named:
        return experiment
    default = tracking_destination(experiment).uri
    systems = []
    for system in experiment.systems:
        if system.model is not None:
            progress(f"resolving {system.model.uri} (system {system.name}) at {default}")
            system = dataclasses.replace(system, model=resolve_model(system.model, default))
        if system.previous is not None and system.previous.model is not None:
            uri = evaluation_store(experiment, system.previous)
            progress(f"resolving {system.previous.model.uri} (system {system.name}) at {uri}")
            system = dataclasses.replace(
                system, previous=dataclasses.replace(system.previous, model=resolve_model(system.previous.model, uri))
            )
        systems.append(system)
    return dataclasses.replace(experiment, systems=tuple(systems))


def evaluate_experiment(experiment: Experiment, progress: Progress = _quiet) -> list[RunResult]:
    """Every system on every dataset it has a run for, with its per-query values (gathered from a Dask cluster);
    raises on the first bad input."""
    check_guard_segments(experiment)
    experiment = pin_models(experiment, progress)
    return _evaluated(experiment, progress)


def _evaluated(experiment: Experiment, progress: Progress) -> list[RunResult]:
    """Every run's result, in the config's dataset and system order, from the engine it names (closed on return).
    The config's guards are checked by the callers, before any work (:func:`check_guard_segments`)."""
    results: list[RunResult] = []
    earlier: dict[str, Earlier] = {}
    total = sum(1 if s.previous is not None else len(s.runs_of(d.name)) for d in experiment.datasets for s in experiment.systems)
    with open_engine(experiment.engine, progress) as engine, progress.task("evaluating", total) as advance:
        for dataset in experiment.datasets:
            results.extend(_evaluate_dataset(experiment, dataset, earlier, progress, advance, engine))
    return results


def _evaluate_dataset(
    experiment: Experiment,
    dataset: Dataset,
    earlier: dict[str, Earlier],
    progress: Progress,
    advance: Callable[[], None],
    engine: Engine,
) -> list[RunResult]:
    """Every system on one dataset, in the config's order: recomputed from its run by the engine, or reused; under
    the judge's labels and under people's where the dataset has a judge (:mod:`harness.pipeline.judged`)."""
    if dataset.judge is None:
        return _evaluate_labelled(experiment, dataset, earlier, progress, advance, engine)
    with tempfile.TemporaryDirectory(prefix="harness-judge-") as scratch:
        labelled = labellings(dataset, Path(scratch), progress)
        by_judge = _evaluate_labelled(experiment, labelled.judge, earlier, progress, advance, engine)
        progress(f"evaluating {dataset.name} under people's labels")
        by_people = _evaluate_labelled(experiment, labelled.people, earlier, progress, _quiet_advance, engine)
    return joined(by_judge, by_people, labelled)


def _evaluate_labelled(
    experiment: Experiment,
    dataset: Dataset,
    earlier: dict[str, Earlier],
    progress: Progress,
    advance: Callable[[], None],
    engine: Engine,
) -> list[RunResult]:
    """Every system on one dataset under its qrels, in the config's order."""
    results: list[RunResult] = []
    with_runs = tuple(run for s in experiment.systems for run in s.each_run(dataset.name))  # a system once per seed
    given = _load_segments(dataset) if dataset.segments is not None else None  # read once: UserMAD's groups too
    evaluators = _evaluators(experiment, dataset, experiment.measures, progress, judgments=engine.reads_judgments, segments=given)
    segments = given or {}
    computed = {m for e in evaluators.values() for m in e.measures}
    skipped = ", ".join(str(m) for m in experiment.measures if m not in computed)
    if skipped:
        progress(f"not computed on {dataset.name} (no training data or catalogue there): {skipped}")
    parts = []
    for number, evaluator in enumerate(evaluators.values()):
        counted = advance if number == 0 else _quiet_advance  # a run counts once, however many groups evaluate it
        work = DatasetWork(experiment, dataset, evaluator, with_runs, segments, skipped, progress, counted)
        parts.append(engine.evaluate(work))
    order = tuple(m for m in experiment.measures if m in computed)
    evaluated = parts[0] if len(parts) == 1 else [joined_result(group, order) for group in zip(*parts, strict=True)]
    for system in experiment.systems:  # in the config's order, reused values beside recomputed ones
        if system.previous is not None:
            progress(f"reusing {system.name} on {dataset.name} from {describe_previous(system.previous)}")
            saved = load_previous(experiment, system, earlier)
            reused = previous_result(experiment, dataset, system, saved, segments)
            advance()
            results.extend(reused)
        else:
            results.extend(r for r in evaluated if r.system == system.name)
    return results


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
    del out["notes"]  # said to the user once, not part of what ran
    if not experiment.per_query_csv:  # a file format, not what ran: recorded where a config asks for the CSV
        del out["per_query_csv"]
    out["measures"] = [str(m) for m in experiment.measures]
    out["conventions"] = experiment.conventions.as_dict()
    del out["conventions_given"]  # what they give is recorded: each measure's own conventions, below
    own = experiment.measure_conventions()
    if own:  # the measures the profile's tool computes under conventions of their own
        out["measure_conventions"] = own
    out["systems"] = [
        {
            "name": s.name,
            "description": s.description,
            "tags": dict(s.tags),
            "runs": {d: str(p) for d, p in s.runs},
            **({"model": plain(s.model)} if s.model is not None else {}),
            **({"previous": plain(s.previous)} if s.previous is not None else {}),
        }
        for s in experiment.systems
    ]
    if experiment.release is not None:
        out["release"]["guards"] = [
            {**{k: v for k, v in plain(g).items() if k != "line"}, "measure": str(g.measure)} for g in experiment.release.guards
        ]
    out["gain_schemes"] = {name: text or "linear" for name, text in experiment.gain_schemes}
    return out


def config_hash(experiment: Experiment) -> str:
    return hashlib.sha256(json.dumps(resolved_config(experiment), sort_keys=True).encode()).hexdigest()[:16]


def _input_files(experiment: Experiment) -> list[tuple[str, Path]]:
    """Every file the results depend on, with its role: the config, each dataset's inputs, each run, each reused
    folder's per-query table."""
    files: list[tuple[str, Path]] = [("config", experiment.source)]
    for d in experiment.datasets:
        files.extend(compared_inputs(d))
    for s in experiment.systems:
        files.extend(
            (f"run:{s.name}:{d.name}" + (f":{run.run_label}" if run.run_label else ""), run.runs[0][1])
            for d in experiment.datasets
            for run in s.each_run(d.name)
        )
        if s.previous is not None and s.previous.results is not None:
            files.append((f"previous:{s.name}", s.previous.results / "per_query.parquet"))
    return files


def hash_inputs(experiment: Experiment) -> tuple[threading.Thread, dict[Path, str]]:
    """A thread computing the sha256 of every input file (:func:`_input_files`) into the dict it returns: hashing
    (0.7 s for two 20M-line runs) then overlaps the evaluation instead of following it. A file it cannot read is left
    out, for :func:`provenance` to read again and say why. Join the thread before reading the dict."""
    digests: dict[Path, str] = {}
    paths = list(dict.fromkeys(path for _, path in _input_files(experiment)))

    def work() -> None:
        for path in paths:
            with contextlib.suppress(OSError):
                digests[path] = sha256_path(path)

    thread = threading.Thread(target=work, name="harness-input-digests")
    thread.start()
    return thread, digests


def provenance(
    experiment: Experiment,
    results: list[RunResult],
    started: datetime,
    argv: list[str],
    digests: Mapping[Path, str] | None = None,
) -> dict[str, Any]:
    """What the results were computed from and how; ``digests``: the input files' sha256 where already known
    (:func:`hash_inputs`)."""
    files = _input_files(experiment)
    known = digests or {}
    base, absolute = experiment.source.parent, experiment.tracking.record_paths

    def shown(token: str) -> str:  # the command line's absolute paths, as the inputs' (recorded_path)
        return recorded_path(token, base, absolute) if os.path.isabs(token) else token

    return {
        "inputs": [
            {
                "role": role,
                "path": recorded_path(p, base, absolute),
                "sha256": known.get(p) or sha256_path(p),
                "bytes": size_of(p),
            }
            for role, p in files
        ],
        "rows": [
            {
                "dataset": r.dataset,
                "system": r.system,
                **({"seed": r.seed} if r.seed else {}),
                "run_rows": r.diagnostics.get("run_rows"),
                "queries": r.diagnostics.get("queries_evaluated"),
            }
            for r in results
        ],
        "versions": _versions(),
        "command": [shown(token) for token in argv],
        "config_hash": config_hash(experiment),
        "started": started.isoformat(),
        "finished": datetime.now(UTC).isoformat(),
        "host": platform.node(),
        "git_commit": git_commit(experiment.source.parent),
    }


def git_commit(folder: Path) -> str | None:
    """The commit checked out in the config's folder, when it is a git repository (recorded in provenance.json and
    tagged in MLflow)."""
    try:
        done = subprocess.run(
            ["git", "-C", str(folder), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 and done.stdout.strip() else None


def _frames(results: list[RunResult], settings: CompareSettings | None = None) -> tuple[Any, Any, Any, Any, Any]:
    import pandas as pd

    seeded = is_seeded(results)  # a system has several runs: the tables say which run (seed) a row is of
    per_query = [
        per_query_rows(
            r.dataset,
            r.system,
            r.per_query.query_ids,
            r.segments,
            r.per_query.measures,
            r.per_query.values,
            r.seed if seeded else None,
            r.per_query.evaluated,
        )
        for r in results
    ]
    per_query_frame = pd.concat(per_query, ignore_index=True) if per_query else None
    settings = settings or CompareSettings()
    summary = pd.DataFrame(_summary_rows(results, settings, seeded))
    tail = [row for r in results for row in long_tail_rows(r)]
    diagnostics = pd.DataFrame(
        [{"dataset": r.dataset, "system": r.system, **({"seed": r.seed} if seeded else {}), **r.diagnostics} for r in results]
    )
    groups = [row for r in results for row in group_rows(r)]
    return (
        per_query_frame,
        summary,
        diagnostics,
        (pd.DataFrame(tail) if tail else None),
        (pd.DataFrame(groups) if groups else None),
    )


def _summary_rows(results: list[RunResult], settings: CompareSettings, seeded: bool) -> list[dict[str, Any]]:
    """summary's rows: each run's, and with seeds (``seeded``) each system's version over its runs first (``seed:
    all``, :func:`~harness.comparison.versions.version_summary`), then each run's under its seed label."""
    if not seeded:
        return [row for r in results for row in _run_summary(r, settings)]
    out: list[dict[str, Any]] = []
    for runs in runs_by_system(results).values():
        each = [{**row, "seed": r.seed or "all", "runs": 1} for r in runs for row in _run_summary(r, settings)]
        if len(runs) == 1 and not runs[0].seed:
            out.extend(each)
        else:
            out.extend([*version_summary(runs, each), *each])
    return out


def _run_summary(result: RunResult, settings: CompareSettings) -> list[dict[str, Any]]:
    """A run's summary rows; on a judged dataset its means corrected by people's labels (:mod:`~harness.comparison.judged`)."""
    rows = [*summarize(result), *system_summary(result, settings)]
    return rows if result.people is None else judged.summary_rows(result, rows)


def decide_gate(
    experiment: Experiment, results: list[RunResult], comparisons: Comparisons | None = None, look: Look | None = None
) -> Decision | None:
    """The release decision, from the results in memory; None when no release is configured."""
    if experiment.release is None:
        return None
    return decide_release(experiment.release, results, compare_settings(experiment), comparisons, look)


@dataclass(frozen=True)
class GateLook:
    """Which look of its gate a run is: ``look`` (None for a gate planned for one look), a ``note`` when a one-look
    gate was decided before, the look's ``id``, and the earlier looks it was planned from (``before``)."""

    look: Look | None
    note: str | None
    id: str
    before: tuple[LookRecord, ...]


def gate_look(experiment: Experiment) -> GateLook | None:
    """Which look of its gate this run is, from every record of the gate's earlier looks (:mod:`harness.records.looks`:
    the experiment's ledger, its results folders and, for a gate planned for several looks, its MLflow runs), and what
    they spent; with one planned look, a note when the gate was decided before (re-running a one-look gate is many
    looks at one alpha). Refuses a look when the plan has nothing left to spend, before any work."""
    release = experiment.release
    if release is None:
        return None
    (key, *earlier_keys), alpha = gate_keys(release, experiment.stats.claim), experiment.stats.alpha
    root = _experiment_root(experiment)
    tracking = None
    if release.looks > 1 and experiment.tracking.enabled:
        tracking = (tracking_destination(experiment).uri, experiment.tracking.experiment or experiment.name)
    if release.looks == 1:  # the earlier records counted for a note only: nothing is spent
        before = earlier_looks(root, key, alpha, tracking, spent=False, also=tuple(earlier_keys))
        note = (  # said the first time the gate is decided again, not on every run after
            f"this gate was decided before in {root}, at alpha: re-running a one-look gate as users accrue is many "
            "looks at one alpha; release.looks plans them"
            if len(before) == 1
            else None
        )
        return GateLook(None, note, new_look_id(), tuple(before))
    look, before = next_look(root, key, alpha, release.looks, tracking, tuple(earlier_keys))
    if not look.level(alpha) > 0:
        raise ConfigError(
            f"the gate's alpha ({alpha:g}) is spent: {len(before)} earlier look(s) of it in "
            f"{root}{' and its MLflow experiment' if tracking else ''} used {look.spent:.3g} of it, and this would be look "
            f"{look.number} of {release.looks} planned",
            path=experiment.source,
            hint="a new decision needs a new gate (another experiment name or other guards); more looks would exceed alpha",
        )
    return GateLook(look, None, new_look_id(), tuple(before))


def save_results(
    experiment: Experiment,
    results: list[RunResult],
    comparisons: Comparisons,
    started: datetime,
    argv: list[str],
    verdict: Decision | None = None,
    frames: tuple[Any, Any, Any, Any, Any] | None = None,
    digests: Mapping[Path, str] | None = None,
) -> SavedResults:
    """The results as one value, written (atomically) under ``<output>/<experiment>/<timestamp>-<id>/``; ``digests``:
    the input files' sha256 where already known (:func:`hash_inputs`)."""
    per_query, summary, diagnostics, long_tail, groups = (
        frames if frames is not None else _frames(results, compare_settings(experiment))
    )
    saved = SavedResults(
        folder=Path(),
        config=resolved_config(experiment),
        provenance=provenance(experiment, results, started, argv, digests),
        per_query=per_query,
        summary=summary,
        diagnostics=diagnostics,
        comparisons=comparisons.frame() if experiment.stats.enabled and len({r.system for r in results}) >= 2 else None,
        anova=comparisons.anova_frame(),
        long_tail=long_tail,
        groups=groups,
        verdict=verdict,
        per_query_people=_people_frame(results),
        agreement=_agreements(results),
    )
    return write_results(saved, _experiment_root(experiment), started.strftime("%Y%m%d-%H%M%S"), experiment.per_query_csv)


def _agreements(results: list[RunResult]) -> dict[str, Any] | None:
    """Each judged dataset's audit of its judge (:func:`~harness.comparison.judged.agreement_of`), as agreement.json
    holds it; None without a judge."""
    out = {}
    for dataset in dict.fromkeys(r.dataset for r in results if r.people is not None):
        found = judged.agreement_of(versions([r for r in results if r.dataset == dataset]))  # seeds pooled
        if found is not None:
            out[dataset] = found.to_dict()
    return out or None


def _people_frame(results: list[RunResult]) -> Any:
    """People's per-query values on the judged datasets (``per_query_people``), as the per-query table holds the
    judge's; None without a judge."""
    import pandas as pd

    frames = []
    seeded = is_seeded(results)  # a system has several runs: which run (seed) a row is of, as per_query says
    for r in results:
        if r.people is None:
            continue
        segment_of = dict(zip(r.per_query.query_ids.astype(str), r.segments, strict=True))
        segments = np.array([segment_of.get(q, "") for q in r.people.query_ids.astype(str)], dtype=object)
        frames.append(
            per_query_rows(
                r.dataset,
                r.system,
                r.people.query_ids,
                segments,
                r.people.measures,
                r.people.values,
                r.seed if seeded else None,
                r.people.evaluated,
            )
        )
    return pd.concat(frames, ignore_index=True) if frames else None


def _experiment_root(experiment: Experiment) -> Path:
    """Where the experiment's results folders go: ``<output>/<experiment>/``."""
    return experiment.output / experiment.name  # as named: "x y" and "x_y" are two experiments, two folders


def run_experiment(
    experiment: Experiment,
    progress: Progress = _quiet,
    argv: list[str] | None = None,
    tracking_process: TrackingProcess = "this",
) -> Outcome:
    """Run an experiment: evaluate, compare, decide, write, log and report. ``tracking_process``: where MLflow's client
    runs, ``this`` process or a ``child`` started now (:class:`~harness.records.recorder.Recorder`: its import and a
    new store's migrations then overlap the work, and the report is rendered while the runs are logged; the records
    are the same)."""
    started = datetime.now(UTC)
    check_guard_segments(experiment)  # the config's mistakes first, then the output, then the registry, before any work
    prepare_output(_experiment_root(experiment))
    experiment = pin_models(experiment, progress)
    planned = gate_look(experiment)
    recorder = _recorder() if experiment.tracking.enabled and tracking_process == "child" else None
    try:
        hashing, digests = hash_inputs(experiment)
        try:
            return _run(experiment, progress, argv, started, planned, recorder, hashing, digests)
        finally:
            hashing.join()  # never left running while the process exits
    finally:
        if recorder is not None:
            recorder.close()


def _run(
    experiment: Experiment,
    progress: Progress,
    argv: list[str] | None,
    started: datetime,
    planned: GateLook | None,
    recorder: Recorder | None,
    hashing: threading.Thread,
    digests: dict[Path, str],
) -> Outcome:
    """:func:`run_experiment` once its inputs are checked: the stages in order (``recorder``: the child process that
    logs to MLflow, or none to log here; ``hashing``: the thread filling ``digests``, joined before they are used)."""
    t0 = time.perf_counter()
    results = _evaluated(experiment, progress)
    progress(f"evaluated {len(results)} runs in {time.perf_counter() - t0:.1f} s")
    if recorder is not None:  # the inputs are read: a new store is made while the comparisons run
        recorder.open(tracking_destination(experiment))
    comparisons = comparison_tables(experiment, results, progress)
    frames = _frames(results, compare_settings(experiment))
    verdict = decide_gate(experiment, results, comparisons, None if planned is None else planned.look)
    if verdict is not None and planned is not None:  # the look recorded before its verdict is shown or saved
        verdict = replace(verdict, look_id=planned.id)
        record_look(
            _experiment_root(experiment),
            LookRecord(planned.id, verdict.key, verdict.look, verdict.looks, verdict.tested_at, LEDGER),
            list(planned.before),
            experiment.stats.alpha,
        )
    progress("writing results")
    hashing.join()
    try:
        saved: SavedResults | None = save_results(
            experiment, results, comparisons, started, argv if argv is not None else sys.argv, verdict, frames, digests
        )
        written_error = None
    except ResultsNotWritten as exc:  # the verdict was reached: it is still told, and still decides the exit code
        saved, written_error = None, str(exc)
    outcome = Outcome(
        results_dir=None if saved is None else saved.folder,
        results=saved,
        results_error=written_error,
        warnings=(*experiment.notes, *([planned.note] if planned is not None and planned.note else [])),
    )
    if verdict is not None:  # decided and saved before anything is sent or rendered: nothing later can hide it
        outcome = replace(
            outcome,
            gate=verdict.outcome,  # gate.json's words: PASS, FAIL, INCONCLUSIVE
            gate_verdict=verdict.verdict,
            gate_line=verdict.line(),
            gate_errors=verdict.errors,
            gate_controls=verdict.controls,
            gate_alpha=verdict.alpha,
            gate_approximate=verdict.approximate,
            decision=verdict,
        )
    if saved is None:
        return outcome
    # Results are on disk: nothing after this point can lose them, and an interruption (Ctrl-C) from here on stops the
    # rest without hiding the verdict, which still decides the exit code. Each stage's outcome replaces the last whole.
    early: dict[tuple[str, str, str] | None, RenderedReport] = {}  # the report rendered while the runs were logged
    try:
        if experiment.tracking.enabled:
            progress("logging to MLflow")
            try:
                to = tracking_destination(experiment)
                if recorder is None:
                    tracked = track_results(saved, to, progress=progress)
                else:  # the report, which links the parent run, rendered here while the child logs the rest
                    saved.find_values_digests()  # here, while the child is still importing MLflow, not after it
                    # a promotion's line is in the report, and is known only once the records are: rendered after
                    promoting = experiment.release is not None and experiment.release.promote is not None
                    render = partial(_render_early, saved, progress, early)
                    tracked = recorder.track(saved, to, progress, render if experiment.report.enabled and not promoting else None)
                saved = write_tracking(saved, tracked.as_dict())
                server = tracked.tracking_uri if tracked.url is not None else UI_ADDRESS  # a local store: as mlflow ui serves
                outcome = replace(
                    outcome,
                    results=saved,
                    tracking_notes=tracked.notes,
                    tracking_uri=tracked.tracking_uri,
                    mlflow_run_id=tracked.run_id,
                    mlflow_url=tracked.url,
                    mlflow_runs_url=runs_table_url(server, tracked.experiment_id, tracked.view),
                )
                if verdict is not None:  # only the verdict this process computed acts on the registry
                    promoted = promote_release(saved, verdict, tracked)
                    if promoted is not None and saved.verdict is not None:  # gate.json says it: so do the report
                        saved = replace(saved, verdict=replace(saved.verdict, promotion=promoted.line))  # and summary
                        outcome = replace(outcome, results=saved, promotion=promoted.line)
            except TrackingError as exc:
                outcome = replace(outcome, tracking_error=str(exc))
        if outcome.promotion is None and experiment.release is not None and experiment.release.promote is not None:
            rule = experiment.release.promote
            line = (
                f"not moved: {rule.model}@{rule.alias} is promoted only once the results are logged in MLflow; "
                f"after harness track {saved.folder}, run harness promote {saved.folder}"
            )
            saved = write_promotion(saved, line)
            outcome = replace(outcome, results=saved, promotion=line)
        if experiment.report.enabled:  # once, after tracking, so that it links the MLflow run
            outcome = _report(saved, outcome, progress, early.get(_linked(saved.tracking)))
            if outcome.report is not None and outcome.mlflow_run_id is not None:
                try:
                    recorder.log_report(saved) if recorder is not None else log_report(saved)
                except TrackingError as exc:
                    outcome = replace(outcome, tracking_error=str(exc))
    except KeyboardInterrupt:
        outcome = replace(outcome, interrupted=True)
        if experiment.tracking.enabled and outcome.mlflow_run_id is None and outcome.tracking_error is None:
            outcome = replace(
                outcome,
                cut_short=outcome.cut_short | {"tracking"},
                tracking_error=(f"interrupted before the results were logged; log them with: harness track {saved.folder}"),
            )
        if experiment.report.enabled and outcome.report is None and outcome.report_error is None:
            outcome = replace(
                outcome,
                cut_short=outcome.cut_short | {"report"},
                report_error=(f"interrupted before the report was rendered; render it with: harness report {saved.folder}"),
            )
    return outcome


def tracking_destination(experiment: Experiment) -> Destination:
    """Where ``harness run`` logs: ``--set tracking.uri=...``, then ``MLFLOW_TRACKING_URI``, then the config's
    ``tracking.uri``, then the local store in the output folder."""
    tracking = experiment.tracking
    command_line = tracking.uri if tracking.uri_on_command_line else None
    return destination(command_line, tracking.uri, experiment.output)


def _recorder() -> Recorder | None:
    """A child process to log from, or none (then this process logs, the same records) where none can be started."""
    try:
        return Recorder.start()
    except OSError:  # no process to spare (EAGAIN), no interpreter to run (an embedded Python): logged here
        return None


def _render_early(
    saved: SavedResults,
    progress: Progress,
    early: dict[tuple[str, str, str] | None, RenderedReport],
    parent: dict[str, str],
) -> None:
    """The report of ``saved`` logged to the ``parent`` run, rendered (not written) while the child process logs its
    records: written only once they are logged under that run (a run that then fails to log renders it again,
    without the link), and the same bytes as one rendered after them."""
    progress("rendering the report while the runs are logged")
    with contextlib.suppress(ReportError):  # rendered again, after the logging, to say why
        early[_linked(parent)] = render_report(saved.with_tracking(parent))


def _linked(tracking: dict[str, Any] | None) -> tuple[str, str, str] | None:
    """The MLflow run a report links to: what it reads of ``tracking.json``."""
    return None if tracking is None else (tracking["tracking_uri"], tracking["experiment_id"], tracking["run_id"])


def _report(saved: SavedResults, outcome: Outcome, progress: Progress, rendered: RenderedReport | None = None) -> Outcome:
    """The outcome with the report written (``rendered`` already, or rendered now), or with why it was not."""
    if rendered is None:
        progress("rendering the report")
    try:
        path = write_report(saved)[0] if rendered is None else write_rendered(saved.folder, rendered)
    except ReportError as exc:
        return replace(outcome, report_error=str(exc))
    return replace(outcome, report=path)


def compare_settings(experiment: Experiment) -> CompareSettings:
    release = experiment.release
    return CompareSettings(
        **dataclasses.asdict(experiment.stats),
        baseline=experiment.baseline,
        extra_pairs=((release.production, release.candidate),) if release else (),
    )


def comparison_tables(experiment: Experiment, results: list[RunResult], progress: Progress = _quiet) -> Comparisons:
    """The comparisons (and ANOVAs), none when statistics are off or there is one system."""
    if not experiment.stats.enabled or len({r.system for r in results}) < 2:
        return Comparisons()
    settings = compare_settings(experiment)
    progress(f"comparing systems ({experiment.stats.permutations} permutations, seed {experiment.stats.seed})")
    systems = versions(results)  # a system's seeds pooled: its version (the same list without seeds)
    with progress.task("comparing (pair x segment)", count_blocks(systems, settings)) as advance:
        return compare(systems, experiment.measures, settings, advance, seeds=results)


def validate_experiment(experiment: Experiment, progress: Progress = _quiet) -> dict[str, Any]:
    """Read every file and check it parses and overlaps, without computing measures."""
    check_guard_segments(experiment)
    experiment = pin_models(experiment, progress)
    gate_look(experiment)  # a gate whose planned looks are spent is refused here too
    earlier: dict[str, Earlier] = {}
    report: dict[str, Any] = {
        "experiment": experiment.name,
        "measures": len(experiment.measures),
        "measure_names": [str(m) for m in experiment.measures],
        "datasets": [],
    }
    for given in experiment.datasets:
        dataset, people = given, None
        if given.judge is not None:  # the runs checked against the judge's labels, after checking people's correct them
            with tempfile.TemporaryDirectory(prefix="harness-judge-") as scratch:
                labelled = labellings(given, Path(scratch), progress)
                people = _evaluator(experiment, labelled.people, (), progress).prepared.judged
                dataset = dataclasses.replace(labelled.judge, qrels=given.judge.qrels)
                evaluator = _evaluator(experiment, labelled.judge, (), progress)
        else:
            evaluator = _evaluator(experiment, dataset, (), progress)
        judged = evaluator.prepared.judged
        entry: dict[str, Any] = {
            "name": dataset.name,
            "judgments": int(evaluator.prepared.codes.size),
            "queries": len(judged),
            "runs": [],
        }
        if people is not None and given.judge is not None:
            entry["judge"] = {"name": given.judge.name, "people_queries": len(people), "sample": given.judge.sample}
        segments = _load_segments(dataset) if dataset.segments is not None else {}
        if dataset.segments is not None:
            entry["segmented_queries"] = len(judged & set(segments))
        for system, _, run, run_ids in _runs(experiment, dataset, judged, progress):
            evaluator.align(run)  # duplicates, ties and depth are checked as a real run would be
            entry["runs"].append(
                {
                    "system": system.name,
                    **({"seed": system.run_label} if system.run_label else {}),
                    "rows": len(run),
                    "queries": len(run_ids),
                    "judged_queries_retrieved": len(run_ids & judged),
                }
            )
        for system in experiment.systems:  # reused values: checked for comparability as a run would be
            if system.previous is not None:
                reused = previous_result(experiment, dataset, system, load_previous(experiment, system, earlier), segments)
                for one in reused:
                    n = len(one.per_query.query_ids)
                    entry["runs"].append(
                        {
                            "system": system.name,
                            **({"seed": one.seed} if one.seed else {}),
                            "rows": 0,
                            "queries": n,
                            "judged_queries_retrieved": n,
                            "reused_from": describe_previous(system.previous),
                        }
                    )
        report["datasets"].append(entry)
    return report


__all__ = ["Outcome", "evaluate_experiment", "run_experiment", "validate_experiment"]
