"""MLflow tracking: a results folder logged as one parent run (and what a run someone else made is given), importing
mlflow only when tracking. What the records are called is :mod:`harness.records.mlflow_names`; where they go,
:mod:`harness.records.mlflow_store`; reading them back, :mod:`harness.records.mlflow_read`.

Everything is logged from a saved results folder, so ``harness run`` (right after
writing it) and ``harness track RESULTS_DIR`` (later, e.g. after a server outage)
are the same code and log the same things:

* experiment: the config's ``experiment`` (or ``tracking.experiment``);
* one parent run per results folder, one nested child run per dataset x system;
* params (parent): measures, cutoffs, gain schemes, profile, every convention,
  baseline, test settings and seeds; (children) dataset, system;
* params: each dataset's relevance level (``dataset.<name>.relevance_level``), as evaluated;
* metrics (children): every measure's aggregate under ``metric_key`` (a named gain
  scheme reads ``ndcg_graded_at_10``), and per segment as ``<key>.<segment>``;
* metrics (parent), with a release gate: ``release_gate_passed``, ``release_gate_inconclusive``
  and, per deciding guard, ``guard.<key>.<dataset>[.<segment>].difference`` / ``.drop_high`` /
  ``.margin`` / ``.p_pass`` / ``.p_fail_adj`` / ``.mde`` / ``.n_needed`` / ``.passed``;
* metrics (parent), with a judged dataset: its judge's agreement with people (``judge.<dataset>.cohen_kappa``, ...)
  and each system's bias (``judge.<dataset>.<key>.<system>.bias``; :func:`_log_agreement`);
* tags: system, dataset, harness version, config hash, git commit of the config's
  folder when it is a git repository; the verdict (``release.verdict``, ``release.outcome``) and
  the errors it controls (``release.errors``); the
  experiment's and systems' descriptions as the run's note;
* a system that names its registered model (``model: models:/recsys/4``): its child's metrics linked to the logged
  model and the judgments (MLflow 3's ``model_id``, ``dataset``), and the tags ``harness.model`` and
  ``harness.model_id`` by which ``previous: models:/...`` finds the evaluation again, with the digests it is verified
  by (``harness.values_sha256``, ``harness.qrels_sha256.<dataset>``; the parent's ``harness.per_query_sha256``);
  with ``release.promote``, :func:`promote_release` (called by the ``harness run`` that decided, never by
  ``harness track``) moves the alias on PASS (tag ``release.promotion``); a gate's look: ``release.look``,
  ``release.gate_key`` and ``release.look_id`` (:mod:`harness.records.looks`);
* inputs: every qrels, run and segments file as an MLflow dataset, its sha256 the digest (paths relative to the
  config unless ``tracking.record_paths``), on the parent and on each child its own;
* experiment tags: ``mlflow.experimentKind`` (the UI shows runs, not traces) and, once a gated
  run is logged, the release view (``mlflow.sharedViewState.harness-release``): the runs
  table with the verdict and the guards' numbers as columns;
* artifacts: the resolved config, provenance, gate.json, summary, diagnostics and
  comparison tables, each child's per-query table as Parquet, and the HTML report and
  Markdown summary (logged after they are rendered).

The default store needs no server: ``sqlite:///<output>/mlflow.db`` with artifacts
in ``<output>/mlartifacts``. ``tracking.uri`` in the config, or MLflow's own
``MLFLOW_TRACKING_URI``, point elsewhere; credentials come only from MLflow's own
environment variables and are never written by harness.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import math
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness._atomic import exclusive, sha256_path
from harness._text import clipped, for_terminal
from harness.config.schema import ModelRef, Promote
from harness.decision.verdict import Decision
from harness.errors import HarnessError, TrackingError
from harness.progress import SILENT, Progress
from harness.records.connection import explain, key_part, mlflow_defaults
from harness.records.looks import GATE_KEY_TAG, LOOK_ID_TAG
from harness.records.mlflow_names import (
    DATASET_NAME_CHARS,
    EXPERIMENT_CHARS,
    GUARD_COLUMNS,
    INPUT_TAG_CHARS,
    PARAM_CHARS,
    RELEASE_VIEW,
    RUN_NAME_CHARS,
    SHARED_VIEW_PREFIX,
    TAG_CHARS,
    description_of,
    evaluator_key,
    held,
    metric_key,
    params_of,
    parent_name,
    quoted,
    release_view,
    results_key,
    run_url,
    summary_key,
)
from harness.records.mlflow_store import Destination, store_lock
from harness.records.recorded import release_section
from harness.records.registry import (
    EVALUATION_RUN_TAG,
    EVALUATION_SYSTEM_TAG,
    MODEL_ID_TAG,
    MODEL_TAG,
    PER_QUERY_TAG,
    SYSTEM_TAG,
    VALUES_TAG,
    Promotion,
    model_tag,
    promote,
    qrels_tag,
)
from harness.records.store import REQUIRED, SavedResults, write_promotion

ARTIFACT_FILES = (
    "config.resolved.yaml",
    "provenance.json",
    "per_query.parquet",
    "per_query_people.parquet",
    "summary.parquet",
    "summary.csv",
    "diagnostics.parquet",
    "diagnostics.csv",
    "comparisons.csv",
    "anova.csv",
    "long_tail.csv",
    "groups.csv",
    "gate.json",
    "agreement.json",
    "report.html",
    "summary.md",
)


# MLflow 3's UI opens an experiment on its GenAI overview (traces) unless the experiment says it holds model runs
EXPERIMENT_KIND, MODEL_DEVELOPMENT = "mlflow.experimentKind", "custom_model_development"
# A results folder's parent run is found again by this tag (exactly once: harness track never logs a second copy);
# the completion tag is written last, so a parent without it was cut short and is replaced.
RESULTS_TAG = "harness.results_id"
COMPLETE_TAG = "harness.complete"


@dataclass(frozen=True)
class Tracked:
    tracking_uri: str
    experiment_id: str
    run_id: str
    child_runs: dict[str, str]
    url: str | None = None  # the run's page, for a server
    already: bool = False  # the folder was logged completely before: nothing was added
    view: str | None = None  # the experiment's shared view of releases (RELEASE_VIEW), once a gated run is logged
    notes: tuple[str, ...] = ()  # what the user should know (a half-made local store set aside)

    def as_dict(self) -> dict[str, Any]:
        """What ``tracking.json`` holds."""
        return {
            "tracking_uri": self.tracking_uri,
            "experiment_id": self.experiment_id,
            "run_id": self.run_id,
            "child_runs": self.child_runs,
            "url": self.url,
            "view": self.view,
        }


def _parent_of(client: Any, experiment_id: str, key: str) -> Any:
    """The live parent run logged for a results folder, if any (a deleted one does not count)."""
    found = client.search_runs([experiment_id], filter_string=f"tags.`{RESULTS_TAG}` = '{quoted(key)}'", max_results=10)
    parents = [r for r in found if r.data.tags.get("harness.kind") == "experiment"]
    return max(parents, key=lambda r: r.info.start_time) if parents else None


def _children_of(client: Any, experiment_id: str, parent_id: str) -> list[Any]:
    return list(client.search_runs([experiment_id], filter_string=f"tags.mlflow.parentRunId = '{parent_id}'", max_results=50_000))


@contextlib.contextmanager
def _folder_lock(folder: Path) -> Iterator[None]:
    """An exclusive lock on the results folder itself (its directory, so nothing is written into it) while it is
    logged: finding or making its parent run must be one step, or two ``harness track`` of one folder at once, to a
    local store or a tracking server alike, would both find none and log it twice."""
    with exclusive(str(folder), os.O_RDONLY):
        yield


def track_results(
    results: SavedResults,
    to: Destination,
    experiment: str | None = None,
    progress: Progress = SILENT,
    on_parent: Callable[[dict[str, str]], None] | None = None,
) -> Tracked:
    """Log results (as saved in their folder) to MLflow at ``to``; raises TrackingError (one line) on any failure.

    ``on_parent`` is given the parent run's ``tracking_uri``, ``experiment_id`` and ``run_id`` as soon as it is made (or
    found), before its records are: what a report links to, to render while they are logged."""
    folder, config = results.folder, results.config
    tracking_uri = to.uri
    experiment_name = str(experiment or (config.get("tracking") or {}).get("experiment") or config["name"])
    if len(experiment_name) > EXPERIMENT_CHARS or for_terminal(experiment_name) != experiment_name:
        raise HarnessError(
            f"the MLflow experiment name {clipped(experiment_name)} is longer than {EXPERIMENT_CHARS} "
            "characters or holds control characters",
            path=folder,
            hint="name another with --experiment NAME",
        )
    mlflow_defaults()
    try:
        # one process logs a folder at a time, and a local store at a time (see the locks); MLflow prints "View run ..."
        # lines: stdout is harness's (--json)
        with _folder_lock(folder), store_lock(tracking_uri, to.output_root) as notes, contextlib.redirect_stdout(sys.stderr):
            logged = _log(results, tracking_uri, experiment_name, to.output_root, progress, on_parent)
            return dataclasses.replace(logged, notes=tuple(notes))
    except TrackingError:
        raise
    except Exception as exc:
        raise TrackingError(
            f"MLflow tracking at {tracking_uri} failed: {explain(exc)}",
            hint=f"the results are saved in {folder}; log them later with: harness track {folder}",
        ) from None


AGREEMENT_METRICS = ("cohen_kappa", "weighted_kappa", "krippendorff_alpha", "human_relevant", "judge_relevant", "pairs")


def _log_agreement(client: Any, run_id: str, results: SavedResults, keys: dict[str, str]) -> None:
    """A judged dataset's audit of its judge (agreement.json) as metrics of the parent run: the labels' agreement
    (``judge.<dataset>.cohen_kappa``, ...) and each system's bias (``judge.<dataset>.<key>.<system>.bias``, with
    ``.bias_low`` / ``.bias_high``, and ``.favoured``: 1, -1 or 0)."""
    from mlflow.entities import Metric, RunTag

    if not results.agreement:
        return
    now = int(time.time() * 1000)
    metrics = []
    for dataset, audit in results.agreement.items():
        base = f"judge.{key_part(dataset)}"
        labels = audit["labels"]
        metrics += [Metric(f"{base}.{name}", float(labels[name]), now, 0) for name in AGREEMENT_METRICS]
        metrics.append(Metric(f"{base}.human_queries", float(audit["human_queries"]), now, 0))
        for system in audit.get("systems") or []:
            where = f"{base}.{keys.get(system['measure'], key_part(system['measure']))}.{key_part(system['name'])}"
            for name in ("bias", "bias_low", "bias_high"):
                metrics.append(Metric(f"{where}.{name}", float(system[name]), now, 0))
            favoured = {"favoured": 1.0, "disfavoured": -1.0}.get(system["favoured"], 0.0)
            metrics.append(Metric(f"{where}.favoured", favoured, now, 0))
    tags = [
        RunTag(
            f"judge.{key_part(dataset)}",
            f"estimator ppi: {audit['judge_queries']:,} queries labelled by the judge, {audit['human_queries']:,} by "
            "people; means and differences are the judge's corrected by people's (prediction-powered)",
        )
        for dataset, audit in results.agreement.items()
    ]
    finite = [m for m in metrics if math.isfinite(m.value)]  # an undefined number is not a metric
    for start in range(0, max(len(finite), 1), 1000):
        client.log_batch(run_id, metrics=finite[start : start + 1000], tags=tags if not start else [])


def _log_verdict(client: Any, run_id: str, results: SavedResults, keys: dict[str, str]) -> list[str]:
    """The release verdict on the parent run: tags to filter by, metrics to chart (the verdict, each guard's difference
    and p). Returns the metric keys the release view shows as columns."""
    if results.verdict is None:
        return []
    from mlflow.entities import Metric, RunTag

    gate = results.verdict.to_dict()
    now = int(time.time() * 1000)
    tags = [
        RunTag("release.verdict", gate["verdict"]),
        RunTag("release.outcome", gate["outcome"]),
        RunTag("release.candidate", held(gate["candidate"], TAG_CHARS)),
        RunTag("release.production", held(gate["production"], TAG_CHARS)),
        RunTag("release.line", gate["line"][:5000]),
        RunTag("release.errors", gate["errors"][:5000]),
        RunTag("release.segment_warnings", str(len(results.verdict.warnings))),
        RunTag("release.claim", gate.get("claim", "model")),  # these trained runs, or the versions over seeds
        *([RunTag("release.seeds", f"{gate['seeds'][1]} against {gate['seeds'][0]}")] if gate.get("claim") == "version" else []),
        *([RunTag("release.look", f"{gate['look']} of {gate['looks']}")] if gate.get("looks", 1) > 1 else []),
        *([RunTag(GATE_KEY_TAG, gate["key"])] if gate.get("key") else []),
        *([RunTag(LOOK_ID_TAG, gate["look_id"])] if gate.get("look_id") else []),
    ]
    metrics = [
        Metric("release_gate_passed", 1.0 if gate["outcome"] == "PASS" else 0.0, now, 0),
        Metric("release_gate_inconclusive", 1.0 if gate["verdict"] == "INCONCLUSIVE" else 0.0, now, 0),
        Metric("release_segment_warnings", float(len(results.verdict.warnings)), now, 0),
        Metric("release_gate_level", float(gate.get("level", gate["alpha"])), now, 0),
    ]
    for guard in gate["guards"]:
        if not guard.get("measure") or not guard.get("dataset"):
            continue
        where = ".".join(key_part(x) for x in (guard["dataset"], guard["segment"]) if x and x != "all")
        base = f"guard.{keys.get(guard['measure'], guard['measure'])}.{where}"
        if guard.get("descriptive"):
            continue
        metrics.append(Metric(f"{base}.passed", 1.0 if guard["verdict"] == "PASS" else 0.0, now, 0))
        for field in ("difference", "drop_high", "margin", "p_pass", "p_fail_adj", "mde", "n_needed"):
            if guard.get(field) is not None and guard[field] == guard[field]:
                metrics.append(Metric(f"{base}.{field}", float(guard[field]), now, 0))
    client.log_batch(run_id, metrics=metrics, tags=tags)
    logged = {m.key for m in metrics}
    return [
        key
        for m in metrics
        if m.key.startswith("guard.") and m.key.endswith(".passed")
        for key in (m.key.removesuffix("passed") + c for c in GUARD_COLUMNS)
        if key in logged
    ]


def _share_release_view(client: Any, experiment_id: str, columns: list[str]) -> None:
    tag = SHARED_VIEW_PREFIX + RELEASE_VIEW
    earlier = client.get_experiment(experiment_id).tags.get(tag)
    client.set_experiment_tag(experiment_id, tag, release_view(columns, earlier))


def _has_release_view(client: Any, experiment_id: str) -> str | None:
    return RELEASE_VIEW if SHARED_VIEW_PREFIX + RELEASE_VIEW in client.get_experiment(experiment_id).tags else None


def _model_tags(model: dict[str, Any] | None, system: str) -> dict[str, str]:
    """The tags by which a registered model's evaluations are found again (:mod:`harness.records.registry`)."""
    if not model:
        return {}
    ref = _recorded_model(model)
    tags = {SYSTEM_TAG: held(system, TAG_CHARS), "harness.model_uri": held(ref.uri, TAG_CHARS)}
    if ref.model_id:
        tags[MODEL_ID_TAG] = ref.model_id
    if model_tag(ref):
        tags[MODEL_TAG] = str(model_tag(ref))
    return tags


def _evidence_tags(results: SavedResults, system: str, dataset: str) -> dict[str, str]:
    """The tags a reused evaluation is verified by (:mod:`harness.records.previous`): the digest of the system's
    values and the sha256 of the judgments they were computed on."""
    qrels = next((i["sha256"] for i in results.provenance.get("inputs", []) if i["role"] == f"qrels:{dataset}"), None)
    return {VALUES_TAG: results.values_digest(system), **({qrels_tag(dataset): qrels} if qrels else {})}


def _recorded_model(recorded: dict[str, Any]) -> ModelRef:
    """A pinned model as config.resolved.yaml records it."""
    return ModelRef(str(recorded["uri"]), *(recorded.get(k) for k in ("name", "version", "alias", "model_id")))


def promote_release(results: SavedResults, decision: Decision, tracked: Tracked) -> Promotion | None:
    """``release.promote`` after the ``harness run`` that decided ``decision`` logged its results (``tracked``): the
    alias moved to the candidate's version only when the verdict itself is PASS (an INCONCLUSIVE one that
    ``on_inconclusive: pass`` lets through never moves it), with the evaluation named on the version
    (:func:`~harness.records.registry.promote`); what was done is recorded on the parent run. Never called for a
    folder read back from disk: a verdict harness did not compute in this process never acts on the registry."""
    rule = release_section(results.config).get("promote")
    if not rule:
        return None
    if decision.verdict != "PASS":
        done = Promotion(False, f"not moved: the gate's verdict is {decision.verdict}, and only PASS promotes")
    else:
        systems = {s["name"]: s for s in results.config["systems"]}

        def ref(name: str) -> ModelRef | None:
            model = systems.get(name, {}).get("model") or (systems.get(name, {}).get("previous") or {}).get("model")
            return _recorded_model(model) if model else None

        candidate = ref(decision.candidate)
        if candidate is None:
            raise TrackingError(
                f"candidate {decision.candidate!r} names no registered model", hint="give it model: models:/NAME/VERSION"
            )
        evidence = {
            EVALUATION_RUN_TAG: tracked.run_id,
            EVALUATION_SYSTEM_TAG: held(decision.candidate, TAG_CHARS),
            VALUES_TAG: results.values_digest(decision.candidate),
        }
        try:
            done = promote(
                Promote(rule["model"], rule["alias"]), candidate, ref(decision.production), tracked.tracking_uri, evidence
            )
        except HarnessError:
            raise
        except Exception as exc:
            raise TrackingError(
                f"promoting {rule['model']}@{rule['alias']} at {tracked.tracking_uri} failed: {explain(exc)}",
                hint=f"the results are logged (run {tracked.run_id}); promote them with: harness promote {results.folder}",
            ) from None
    mlflow_defaults()
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=tracked.tracking_uri)
    client.set_tag(tracked.run_id, "release.promotion", held(done.line, TAG_CHARS))
    if results.folder.is_dir():  # gate.json says it too, in the folder and in the run
        written = write_promotion(results, done.line)
        with contextlib.redirect_stdout(sys.stderr):
            client.log_artifact(tracked.run_id, str(written.folder / "gate.json"))
    return done


def _log_inputs(client: Any, run_id: str, inputs_recorded: list[dict[str, Any]]) -> None:
    """Every input file as an MLflow dataset, with its sha256 as the digest."""
    from mlflow.entities import Dataset, DatasetInput, InputTag

    inputs = [
        DatasetInput(
            Dataset(
                name=held(i["role"], DATASET_NAME_CHARS),
                digest=i["sha256"][:36],
                source_type="local",
                source=json.dumps({"uri": i["path"]}),
            ),
            tags=[
                InputTag("mlflow.data.context", i["role"].split(":")[0]),
                InputTag("sha256", i["sha256"]),
                *([InputTag("role", held(i["role"], INPUT_TAG_CHARS))] if len(i["role"]) > DATASET_NAME_CHARS else []),
            ],
        )
        for i in inputs_recorded
        if i["role"] != "config"
    ]
    if not inputs:
        return
    for attempt in range(1, INPUT_ATTEMPTS + 1):
        try:
            client.log_inputs(run_id, datasets=inputs)
            return
        except Exception as exc:
            # a tracking server creates an experiment's dataset record on first use, without a lock: two processes
            # logging the same input at once, one of them meets the other's new row (UNIQUE constraint). Again, it
            # finds that row and links it.
            if attempt == INPUT_ATTEMPTS or "UNIQUE constraint" not in str(exc):
                raise
            time.sleep(0.2 * attempt)


INPUT_ATTEMPTS = 3


EVALUATION_ARTIFACTS = (
    *REQUIRED,
    "comparisons.parquet",
    "comparisons.csv",
    "gate.json",
    "report.html",
    "summary.md",
    "summary.csv",
)


def log_into_run(
    results: SavedResults, run_id: str, system: str, model_id: str | None = None, dataset: tuple[str, str] | None = None
) -> dict[str, float]:
    """A results folder logged into a run someone else made (``mlflow.models.evaluate``'s): ``system``'s measures as
    its MLflow keys with their intervals (``<key>_ci_low``, ``_ci_high``; a segment's as ``<key>.<segment>``), every
    other system's as ``<system>/<key>``, a second dataset's as ``<dataset>/<key>``; the verdict as
    :func:`track_results` logs it; the folder's records as artifacts; and the tags by which a later run finds this
    evaluation of ``model_id`` again (``previous: models:/NAME@ALIAS``). ``dataset``: (name, digest) the values are
    linked to. Returns the metrics of ``system``, as ``EvaluationResult.metrics``. The tracking URI is MLflow's own."""
    from mlflow.entities import Metric, RunTag
    from mlflow.tracking import MlflowClient

    client = MlflowClient()
    config, summary = results.config, results.system_summary
    keys = {m: metric_key(m, config.get("gain_schemes") or {}) for m in summary["measure"].unique()}
    datasets = list(dict.fromkeys(summary["dataset"]))
    now = int(time.time() * 1000)
    link = {
        "model_id": model_id,
        "dataset_name": dataset[0] if dataset else None,
        "dataset_digest": dataset[1] if dataset else None,
    }
    mine: dict[str, float] = {}
    metrics = []
    for row in summary.itertuples():
        own = row.system == system
        key = evaluator_key(keys, row, datasets[0], system)
        values = {key: row.value, f"{key}_ci_low": row.ci_low, f"{key}_ci_high": row.ci_high}
        for name, value in values.items():
            number = float(value)  # type: ignore[arg-type]
            if math.isfinite(number):  # an undefined value or interval is not a metric
                metrics.append(Metric(name, number, now, 0, **(link if own else {})))  # type: ignore[arg-type]
                if own:
                    mine[name] = number
    for start in range(0, len(metrics), 1000):
        client.log_batch(run_id, metrics=metrics[start : start + 1000])
    _log_verdict(client, run_id, results, keys)
    if results.verdict is not None:
        mine["release_gate_passed"] = 1.0 if results.verdict.outcome == "PASS" else 0.0
    for name in EVALUATION_ARTIFACTS:
        path = results.folder / name
        if path.is_dir():
            client.log_artifacts(run_id, str(path), artifact_path=name)
        elif path.is_file():
            client.log_artifact(run_id, str(path))
    # the model the config names for the system, else the one MLflow evaluated; MLflow's model_id wins
    model = next((s.get("model") for s in config["systems"] if s["name"] == system and s.get("model")), None) or (
        {"uri": f"models:/{model_id}", "model_id": model_id} if model_id else None
    )
    tags = {
        "harness.kind": "evaluation",
        SYSTEM_TAG: held(system, TAG_CHARS),
        "harness.version": results.provenance["versions"]["harness"],
        "harness.config_hash": results.provenance["config_hash"],
        **_model_tags(model, system),
        **({MODEL_ID_TAG: model_id} if model_id else {}),
        PER_QUERY_TAG: sha256_path(results.folder / "per_query.parquet"),
        **{k: v for d in datasets for k, v in _evidence_tags(results, system, str(d)).items()},
    }
    client.log_batch(run_id, tags=[RunTag(k, v) for k, v in tags.items()])
    client.set_tag(run_id, COMPLETE_TAG, "true")  # the last write: an evaluation without it is not reused
    return mine


def _attach_rendered(client: Any, run_id: str, folder: Path) -> None:
    """The report and summary.md of a folder, logged to its run if they are there and the run lacks them: a run
    interrupted after logging and before its report (or whose report was rendered again later) gets them once."""
    logged = {a.path for a in client.list_artifacts(run_id)}
    for name in ("report.html", "summary.md"):
        path = folder / name
        if name not in logged and path.is_file() and not path.is_symlink():
            client.log_artifact(run_id, str(path))


def log_report(results: SavedResults) -> None:
    """Attach the rendered report (and summary.md) to the parent run the results were logged to."""
    log_rendered(results.folder, results.tracking)


def log_rendered(folder: Path, tracking: dict[str, Any] | None) -> None:
    """:func:`log_report` of a folder and its ``tracking.json``."""
    if tracking is None:
        return
    mlflow_defaults()
    try:
        from mlflow import MlflowClient

        client = MlflowClient(tracking_uri=tracking["tracking_uri"])
        with contextlib.redirect_stdout(sys.stderr):  # stdout is harness's (--json)
            for name in ("report.html", "summary.md"):
                if (folder / name).exists():
                    client.log_artifact(tracking["run_id"], str(folder / name))
    except Exception as exc:
        raise TrackingError(
            f"MLflow tracking at {tracking['tracking_uri']} failed while logging the report: {explain(exc)}",
            hint=f"the results and report are saved in {folder}",
        ) from None


def _log(
    results: SavedResults,
    tracking_uri: str,
    experiment_name: str,
    output_root: Path,
    progress: Progress,
    on_parent: Callable[[dict[str, str]], None] | None,
) -> Tracked:
    from mlflow import MlflowClient

    folder, config, provenance = results.folder, results.config, results.provenance
    summary = results.summary

    client = MlflowClient(tracking_uri=tracking_uri)
    found = client.get_experiment_by_name(experiment_name)
    if found is None:
        location = (output_root / "mlartifacts").resolve().as_uri() if tracking_uri.startswith("sqlite:") else None
        try:
            experiment_id = client.create_experiment(
                experiment_name, artifact_location=location, tags={EXPERIMENT_KIND: MODEL_DEVELOPMENT}
            )
        except Exception:  # another process made it meanwhile (a tracking server: no lock of ours spans its clients)
            found = client.get_experiment_by_name(experiment_name)
            if found is None:
                raise
    if found is not None:
        experiment_id = found.experiment_id
        if EXPERIMENT_KIND not in found.tags:  # made before harness said so, or by hand: shown as runs, not traces
            client.set_experiment_tag(experiment_id, EXPERIMENT_KIND, MODEL_DEVELOPMENT)
    version = provenance["versions"]["harness"]
    record_paths = bool((config.get("tracking") or {}).get("record_paths"))
    common_tags = {
        "harness.version": version,
        "harness.config_hash": provenance["config_hash"],
        "harness.results_dir": str(folder) if record_paths else f"{folder.parent.name}/{folder.name}",
    }
    commit = provenance.get("git_commit")  # recorded by the run; nothing is run on a path a folder names
    if commit:
        common_tags["harness.git_commit"] = commit
    key = results_key(config["name"], folder)
    earlier = _parent_of(client, experiment_id, key)
    if earlier is not None and earlier.data.tags.get(COMPLETE_TAG) == "true" and earlier.info.status == "FINISHED":
        # this folder is logged already, completely: exactly once, so nothing is added
        done = {
            "/".join(
                x for x in (c.data.tags.get("dataset"), c.data.tags.get("system"), c.data.tags.get("seed")) if x
            ): c.info.run_id
            for c in _children_of(client, experiment_id, earlier.info.run_id)
        }
        if on_parent is not None:
            on_parent({"tracking_uri": tracking_uri, "experiment_id": experiment_id, "run_id": earlier.info.run_id})
        _attach_rendered(client, earlier.info.run_id, folder)  # a report rendered after an interruption joins it
        return Tracked(
            tracking_uri,
            experiment_id,
            earlier.info.run_id,
            done,
            run_url(tracking_uri, experiment_id, earlier.info.run_id),
            already=True,
            view=_has_release_view(client, experiment_id),
        )
    if earlier is not None:  # a partial copy (killed or failed mid-logging): replaced, never kept beside a new one
        for stale in [*_children_of(client, experiment_id, earlier.info.run_id), earlier]:
            client.delete_run(stale.info.run_id)
    parent = client.create_run(
        experiment_id,
        run_name=held(parent_name(config["name"], folder, results.verdict), RUN_NAME_CHARS),
        tags={
            **common_tags,
            "harness.kind": "experiment",
            RESULTS_TAG: key,
            PER_QUERY_TAG: sha256_path(folder / "per_query.parquet"),
        },
    )
    parent_id = parent.info.run_id
    if on_parent is not None:
        on_parent({"tracking_uri": tracking_uri, "experiment_id": experiment_id, "run_id": parent_id})
    children: dict[str, str] = {}
    pairs = summary[[c for c in ("dataset", "system", "seed") if c in summary.columns]].drop_duplicates()
    with progress.task("logging to MLflow (runs)", len(pairs) + 1) as advance:
        _log_runs(client, tracking_uri, results, experiment_id, parent_id, common_tags, children, advance)
    return Tracked(
        tracking_uri,
        experiment_id,
        parent_id,
        children,
        run_url(tracking_uri, experiment_id, parent_id),
        view=_has_release_view(client, experiment_id),
    )


def _log_runs(
    client: Any,
    tracking_uri: str,
    results: SavedResults,
    experiment_id: str,
    parent_id: str,
    common_tags: dict[str, str],
    children: dict[str, str],
    advance: Callable[[], None],
) -> None:
    """The parent's params, each child run, then the parent's artifacts, verdict, inputs and completion tag; a
    failure marks every run FAILED (a later ``harness track`` replaces them)."""
    from mlflow.entities import Metric, Param

    folder, config, provenance, summary = results.folder, results.config, results.provenance, results.summary
    try:
        named = params_of(config) | {f"name.{key_part(s)}": s for s in summary["segment"].unique() if key_part(s) != s}
        params = [Param(k, v) for k, v in named.items()]
        for start in range(0, len(params), 100):
            client.log_batch(parent_id, params=params[start : start + 100])
        keys = {m: metric_key(m, config.get("gain_schemes") or {}) for m in summary["measure"].unique()}
        now = int(time.time() * 1000)
        descriptions = {s["name"]: s.get("description", "") for s in config["systems"]}
        models = {s["name"]: s["model"] for s in config["systems"] if s.get("model")}
        digests = {i["role"]: i["sha256"][:36] for i in provenance["inputs"]}
        seeded = "seed" in summary.columns  # a child run per system (its version), and one per run of its seeds
        index = ("seed", "query_id", "segment") if seeded else ("query_id", "segment")

        @functools.cache
        def wide_of(dataset: str, system: str) -> Any:
            """A system's per-query values on a dataset, one column per measure (and a seed column with seeds)."""
            return results.wide_per_query(dataset, "measure", system, keys=index)

        by = ["dataset", "system", "seed"] if seeded else ["dataset", "system"]
        for group, rows in summary.groupby(by, sort=False):
            dataset, system, seed = group if seeded else (*group, "all")
            one_run = seed != "all"
            tags = {
                **common_tags,
                "mlflow.parentRunId": parent_id,
                "harness.kind": "run" if one_run else "system",
                "system": held(str(system), TAG_CHARS),
                "dataset": held(str(dataset), TAG_CHARS),
                **(
                    {
                        "seed": held(str(seed), TAG_CHARS),
                        "harness.per_query": held(f"{system} @ {dataset}: per_query.parquet, seed {seed}", TAG_CHARS),
                    }
                    if one_run
                    else {}
                ),
                **_model_tags(models.get(str(system)), str(system)),
                **({} if one_run else _evidence_tags(results, str(system), str(dataset))),
            }
            if descriptions.get(system):
                tags["mlflow.note.content"] = descriptions[system]
            name = f"{system} [{seed}] @ {dataset}" if one_run else f"{system} @ {dataset}"
            child = client.create_run(experiment_id, run_name=held(name, RUN_NAME_CHARS), tags=tags)
            child_id = child.info.run_id
            children["/".join((str(dataset), str(system), *((str(seed),) if one_run else ())))] = child_id
            # each value linked to the model it is about and the judgments it is measured on (MLflow 3's model page)
            model_id = (models.get(str(system)) or {}).get("model_id")
            qrels = f"qrels:{dataset}"
            link = {
                "model_id": model_id,
                "dataset_name": held(qrels, DATASET_NAME_CHARS) if qrels in digests else None,
                "dataset_digest": digests.get(qrels),
            }
            metrics = []
            for row in rows.itertuples():
                key = summary_key(keys, row.measure, row.segment)
                metrics.append(Metric(key, float(row.value), now, 0, **link))  # type: ignore[arg-type]
            for start in range(0, len(metrics), 1000):
                client.log_batch(
                    child_id,
                    metrics=metrics[start : start + 1000],
                    params=[Param("dataset", held(str(dataset), PARAM_CHARS)), Param("system", held(str(system), PARAM_CHARS))]
                    if start == 0
                    else (),
                )
            if not one_run:  # a run's rows are in its version's per_query.parquet (the seed column): not one file a run
                with tempfile.TemporaryDirectory() as scratch:  # Parquet, not MLflow's JSON table: the UI stays responsive
                    path = Path(scratch) / "per_query.parquet"
                    wide_of(str(dataset), str(system)).to_parquet(path, index=False)
                    client.log_artifact(child_id, str(path))
            role = f"run:{system}:{dataset}"
            mine_inputs = [
                i
                for i in provenance["inputs"]
                if (i["role"] == f"{role}:{seed}" if one_run else i["role"] == role or i["role"].startswith(f"{role}:"))
                or (not i["role"].startswith("run:") and i["role"].endswith(f":{dataset}"))
            ]
            _log_inputs(client, child_id, mine_inputs)
            client.set_terminated(child_id, "FINISHED")
            advance()
        for name in ARTIFACT_FILES:
            if (folder / name).is_dir():  # a table written in parts: the folder as it is
                client.log_artifacts(parent_id, str(folder / name), artifact_path=name)
            elif (folder / name).exists():
                client.log_artifact(parent_id, str(folder / name))
        if results.comparisons is not None:
            client.log_table(parent_id, results.comparisons, artifact_file="comparisons.json")
        client.log_table(parent_id, summary, artifact_file="summary.json")
        guard_columns = _log_verdict(client, parent_id, results, keys)
        _log_agreement(client, parent_id, results, keys)
        if results.verdict is not None:
            _share_release_view(client, experiment_id, guard_columns)
        _log_inputs(client, parent_id, provenance["inputs"])
        note = description_of(config)
        if note:
            client.set_tag(parent_id, "mlflow.note.content", note)
        client.set_tag(parent_id, COMPLETE_TAG, "true")  # the last write: a parent without it is a partial copy
        client.set_terminated(parent_id, "FINISHED")
        advance()
    except BaseException:
        for run_id in [*children.values(), parent_id]:
            with contextlib.suppress(Exception):
                client.set_terminated(run_id, "FAILED")
        raise
