"""harness's records read back from MLflow: a parent run's results folder (verified by the sha256 logged with it), and
the values a logged model's page links to an evaluation."""

from __future__ import annotations

import dataclasses
import math
import tempfile
from pathlib import Path

from harness._atomic import sha256_path
from harness.errors import HarnessError, TrackingError
from harness.records.connection import explain, mlflow_defaults
from harness.records.mlflow_names import evaluator_key, metric_key, summary_key
from harness.records.registry import PER_QUERY_TAG
from harness.records.store import REQUIRED, SavedResults, read_results


def download_results(run_id: str, tracking_uri: str, per_query_sha256: str | None = None) -> SavedResults:
    """The results harness logged to an MLflow run, downloaded and read back (a baseline from the last release). The
    per-query table must hash to ``per_query_sha256`` when given, else to the sha256 the run recorded when it was
    logged (:data:`PER_QUERY_TAG`), if it did. The download lives only as long as the read: the values are in memory."""
    mlflow_defaults()
    with tempfile.TemporaryDirectory(prefix=f"harness-run-{run_id[:12]}-") as scratch:
        target = Path(scratch)
        try:
            from mlflow import MlflowClient

            client = MlflowClient(tracking_uri=tracking_uri)
            logged = {a.path for a in client.list_artifacts(run_id)}
            missing = [name for name in REQUIRED if name not in logged]
            if missing:
                raise HarnessError(
                    f"MLflow run {run_id} at {tracking_uri} holds no harness results ({missing[0]} is not among its artifacts)",
                    hint="name the parent run that harness run or harness track logged (runs logged before this version lack it)",
                )
            for name in (*REQUIRED, "comparisons.parquet", "gate.json"):
                if name in logged:
                    client.download_artifacts(run_id, name, str(target))
            expected = per_query_sha256 or client.get_run(run_id).data.tags.get(PER_QUERY_TAG)
        except HarnessError:
            raise
        except Exception as exc:
            raise TrackingError(
                f"cannot read the results of MLflow run {run_id} at {tracking_uri}: {explain(exc)}",
                hint="check the run id and tracking uri (the run must have been logged by harness run or harness track)",
            ) from None
        found = sha256_path(target / "per_query.parquet") if expected is not None else None
        if expected is not None and found != expected:
            raise HarnessError(
                f"MLflow run {run_id} at {tracking_uri}: its per_query.parquet is not the one logged with it "
                f"(sha256 {expected[:12]}... recorded, {str(found)[:12]}... now)",
                hint="the run's artifacts were changed after harness logged them: evaluate from the run files instead",
            )
        saved = read_results(target)
        return dataclasses.replace(saved, folder=Path(f"mlflow-run-{run_id}"))


def expected_links(results: SavedResults, system: str, evaluator: bool) -> dict[str | None, dict[str, float]]:
    """The values a system's evaluation links to its logged model, by the dataset of the run that logs them (None: the
    evaluator's one run, which logs every dataset): what :func:`~harness.records.track.track_results` and
    :func:`~harness.records.track.log_into_run` log."""
    summary = results.system_summary
    keys = {m: metric_key(m, results.config.get("gain_schemes") or {}) for m in summary["measure"].unique()}
    first = next(iter(summary["dataset"]), "")
    out: dict[str | None, dict[str, float]] = {}
    for row in summary[summary["system"] == system].itertuples():
        value = float(row.value)  # type: ignore[arg-type]
        if math.isfinite(value):
            key = evaluator_key(keys, row, first, system) if evaluator else summary_key(keys, row.measure, row.segment)
            out.setdefault(None if evaluator else str(row.dataset), {})[key] = value
    return out


def linked_metrics(model_id: str, run_ids: tuple[str, ...], tracking_uri: str) -> dict[str, dict[str, float]]:
    """The metrics MLflow links to a logged model (``log_metric(model_id=...)``) from the given runs: by run, by key."""
    mlflow_defaults()
    try:
        from mlflow import MlflowClient

        logged = MlflowClient(tracking_uri=tracking_uri).get_logged_model(model_id)
    except Exception as exc:
        raise TrackingError(
            f"cannot read the logged model {model_id} at {tracking_uri}: {explain(exc)}",
            hint="is the tracking server running at that address?",
        ) from None
    out: dict[str, dict[str, float]] = {}
    for metric in logged.metrics or []:
        if metric.run_id in run_ids:
            out.setdefault(metric.run_id, {})[metric.key] = float(metric.value)
    return out
