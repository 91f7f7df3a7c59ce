"""A notebook executed for real (nbclient, an ipykernel): harness's objects display as HTML, not dataclass dumps."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

CELLS = [
    """import harness, numpy as np
rng = np.random.default_rng(0)
qrels = {f"u{i}": {"a": 1, "b": 0, "c": 1} for i in range(60)}
def run(shift):
    return {u: {d: float(rng.random()) + (shift if d == "a" else 0.0) for d in ("a", "b", "c")} for u in qrels}
production, candidate = harness.evaluate(qrels, run(0.0), ["RR", "P@2"]), harness.evaluate(qrels, run(0.3), ["RR", "P@2"])""",
    "candidate",
    """decision = harness.decide({"production": production, "candidate": candidate}, production="production",
                          candidate="candidate", guards=[{"measure": "RR", "max_drop": 0.05}])
decision""",
    "decision.guards[0]",
    "repr(decision)",
]


@pytest.mark.slow
def test_the_notebook_shows_the_verdict_box_and_tables(tmp_path: Path) -> None:
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code) for code in CELLS])
    NotebookClient(notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = [cell.outputs for cell in notebook.cells]
    assert all(o.get("output_type") != "error" for out in outputs for o in out), outputs
    html = [next((o["data"]["text/html"] for o in out if "text/html" in o.get("data", {})), "") for out in outputs]
    per_query, verdict, guard = html[1], html[2], html[3]
    assert "60 queries x 2 measures" in per_query and "<th>aggregate</th>" in per_query and "u0" in per_query
    # the candidate ranks the relevant "a" higher for every user: RR rises, the guard passes, and the box says so
    found = re.search(r"Release gate: (PASS|FAIL|INCONCLUSIVE)", verdict)
    assert found is not None and found[1] == "PASS" and "PASS controls the false-PASS rate" in verdict, verdict
    assert "<table>" in verdict and "RR on default" in verdict and "<th>one-sided bounds</th>" in guard
    text = outputs[4][0]["data"]["text/plain"]
    assert text.startswith("'Decision(") and "GuardResult(" not in text and len(text) < 200  # one line, not a dump
