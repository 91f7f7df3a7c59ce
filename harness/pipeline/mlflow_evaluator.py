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

import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

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
    queries = [str(q) for q in features[query].tolist()]
    judged = pd.DataFrame(
        [
            (q, str(item), grade)
            for q, target in zip(queries, targets, strict=True)
            for item, grade in (target.items() if isinstance(target, Mapping) else ((i, 1) for i in target))
        ],
        columns=["query", "doc", "relevance"],
    ).sort_values(["query", "doc"], kind="stable")
    ranked = pd.DataFrame(
        [
            (q, str(item), len(items) - rank)
            for q, items in zip(queries, lists, strict=True)
            for rank, item in enumerate(list(items))
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


def _previous(baseline: str, options: Mapping[str, Any], uri: str) -> dict[str, Any]:
    """A baseline as a config's ``previous:``: the system there is the one its evaluation names."""
    system = options.get("baseline_system")
    if baseline.startswith("models:/"):
        return {"model": baseline, "uri": uri, **({"system": system} if system else {})}
    if baseline.startswith("runs:/"):
        return {"mlflow_run": baseline.removeprefix("runs:/").strip("/"), "uri": uri, "system": system or MODEL}
    return {"results": str(Path(baseline).resolve()), "system": system or MODEL}


__all__ = ["DEFAULT_MEASURES", "HarnessEvaluator", "write_experiment"]
