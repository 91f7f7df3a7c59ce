"""A notebook executed for real (nbclient, an ipykernel): harness's objects display as HTML, not dataclass dumps."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

from tests.tiers import require

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


def _executed(cells: list[str], folder: Path) -> list[list[dict[str, Any]]]:
    """Each cell's outputs once a real kernel has run them in ``folder``; no cell may fail."""
    require("server", "a notebook kernel")
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code) for code in cells])
    NotebookClient(notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(folder)}}).execute()
    outputs = [cell.outputs for cell in notebook.cells]
    assert all(o.get("output_type") != "error" for out in outputs for o in out), outputs
    return outputs


@pytest.mark.server
def test_the_notebook_shows_the_verdict_box_and_tables(tmp_path: Path) -> None:
    outputs = _executed(CELLS, tmp_path)
    html = [next((o["data"]["text/html"] for o in out if "text/html" in o.get("data", {})), "") for out in outputs]
    per_query, verdict, guard = html[1], html[2], html[3]
    assert "60 queries x 2 measures" in per_query and "<th>aggregate</th>" in per_query and "u0" in per_query
    # the candidate ranks the relevant "a" higher for every user: RR rises, the guard passes, and the box says so
    found = re.search(r"Release gate: (PASS|FAIL|INCONCLUSIVE)", verdict)
    assert found is not None and found[1] == "PASS" and "PASS controls the false-PASS rate" in verdict, verdict
    assert "<table>" in verdict and "RR on default" in verdict and "<th>one-sided bounds</th>" in guard
    text = outputs[4][0]["data"]["text/plain"]
    assert text.startswith("'Decision(") and "GuardResult(" not in text and len(text) < 200  # one line, not a dump


EXPERIMENT = [
    """import harness, numpy as np, pathlib
rng = np.random.default_rng(1)
pathlib.Path("qrels.txt").write_text("".join(f"u{i} 0 d{d} {int(d < 2)}\\n" for i in range(40) for d in range(5)))
for name, shift in (("prod", 0.0), ("cand", 0.4)):
    pathlib.Path(f"{name}.run").write_text("".join(
        f"u{i} Q0 d{d} 0 {rng.random() + (shift if d == 0 else 0):.6f} {name}\\n" for i in range(40) for d in range(5)))
pathlib.Path("exp.yaml").write_text(
    "experiment: nb\\ndatasets: [{name: d, qrels: qrels.txt}]\\n"
    "systems: [{name: prod, runs: {d: prod.run}}, {name: cand, runs: {d: cand.run}}]\\n"
    "measures: [RR, P@2]\\nbaseline: prod\\nstats: {permutations: 500, resamples: 500}\\noutput: out\\n"
    "release: {production: prod, candidate: cand, guards: [{measure: RR, max_drop: 0.05}]}\\n")
outcome = harness.run_experiment("exp.yaml", tracking=False)""",
    "outcome",
    "repr(outcome)",
    """qrels = harness.read_qrels("qrels.txt")
runs = {name: harness.evaluate(qrels, harness.read_run(f"{name}.run"), ["RR"]) for name in ("prod", "cand")}
table = harness.compare(runs, baseline="prod", seed=1)
table""",
    "harness.plan(outcome, measure='RR', margin=0.05)",
    "harness.aggregate(harness.evaluate(qrels, harness.read_run('cand.run'), ['RR', 'P@2']))",
]


@pytest.mark.server
def test_an_experiment_reads_at_a_glance(tmp_path: Path) -> None:
    outputs = _executed(EXPERIMENT, tmp_path)
    streams = "".join(o.get("text", "") for out in outputs for o in out if o.get("output_type") == "stream")
    assert "IProgress" not in streams and "tqdm" not in streams, streams  # no widget warning, no download bars
    html = [next((o["data"].get("text/html", "") for o in out if "data" in o), "") for out in outputs]
    text = [next((o["data"].get("text/plain", "") for o in out if "data" in o), "") for out in outputs]
    folder = next((tmp_path / "out" / "nb").glob("2*"))
    gate = __import__("json").loads((folder / "gate.json").read_text())
    # the outcome: the verdict box, then links to the folder and the report, not a dump of every DataFrame
    assert f"Release gate: {gate['verdict']}" in html[1] and folder.resolve().as_uri() in html[1] and "report.html" in html[1]
    assert text[2] == repr(f"Outcome(results_dir='{folder}', gate={gate['outcome']})")  # one line, no tables
    # compare(): the compact columns, everything else one attribute away
    assert "<th>p_adj</th>" in html[3] and "<th>p_t</th>" not in html[3] and ".full</code> shows every one" in html[3]
    assert "users" in html[4] and "sd" in html[4]  # harness.plan from the outcome's folder
    assert text[5].startswith("{'RR': ") and "Measure(" not in text[5]
