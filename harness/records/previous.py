"""A system's values taken from an earlier evaluation (a results folder or an MLflow run), not recomputed.

Compare a candidate with the last release as it was measured: its per-query values
are reused, after checking that they are comparable, and each mismatch is a clear
error (exit 2), never a silent comparison of different things:

* every input a measure depends on: the sha256 of the qrels file, the training
  interactions, the item catalogue and the segments file must equal the ones the earlier
  run recorded (a file given here and not there, or there and not here, differs too);
* the conventions (ties, queries, duplicates, ...) and the dataset's relevance level;
* every measure of this experiment must be among the earlier run's measures.

>>> from harness.config.schema import Previous
>>> describe(Previous(mlflow_run="4f2a"))
'MLflow run 4f2a'

A registered model (``previous: models:/recsys@champion``) is pinned when the run starts (its alias resolved to a
version) and its harness evaluation is reused once shown to be harness's own
(:func:`harness.records.registry.production_evidence`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from harness._atomic import sha256_file
from harness.config.schema import Dataset, Experiment, ModelRef, Previous, System
from harness.errors import ConfigError
from harness.evaluation.results import PerQuery, RunResult
from harness.measures.spec import Measure
from harness.records.mlflow_read import download_results, expected_links, linked_metrics
from harness.records.mlflow_store import destination
from harness.records.registry import Evidence, production_evidence
from harness.records.store import SavedResults, read_results

KINDS = {"qrels": "judgments", "train": "training interactions", "items": "item catalogue", "segments": "segments"}


def compared_inputs(dataset: Dataset) -> list[tuple[str, Path]]:
    """The files a dataset's values depend on, by role (``qrels:<name>``, ``train:``, ``items:``, ``segments:``, and
    with a model judge ``judge:`` and ``strata:``): what ``provenance.json`` records, and what reused values must
    have been computed from."""
    files = [(f"qrels:{dataset.name}", dataset.qrels)]
    for kind, spec in (("train", dataset.train), ("items", dataset.items), ("segments", dataset.segments)):
        if spec is not None:
            files.append((f"{kind}:{dataset.name}", spec.path))
    if dataset.judge is not None:
        files.append((f"judge:{dataset.name}", dataset.judge.qrels))
        if dataset.judge.strata is not None:
            files.append((f"strata:{dataset.name}", dataset.judge.strata.path))
    return files


def describe(previous: Previous) -> str:
    if previous.model is not None:
        return f"{previous.model.uri} ({previous.model.pinned})" if previous.model.pinned else previous.model.uri
    return f"results {previous.results}" if previous.results is not None else f"MLflow run {previous.mlflow_run}"


@dataclass(frozen=True)
class Earlier:
    """An earlier evaluation a system reuses: its results, the system's name there, and which MLflow run stood for
    it (``previous: models:/...``, ``runs:/...``), as the verdict names it."""

    saved: SavedResults
    system: str
    evidence: str | None = None


def evaluation_store(experiment: Experiment, previous: Previous) -> str:
    """Where a reused evaluation (and the registry that pins its model) is read: ``previous``'s own ``uri``, else the
    destination this experiment logs to (the command line, ``MLFLOW_TRACKING_URI``, the config's ``tracking.uri``,
    the local store), so that production is found where the gate records."""
    if previous.uri is not None:
        return destination(previous.uri, None, experiment.output).uri
    tracking = experiment.tracking
    return destination(tracking.uri if tracking.uri_on_command_line else None, tracking.uri, experiment.output).uri


def load_previous(experiment: Experiment, system: System, cache: dict[str, Earlier]) -> Earlier:
    """The earlier results a system names (read once per experiment run), shown to be harness's own first: a
    registered model's evaluation is found by :func:`~harness.records.registry.production_evidence` and its values
    are checked against the digests recorded with it and against the metrics MLflow links to the model."""
    previous = system.previous
    assert previous is not None
    if system.name not in cache:
        name = previous.system or system.name
        if previous.results is not None:
            cache[system.name] = Earlier(read_results(previous.results), name)
        elif previous.model is not None:
            store = evaluation_store(experiment, previous)
            judgments = {d.name: sha256_file(d.qrels) for d in experiment.datasets}
            evidence = production_evidence(previous.model, store, experiment.tracking.experiment or experiment.name, judgments)
            saved = download_results(evidence.run_id, store, evidence.per_query)
            _check_evidence(saved, evidence, previous.model, store)
            cache[system.name] = Earlier(saved, previous.system or evidence.system, evidence.describe())
        else:
            assert previous.mlflow_run is not None
            saved = download_results(previous.mlflow_run, evaluation_store(experiment, previous))
            cache[system.name] = Earlier(saved, name, f"MLflow run {previous.mlflow_run}")
    return cache[system.name]


def _check_evidence(saved: SavedResults, evidence: Evidence, model: ModelRef, store: str) -> None:
    """The downloaded values are the ones recorded when the evaluation was logged (their digest), and, where MLflow
    links the evaluation's metrics to the logged model, equal to those metrics: a tag can be written by anyone with
    access to the experiment, a model's linked metrics only by logging them against it."""

    def refuse(why: str) -> ConfigError:
        return ConfigError(
            f"{evidence.describe()} cannot stand for {model.uri} ({model.pinned}): {why}",
            hint="evaluate production from its run files (runs: instead of previous:)",
        )

    if saved.values_digest(evidence.system) != evidence.values:
        raise refuse("its per-query values are not the ones recorded when it was logged")
    if model.model_id is not None:
        linked = linked_metrics(model.model_id, tuple(run for run, _ in evidence.linked), store)
        expected = expected_links(saved, evidence.system, evidence.evaluator)
        for run, dataset in evidence.linked:
            for key, value in expected.get(dataset, {}).items():
                if linked.get(run, {}).get(key) != value:
                    raise refuse(
                        f"its {key}{'' if dataset is None else f' on {dataset!r}'} ({value!r}) is not the metric MLflow "
                        f"links to the logged model {model.model_id} from run {run} "
                        f"({linked.get(run, {}).get(key, 'none')!r})"
                    )
    rows = saved.system_summary[saved.system_summary["system"] == evidence.system]
    overall = rows[rows["segment"] == "all"]
    means = (
        dict(zip(zip(overall["dataset"], overall["measure"], strict=True), overall["mean"], strict=True))
        if "mean" in overall.columns
        else {}
    )
    mine = saved.per_query_of(system=evidence.system)
    if "seed" not in mine.columns or mine["seed"].isna().all():
        for (dataset_name, measure), group in mine.groupby(["dataset", "measure"], sort=False):
            recorded = float(means.get((dataset_name, measure), math.nan))
            mean = float(np.nanmean(group["value"].to_numpy(dtype=np.float64)))
            if math.isfinite(recorded) and not math.isclose(mean, recorded, rel_tol=1e-9, abs_tol=1e-12):
                raise refuse(f"the mean of its per-query {measure} is not its summary's ({recorded!r})")


def previous_result(
    experiment: Experiment, dataset: Dataset, system: System, earlier: Earlier, segments: dict[str, str]
) -> list[RunResult]:
    """The system's values on ``dataset`` from ``earlier``, one result per run there (several: its seeds, each with
    its label); none when the earlier run did not evaluate that dataset."""
    previous = system.previous
    assert previous is not None
    saved, name = earlier.saved, earlier.system
    source = describe(previous)

    def refuse(message: str, hint: str) -> ConfigError:
        return ConfigError(
            f"system {system.name!r} reuses {source}: {message}", path=experiment.source, line=previous.line, hint=hint
        )

    frame = saved.per_query_of(dataset.name, name)
    if frame.empty:
        return []
    labels = list(dict.fromkeys(frame["seed"].fillna("").astype(str))) if "seed" in frame.columns else [""]
    if len(labels) > 1 and experiment.stats.claim == "model":
        raise refuse(
            f"it holds {len(labels)} runs (seeds) of {name!r} on {dataset.name!r}, and claim: model decides "
            "one trained run of each system",
            "set stats.claim: version to decide the versions over their seeds, or reuse an evaluation of one run",
        )
    recorded = {i["role"]: i["sha256"] for i in saved.provenance.get("inputs", [])}
    paths = dict(compared_inputs(dataset))
    current = {role: sha256_file(path) for role, path in paths.items()}
    there = [role for role in recorded if role.partition(":") in ((kind, ":", dataset.name) for kind in KINDS)]
    for role in dict.fromkeys([*current, *there]):
        kind = KINDS[role.partition(":")[0]]
        if recorded.get(role) == current.get(role):
            continue
        if role not in current:
            detail = f"it was evaluated with {kind} for dataset {dataset.name!r}, and this config gives none"
        elif role not in recorded:
            detail = (
                f"its values for dataset {dataset.name!r} were computed without {kind} (none recorded there), "
                f"and this config gives {kind}"
            )
        else:
            detail = (
                f"its {kind} for dataset {dataset.name!r} differ from {paths[role]} "
                f"(sha256 {str(recorded[role])[:12]}... there, {current[role][:12]}... here)"
            )
        raise refuse(detail, "evaluate the system from its run file on these inputs (runs: instead of previous:)")
    mine = {k: v for k, v in experiment.conventions.as_dict().items() if k != "relevance_level"}
    theirs = {k: v for k, v in (saved.config.get("conventions") or {}).items() if k != "relevance_level"}
    differ = sorted(k for k in mine if str(mine[k]) != str(theirs.get(k)))
    level = next((d.get("relevance_level") for d in saved.config.get("datasets", []) if d["name"] == dataset.name), None)
    if level != dataset.relevance_level:
        differ.append(f"relevance_level ({level} there, {dataset.relevance_level} here)")
    own = (saved.config.get("measure_conventions") or {}, experiment.measure_conventions())
    for measure in experiment.query_measures_for(dataset):  # those the profile's tool computes under its own
        saved_own, this_own = (
            ", ".join(f"{k}: {v}" for k, v in m.get(str(measure), {}).items()) or "the experiment's conventions" for m in own
        )
        if saved_own != this_own:
            differ.append(f"{measure} under {saved_own} there, {this_own} here")
    if differ:
        raise refuse(
            f"it was evaluated under other conventions: {', '.join(differ)}",
            "use the same conventions and relevance level, or re-evaluate from the run file",
        )
    measures = experiment.query_measures_for(dataset)  # system measures need the lists: recomputed systems only
    out = []
    for label in labels:
        rows_of_run = frame if len(labels) == 1 else frame[frame["seed"] == label]
        per_query = per_query_of_rows(rows_of_run, system.name, measures, bool(saved.config.get("measure_conventions")))
        if isinstance(per_query, list):
            raise refuse(
                f"it has no values for {', '.join(per_query[:5])}{' and more' if len(per_query) > 5 else ''}",
                "keep to the measures the earlier run computed, or re-evaluate from the run file",
            )
        query_ids = per_query.query_ids
        seg = np.array([segments.get(q, "") for q in query_ids.tolist()], dtype=object)
        diagnostics: dict[str, Any] = {}
        if saved.diagnostics is not None:
            rows = saved.diagnostics[(saved.diagnostics["dataset"] == dataset.name) & (saved.diagnostics["system"] == name)]
            if len(labels) > 1:
                rows = rows[rows["seed"] == label]
            if len(rows):
                diagnostics = {str(k): v for k, v in rows.iloc[0].to_dict().items() if k not in ("dataset", "system", "seed")}
        diagnostics["queries_without_segment"] = int((seg == "").sum()) if segments else None
        diagnostics["source"] = source if earlier.evidence is None else f"{source}: {earlier.evidence}"
        out.append(RunResult(dataset.name, system.name, per_query, seg, diagnostics, seed=label if len(labels) > 1 else ""))
    return out


def per_query_of_rows(rows: Any, system: str, measures: Sequence[Measure], own_queries: bool) -> PerQuery | list[str]:
    """A run's per-query values as a results folder's rows hold them (one per query and measure), in trec_eval's
    query order (the ids' bytes), or the measures they lack. ``own_queries``: some measures were evaluated on their
    own queries (a profile's conventions), and have rows for those only.

    >>> import pandas as pd
    >>> from harness.measures.spec import Measure
    >>> rows = pd.DataFrame({"query_id": ["u2", "u1"], "measure": ["AP", "AP"], "value": [0.5, 0.25]})
    >>> per_query_of_rows(rows, "v1", [Measure("AP")], False).values.tolist()
    [[0.25], [0.5]]
    >>> per_query_of_rows(rows, "v1", [Measure("AP"), Measure("RR")], False)
    ['RR']
    """
    wide = rows.pivot_table(index="query_id", columns="measure", values="value", sort=False)
    missing = [str(m) for m in measures if str(m) not in wide.columns]
    if missing:
        return missing
    query_ids = np.array(sorted(wide.index.astype(str)), dtype=object)  # trec_eval's order: byte order of the ids
    values = wide.loc[query_ids, [str(m) for m in measures]].to_numpy(dtype=np.float64)
    evaluated = None
    if own_queries:
        counted = rows.groupby(["query_id", "measure"], sort=False).size().unstack()
        present = counted.reindex(index=query_ids, columns=[str(m) for m in measures]).notna().to_numpy()
        evaluated = None if present.all() else present
    return PerQuery(system, query_ids, tuple(measures), values, np.ones(len(query_ids), dtype=bool), evaluated)
