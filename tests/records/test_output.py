"""The output folder: checked before any work, and a failure while writing keeps the verdict and leaves nothing half-written."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.decision.test_gate import GATES, _config


def _harness(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", *argv], capture_output=True, text=True, check=False)


def test_output_that_is_a_file_is_refused_before_any_work(tmp_path: Path) -> None:
    candidate, guard = GATES["fail"]
    config = _config(tmp_path, guard, candidate=candidate)
    (tmp_path / "taken").write_text("not a folder")
    done = _harness("run", str(config), "--output", str(tmp_path / "taken"), "--no-tracking", "--quiet")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert f"the output {tmp_path / 'taken'} is a file, not a folder. Fix: point output: (or --output) at a folder" in done.stderr
    assert (tmp_path / "taken").read_text() == "not a folder"


@contextlib.contextmanager
def _small_disk(folder: Path, size: str) -> Iterator[Path]:
    """A real filesystem of ``size`` (tmpfs), when this process may mount one."""
    folder.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)], capture_output=True, check=False
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({mounted.stderr.decode().strip() or 'not permitted'})")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=False)


def test_a_full_disk_while_writing_keeps_the_failed_verdict_and_leaves_nothing(tmp_path: Path) -> None:
    """The results do not fit: one line says so, the FAIL is still printed and still exits 3, no folder is left (the
    look's line in the ledger, written before the verdict was shown, stays)."""
    candidate, guard = GATES["fail"]
    config = _config(tmp_path, guard, candidate=candidate)
    with _small_disk(tmp_path / "disk", "96k") as disk:
        done = _harness("run", str(config), "--output", str(disk), "--no-tracking", "--quiet", "--json")
        left = sorted(p.name for p in (disk / "gated").iterdir())
    assert done.returncode == 3, done.stderr
    outcome = json.loads(done.stdout)
    assert outcome["results_dir"] is None and outcome["gate"] == "FAIL" and "FAIL" in outcome["gate_line"]
    assert "cannot write the results: No space left on device" in outcome["results_error"]
    assert done.stderr.startswith("harness: error: ") and done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    # no half-written folder, no stale staging folder, no latest link: only the gate's look, recorded before it was shown
    assert left == [".looks.jsonl"]


def test_a_staging_folder_left_by_a_killed_writer_is_removed_by_the_next_run(tmp_path: Path) -> None:
    """kill -9 while results are written leaves `.incomplete-<folder>.<pid>`; the next run removes it (its writer is
    gone) and keeps one whose writer still runs."""
    candidate, guard = GATES["pass"]
    config = _config(tmp_path, guard, candidate=candidate)
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    root = tmp_path / "out" / "gated"
    stale = root / f".incomplete-20261124-000000-abcdef.{gone.pid}"
    alive = root / f".incomplete-20261124-000000-fedcba.{os.getpid()}"
    for folder in (stale, alive):
        folder.mkdir(parents=True)
        (folder / "per_query.parquet").write_bytes(b"half")
    done = _harness("run", str(config), "--no-tracking", "--quiet")
    assert done.returncode == 0, done.stderr
    assert not stale.exists() and alive.exists()
    assert len([p for p in root.iterdir() if not p.name.startswith(".") and p.name != "latest"]) == 1


def test_a_read_only_output_is_refused_before_any_work(tmp_path: Path) -> None:
    """A read-only filesystem (a tmpfs mounted ro: refused even to root) as the output: exit 2 at once, with the fix."""
    candidate, guard = GATES["fail"]
    config = _config(tmp_path, guard, candidate=candidate)
    with _small_disk(tmp_path / "ro", "1m,ro") as disk:
        done = _harness("run", str(config), "--output", str(disk), "--no-tracking", "--quiet")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert f"{disk}: cannot write in the output folder: Read-only file system. Fix: make it writable" in done.stderr


def test_with_results_unwritten_tracking_is_skipped_not_ok(tmp_path: Path) -> None:
    """--json says what happened to the later stages when the results could not be written: skipped, never "ok"."""
    candidate, guard = GATES["fail"]
    config = _config(tmp_path, guard, candidate=candidate, tracking="{enabled: true}")
    with _small_disk(tmp_path / "disk", "96k") as disk:
        done = _harness("run", str(config), "--output", str(disk), "--quiet", "--json")
    assert done.returncode == 3, done.stderr
    outcome = json.loads(done.stdout)
    assert outcome["results_dir"] is None and outcome["tracking"] == "skipped" and outcome["mlflow_run_id"] is None


@pytest.mark.slow
def test_a_store_whose_creation_filled_the_disk_recovers_once_there_is_room(tmp_path: Path) -> None:
    """The issue's repro: a 4 MB disk with about 600 KB free; harness run writes its results but the MLflow store does
    not fit (exit 4, the results kept). Once space is freed, harness track logs them (before: exit 4 for good, "table
    ... already exists", on a half-made store)."""
    candidate, guard = GATES["pass"]
    config = _config(tmp_path, guard, candidate=candidate, tracking="{enabled: true}")
    with _small_disk(tmp_path / "disk", "4m") as disk:
        filler = disk / "filler"
        filler.write_bytes(b"\0" * (4 * 2**20 - 600 * 2**10))
        done = _harness("run", str(config), "--output", str(disk), "--quiet", "--json")
        assert done.returncode == 4, done.stderr
        outcome = json.loads(done.stdout)
        assert outcome["results_dir"] is not None and outcome["tracking"] == "failed"
        assert not (disk / "mlflow.db").exists()  # whole or absent: nothing half-made is left to wedge the next run
        filler.unlink()
        again = _harness("track", str(outcome["results_dir"]), "--json")
        assert again.returncode == 0, again.stderr
        assert json.loads(again.stdout)["already_logged"] is False


def test_ctrl_c_while_tracking_keeps_the_failed_verdicts_exit_code(tmp_path: Path) -> None:
    """SIGINT after the verdict (here: while logging to a server that accepts and never answers) stops tracking and
    the report, says how to finish them, and still exits 3 with the FAIL printed: an interruption never hides it."""
    import signal
    import socket
    import time

    with socket.socket() as silent:  # accepts connections (the backlog) and never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        candidate, guard = GATES["fail"]
        config = _config(tmp_path, guard, candidate=candidate, tracking=f"{{uri: 'http://127.0.0.1:{silent.getsockname()[1]}'}}")
        process = subprocess.Popen(
            [sys.executable, "-m", "harness", "run", str(config), "--json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert process.stderr is not None
        seen = ""
        deadline = time.monotonic() + 120
        while "logging to MLflow" not in seen and time.monotonic() < deadline:
            seen += process.stderr.readline()
        time.sleep(1.0)  # inside the request to the silent server
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=120)
    assert process.returncode == 3, seen + err
    outcome = json.loads(out)
    assert outcome["gate"] == "FAIL" and outcome["exit_code"] == 3 and outcome["results_dir"]
    assert outcome["tracking"] == "skipped" and "harness track" in outcome["tracking_error"]
    assert (Path(outcome["results_dir"]) / "gate.json").is_file()
