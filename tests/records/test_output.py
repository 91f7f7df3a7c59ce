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
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)], capture_output=True,
                             check=False)  # fmt: skip
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({mounted.stderr.decode().strip() or 'not permitted'})")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=False)


def test_a_full_disk_while_writing_keeps_the_failed_verdict_and_leaves_nothing(tmp_path: Path) -> None:
    """The results do not fit: one line says so, the FAIL is still printed and still exits 3, no folder is left."""
    candidate, guard = GATES["fail"]
    config = _config(tmp_path, guard, candidate=candidate)
    with _small_disk(tmp_path / "disk", "96k") as disk:
        done = _harness("run", str(config), "--output", str(disk), "--no-tracking", "--quiet", "--json")
        left = sorted(p.name for p in (disk / "gated").iterdir())
    assert done.returncode == 3, done.stderr
    outcome = json.loads(done.stdout)
    assert outcome["results_dir"] is None and outcome["gate"] == "fail" and "FAIL" in outcome["gate_line"]
    assert "cannot write the results: No space left on device" in outcome["results_error"]
    assert done.stderr.startswith("harness: error: ") and done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert left == []  # no half-written folder, no stale staging folder, no latest link


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
