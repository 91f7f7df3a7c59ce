"""How the ``harness`` process ends: every line delivered, the exit code that says what happened.

These tests run real processes, as a user does. (The process once skipped the interpreter's teardown to
save numba's 0.27 s of finalising; with ahead-of-time kernels it ends as any program does.)
"""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cli import main


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    """3,000 queries of 20 documents: the per-query output (about 400 KB) is far larger than a pipe's buffer."""
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("".join(f"q{q} 0 d{q % 7} {q % 3}\n" for q in range(3000)))
    run.write_text("".join(f"q{q} Q0 d{d} {d + 1} {20 - d} t\n" for q in range(3000) for d in range(20)))
    return qrels, run


def _harness(*argv: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", *argv], capture_output=True, text=True, **kwargs)  # type: ignore[call-overload, no-any-return]


@pytest.mark.parametrize("compiled_from_rows", [1, 10**9], ids=["compiled engine", "arrow engine"])
def test_every_line_reaches_a_pipe(files: tuple[Path, Path], compiled_from_rows: int) -> None:
    qrels, run = files
    argv = ["eval", "-q", "-m", "ndcg_cut.10", "-m", "map", str(qrels), str(run)]
    out, err = io.StringIO(), io.StringIO()
    assert main(argv, out, err) == 0  # in this process, for the expected text
    probe = (
        "import sys, harness.data.align as align\n"
        f"align.COMPILED_FROM_ROWS = {compiled_from_rows}\n"
        "from harness.__main__ import main_entry\n"
        f"sys.argv = ['harness', *{argv!r}]\n"
        "main_entry()\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout == out.getvalue()
    assert len(done.stdout) > 1 << 17 and done.stderr == err.getvalue()


def test_a_user_error_keeps_its_exit_code_and_its_line(tmp_path: Path) -> None:
    done = _harness("eval", str(tmp_path / "missing"), str(tmp_path / "missing.run"))
    assert done.returncode == 2 and done.stdout == ""
    fix = "Fix: check the path; relative paths start at the current folder"
    assert done.stderr == f"harness: error: {tmp_path / 'missing'}: qrels file not found. {fix}\n"


def test_a_reader_that_leaves_early_gets_no_traceback(files: tuple[Path, Path]) -> None:
    qrels, run = files
    out = io.StringIO()
    assert main(["eval", "-q", "-m", "map", str(qrels), str(run)], out, io.StringIO()) == 0
    command = f"{sys.executable} -m harness eval -q -m map {qrels} {run} | head -c 10"
    done = subprocess.run(["bash", "-o", "pipefail", "-c", command], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout == out.getvalue()[:10]
    assert done.stderr == "", done.stderr  # no traceback, no "Exception ignored"


def test_a_bug_exits_70_with_its_traceback() -> None:
    probe = (
        "import harness.__main__ as process\n"
        "def broken(**_): raise RuntimeError('a bug in harness')\n"
        "process.main = broken\n"
        "process.main_entry()\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 70 and done.stdout == ""
    assert "Traceback" in done.stderr and "RuntimeError: a bug in harness" in done.stderr
    assert done.stderr.endswith("harness: internal error: please report it with the traceback above\n")
