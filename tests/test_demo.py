"""The demo as a release reviewer reads it (issue 9): the verdict, then what changed, led by the regression."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

from harness.cli import main
from harness.demo import ROOT, generate


def test_demo_report_leads_with_candidate_v3_regressing_for_new_users(tmp_path: Path) -> None:
    generate(tmp_path)  # the bundled data, deterministically, into a scratch copy of the layout
    (tmp_path / "configs").mkdir()
    shutil.copy(ROOT / "configs" / "demo.yaml", tmp_path / "configs" / "demo.yaml")
    out, err = io.StringIO(), io.StringIO()
    code = main(["run", str(tmp_path / "configs" / "demo.yaml"), "--json", "--quiet", "--no-tracking"], out, err)
    outcome = json.loads(out.getvalue())
    assert code == 0 and outcome["gate"] == "pass", err.getvalue()
    summary = (Path(outcome["results_dir"]) / "summary.md").read_text()
    changes = summary[summary.index("**What changed**") :].splitlines()[2:]
    assert changes[0].startswith("- candidate-v3 is significantly worse than production on ratings / new in ")
    assert "- candidate-v2 on trec: 3 judged queries are missing from the run (scored 0)" in changes
    assert summary.index("**Release gate: PASS**") < summary.index("**What changed**")
