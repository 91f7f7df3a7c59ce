"""kill -9 at each stage of `harness run` (real processes, a real SQLite store): nothing half-written is ever left
where it counts, and the next commands finish the job exactly once."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from harness.records.store import REQUIRED
from tests.decision.test_gate import GATES, _config

pytestmark = pytest.mark.filterwarnings(
    "ignore::DeprecationWarning", "ignore::PendingDeprecationWarning", "ignore::FutureWarning"
)
STAGES = ("evaluating", "comparing systems", "writing results", "logging to MLflow", "rendering the report")


def _parents(uri: str) -> list[object]:
    from mlflow import MlflowClient

    client = MlflowClient(uri)
    experiment = client.get_experiment_by_name("gated")
    if experiment is None:
        return []
    return [r for r in client.search_runs([experiment.experiment_id]) if r.data.tags.get("harness.kind") == "experiment"]


@pytest.mark.slow
@pytest.mark.parametrize("stage", STAGES)
def test_kill_9_at_a_stage_leaves_nothing_half_done(tmp_path: Path, stage: str) -> None:
    candidate, guard = GATES["fail"]
    config = _config(tmp_path, guard, tracking="{enabled: true}", report="on", candidate=candidate)
    with subprocess.Popen(
        [sys.executable, "-m", "harness", "run", str(config)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    ) as process:
        assert process.stderr is not None
        for line in process.stderr:  # the progress lines name each stage as it starts
            if stage in line:
                os.kill(process.pid, signal.SIGKILL)
                break
        process.wait(timeout=120)
    assert process.returncode == -signal.SIGKILL, f"{stage!r} never showed: the run ended first"
    root = tmp_path / "out" / "gated"
    folders = [p for p in root.iterdir() if not p.name.startswith(".") and p.name != "latest"] if root.is_dir() else []
    for folder in folders:  # a results folder exists only whole
        assert all((folder / name).exists() for name in REQUIRED), sorted(p.name for p in folder.iterdir())
    if (root / "latest").exists():
        assert (root / "latest").resolve() in [f.resolve() for f in folders]
    uri = f"sqlite:///{(tmp_path / 'out' / 'mlflow.db').resolve()}"
    for folder in folders:  # whatever the kill cut short, harness track completes it: one parent, finished
        done = subprocess.run(
            [sys.executable, "-m", "harness", "track", str(folder), "--json"], capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, done.stderr
        run_id = json.loads(done.stdout)["mlflow_run_id"]
        mine = [p for p in _parents(uri) if p.data.tags.get("harness.results_id") == f"gated/{folder.name}"]
        assert [p.info.run_id for p in mine] == [run_id] and mine[0].info.status == "FINISHED"
    again = subprocess.run(
        [sys.executable, "-m", "harness", "run", str(config), "--quiet"], capture_output=True, text=True, check=False
    )
    assert again.returncode == 3, again.stderr  # the next run works, its gate as before
    assert not list(root.glob(".incomplete-*"))  # what the killed writer staged is gone


@pytest.mark.server
def test_a_server_killed_mid_logging_then_back_gets_one_complete_copy(tmp_path: Path) -> None:
    """The tracking server dies while harness logs (kill -9): harness run keeps the results and the verdict (exit 3),
    and once the server is back on the same store, harness track replaces the partial parent with one complete copy."""
    from mlflow import MlflowClient

    from tests.mlflow_server import free_port, mlflow_server

    port = free_port()
    candidate, guard = GATES["fail"]
    with mlflow_server(tmp_path, port) as url:
        config = _config(tmp_path, guard, tracking=f"{{uri: '{url}'}}", candidate=candidate)
        with subprocess.Popen(
            [sys.executable, "-m", "harness", "run", str(config), "--json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        ) as process:
            assert process.stderr is not None and process.stdout is not None
            for line in process.stderr:
                if "logging to MLflow" in line:
                    found = subprocess.run(["pgrep", "-f", "--", f"--port {port}"], capture_output=True, text=True, check=False)
                    for pid in found.stdout.split():  # the server and its workers (one process group), mid-logging
                        with contextlib.suppress(ProcessLookupError):
                            os.killpg(int(pid), signal.SIGKILL)
                    break
            out = process.stdout.read()
            process.stderr.read()
            process.wait(timeout=300)
        assert process.returncode == 3, out  # the FAIL still decides, whatever tracking did
        outcome = json.loads(out)
        assert outcome["tracking"] == "failed" and outcome["gate"] == "FAIL"
        folder = Path(outcome["results_dir"])
        assert all((folder / name).exists() for name in REQUIRED)
    with mlflow_server(tmp_path, port) as url:  # back, on the same store
        done = subprocess.run(
            [sys.executable, "-m", "harness", "track", str(folder), "--uri", url, "--json"],
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        run_id = json.loads(done.stdout)["mlflow_run_id"]
        client = MlflowClient(url)
        experiment = client.get_experiment_by_name("gated")
        parents = [r for r in client.search_runs([experiment.experiment_id]) if r.data.tags.get("harness.kind") == "experiment"]
        assert [p.info.run_id for p in parents] == [run_id]
        assert parents[0].info.status == "FINISHED" and parents[0].data.tags["harness.complete"] == "true"
