"""harness as MLflow's ranking evaluator, against a real `mlflow server`: ``mlflow.models.evaluate(...,
model_type="ranker", evaluators="harness")`` gives harness eval's values, logs their intervals and the per-query
table, and ``validate_evaluation_results`` holds a lower bound to a threshold."""

from __future__ import annotations

import io
from pathlib import Path

import mlflow
import pandas as pd
import pytest
from mlflow.models.evaluation.validation import MetricThreshold

from harness.cli import main
from tests.generated import adversarial
from tests.mlflow_server import mlflow_server


def _frame(seed: int) -> pd.DataFrame:
    """MLflow's convention: one row per query, its ranked items (best first) and its relevant items with grades."""
    qrels, run = adversarial(seed)
    rows = []
    for query in sorted(qrels):
        ranked = sorted(run.get(query, {}).items(), key=lambda kv: kv[0].encode(), reverse=True)
        ranked = sorted(ranked, key=lambda kv: -kv[1])  # trec_eval's order: score down, ties by id descending
        rows.append({"user": query, "ranked": [doc for doc, _ in ranked],
                     "relevant": {doc: grade for doc, grade in qrels[query].items() if grade > 0}})  # fmt: skip
    return pd.DataFrame(rows)


def _files(frame: pd.DataFrame, folder: Path) -> tuple[Path, Path]:
    """The same data as TREC files, for harness eval."""
    qrels, run = folder / "qrels", folder / "run"
    qrels.write_text("".join(f"{u} 0 {d} {g}\n" for u, rel in zip(frame.user, frame.relevant, strict=True)
                             for d, g in rel.items()) or "x 0 y 1\n")  # fmt: skip
    run.write_text("".join(f"{u} Q0 {d} {r} {len(items) - r} t\n" for u, items in zip(frame.user, frame.ranked, strict=True)
                           for r, d in enumerate(items)))  # fmt: skip
    return qrels, run


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::UserWarning:mlflow.*")  # MLflow's own notes on its dataset's type hints
@pytest.mark.filterwarnings("ignore::pandas.errors.Pandas4Warning")  # pandas 3's deprecations, inside MLflow's code
def test_mlflow_evaluate_with_harness_gives_harness_eval_values(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    frame = _frame(3)
    frame = frame[frame.relevant.map(len) > 0].reset_index(drop=True)  # a query with no relevant item: no judgment
    with mlflow_server(tmp_path) as url:
        # the server through the environment, never mlflow.set_tracking_uri: no global state outlives the test
        monkeypatch.setenv("MLFLOW_TRACKING_URI", url)
        experiment = mlflow.MlflowClient(url).create_experiment("ranker")
        with mlflow.start_run(experiment_id=experiment) as run:
            config = {"query": "user", "measures": ["nDCG@10", "AP", "RR"]}
            result = mlflow.models.evaluate(data=frame, model_type="ranker", evaluators="harness", predictions="ranked",
                                            targets="relevant", evaluator_config=config)  # fmt: skip
        logged = mlflow.get_run(run.info.run_id).data.metrics
        artifacts = {a.path for a in mlflow.MlflowClient().list_artifacts(run.info.run_id)}
        # the same data through harness eval: the same numbers
        qrels, ranked = _files(frame, tmp_path)
        out = io.StringIO()
        argv = ["eval", "-m", "ndcg_cut.10", "-m", "map", "-m", "recip_rank", str(qrels), str(ranked)]
        assert main(argv, out, io.StringIO()) == 0
        printed = {name.strip(): float(value) for name, _, value in (line.split("\t") for line in out.getvalue().splitlines())}
        assert result.metrics["ndcg_at_10"] == pytest.approx(printed["ndcg_cut_10"], abs=5e-5)
        assert result.metrics["ap"] == pytest.approx(printed["map"], abs=5e-5)
        assert result.metrics["rr"] == pytest.approx(printed["recip_rank"], abs=5e-5)
        for key in ("ndcg_at_10", "ndcg_at_10_ci_low", "ndcg_at_10_ci_high", "ap", "rr_ci_low"):
            assert logged[key] == result.metrics[key]
        assert logged["ndcg_at_10_ci_low"] < logged["ndcg_at_10"] < logged["ndcg_at_10_ci_high"]
        assert "harness_per_query.csv" in artifacts
        # a release check on the interval's lower bound, MLflow's own: fails where the bound is below the threshold
        threshold = {"ndcg_at_10_ci_low": MetricThreshold(threshold=result.metrics["ndcg_at_10_ci_low"] + 0.01,
                                                          greater_is_better=True)}  # fmt: skip
        with pytest.raises(mlflow.exceptions.MlflowException, match="ndcg_at_10_ci_low"):
            mlflow.validate_evaluation_results(threshold, result)
        mlflow.validate_evaluation_results({"ndcg_at_10_ci_low": MetricThreshold(
            threshold=result.metrics["ndcg_at_10_ci_low"] - 0.01, greater_is_better=True)}, result)  # passes
