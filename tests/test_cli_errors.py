"""Silent surprises made loud (issue 14): one line naming the file, the line and the fix; exit 2."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from harness.cli import main


def _eval(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["eval", *argv], out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def qrels(tmp_path: Path) -> Path:
    path = tmp_path / "qrels"
    path.write_text("q1 0 d1 1\nq2 0 d2 1\n")
    return path


def test_a_run_line_with_seven_fields_is_refused(tmp_path: Path, qrels: Path) -> None:
    run = tmp_path / "run"
    run.write_text("q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t extra\n")  # read before as 'rank as score' by a lenient split
    code, out, err = _eval(str(qrels), str(run))
    assert code == 2 and out == ""
    assert err == (
        f"harness: error: {run}: line 2: expected 6 columns (qid Q0 docid rank score tag), got 7. "
        "Fix: each run line is 'query_id Q0 doc_id rank score tag', e.g. '301 Q0 FT911-1 1 12.5 bm25'\n"
    )


def test_a_run_sharing_no_query_with_the_qrels_is_refused(tmp_path: Path, qrels: Path) -> None:
    run = tmp_path / "run"
    run.write_text("Q1 Q0 d1 1 2.0 t\n")  # zeros everywhere, exit 0, before
    code, out, err = _eval(str(qrels), str(run))
    assert code == 2 and out == ""
    assert f"{run}: no query of the run is judged in {qrels} (run query ids look like 'Q1', judged ones like 'q1')" in err


def test_unknown_flags_give_one_clean_line(qrels: Path) -> None:
    code, _, err = _eval("--frobnicate", str(qrels), str(qrels))
    assert code == 2
    assert err == "harness: error: unrecognized arguments: --frobnicate. Fix: see 'harness --help'\n"  # no doubled prefix


def test_version_and_help_import_no_heavy_module() -> None:
    """Start-up stays small: --version and --help load neither numpy, pyarrow, pandas nor scipy (issue 12)."""
    import subprocess
    import sys

    probe = (
        "import sys, contextlib, io\n"
        "from harness.cli import main\n"
        "for argv in (['--version'], ['--help']):\n"
        "    with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):\n"
        "        main(argv)\n"
        "print(sorted(m for m in ('numpy', 'pyarrow', 'pandas', 'scipy', 'mlflow') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]", done.stdout + done.stderr
