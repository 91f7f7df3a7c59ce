"""harness as MLflow's ranking evaluator: ``mlflow.models.evaluate(data, model_type="ranker", evaluators="harness")``.

Registered under MLflow's ``mlflow.model_evaluator`` entry point. The data is a DataFrame in MLflow's own
convention: ``predictions=`` names a column of ranked item lists (best first), ``targets=`` a column of relevant items,
a list (each relevant, grade 1) or an ``{item: grade}`` mapping; the query or user id is the column
``evaluator_config["query"]`` names (default: the first other column). ``evaluator_config`` gives the ``measures``
(default nDCG@10, P@10, R@10, RR@10, AP@10), the ``relevance_level`` and any ``conventions``. Each measure is logged
as its MLflow key (``ndcg_at_10``) with its 95% t-interval over the queries (``ndcg_at_10_ci_low``, ``_ci_high``),
so ``mlflow.validate_evaluation_results`` can hold the lower bound to a threshold; the per-query values are an
artifact (``harness_per_query.csv``).

The values are harness's (trec_eval's conventions by default) on the lists as given: a list's order is its ranking,
an item listed twice is an error, and a query without a list scores 0 when it has relevant items.
"""

from __future__ import annotations

import math
import tempfile
import time
from pathlib import Path
from typing import Any, cast

from mlflow.models.evaluation.base import EvaluationResult, ModelEvaluator

DEFAULT_MEASURES = ("nDCG@10", "P@10", "R@10", "RR@10", "AP@10")
MODEL_TYPE = "ranker"


class HarnessEvaluator(ModelEvaluator):
    """MLflow's evaluator for ``model_type="ranker"``: harness's measures of ranked lists, with their intervals."""

    @classmethod
    def can_evaluate(cls, *, model_type: str, evaluator_config: dict[str, Any], **kwargs: Any) -> bool:
        return model_type == MODEL_TYPE

    def evaluate(self, *, model_type: str, dataset: Any, run_id: str, evaluator_config: dict[str, Any],
                 model: Any = None, extra_metrics: Any = None, custom_artifacts: Any = None, predictions: Any = None,
                 **kwargs: Any) -> EvaluationResult:  # fmt: skip
        from mlflow.entities import Metric
        from mlflow.tracking import MlflowClient

        config = dict(evaluator_config or {})
        per_query = evaluate_ranked(dataset, model, config)
        metrics = interval_metrics(per_query)
        client = MlflowClient()
        now = int(time.time() * 1000)
        client.log_batch(run_id, metrics=[Metric(key, value, now, 0) for key, value in metrics.items()])
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "harness_per_query.csv"
            per_query.to_frame(wide=True).to_csv(path, index=False)
            client.log_artifact(run_id, str(path))
        return EvaluationResult(metrics=metrics, artifacts={}, run_id=run_id)  # type: ignore[no-untyped-call]


def evaluate_ranked(dataset: Any, model: Any, config: dict[str, Any]) -> Any:
    """The per-query values (:class:`~harness.evaluation.results.PerQuery`) of the lists MLflow hands over: its
    predictions column (or the model's predictions of the features), against its targets column."""
    from harness.data.model import Qrels, Run
    from harness.errors import InputFormatError
    from harness.evaluation.evaluator import Evaluator
    from harness.measures.conventions import Conventions

    features = dataset.features_data
    query_column = config.get("query") or (features.columns[0] if len(features.columns) else None)
    if query_column is None or query_column not in features.columns:
        raise InputFormatError(f"no query column {query_column!r} in the evaluation data",
                               hint='name it: evaluator_config={"query": "user_id"}')  # fmt: skip
    lists = dataset.predictions_data if dataset.predictions_data is not None else model.predict(features)
    targets = dataset.labels_data
    if targets is None:
        raise InputFormatError("the evaluation data has no targets", hint="mlflow.models.evaluate(..., targets=COLUMN)")
    queries = [str(q) for q in features[query_column].tolist()]
    judged = [(q, str(item), float(grade)) for q, target in zip(queries, targets, strict=True)
              for item, grade in (target.items() if isinstance(target, dict) else ((i, 1) for i in target))]  # fmt: skip
    ranked = [(q, str(item), float(len(items) - rank)) for q, items in zip(queries, lists, strict=True)
              for rank, item in enumerate(list(items))]  # fmt: skip
    values = dict(config.get("conventions") or {})
    if config.get("relevance_level") is not None:
        values["relevance_level"] = config["relevance_level"]
    evaluator = Evaluator(Qrels.from_records(judged, "<MLflow targets>"), list(config.get("measures") or DEFAULT_MEASURES),
                          Conventions.from_mapping(values))  # fmt: skip
    return evaluator.evaluate(Run.from_records(ranked, name="model", source="<MLflow predictions>"))


def interval_metrics(per_query: Any) -> dict[str, float]:
    """Each measure's aggregate under its MLflow key, and for a mean its 95% t-interval over the queries.

    >>> from harness.evaluation.evaluator import evaluate
    >>> per_query = evaluate({"q": {"a": 1}, "r": {"b": 1}}, {"q": {"a": 1.0}, "r": {"c": 1.0, "b": 0.5}}, ["RR"])
    >>> {k: round(v, 4) for k, v in interval_metrics(per_query).items()}
    {'rr': 0.75, 'rr_ci_low': -2.4266, 'rr_ci_high': 3.9266}
    """
    from harness.evaluation.results import ValuesScan, grid_sums, kept, summary_row
    from harness.measures.registry import REGISTRY

    out: dict[str, float] = {}
    for j, measure in enumerate(per_query.measures):
        finite = kept(measure, per_query.values[:, j])
        scan = ValuesScan.of(measure, finite)
        row = summary_row(measure, scan, grid_sums(finite, scan.exponent()))  # summary.csv's numbers, as harness run's
        key = measure.mlflow_key()
        value, low, high = (float(cast(float, row[name])) for name in ("value", "ci_low", "ci_high"))
        out[key] = value
        if REGISTRY.definition(measure).aggregate == "mean" and math.isfinite(low) and math.isfinite(high):
            out[f"{key}_ci_low"], out[f"{key}_ci_high"] = low, high
    return out


__all__ = ["DEFAULT_MEASURES", "HarnessEvaluator", "evaluate_ranked", "interval_metrics"]
