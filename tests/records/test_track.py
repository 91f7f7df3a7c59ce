"""MLflow tracking against a real SQLite store and a real `mlflow server` on 127.0.0.1 (issue 5)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import textwrap
from pathlib import Path

import pandas as pd
import pytest

from harness.cli import main
from harness.measures.parse import parse_measure
from harness.measures.registry import REGISTRY
from harness.measures.spec import Measure
from harness.records.connection import key_part
from harness.records.mlflow_names import MAX_VIEW_CHARS, release_view
from tests.mlflow_server import free_port, mlflow_server

pytestmark = pytest.mark.filterwarnings(
    "ignore::DeprecationWarning", "ignore::PendingDeprecationWarning", "ignore::FutureWarning"
)


def _config(tmp_path: Path, tracking: str = "") -> Path:
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\nq3 0 d4 1\n")
    (tmp_path / "a.run").write_text("q1 Q0 d1 1 2.0 a\nq1 Q0 d2 2 1.0 a\nq2 Q0 d9 1 1.0 a\nq3 Q0 d4 1 1.0 a\n")
    (tmp_path / "b.run").write_text("q1 Q0 d2 1 2.0 b\nq1 Q0 d1 2 1.0 b\nq2 Q0 d3 1 1.0 b\n")
    (tmp_path / "seg.csv").write_text("query,segment\nq1,head\nq2,tail\nq3,tail\n")
    path = tmp_path / "exp.yaml"
    path.write_text(
        textwrap.dedent(
            f"""\
            experiment: tracked
            datasets: [{{name: d, qrels: qrels.txt, segments: {{path: seg.csv}}}}]
            systems:
              - {{name: a, description: the old one, runs: {{d: a.run}}}}
              - {{name: b, runs: {{d: b.run}}}}
            measures: [nDCG@10, P(rel=2)@5, AP, RR]
            baseline: a
            stats: {{permutations: 200, resamples: 200}}
            report: {{enabled: false}}
            output: out
            {tracking}
            """
        )
    )
    return path


def _run(config: Path, *extra: str) -> tuple[int, dict[str, object], str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["run", str(config), "--json", "--quiet", *extra], out, err)
    return code, json.loads(out.getvalue()) if out.getvalue() else {}, err.getvalue()


def _check_logged(uri: str, results_dir: Path, run_id: str) -> None:
    from mlflow import MlflowClient

    client = MlflowClient(uri)
    parent = client.get_run(run_id)
    assert parent.data.params["baseline"] == "a"
    assert parent.data.params["conventions.ties"] == "trec_eval"
    assert parent.data.params["stats.seed"] and parent.data.params["stats.permutations"] == "200"
    assert "nDCG@10" in parent.data.params["measures"]
    assert parent.data.tags["harness.config_hash"] == json.loads((results_dir / "provenance.json").read_text())["config_hash"]
    artifacts = {a.path for a in client.list_artifacts(run_id)}
    assert {"config.resolved.yaml", "provenance.json", "per_query.parquet", "comparisons.csv", "summary.json"} <= artifacts
    children = client.search_runs([parent.info.experiment_id], filter_string=f"tags.mlflow.parentRunId = '{run_id}'")
    assert sorted(c.data.tags["system"] for c in children) == ["a", "b"]
    summary = pd.read_parquet(results_dir / "summary.parquet")
    for child in children:
        system = child.data.tags["system"]
        assert child.data.tags["dataset"] == "d"
        mine = summary[summary["system"] == system]
        assert len(child.data.metrics) == len(mine)
        for row in mine.itertuples():
            key = parse_measure(str(row.measure)).mlflow_key()
            if row.segment != "all":
                key = f"{key}.{key_part(row.segment)}"
            assert child.data.metrics[key] == pytest.approx(row.value, abs=0), (system, key)
        assert "per_query.parquet" in {a.path for a in client.list_artifacts(child.info.run_id)}
        table = pd.read_parquet(client.download_artifacts(child.info.run_id, "per_query.parquet", str(results_dir.parent)))
        assert len(table) == 3 and set(table.columns) >= {"query_id", "segment", "nDCG@10", "AP"}
    assert parent.data.params["dataset.d.relevance_level"] == "1" and "conventions.relevance_level" not in parent.data.params
    inputs = {d.dataset.name: d.dataset.digest for d in parent.inputs.dataset_inputs}
    provenance = {i["role"]: i["sha256"] for i in json.loads((results_dir / "provenance.json").read_text())["inputs"]}
    assert set(inputs) == {"qrels:d", "segments:d", "run:a:d", "run:b:d"}
    assert all(provenance[role].startswith(digest) for role, digest in inputs.items())
    assert next(c for c in children if c.data.tags["system"] == "a").data.tags["mlflow.note.content"] == "the old one"


def test_local_sqlite_store_by_default(tmp_path: Path) -> None:
    code, outcome, err = _run(_config(tmp_path))
    assert code == 0, err
    uri = str(outcome["tracking_uri"])
    assert uri == f"sqlite:///{(tmp_path / 'out' / 'mlflow.db').resolve()}"
    results_dir = Path(str(outcome["results_dir"]))
    _check_logged(uri, results_dir, str(outcome["mlflow_run_id"]))
    assert json.loads((results_dir / "tracking.json").read_text())["run_id"] == outcome["mlflow_run_id"]


def test_a_new_store_is_made_without_mlflows_info_lines_on_stderr(tmp_path: Path) -> None:
    """MLflow logs each step of making a store at INFO; harness run (which imports MLflow on a thread while it
    evaluates) says only its own progress."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "harness", "run", str(_config(tmp_path))],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={k: v for k, v in os.environ.items() if k != "MLFLOW_LOGGING_LEVEL"},
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out" / "mlflow.db").is_file()
    assert "INFO" not in done.stderr and "mlflow.store" not in done.stderr, done.stderr


@pytest.mark.server
def test_real_server_then_outage_then_track_later(tmp_path: Path) -> None:
    with mlflow_server(tmp_path) as url:
        code, outcome, err = _run(_config(tmp_path, f"tracking: {{uri: '{url}'}}"))
        assert code == 0, err
        assert outcome["tracking_uri"] == url
        from mlflow import MlflowClient

        experiment_id = MlflowClient(url).get_run(str(outcome["mlflow_run_id"])).info.experiment_id
        assert (
            outcome["mlflow_url"]
            == f"{url}/#/experiments/{experiment_id}/runs/{outcome['mlflow_run_id']}?workflowType=machine_learning"
        )
        _check_logged(url, Path(str(outcome["results_dir"])), str(outcome["mlflow_run_id"]))

    # the server is gone: results are complete on disk, one line, exit code 4
    closed = f"http://127.0.0.1:{free_port()}"
    code, outcome, err = _run(_config(tmp_path, f"tracking: {{uri: '{closed}'}}"))
    assert code == 4
    assert err.count("\n") == 1 and "harness track" in err
    assert "tracking failed: MLflow tracking at" in err and "cannot connect to the server (connection refused" in err
    assert "HTTPConnectionPool" not in err  # a readable cause, not a wrapped exception
    results_dir = Path(str(outcome["results_dir"]))
    assert outcome["mlflow_run_id"] is None
    for name in ("per_query.parquet", "summary.parquet", "comparisons.parquet", "provenance.json", "config.resolved.yaml"):
        assert (results_dir / name).stat().st_size > 0
    assert not (results_dir / "tracking.json").exists()

    # a server is back: harness track logs the saved folder
    with mlflow_server(tmp_path) as url:
        out, err_stream = io.StringIO(), io.StringIO()
        assert main(["track", str(results_dir), "--uri", url, "--json"], out, err_stream) == 0, err_stream.getvalue()
        logged = json.loads(out.getvalue())
        _check_logged(url, results_dir, logged["mlflow_run_id"])


def test_track_refuses_an_incomplete_folder(tmp_path: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    assert main(["track", str(tmp_path)], out, err) == 2  # a user error: the folder is not a results folder
    assert "not a complete results folder" in err.getvalue()


def _every_measure() -> list[Measure]:
    texts = []
    for d in REGISTRY:
        required = [f"{p.name}={'1' if p.kind == 'number' else repr('provider')}" for p in d.params if p.required]
        base = d.name + ("(recall=0.25)" if d.name == "IPrec" else f"({','.join(required)})" if required else "")
        texts += [base] if d.cutoff != "required" else []
        texts += [f"{base}@10"] if d.cutoff != "none" else []
        if any(p.name == "rel" for p in d.params):
            extra = ",recall=0.5" if d.name == "IPrec" else "".join(f",{r}" for r in required)
            texts.append(f"{d.name}(rel=2{extra}){'@5' if d.cutoff == 'required' else ''}")
        if any(p.name == "gains" for p in d.params):
            texts += [f"{d.name}(gain='exp')", f"{d.name}(gains={{0:0,1:0.5,2:-1.25}})"]
    texts += [
        "RBP(p=0.8)",
        "Utility(a=2,b=-1,c=0,d=0)",
        "IPrecAvg(recalls=(0.25,0.5))",
        "F(beta=0.5)@10",
        "AP(denominator='min_R_k')@10",
    ]
    return [parse_measure(t) for t in texts]


def test_every_metric_key_passes_mlflow_validation() -> None:
    from mlflow.utils.validation import _validate_metric_name

    measures = _every_measure()
    keys = [m.mlflow_key() for m in measures]
    assert len(set(keys)) == len(set(measures)), "distinct measures need distinct keys"
    for key in [*keys, f"{keys[0]}.{key_part('new users (EU) <script>')}"]:
        _validate_metric_name(key)


def _parents(uri: str) -> list[object]:
    from mlflow import MlflowClient

    client = MlflowClient(uri)
    experiment = client.get_experiment_by_name("tracked")
    return [r for r in client.search_runs([experiment.experiment_id]) if r.data.tags.get("harness.kind") == "experiment"]


def test_a_results_folder_is_one_parent_run_however_often_it_is_tracked(tmp_path: Path) -> None:
    """Exactly once: harness track on a folder already logged adds nothing; a copy cut short (RUNNING, no completion
    tag: a kill mid-logging) is replaced, never kept beside a new one."""
    from mlflow import MlflowClient

    code, outcome, err = _run(_config(tmp_path))
    assert code == 0, err
    uri, folder, first = str(outcome["tracking_uri"]), Path(str(outcome["results_dir"])), str(outcome["mlflow_run_id"])
    for _ in range(2):
        out, err_stream = io.StringIO(), io.StringIO()
        assert main(["track", str(folder), "--json"], out, err_stream) == 0, err_stream.getvalue()
        again = json.loads(out.getvalue())
        assert again["mlflow_run_id"] == first and again["already_logged"] is True
    assert [r.info.run_id for r in _parents(uri)] == [first]

    client = MlflowClient(uri)  # as a kill -9 during logging leaves it: running, and not marked complete
    client.delete_tag(first, "harness.complete")
    client.update_run(first, "RUNNING")
    out, err_stream = io.StringIO(), io.StringIO()
    assert main(["track", str(folder), "--json"], out, err_stream) == 0, err_stream.getvalue()
    replaced = json.loads(out.getvalue())
    assert replaced["mlflow_run_id"] != first and replaced["already_logged"] is False
    (parent,) = _parents(uri)
    assert parent.info.run_id == replaced["mlflow_run_id"] and parent.info.status == "FINISHED"
    _check_logged(uri, folder, parent.info.run_id)  # complete, with its two children only
    assert client.get_run(first).info.lifecycle_stage == "deleted"


@pytest.mark.server
def test_json_is_all_that_reaches_stdout_with_a_tracking_server(tmp_path: Path) -> None:
    """A real process against a real server: MLflow's own lines ("View run ...") go to stderr, so stdout parses."""
    import subprocess
    import sys

    with mlflow_server(tmp_path) as url:
        config = _config(tmp_path, f"tracking: {{uri: '{url}'}}")
        done = subprocess.run(
            [sys.executable, "-m", "harness", "run", str(config), "--json", "--quiet"],
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        outcome = json.loads(done.stdout)  # one JSON document, nothing else
        assert outcome["tracking"] == "ok" and outcome["mlflow_run_id"]
        again = subprocess.run(
            [sys.executable, "-m", "harness", "track", str(outcome["results_dir"]), "--json", "--uri", url],
            capture_output=True,
            text=True,
            check=False,
        )
        assert again.returncode == 0, again.stderr
        assert json.loads(again.stdout)["mlflow_run_id"] == outcome["mlflow_run_id"]


@pytest.mark.slow
@pytest.mark.parametrize("store", ["sqlite", pytest.param("server", marks=pytest.mark.server)])
def test_four_first_runs_at_once_all_land(tmp_path: Path, store: str) -> None:
    """Four processes start at once on a store that does not exist yet, or a fresh server whose experiment does not:
    the local store's creation is serialised, and against a server each process creates the experiment or finds it
    made by another meanwhile (no lock spans a server's clients). All four log, each folder once."""
    import subprocess
    import sys

    with contextlib.ExitStack() as stack:
        url = stack.enter_context(mlflow_server(tmp_path)) if store == "server" else None
        config = _config(tmp_path, f"tracking: {{uri: '{url}'}}" if url else "")
        runs = [
            subprocess.Popen(
                [sys.executable, "-m", "harness", "run", str(config), "--json", "--quiet"],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(4)
        ]
        outcomes = []
        for run in runs:
            out, err = run.communicate(timeout=300)
            assert run.returncode == 0, err
            outcomes.append(json.loads(out))
        assert all(o["tracking"] == "ok" for o in outcomes)
        uri = str(outcomes[0]["tracking_uri"])
        assert sorted(r.info.run_id for r in _parents(uri)) == sorted(str(o["mlflow_run_id"]) for o in outcomes)
        for outcome in outcomes:
            _check_logged(uri, Path(str(outcome["results_dir"])), str(outcome["mlflow_run_id"]))


def test_hostile_names_are_tracked_distinct_and_kept(tmp_path: Path) -> None:
    """A dataset and a gain scheme named with markup, and segments 'a b' and 'a_b': MLflow takes every key, the two
    segments keep two metrics, and every original name is on the parent run as a value."""
    from mlflow import MlflowClient

    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\nq1 0 d2 2\nq2 0 d3 2\nq3 0 d4 1\n")
    (tmp_path / "a.run").write_text("q1 Q0 d1 1 2.0 a\nq1 Q0 d2 2 1.0 a\nq2 Q0 d3 1 1.0 a\nq3 Q0 d4 1 1.0 a\n")
    (tmp_path / "seg.csv").write_text("query,segment\nq1,a b\nq2,a_b\nq3,a_b\n")
    config = tmp_path / "exp.yaml"
    config.write_text(
        "experiment: tracked\n"
        "datasets: [{name: '<b>ds</b>', qrels: qrels.txt, segments: {path: seg.csv}}]\n"
        "systems: [{name: a, runs: {'<b>ds</b>': a.run}}]\n"
        "measures: [nDCG@10]\ngains: {'g&1': {1: 1, 2: 5}}\nreport: {enabled: false}\noutput: out\n"
    )
    code, outcome, err = _run(config)
    assert code == 0, err
    client = MlflowClient(str(outcome["tracking_uri"]))
    parent = client.get_run(str(outcome["mlflow_run_id"]))
    (child,) = client.search_runs([parent.info.experiment_id], filter_string=f"tags.mlflow.parentRunId = '{parent.info.run_id}'")
    summary = pd.read_parquet(Path(str(outcome["results_dir"])) / "summary.parquet")
    values = {str(r.segment): float(r.value) for r in summary.itertuples()}
    metric = next(k for k in child.data.metrics if "." not in k)  # the scheme's nDCG@10, over all users
    assert child.data.metrics[f"{metric}.{key_part('a b')}"] == values["a b"]
    assert child.data.metrics[f"{metric}.a_b"] == values["a_b"] != values["a b"]
    originals = {v for k, v in parent.data.params.items() if k.startswith("name.")}
    assert originals == {"<b>ds</b>", "g&1", "a b"}
    assert child.data.tags["dataset"] == "<b>ds</b>"


@pytest.mark.slow
@pytest.mark.parametrize("store", ["sqlite", pytest.param("server", marks=pytest.mark.server)])
def test_two_tracks_of_one_folder_at_once_make_one_parent(tmp_path: Path, store: str) -> None:
    """harness track on the same folder from two processes at the same moment logs it once, to a local store and to
    a real tracking server alike (the lock is on the folder, not the store)."""
    import subprocess
    import sys

    with contextlib.ExitStack() as stack:
        uri = stack.enter_context(mlflow_server(tmp_path)) if store == "server" else None
        config = _config(tmp_path, f"tracking: {{uri: '{uri}'}}" if uri else "")
        code, outcome, err = _run(config, "--no-tracking")
        assert code == 0, err
        folder = str(outcome["results_dir"])
        for attempt in range(2):  # twice: a race lost once in a while would still show
            to = ["--uri", uri] if uri else []
            tracks = [
                subprocess.Popen(
                    [sys.executable, "-m", "harness", "track", folder, "--json", *to],
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )
                for _ in range(2)
            ]
            logged = []
            for track in tracks:
                out, err = track.communicate(timeout=300)
                assert track.returncode == 0, err
                logged.append(json.loads(out))
            assert logged[0]["mlflow_run_id"] == logged[1]["mlflow_run_id"]
            assert sorted(entry["already_logged"] for entry in logged) == ([False, True] if attempt == 0 else [True, True])
            uri = uri or f"sqlite:///{(tmp_path / 'out' / 'mlflow.db').resolve()}"
            assert [p.info.run_id for p in _parents(uri)] == [logged[0]["mlflow_run_id"]]


def test_the_release_view_keeps_earlier_guards_and_fits_a_tag() -> None:
    """Each gated run adds its guards' columns to the experiment's release view after those already there; a view
    edited into something else starts again; hundreds of guards are cut oldest first to fit an experiment tag, the
    verdict kept."""
    first = json.loads(release_view(["guard.AP.d.difference"], None))
    second = json.loads(release_view(["guard.RR.d.difference"], json.dumps(first)))
    metrics = [c for c in second["selectedColumns"] if c.startswith("metrics.")]
    assert metrics == ["metrics.`guard.AP.d.difference`", "metrics.`guard.RR.d.difference`"]
    assert second["columnOrder"][:2] == ["attributes.`Run Name`", "tags.`release.verdict`"]
    assert json.loads(release_view(["guard.RR.d.difference"], "not json"))["selectedColumns"] == [
        "tags.`release.verdict`",
        "metrics.`guard.RR.d.difference`",
        "attributes.`Dataset`",
    ]
    many = release_view([f"guard.m{i}.d.difference" for i in range(500)], None)
    view = json.loads(many)
    assert len(many) <= MAX_VIEW_CHARS and view["selectedColumns"][0] == "tags.`release.verdict`"
    assert view["selectedColumns"][-2] == "metrics.`guard.m499.d.difference`"  # the newest kept
