"""Production found through MLflow's model registry, against a real `mlflow server`: a system names its registered
model, its evaluation is linked to it, ``previous: models:/NAME@ALIAS`` reuses the latest one (refused on other
judgments, as a folder is), and ``release.promote`` moves the alias only on PASS and only from production's version."""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from harness.cli import main
from tests.mlflow_server import mlflow_server
from tests.records.test_previous import _many_queries

pytestmark = [
    pytest.mark.slow,
    pytest.mark.server,
    pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::PendingDeprecationWarning", "ignore::FutureWarning"),
]


def _run(config: Path, *extra: str) -> tuple[int, dict[str, Any], str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["run", str(config), "--json", "--quiet", *extra], out, err)
    return code, json.loads(out.getvalue()) if out.getvalue() else {}, err.getvalue()


def _register(client: Any, experiment_id: str, versions: int) -> list[str]:
    """``recsys`` versions 1..n, each a logged model (MLflow 3): their model ids."""
    client.create_registered_model("recsys")
    ids = []
    for _ in range(versions):
        logged = client.create_logged_model(experiment_id, name="recsys")
        client.create_model_version("recsys", source=f"models:/{logged.model_id}", model_id=logged.model_id)
        ids.append(logged.model_id)
    return ids


def _name_models(config: Path, production: str, candidate: str) -> None:
    """Systems a and b name their registered models, tracking is on, and a PASS promotes recsys@champion."""
    text = config.read_text().replace("tracking: {enabled: false}", "tracking: {enabled: true}")
    text = text.replace("{name: a, runs: {d: a.run}}", f"{{name: a, runs: {{d: a.run}}, model: {production}}}")
    text = text.replace("{name: b, runs: {d: b.run}}", f"{{name: b, runs: {{d: b.run}}, model: {candidate}}}")
    config.write_text(text.replace("guards: [", "promote: {model: recsys, alias: champion}, guards: ["))


@contextlib.contextmanager
def _champion(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config: Path, versions: int = 3, production: str = "models:/recsys@champion"
) -> Iterator[tuple[Any, list[str]]]:
    """A real `mlflow server` whose registry has ``recsys`` versions 1..n with champion at version 1, the config's
    systems a and b naming production's and version 2's model (and promote): (its client, the logged models' ids)."""
    from mlflow import MlflowClient

    with mlflow_server(tmp_path) as url:
        monkeypatch.setenv("MLFLOW_TRACKING_URI", url)  # never mlflow.set_tracking_uri: no state outlives the test
        client = MlflowClient(url, registry_uri=url)
        models = _register(client, client.create_experiment("models"), versions)
        client.set_registered_model_alias("recsys", "champion", "1")
        _name_models(config, production, "models:/recsys/2")
        yield client, models


def _comparisons(folder: Path) -> pd.DataFrame:
    keys = ["measure", "system_a", "system_b", "delta", "p_t", "p_randomization", "p_bootstrap", "p_adj", "significant"]
    return pd.read_parquet(folder / "comparisons.parquet")[keys]


def test_production_from_the_registry_and_promotion_on_pass(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:

    config = _many_queries(tmp_path, "{measure: nDCG@5, max_drop: 0.2}")
    with _champion(tmp_path, monkeypatch, config) as (client, models):
        # 1. production (champion, version 1) and candidate (version 2) evaluated from their runs: linked, pinned
        code, first, err = _run(config)
        assert code == 0 and first["gate"] == "PASS", err
        folder = Path(first["results_dir"])
        resolved = {s["name"]: s for s in __import__("yaml").safe_load((folder / "config.resolved.yaml").read_text())["systems"]}
        assert resolved["a"]["model"] == {
            "uri": "models:/recsys@champion",
            "name": "recsys",
            "version": "1",
            "alias": "champion",
            "model_id": models[0],
        }
        children = client.search_runs(
            [client.get_run(first["mlflow_run_id"]).info.experiment_id], f"tags.mlflow.parentRunId = '{first['mlflow_run_id']}'"
        )
        child_a = next(r for r in children if r.data.tags["system"] == "a")
        assert child_a.data.tags["harness.model_id"] == models[0] and child_a.data.tags["harness.model"] == "recsys/1"
        linked = {m.key: m for m in client.get_logged_model(models[0]).metrics or []}
        summary = pd.read_parquet(folder / "summary.parquet")
        expected = summary[(summary.system == "a") & (summary.segment == "all") & (summary.measure == "AP")].value.item()
        assert linked["ap"].value == pytest.approx(expected, abs=1e-12) and linked["ap"].dataset_name == "qrels:d"
        # 2. on PASS the alias moved from production's version to the candidate's, and the parent run says so
        assert client.get_model_version_by_alias("recsys", "champion").version == "2"
        assert (
            client.get_run(first["mlflow_run_id"]).data.tags["release.promotion"]
            == "recsys@champion moved from version 1 to version 2"
        )
        assert "/" not in client.get_run(first["mlflow_run_id"]).data.tags["harness.results_dir"].split("/", 1)[1]
        assert str(tmp_path) not in (folder / "provenance.json").read_text()  # no local absolute path recorded

        # 3. champion (now version 2, b's evaluation) reused as production: the same comparisons as from the folder
        client.set_registered_model_alias("recsys", "champion", "1")
        reuse = config.read_text().replace(
            "{name: a, runs: {d: a.run}, model: models:/recsys@champion}", "{name: a, previous: models:/recsys@champion}"
        )
        config.write_text(reuse.replace("promote: {model: recsys, alias: champion}, ", ""))
        code, second, err = _run(config, "--no-tracking")
        assert code == 0, err
        pd.testing.assert_frame_equal(_comparisons(folder), _comparisons(Path(second["results_dir"])))
        config.write_text(config.read_text().replace("previous: models:/recsys@champion", f"previous: {{results: {folder}}}"))
        code, third, err = _run(config, "--no-tracking")
        pd.testing.assert_frame_equal(_comparisons(Path(second["results_dir"])), _comparisons(Path(third["results_dir"])))

        # 4. other judgments than the evaluation's: refused, exit 2, one line, before any work
        config.write_text(config.read_text().replace(f"previous: {{results: {folder}}}", "previous: models:/recsys@champion"))
        (tmp_path / "qrels.txt").write_text((tmp_path / "qrels.txt").read_text().replace("q00 0 d0 1", "q00 0 d0 2"))
        code, _, err = _run(config, "--no-tracking")
        assert code == 2 and err.count("\n") == 1, err
        assert "no harness evaluation of models:/recsys@champion (recsys v1" in err, err
        assert f"in experiment 'ni' can stand for it (1 skipped; run {first['mlflow_run_id']}: its judgments" in err, err
        # an alias that names nothing: exit 2, naming it
        config.write_text(config.read_text().replace("@champion", "@nobody"))
        code, _, err = _run(config, "--no-tracking")
        assert code == 2 and "models:/recsys@nobody" in err and err.count("\n") == 1, err


def test_a_run_logged_by_its_child_promotes_and_its_report_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With ``tracking_process="child"`` (what ``harness run`` does as a process of its own) the verdict this process
    computed still promotes, here, and the report, rendered after the records because the promotion is in it, says so."""
    config = _many_queries(tmp_path, "{measure: nDCG@5, max_drop: 0.2}")
    config.write_text(config.read_text().replace("report:\n  enabled: false", "report:\n  enabled: true"))
    with _champion(tmp_path, monkeypatch, config) as (client, _):
        out, err = io.StringIO(), io.StringIO()
        code = main(["run", str(config), "--json", "--quiet"], out, err, tracking_process="child")
        outcome = json.loads(out.getvalue())
        assert code == 0 and outcome["gate"] == "PASS" and outcome["tracking"] == "ok", err.getvalue()
        assert client.get_model_version_by_alias("recsys", "champion").version == "2"
        line = "recsys@champion moved from version 1 to version 2"
        assert outcome["promotion"] == line and line in (Path(outcome["results_dir"]) / "report.html").read_text()
        assert outcome["mlflow_run_id"] in (Path(outcome["results_dir"]) / "report.html").read_text()


def test_promotion_never_moves_an_alias_someone_moved_meanwhile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:

    config = _many_queries(tmp_path, "{measure: nDCG@5, max_drop: 0.2}")
    with _champion(tmp_path, monkeypatch, config, production="models:/recsys/1") as (client, _):
        client.set_registered_model_alias("recsys", "champion", "3")  # production here is version 1: not champion
        code, outcome, err = _run(config)
        assert code == 0 and outcome["gate"] == "PASS", err
        assert client.get_model_version_by_alias("recsys", "champion").version == "3"
        assert (
            client.get_run(outcome["mlflow_run_id"]).data.tags["release.promotion"]
            == "not moved: recsys@champion names version 3, not production's (version 1)"
        )
        # a gate that does not pass never moves it either
        client.set_registered_model_alias("recsys", "champion", "1")
        config.write_text(config.read_text().replace("max_drop: 0.2", "min_gain: 0.2"))
        code, outcome, err = _run(config)
        assert code in (1, 3) and outcome["gate"] != "PASS", err
        assert client.get_model_version_by_alias("recsys", "champion").version == "1"
        promotion = client.get_run(outcome["mlflow_run_id"]).data.tags["release.promotion"]
        assert promotion.startswith("not moved: the gate's verdict is"), promotion


@pytest.mark.parametrize(
    ("system", "message"),
    [
        ("{name: b, runs: {d: b.run}, model: recsys}", "'recsys' is not a model reference: write models:/NAME/VERSION"),
        (
            "{name: b, runs: {d: b.run}}",
            "release.promote moves recsys@champion to the candidate's version, and candidate 'b' names none",
        ),
        (
            "{name: b, runs: {d: b.run}, model: models:/other/2}",
            "release.promote names model 'recsys', and candidate 'b' is a version of 'other'",
        ),
    ],
)
def test_model_references_are_checked_when_the_config_is_read(tmp_path: Path, system: str, message: str) -> None:
    config = _many_queries(tmp_path, "{measure: nDCG@5, max_drop: 0.2}")
    text = config.read_text().replace("{name: b, runs: {d: b.run}}", system)
    config.write_text(text.replace("guards: [", "promote: {model: recsys, alias: champion}, guards: ["))
    out, err = io.StringIO(), io.StringIO()
    assert main(["validate", str(config), "--quiet"], out, err) == 2
    assert message in err.getvalue() and err.getvalue().count("\n") == 1, err.getvalue()


def test_previous_as_one_string(tmp_path: Path) -> None:
    """``previous: runs:/ID``, ``previous: models:/NAME@ALIAS`` and ``previous: FOLDER`` say what their mappings say."""
    from harness.config.load import load_config

    config = _many_queries(tmp_path, "{measure: nDCG@5, max_drop: 0.2}")
    code, first, err = _run(config, "--no-tracking")
    assert code in (0, 3, 6), err
    folder = Path(first["results_dir"])
    for text, field, expected in (
        ("runs:/8c1f2a", "mlflow_run", "8c1f2a"),
        (str(folder), "results", folder.resolve()),
        ("models:/recsys@champion", "model", None),
    ):
        config.write_text(config.read_text().replace("{name: a, runs: {d: a.run}}", f"{{name: a, previous: '{text}'}}"))
        previous = load_config(config).systems[0].previous
        assert previous is not None and previous.line == 4
        if field == "model":
            assert previous.model is not None and (previous.model.name, previous.model.alias) == ("recsys", "champion")
        else:
            assert getattr(previous, field) == expected
        config.write_text(config.read_text().replace(f"{{name: a, previous: '{text}'}}", "{name: a, runs: {d: a.run}}"))


class _RacingRegistry:
    """A registry whose first create of the lock meets it as its holder releases it: a tracking server then answers
    RESOURCE_DOES_NOT_EXIST (it looks up the model it collided with, and finds it gone), as a CI run caught."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def create_registered_model(self, name: str, description: str = "") -> None:
        self.calls.append("create")
        if self.calls.count("create") == 1:
            raise RuntimeError(f"RESOURCE_DOES_NOT_EXIST: Registered Model with name={name} not found")

    def delete_registered_model(self, name: str) -> None:
        self.calls.append("delete")


def test_a_lock_met_as_its_holder_releases_it_is_taken() -> None:
    from harness.records.registry import promotion_lock

    client = _RacingRegistry()
    with promotion_lock(client, "recsys", "champion", wait=5.0):
        client.calls.append("held")
    assert client.calls == ["create", "create", "held", "delete"]
