"""Segments are swept (issue 47): a guard over all users PASSes while its largest segment loses far more than the
margin; the gate names that segment as a warning (the verdict, summary.md, gate.json, the report), and
``segment: each`` makes the guard one per segment, so that loss FAILs the gate.

The data: 400 queries, one relevant document each; production ranks it second everywhere (RR 0.5). The candidate
ranks it third on 60% of the 160 "big" queries (RR 1/3: a drop of 0.1 there, ten times the margin) and first on 40%
of the 240 "small" ones (a gain of 0.2): over all users a gain of 0.08. The gate's min_affected 0.05 lets auto's t
decide from 104 queries on, so that the sweep is tested as t decides it (the rule: test_min_affected.py)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest

from harness.cli import main


def _experiment(tmp_path: Path, guard: str) -> Path:
    qrels, production, candidate, segments = [], [], [], ["query,segment\n"]
    for q in range(400):
        big = q < 160
        qrels.append(f"q{q:03d} 0 rel 1\n")
        production += [f"q{q:03d} Q0 x1 1 3 p\n", f"q{q:03d} Q0 rel 2 2 p\n", f"q{q:03d} Q0 x2 3 1 p\n"]
        rank = (3 if q % 10 < 6 else 2) if big else (1 if q % 10 < 4 else 2)
        order = {1: ["rel", "x1", "x2"], 2: ["x1", "rel", "x2"], 3: ["x1", "x2", "rel"]}[rank]
        candidate += [f"q{q:03d} Q0 {doc} {r + 1} {3 - r} c\n" for r, doc in enumerate(order)]
        segments.append(f"q{q:03d},{'big' if big else 'small'}\n")
    for name, lines in (("qrels.txt", qrels), ("prod.run", production), ("cand.run", candidate), ("seg.csv", segments)):
        (tmp_path / name).write_text("".join(lines))
    path = tmp_path / "exp.yaml"
    path.write_text(
        "experiment: swept\n"
        "datasets: [{name: d, qrels: qrels.txt, segments: {path: seg.csv}}]\n"
        "systems: [{name: production, runs: {d: prod.run}}, {name: candidate, runs: {d: cand.run}}]\n"
        "measures: [RR, P@1]\nstats: {permutations: 200, resamples: 200}\n"
        f"release: {{production: production, candidate: candidate, min_affected: 0.05, guards: [{guard}]}}\n"
        "tracking: {enabled: false}\noutput: out\n"
    )
    return path


def _run(config: Path) -> tuple[int, dict[str, object], str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["run", str(config), "--json", "--quiet"], out, err)
    return code, json.loads(out.getvalue()), err.getvalue()


def test_a_pass_names_the_segment_that_loses_beyond_the_margin(tmp_path: Path) -> None:
    code, outcome, err = _run(_experiment(tmp_path, "{measure: RR, max_drop: 0.01}"))
    assert code == 0 and outcome["gate"] == "PASS", err
    folder = Path(str(outcome["results_dir"]))
    gate = json.loads((folder / "gate.json").read_text())
    (warning,) = gate["segment_warnings"]
    big_drop = 0.5 - np.mean([1 / 3 if q % 10 < 6 else 0.5 for q in range(160)])  # 0.1, by hand
    assert warning["segment"] == "big" and warning["drop"] == pytest.approx(big_drop, abs=1e-12)
    assert warning["margin"] == 0.01 and warning["p_fail_adj"] < 0.05 and "(segment sweep)" in warning["guard"]
    assert "WARNING: 1 unguarded segment(s) significantly beyond a guard's margin" in gate["line"]
    assert "RR on d / big" in outcome["gate_line"]
    summary = (folder / "summary.md").read_text()
    assert "**Warning: 1 unguarded segment(s) significantly beyond a guard's margin**" in summary
    assert summary.index("**Warning") < summary.index("**Significant losses")
    assert 'id="segment-warnings"' in (folder / "report.html").read_text()


def test_a_guard_on_one_segment_sweeps_the_others(tmp_path: Path) -> None:
    """The sweep is not only under a guard over all users: a guard on the small queries (which gain) PASSes, and the
    big ones, guarded by nothing, are named for their loss; all users (a gain) are swept too, and not named."""
    code, outcome, err = _run(_experiment(tmp_path, "{measure: RR, segment: small, max_drop: 0.01}"))
    assert code == 0 and outcome["gate"] == "PASS", err
    gate = json.loads((Path(str(outcome["results_dir"])) / "gate.json").read_text())
    (warning,) = gate["segment_warnings"]
    big_drop = 0.5 - np.mean([1 / 3 if q % 10 < 6 else 0.5 for q in range(160)])
    assert warning["segment"] == "big" and warning["drop"] == pytest.approx(big_drop, abs=1e-12)
    assert warning["margin"] == 0.01 and "(segment sweep)" in warning["guard"]


def test_segment_each_makes_a_guard_per_segment(tmp_path: Path) -> None:
    code, outcome, err = _run(_experiment(tmp_path, "{measure: RR, max_drop: 0.01, segment: each}"))
    assert code == 3 and outcome["gate"] == "FAIL", err
    gate = json.loads((Path(str(outcome["results_dir"])) / "gate.json").read_text())
    verdicts = {g["segment"]: g["verdict"] for g in gate["guards"]}
    assert verdicts == {"big": "FAIL", "small": "PASS"}
    assert len({g["guard"] for g in gate["guards"]}) == 2  # each copy labelled with its segment
    assert gate["segment_warnings"] == []  # every segment is guarded; all users, swept, gain


def test_segment_each_without_segments_is_refused(tmp_path: Path) -> None:
    config = _experiment(tmp_path, "{measure: RR, max_drop: 0.01, segment: each}")
    config.write_text(config.read_text().replace(", segments: {path: seg.csv}", ""))
    out, err = io.StringIO(), io.StringIO()
    assert main(["validate", str(config)], out, err) == 2
    assert "segment: each needs segments" in err.getvalue()
