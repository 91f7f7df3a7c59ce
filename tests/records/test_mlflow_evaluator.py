"""harness as MLflow's ranking evaluator, against a real `mlflow server`: ``mlflow.models.evaluate(...,
model_type="ranker", evaluators="harness")`` gives harness eval's values, logs their intervals and the results
folder's records, ``validate_evaluation_results`` holds a lower bound to a threshold; against a baseline from the
model registry it decides the gate as ``harness run`` does; and a harness config is evaluated as ``harness run``
evaluates it."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

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
        rows.append(
            {
                "user": query,
                "ranked": [doc for doc, _ in ranked],
                "relevant": {doc: grade for doc, grade in qrels[query].items() if grade > 0},
            }
        )
    return pd.DataFrame(rows)


def _files(frame: pd.DataFrame, folder: Path) -> tuple[Path, Path]:
    """The same data as TREC files, for harness eval."""
    qrels, run = folder / "qrels", folder / "run"
    qrels.write_text(
        "".join(f"{u} 0 {d} {g}\n" for u, rel in zip(frame.user, frame.relevant, strict=True) for d, g in rel.items())
        or "x 0 y 1\n"
    )
    run.write_text(
        "".join(
            f"{u} Q0 {d} {r} {len(items) - r} t\n"
            for u, items in zip(frame.user, frame.ranked, strict=True)
            for r, d in enumerate(items)
        )
    )
    return qrels, run


@pytest.mark.slow
@pytest.mark.server
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
            result = mlflow.models.evaluate(
                data=frame,
                model_type="ranker",
                evaluators="harness",
                predictions="ranked",
                targets="relevant",
                evaluator_config=config,
            )
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
        assert {"per_query.parquet", "summary.parquet", "config.resolved.yaml", "provenance.json", "report.html"} <= artifacts
        # a release check on the interval's lower bound, MLflow's own: fails where the bound is below the threshold
        threshold = {
            "ndcg_at_10_ci_low": MetricThreshold(threshold=result.metrics["ndcg_at_10_ci_low"] + 0.01, greater_is_better=True)
        }
        with pytest.raises(mlflow.exceptions.MlflowException, match="ndcg_at_10_ci_low"):
            mlflow.validate_evaluation_results(threshold, result)
        mlflow.validate_evaluation_results(
            {"ndcg_at_10_ci_low": MetricThreshold(threshold=result.metrics["ndcg_at_10_ci_low"] - 0.01, greater_is_better=True)},
            result,
        )  # passes


def _worse(frame: pd.DataFrame, every: int) -> pd.DataFrame:
    """Every ``every``-th query's list reversed: a candidate that loses on a few users."""
    out = frame.copy()
    out["ranked"] = [items[::-1] if i % every == 0 else items for i, items in enumerate(out.ranked)]
    return out


def _run_files(frame: pd.DataFrame, folder: Path, name: str) -> Path:
    path = folder / name
    path.write_text(
        "".join(
            f"{u} Q0 {d} {r} {len(items) - r} t\n"
            for u, items in zip(frame.user, frame.ranked, strict=True)
            for r, d in enumerate(items)
        )
    )
    return path


@pytest.mark.slow
@pytest.mark.server
@pytest.mark.filterwarnings("ignore::UserWarning:mlflow.*")
@pytest.mark.filterwarnings("ignore::pandas.errors.Pandas4Warning")
@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_a_baseline_from_the_registry_decides_the_gate_as_harness_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mlflow import MlflowClient

    frame = _frame(5)
    frame = frame[frame.relevant.map(len) > 0].reset_index(drop=True)
    candidate = _worse(frame, 4)
    guards = [{"measure": "nDCG@10", "max_drop": 0.05}, {"measure": "AP", "max_drop": 0.02}]
    options = {"query": "user", "measures": ["nDCG@10", "AP", "RR"], "stats": {"permutations": 1000, "seed": 7}}
    with mlflow_server(tmp_path) as url:
        monkeypatch.setenv("MLFLOW_TRACKING_URI", url)
        client = MlflowClient(url, registry_uri=url)
        experiment = client.create_experiment("ranker")
        client.create_registered_model("recsys")
        models = []
        for _ in range(2):
            logged = client.create_logged_model(experiment, name="recsys")
            client.create_model_version("recsys", source=f"models:/{logged.model_id}", model_id=logged.model_id)
            models.append(logged.model_id)
        client.set_registered_model_alias("recsys", "champion", "1")
        # production's evaluation, linked to its logged model: the registry finds it by the alias
        with mlflow.start_run(experiment_id=experiment):
            mlflow.models.evaluate(
                data=frame,
                model_type="ranker",
                evaluators="harness",
                predictions="ranked",
                targets="relevant",
                evaluator_config=options,
                model_id=models[0],
            )
        with mlflow.start_run(experiment_id=experiment) as run:
            result = mlflow.models.evaluate(
                data=candidate,
                model_type="ranker",
                evaluators="harness",
                predictions="ranked",
                targets="relevant",
                model_id=models[1],
                evaluator_config={**options, "baseline": "models:/recsys@champion", "guards": guards},
            )
        logged_run = client.get_run(run.info.run_id)
        gate = json.loads((Path(client.download_artifacts(run.info.run_id, "gate.json", str(tmp_path)))).read_text())
        # the same two lists and guards through harness run: the same verdict and numbers
        qrels, _ = _files(frame, tmp_path)
        config = tmp_path / "exp.yaml"
        config.write_text(
            f"experiment: same\ndatasets: [{{name: data, qrels: {qrels}}}]\n"
            f"systems:\n  - {{name: baseline, runs: {{data: {_run_files(frame, tmp_path, 'a.run')}}}}}\n"
            f"  - {{name: model, runs: {{data: {_run_files(candidate, tmp_path, 'b.run')}}}}}\n"
            "measures: [nDCG@10, AP, RR]\nbaseline: baseline\nstats: {permutations: 1000, seed: 7}\n"
            f"tracking: {{enabled: false}}\nreport:\n  enabled: false\nrelease: {{production: baseline, candidate: model, "
            f"guards: {json.dumps(guards)}}}\noutput: {tmp_path / 'out'}\n"
        )
        out = io.StringIO()
        main(["run", str(config), "--json", "--quiet"], out, io.StringIO())
        expected = json.loads((Path(json.loads(out.getvalue())["results_dir"]) / "gate.json").read_text())
    assert gate["verdict"] == expected["verdict"] and logged_run.data.tags["release.verdict"] == expected["verdict"]
    assert [g["difference"] for g in gate["guards"]] == pytest.approx([g["difference"] for g in expected["guards"]], abs=1e-12)
    assert result.metrics["release_gate_passed"] == (1.0 if expected["outcome"] == "PASS" else 0.0)
    assert logged_run.data.metrics["release_gate_passed"] == result.metrics["release_gate_passed"]
    assert logged_run.data.tags["harness.model_id"] == models[1]


@pytest.mark.slow
@pytest.mark.server
@pytest.mark.filterwarnings("ignore::UserWarning:mlflow.*")
@pytest.mark.filterwarnings("ignore::pandas.errors.Pandas4Warning")
@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_a_config_is_evaluated_as_harness_run_evaluates_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.records.test_previous import _many_queries

    config = _many_queries(tmp_path, "{measure: nDCG@5, max_drop: 0.2}")
    with mlflow_server(tmp_path) as url:
        monkeypatch.setenv("MLFLOW_TRACKING_URI", url)
        with mlflow.start_run(experiment_id=mlflow.MlflowClient(url).create_experiment("configured")) as run:
            result = mlflow.models.evaluate(
                data=pd.DataFrame({"user": ["q00"]}),
                model_type="ranker",
                evaluators="harness",
                evaluator_config={"config": str(config)},
            )
        artifacts = {a.path for a in mlflow.MlflowClient().list_artifacts(run.info.run_id)}
    out = io.StringIO()
    main(["run", str(config), "--json", "--quiet"], out, io.StringIO())
    summary = pd.read_parquet(Path(json.loads(out.getvalue())["results_dir"]) / "summary.parquet")
    mine = summary[(summary.system == "b") & (summary.segment == "all")].set_index("measure")
    assert result.metrics["ndcg_at_5"] == mine.loc["nDCG@5", "value"] and result.metrics["ap"] == mine.loc["AP", "value"]
    assert result.metrics["ap_ci_low"] == mine.loc["AP", "ci_low"]
    assert "a/ap" not in result.metrics  # the candidate's own values; the others are logged beside them
    assert {"gate.json", "comparisons.parquet", "per_query.parquet"} <= artifacts


@pytest.mark.slow
@pytest.mark.server
@pytest.mark.filterwarnings("ignore::UserWarning:mlflow.*")
@pytest.mark.filterwarnings("ignore::pandas.errors.Pandas4Warning")
def test_a_baseline_on_other_judgments_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.errors import ConfigError

    frame = _frame(5)
    frame = frame[frame.relevant.map(len) > 0].reset_index(drop=True)
    other = frame.copy()
    other["relevant"] = [{**rel, "doc-new": 1} if i == 0 else rel for i, rel in enumerate(other.relevant)]
    with mlflow_server(tmp_path) as url:
        monkeypatch.setenv("MLFLOW_TRACKING_URI", url)
        experiment = mlflow.MlflowClient(url).create_experiment("ranker")
        evaluate: dict[str, Any] = {
            "model_type": "ranker",
            "evaluators": "harness",
            "predictions": "ranked",
            "targets": "relevant",
        }
        with mlflow.start_run(experiment_id=experiment) as first:
            mlflow.models.evaluate(data=frame, evaluator_config={"query": "user"}, **evaluate)
        refused = pytest.raises(ConfigError, match="its judgments for dataset 'data' differ")
        with mlflow.start_run(experiment_id=experiment), refused:
            mlflow.models.evaluate(
                data=other, evaluator_config={"query": "user", "baseline": f"runs:/{first.info.run_id}"}, **evaluate
            )
        with mlflow.start_run(experiment_id=experiment), pytest.raises(ConfigError, match="unknown key 'baselin'"):
            mlflow.models.evaluate(data=frame, evaluator_config={"query": "user", "baselin": "x"}, **evaluate)
