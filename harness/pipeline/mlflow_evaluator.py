"""harness as MLflow's ranking evaluator: ``mlflow.models.evaluate(data, model_type="ranker", evaluators="harness")``.

Registered under MLflow's ``mlflow.model_evaluator`` entry point. Two inputs:

* **A DataFrame in MLflow's convention**: ``predictions=`` names a column of ranked item lists (best first),
  ``targets=`` a column of relevant items, a list (each relevant, grade 1) or an ``{item: grade}`` mapping; the query
  or user id is the column ``evaluator_config["query"]`` names (default: the first other column).
* **A harness config**: ``evaluator_config={"config": "experiment.yaml"}`` runs it as ``harness run`` would (its
  systems' run files; ``"set": {...}`` overrides keys as ``--set`` does), and logs it into MLflow's run.

``evaluator_config`` (DataFrame input) takes the ``measures`` (default nDCG@10, P@10, R@10, RR@10, AP@10), the
``relevance_level``, the ``profile`` and ``conventions``, ``segments`` (a column of the data: every value also per
segment), ``stats`` (as a config's), and a ``baseline``: an earlier harness evaluation, as ``runs:/RUN_ID`` (a run
this evaluator or ``harness run`` logged), ``models:/NAME@ALIAS`` (that model's latest harness evaluation) or a
results folder, checked to be on the same judgments and conventions. With a baseline the model is compared with it
and, given ``guards`` (a config's release guards), the release gate is decided: its verdict is the metric
``release_gate_passed`` and the tag ``release.verdict``, with gate.json and report.html as artifacts.

Each measure is logged under its MLflow key (``ndcg_at_10``) with its 95% interval (``ndcg_at_10_ci_low``,
``_ci_high``), so ``mlflow.validate_evaluation_results`` can hold a lower bound to a threshold, linked to the model
(``model_id``) and the dataset MLflow was given. The run holds the results folder's records (per_query.parquet,
summary, comparisons, config.resolved.yaml, provenance.json), so a later evaluation can name it as its baseline.

The values are harness's (trec_eval's conventions by default) on the lists as given: a list's order is its ranking,
an item listed twice is an error, and a query with relevant items and no list scores 0.
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, cast

from mlflow.models.evaluation.base import EvaluationResult, ModelEvaluator

from harness.errors import ConfigError, InputFormatError

DEFAULT_MEASURES = ("nDCG@10", "P@10", "R@10", "RR@10", "AP@10")
MODEL_TYPE = "ranker"
MODEL, BASELINE, DATASET = "model", "baseline", "data"  # the names the DataFrame's system, baseline and data take
KEYS = (
    "config",
    "set",
    "query",
    "measures",
    "relevance_level",
    "profile",
    "conventions",
    "segments",
    "stats",
    "baseline",
    "baseline_system",
    "guards",
    "dataset",
)


class HarnessEvaluator(ModelEvaluator):
    """MLflow's evaluator for ``model_type="ranker"``: harness's measures of ranked lists, with their intervals, and
    the release gate against a baseline."""

    @classmethod
    def can_evaluate(cls, *, model_type: str, evaluator_config: dict[str, Any], **kwargs: Any) -> bool:
        """Ranked lists only: MLflow asks every evaluator named (or, with none named, every one installed); another
        model type is evaluated by harness only when the config says so (``{"config": ...}``)."""
        return model_type == MODEL_TYPE or bool((evaluator_config or {}).get("config"))

    def evaluate(
        self,
        *,
        model_type: str,
        dataset: Any,
        run_id: str,
        evaluator_config: dict[str, Any],
        model: Any = None,
        extra_metrics: Any = None,
        custom_artifacts: Any = None,
        predictions: Any = None,
        model_id: str | None = None,
        **kwargs: Any,
    ) -> EvaluationResult:
        import mlflow

        from harness.records.recorded import release_section
        from harness.records.track import log_into_run

        options = dict(evaluator_config or {})
        unknown = sorted(set(options) - set(KEYS))
        if unknown:
            raise ConfigError(f"evaluator_config has an unknown key {unknown[0]!r}", hint=f"valid keys: {', '.join(KEYS)}")
        uri = mlflow.get_tracking_uri()
        # the experiment the evaluation is logged to: where a baseline from the registry is looked for
        logged_to = mlflow.get_experiment(mlflow.get_run(run_id).info.experiment_id).name
        with tempfile.TemporaryDirectory(prefix="harness-mlflow-") as scratch:
            if options.get("config"):
                overrides = {**dict(options.get("set") or {}), "tracking.uri": uri, "tracking.experiment": logged_to}
                outcome = _run(options["config"], overrides, None)
            else:
                config = write_experiment(dataset, model, options, Path(scratch), uri, logged_to)
                outcome = _run(config, {}, Path(scratch) / "out")
            if outcome.results is None:
                raise ConfigError(f"the evaluation's results could not be written: {outcome.results_error}")
            results = outcome.results
            release = release_section(results.config)
            names = [s["name"] for s in results.config["systems"]]
            system = release.get("candidate") or (MODEL if MODEL in names else names[0])
            digest = getattr(dataset, "digest", None)
            linked = (str(getattr(dataset, "name", None) or DATASET), str(digest)) if digest else None
            metrics = log_into_run(results, run_id, system, model_id, linked)
        return EvaluationResult(metrics=metrics, artifacts={}, run_id=run_id)  # type: ignore[no-untyped-call]


def _run(config: str | Path, overrides: Mapping[str, object], output: Path | None) -> Any:
    """``harness run`` of a config, its tracking left to MLflow's own run (the evaluator logs into it)."""
    import dataclasses

    from harness.config.load import load_config
    from harness.pipeline.experiment import run_experiment

    experiment = load_config(config, overrides, output)
    experiment = dataclasses.replace(experiment, tracking=dataclasses.replace(experiment.tracking, enabled=False))
    return run_experiment(experiment, argv=["mlflow.models.evaluate", str(config)])


def write_experiment(
    dataset: Any, model: Any, options: Mapping[str, Any], folder: Path, uri: str, logged_to: str | None = None
) -> Path:
    """MLflow's evaluation data as a harness experiment in ``folder``: the judgments and the ranked lists as CSV
    files (sorted, so the same data has the same sha256 and a baseline on it is recognised), a segments file, and a
    config naming them, the measures, conventions and, with a baseline, the release gate. Returns the config's path."""
    import pandas as pd
    import yaml

    features = dataset.features_data
    query = options.get("query") or (features.columns[0] if len(features.columns) else None)
    if query is None or query not in features.columns:
        raise InputFormatError(
            f"no query column {query!r} in the evaluation data", hint='name it: evaluator_config={"query": "user_id"}'
        )
    lists = dataset.predictions_data if dataset.predictions_data is not None else model.predict(features)
    targets = dataset.labels_data
    if targets is None:
        raise InputFormatError("the evaluation data has no targets", hint="mlflow.models.evaluate(..., targets=COLUMN)")
    rows = list(features.index)
    queries = [_query_id(q, rows[i], query) for i, q in enumerate(features[query].tolist())]
    target_column = str(getattr(dataset, "targets_name", None) or "targets")
    list_column = str(getattr(dataset, "predictions_name", None) or "predictions")
    judged = pd.DataFrame(
        [
            (q, item, grade)
            for i, (q, target) in enumerate(zip(queries, targets, strict=True))
            for item, grade in _judged(target, rows[i], target_column)
        ],
        columns=["query", "doc", "relevance"],
    ).sort_values(["query", "doc"], kind="stable")
    ranked = pd.DataFrame(
        [
            (q, item, len(items) - rank)
            for i, (q, cell) in enumerate(zip(queries, lists, strict=True))
            for items in [_ranked(cell, rows[i], list_column)]
            for rank, item in enumerate(items)
        ],
        columns=["query", "doc", "score"],
    )
    judged.to_csv(folder / "qrels.csv", index=False)
    ranked.to_csv(folder / "run.csv", index=False)
    name = str(options.get("dataset") or DATASET)
    spec: dict[str, Any] = {
        "name": name,
        "qrels": "qrels.csv",
        "format": "csv",
        "relevance_level": int(options.get("relevance_level", 1)),
    }
    if options.get("segments"):
        column = str(options["segments"])
        if column not in features.columns:
            raise InputFormatError(
                f"no segments column {column!r} in the evaluation data",
                hint=f"name one of {', '.join(map(str, features.columns))}",
            )
        segments = pd.DataFrame({"query": queries, "segment": features[column].astype(str).tolist()})
        segments.drop_duplicates().sort_values(["query"], kind="stable").to_csv(folder / "segments.csv", index=False)
        spec["segments"] = {"path": "segments.csv"}
    systems: list[dict[str, Any]] = [{"name": MODEL, "runs": {name: "run.csv"}}]
    config: dict[str, Any] = {
        "experiment": "mlflow-evaluate",
        "datasets": [spec],
        "systems": systems,
        "measures": list(options.get("measures") or DEFAULT_MEASURES),
        "tracking": {"enabled": False, "uri": uri, **({"experiment": logged_to} if logged_to else {})},
        "report": {"enabled": True},
    }
    for key in ("profile", "conventions", "stats"):
        if options.get(key) is not None:
            config[key] = options[key]
    if options.get("baseline"):
        systems.insert(0, {"name": BASELINE, "previous": _previous(str(options["baseline"]), options, uri)})
        config["baseline"] = BASELINE
        if options.get("guards"):
            config["release"] = {"production": BASELINE, "candidate": MODEL, "guards": list(options["guards"])}
    elif options.get("guards"):
        raise ConfigError(
            "evaluator_config gives guards and no baseline to guard against",
            hint='add "baseline": "models:/NAME@ALIAS" (or runs:/RUN_ID, or a results folder)',
        )
    path = folder / "experiment.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def _cell_error(row: object, column: str, what: str, hint: str) -> InputFormatError:
    return InputFormatError(f"the evaluation data's row {row!r}, column {column!r}: {what}", hint=hint)


def _query_id(value: object, row: object, column: str) -> str:
    """A query (user) id: any value but a missing one (None, NaN), which would become the query "nan"."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        raise _cell_error(row, column, "the query id is missing", "give every row its query (user) id, or drop the row")
    return str(value)


def _items(values: Iterable[object], row: object, column: str) -> list[str]:
    out = []
    for item in values:
        if item is None or (isinstance(item, float) and math.isnan(item)) or isinstance(item, (list, tuple, dict)):
            raise _cell_error(row, column, f"an item id is {item!r}", "list item ids (strings or numbers) only")
        out.append(str(item))
    return out


def _ranked(cell: object, row: object, column: str) -> list[str]:
    """A ranked list: a list, tuple or array of item ids, best first. A string is one id, not its characters; a
    mapping has no order to rank by."""
    if isinstance(cell, Mapping):
        raise _cell_error(
            row, column, "a mapping is not a ranking (its order is only the order it was built in)", "give a list, best first"
        )
    if isinstance(cell, (str, bytes)) or (not isinstance(cell, (list, tuple)) and not hasattr(cell, "tolist")):
        raise _cell_error(
            row, column, f"{type(cell).__name__} {str(cell)[:40]!r} is not a list of items", "give a list: ['i10', 'i3']"
        )
    values = cell.tolist() if hasattr(cell, "tolist") else list(cast(Iterable[object], cell))
    return _items(values if isinstance(values, list) else [values], row, column)


def _judged(cell: object, row: object, column: str) -> list[tuple[str, int]]:
    """A row's judgments: a list (tuple, array) of relevant items (grade 1) or a mapping of items to whole grades."""
    if isinstance(cell, Mapping):
        items = _items(cell.keys(), row, column)
        grades = []
        for item, grade in zip(items, cell.values(), strict=True):
            if isinstance(grade, bool) or not isinstance(grade, (int, float)) or not float(grade).is_integer():
                raise _cell_error(row, column, f"item {item!r} has grade {grade!r}", "grades are whole numbers: {'i10': 2}")
            grades.append(int(grade))
        return list(zip(items, grades, strict=True))
    return [(item, 1) for item in _ranked(cell, row, column)]


def _previous(baseline: str, options: Mapping[str, Any], uri: str) -> dict[str, Any]:
    """A baseline as a config's ``previous:``: the system there is the one its evaluation names."""
    system = options.get("baseline_system")
    if baseline.startswith("models:/"):
        return {"model": baseline, "uri": uri, **({"system": system} if system else {})}
    if baseline.startswith("runs:/"):
        return {"mlflow_run": baseline.removeprefix("runs:/").strip("/"), "uri": uri, "system": system or MODEL}
    return {"results": str(Path(baseline).absolute()), "system": system or MODEL}  # links kept: "latest" is checked


__all__ = ["DEFAULT_MEASURES", "HarnessEvaluator", "write_experiment"]
