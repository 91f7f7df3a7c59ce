"""Production's evidence and the registry, tried as an attacker and a careless colleague would, against a real
`mlflow server`: a forged evaluation in another experiment is never chosen, one in the gate's own experiment is
refused (ambiguous, tampered, or not linked to the model), a copied folder under ``harness track`` never promotes,
nor does an INCONCLUSIVE verdict that ``on_inconclusive: pass`` lets through, and two promotions at once move the
alias once."""

from __future__ import annotations

import contextlib
import json
import shutil
import threading
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from harness._atomic import sha256_path
from harness.cli import main
from harness.config.schema import ModelRef, Promote
from harness.records import registry
from harness.records.registry import PER_QUERY_TAG, qrels_tag
from harness.records.store import read_results
from tests.mlflow_server import mlflow_server
from tests.records.test_previous import _many_queries
from tests.records.test_registry import _champion, _register, _run

pytestmark = [
    pytest.mark.slow,
    pytest.mark.server,
    pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::PendingDeprecationWarning", "ignore::FutureWarning"),
]


def _forge(client: Any, experiment_id: str, genuine: Path, model_id: str, scratch: Path, *, honest_sha: bool = True) -> str:
    """A run as an attacker with write access to an experiment logs it: every tag harness writes on an evaluation of
    ``recsys/1`` (system a), and the genuine folder's files with a's per-query values set to 0; with ``honest_sha`` its
    recorded digests match the forged values, else they are the genuine folder's."""
    forged = scratch / "forged"
    shutil.copytree(genuine, forged, ignore=shutil.ignore_patterns("report.html", "latest"))
    table = pd.read_parquet(forged / "per_query.parquet")
    table.loc[table["system"] == "a", "value"] = 0.0
    table.to_parquet(forged / "per_query.parquet", index=False)
    saved = read_results(forged)
    qrels = next(i["sha256"] for i in saved.provenance["inputs"] if i["role"] == "qrels:d")
    run = client.create_run(
        experiment_id,
        tags={
            "harness.kind": "evaluation",
            "harness.complete": "true",
            "harness.system": "a",
            "harness.model_id": model_id,
            "harness.model": "recsys/1",
            registry.VALUES_TAG: saved.values_digest("a"),
            PER_QUERY_TAG: sha256_path(forged / "per_query.parquet")
            if honest_sha
            else sha256_path(genuine / "per_query.parquet"),
            qrels_tag("d"): qrels,
        },
    )
    for name in ("config.resolved.yaml", "provenance.json", "per_query.parquet", "summary.parquet", "diagnostics.parquet"):
        client.log_artifact(run.info.run_id, str(forged / name))
    client.set_terminated(run.info.run_id, "FINISHED")
    return str(run.info.run_id)


def _production_mean(folder: Path) -> float:
    rows = pd.read_parquet(folder / "comparisons.parquet")
    return float(rows[(rows.measure == "nDCG@5") & (rows.segment == "all")].mean_a.iloc[0])


def test_forged_evaluations_never_stand_for_production(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:

    config = _many_queries(tmp_path, "{measure: nDCG@5, max_drop: 0.2}")
    with _champion(tmp_path, monkeypatch, config, 3) as (client, models):
        config.write_text(config.read_text().replace("promote: {model: recsys, alias: champion}, ", ""))
        code, first, err = _run(config)  # the genuine evaluation of version 1, in experiment ni
        assert code == 0 and first["gate"] == "PASS", err
        genuine, genuine_run = Path(first["results_dir"]), str(first["mlflow_run_id"])
        experiment_id = client.get_run(genuine_run).info.experiment_id
        config.write_text(
            config.read_text().replace(
                "{name: a, runs: {d: a.run}, model: models:/recsys@champion}", "{name: a, previous: models:/recsys@champion}"
            )
        )

        # 1. a forged run in another experiment, newer than the genuine one: never looked at
        _forge(client, client.create_experiment("elsewhere"), genuine, models[0], tmp_path / "f1")
        code, second, err = _run(config, "--no-tracking")
        assert code == 0, err
        assert _production_mean(Path(second["results_dir"])) == pytest.approx(_production_mean(genuine), abs=0)
        source = pd.read_parquet(Path(second["results_dir"]) / "diagnostics.parquet").set_index("system").loc["a", "source"]
        assert f"MLflow run {genuine_run} (system 'a' in experiment 'ni', the only evaluation" in source, source
        gate = json.loads((Path(second["results_dir"]) / "gate.json").read_text())
        assert gate["production_evidence"] == source == second["gate_production"]
        assert source.startswith("models:/recsys@champion (recsys v1 (")

        # 2. the same forgery in the gate's own experiment: two evaluations of version 1 disagree, refused by name
        forged = _forge(client, experiment_id, genuine, models[0], tmp_path / "f2")
        code, _, err = _run(config, "--no-tracking")
        assert code == 2 and err.count("\n") == 1, err
        assert "disagree" in err and genuine_run in err and forged in err and "previous: runs:/RUN_ID" in err, err

        # 3. with the genuine one deleted, the forgery alone: its values are not the metrics linked to the model
        for run in client.search_runs([experiment_id], f"tags.mlflow.parentRunId = '{genuine_run}'"):
            client.delete_run(run.info.run_id)
        client.delete_run(genuine_run)
        code, _, err = _run(config, "--no-tracking")
        assert code == 2 and err.count("\n") == 1, err
        assert f"MLflow run {forged}" in err and f"links to the logged model {models[0]}" in err, err

        # 4. a forgery that keeps the genuine table's sha256: its artifact is not the one it records
        client.delete_run(forged)
        tampered = _forge(client, experiment_id, genuine, models[0], tmp_path / "f3", honest_sha=False)
        code, _, err = _run(config, "--no-tracking")
        assert code == 2 and f"MLflow run {tampered}" in err and "is not the one logged with it" in err, err


def test_promotion_names_its_evidence_and_never_comes_from_a_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:

    config = _many_queries(tmp_path, "{measure: nDCG@5, max_drop: 0.2}")
    with _champion(tmp_path, monkeypatch, config, 3) as (client, _):
        # 1. a PASS decided without tracking is not promoted; harness track of its folder (gate.json says PASS, the
        # config names release.promote) logs it and never moves the alias
        code, outcome, err = _run(config, "--no-tracking")
        assert code == 0 and outcome["gate"] == "PASS", err
        assert str(outcome["promotion"]).startswith("not moved: recsys@champion is promoted only once the results are logged")
        assert json.loads((Path(outcome["results_dir"]) / "gate.json").read_text())["promotion"] == outcome["promotion"]
        copied = tmp_path / "copied"
        shutil.copytree(Path(outcome["results_dir"]), copied / "ni" / "20260101-000000-abcdef")
        import io

        out, errors = io.StringIO(), io.StringIO()
        assert main(["track", str(copied / "ni" / "20260101-000000-abcdef"), "--quiet"], out, errors) == 0, errors.getvalue()
        assert client.get_model_version_by_alias("recsys", "champion").version == "1"
        tracked = client.search_runs([client.get_experiment_by_name("ni").experiment_id])
        assert not any("release.promotion" in r.data.tags for r in tracked)

        # 2. the harness run that decides PASS promotes, says so, and names itself on the version it promoted
        code, outcome, err = _run(config)
        assert code == 0 and outcome["promotion"] == "recsys@champion moved from version 1 to version 2", outcome
        said = json.loads((Path(outcome["results_dir"]) / "gate.json").read_text())["promotion"]
        logged = Path(client.download_artifacts(outcome["mlflow_run_id"], "gate.json", str(tmp_path)))
        assert said == json.loads(logged.read_text())["promotion"] == outcome["promotion"]
        version = client.get_model_version("recsys", "2")
        assert version.tags[registry.EVALUATION_RUN_TAG] == outcome["mlflow_run_id"]
        assert version.tags[registry.VALUES_TAG] == read_results(Path(outcome["results_dir"])).values_digest("b")

        # 3. production (now version 2) is found by that lineage, not by a search
        text = config.read_text().replace("promote: {model: recsys, alias: champion}, ", "")
        text = text.replace(
            "{name: a, runs: {d: a.run}, model: models:/recsys@champion}", "{name: a, previous: models:/recsys@champion}"
        )
        config.write_text(text.replace("{name: b, runs: {d: b.run}, model: models:/recsys/2}", "{name: b, runs: {d: a.run}}"))
        code, reuse, err = _run(config, "--no-tracking")
        assert code == 0, err
        source = pd.read_parquet(Path(reuse["results_dir"]) / "diagnostics.parquet").set_index("system").loc["a", "source"]
        assert (
            f"MLflow run {outcome['mlflow_run_id']} (system 'b' in experiment 'ni', the harness run that promoted it)" in source
        )


def test_an_inconclusive_verdict_treated_as_pass_never_promotes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:

    config = _many_queries(tmp_path, "{measure: nDCG@5, max_drop: 0.001}")
    with _champion(tmp_path, monkeypatch, config, 2) as (client, _):
        config.write_text(config.read_text().replace("release: {", "release: {on_inconclusive: pass, "))
        code, outcome, err = _run(config)
        assert outcome["gate_verdict"] == "INCONCLUSIVE" and outcome["gate"] == "PASS" and code == 0, (outcome, err)
        assert outcome["promotion"] == "not moved: the gate's verdict is INCONCLUSIVE, and only PASS promotes"
        assert client.get_model_version_by_alias("recsys", "champion").version == "1"


def _slow_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """A slow registry: every read of an alias takes 0.4 s, so two promotions overlap between their read and move.
    Returns the versions the alias is moved to, as they are moved."""
    from mlflow import MlflowClient

    read, write, moves = MlflowClient.get_model_version_by_alias, MlflowClient.set_registered_model_alias, []

    def slow(self: Any, name: str, alias: str) -> Any:
        found = read(self, name, alias)
        time.sleep(0.4)
        return found

    def counted(self: Any, name: str, alias: str, version: str) -> None:
        moves.append(str(version))
        write(self, name, alias, version)

    monkeypatch.setattr(MlflowClient, "get_model_version_by_alias", slow)
    monkeypatch.setattr(MlflowClient, "set_registered_model_alias", counted)
    return moves


def _promote_both(url: str) -> list[registry.Promotion]:
    production = ModelRef("models:/recsys/1", name="recsys", version="1")
    done: list[registry.Promotion] = []

    def one(version: str) -> None:
        done.append(
            registry.promote(
                Promote("recsys", "champion"), ModelRef(f"models:/recsys/{version}", "recsys", version), production, url
            )
        )

    threads = [threading.Thread(target=one, args=(v,)) for v in ("2", "3")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return done


def test_two_promotions_at_once_move_the_alias_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mlflow import MlflowClient

    with mlflow_server(tmp_path) as url:
        client = MlflowClient(url, registry_uri=url)
        _register(client, client.create_experiment("models"), 3)
        client.set_registered_model_alias("recsys", "champion", "1")
        moves = _slow_reads(monkeypatch)
        # the race this guards against: without the lock, both read version 1 and both move it
        with monkeypatch.context() as unlocked:
            unlocked.setattr(registry, "promotion_lock", lambda *a, **k: contextlib.nullcontext())
            _promote_both(url)
        assert sorted(moves) == ["2", "3"]
        # with it, exactly one moves; the other says the alias names another version than production's
        client.set_registered_model_alias("recsys", "champion", "1")
        moves.clear()
        done = _promote_both(url)
        assert len(moves) == 1, moves
        moved = [p for p in done if p.moved]
        assert len(moved) == 1, done
        winner = client.get_model_version_by_alias("recsys", "champion").version
        assert moved[0].line == f"recsys@champion moved from version 1 to version {winner}"
        other = next(p for p in done if not p.moved)
        assert other.line == f"not moved: recsys@champion names version {winner}, not production's (version 1)"
        assert registry.lock_name("recsys", "champion") not in [m.name for m in client.search_registered_models()]

        # a lock left by a promotion that died is taken over once stale; a live one makes the next promotion wait
        client.create_registered_model(registry.lock_name("recsys", "champion"))
        with pytest.raises(Exception, match="has held its lock"), registry.promotion_lock(client, "recsys", "champion", wait=0.5):
            pass
        monkeypatch.setattr(registry, "LOCK_STALE", 0.0)
        with registry.promotion_lock(client, "recsys", "champion", wait=0.5):
            assert registry.lock_name("recsys", "champion") in [m.name for m in client.search_registered_models()]
        assert registry.lock_name("recsys", "champion") not in [m.name for m in client.search_registered_models()]


def _promote(folder: Path) -> tuple[int, str, str]:
    import io

    out, err = io.StringIO(), io.StringIO()
    return main(["promote", str(folder)], out, err), out.getvalue(), err.getvalue()


def test_harness_promote_acts_only_on_a_verdict_it_computes_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:

    config = _many_queries(tmp_path, "{measure: nDCG@5, max_drop: 0.2}, {measure: AP, max_drop: 0.2}")
    with _champion(tmp_path, monkeypatch, config, 2) as (client, _):
        code, outcome, err = _run(config, "--no-tracking")
        assert code == 0 and outcome["gate"] == "PASS", err
        genuine = Path(outcome["results_dir"])

        # a copy whose candidate values were lowered, gate.json left saying PASS: its values decide otherwise
        edited = tmp_path / "out" / "ni" / "20990101-000000-aaaaaa"
        shutil.copytree(genuine, edited)
        table = pd.read_parquet(edited / "per_query.parquet")
        table.loc[(table["system"] == "b") & (table["measure"] == "nDCG@5"), "value"] = 0.0
        table.to_parquet(edited / "per_query.parquet", index=False)
        code, out, err = _promote(edited)
        assert code == 2 and "its values decide FAIL, and its gate.json says PASS" in err and err.count("\n") == 1, err
        # a gate.json whose guard's numbers were changed: refused by the number
        numbers = tmp_path / "out" / "ni" / "20990101-000001-bbbbbb"
        shutil.copytree(genuine, numbers)
        gate = json.loads((numbers / "gate.json").read_text())
        gate["guards"][1]["drop_high"] = gate["guards"][1]["drop_high"] - 0.01
        (numbers / "gate.json").write_text(json.dumps(gate))
        code, out, err = _promote(numbers)
        assert code == 2 and "guard AP" in err and "drop_high" in err, err
        assert client.get_model_version_by_alias("recsys", "champion").version == "1"
        for folder in (edited, numbers):
            shutil.rmtree(folder)

        # the genuine folder: recomputed, logged once, promoted, naming the run
        code, out, err = _promote(genuine)
        assert code == 0 and "promotion: recsys@champion moved from version 1 to version 2 (decided by MLflow run" in out, err
        run_id = json.loads((genuine / "tracking.json").read_text())["run_id"]
        assert client.get_model_version("recsys", "2").tags[registry.EVALUATION_RUN_TAG] == run_id
        code, out, err = _promote(genuine)  # again: nothing moves, and it says why
        assert code == 1 and "not moved: recsys@champion already names version 2" in out, (out, err)


def test_the_registry_workflow_with_the_destination_only_in_the_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No MLFLOW_TRACKING_URI: the model pinned, production found and the alias moved where the config logs."""
    config = _many_queries(tmp_path, "{measure: nDCG@5, max_drop: 0.2}")
    with _champion(tmp_path, monkeypatch, config, 2) as (client, _):
        url = client.tracking_uri
        monkeypatch.delenv("MLFLOW_TRACKING_URI")
        config.write_text(config.read_text().replace("tracking: {enabled: true}", f"tracking: {{enabled: true, uri: '{url}'}}"))
        code, outcome, err = _run(config)
        assert code == 0 and outcome["promotion"] == "recsys@champion moved from version 1 to version 2", (outcome, err)
        assert outcome["tracking_uri"] == url and not (tmp_path / "out" / "mlflow.db").exists()
        config.write_text(
            config.read_text().replace(
                "{name: a, runs: {d: a.run}, model: models:/recsys@champion}", "{name: a, previous: models:/recsys@champion}"
            )
        )
        code, reuse, err = _run(config)
        assert code == 0 and "the harness run that promoted it" in str(reuse["gate_production"]), err


def test_harness_promote_checks_the_look_against_the_gates_records(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = _many_queries(tmp_path, "{measure: nDCG@5, max_drop: 0.2}")
    with _champion(tmp_path, monkeypatch, config, 2) as (client, _):
        config.write_text(config.read_text().replace("release: {", "release: {looks: 2, "))
        code, outcome, err = _run(config, "--no-tracking")
        assert code == 0 and outcome["gate"] == "PASS", err
        folder = Path(outcome["results_dir"])
        gate = json.loads((folder / "gate.json").read_text())
        assert (gate["look"], gate["looks"]) == (1, 2)
        # a gate.json whose level was raised (a later look's, say): its recomputed numbers may agree, its look does not
        edited = dict(gate, level=gate["level"] * 2)
        (folder / "gate.json").write_text(json.dumps(edited))
        code, out, err = _promote(folder)
        assert code == 2 and client.get_model_version_by_alias("recsys", "champion").version == "1", (out, err)
        assert "the records of the gate's look" in err and "disagree" in err and err.count("\n") == 1, err
        assert not (folder / "tracking.json").exists()  # refused before anything was logged
        copied = tmp_path / "elsewhere" / "ni" / folder.name  # the folder alone, away from its gate's records
        shutil.copytree(folder, copied)
        (copied / "gate.json").write_text(json.dumps(gate))
        code, out, err = _promote(copied)
        assert code == 2 and "is not among its recorded looks" in err, err
        (folder / "gate.json").write_text(json.dumps(gate))
        code, out, err = _promote(folder)
        assert code == 0 and "moved from version 1 to version 2" in out, (out, err)
