"""The whole gate planned as a gate (issue 41): the users an equal candidate needs to PASS every guard with the
stated power, worked by hand with scipy's noncentral t, and ``harness plan FOLDER --gate``."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

import numpy as np
from scipy import stats

import harness
from harness.cli import main
from harness.measures.spec import Measure
from tests.records.test_previous import _many_queries


def _users_for(distance: float, sd: float, alpha: float, target: float) -> int:
    """The fewest users whose one-sided paired t-test at alpha resolves ``distance`` with ``target`` power."""
    n = 2
    while True:
        critical = stats.t.ppf(1 - alpha, n - 1)
        if 1 - stats.nct.cdf(critical, n - 1, distance * math.sqrt(n) / sd) >= target:
            return n
        n += 1


def test_the_gate_plan_is_each_guards_users_at_its_share_of_the_power() -> None:
    rng = np.random.default_rng(7)
    n, measures = 500, (Measure("AP"), Measure("RR"))
    ids = np.array([f"u{i:04d}" for i in range(n)], dtype=object)
    production = rng.uniform(0.2, 0.6, size=(n, 2))
    candidate = production + rng.normal(0.0, [0.08, 0.12], size=(n, 2))
    tables = [
        harness.PerQuery(name, ids, measures, values, np.ones(n, dtype=bool))
        for name, values in (("prod", production), ("cand", candidate))
    ]
    guards = [{"measure": "AP", "max_drop": 0.02}, {"measure": "RR", "max_drop": 0.03}]
    # min_affected 0.05: t decides from 104 users on, below both guards' plans (the rule's plans: test_min_affected.py)
    decision = harness.decide(tables, "prod", "cand", guards, power=0.8, min_affected=0.05)
    sds = (candidate - production).std(axis=0, ddof=1)
    share = 0.8**0.5  # both guards pass with 0.8 when each passes with sqrt(0.8), independently
    expected = [_users_for(0.02, sds[0], 0.05, share), _users_for(0.03, sds[1], 0.05, share)]
    assert [g.n_needed_gate for g in decision.guards] == expected
    assert decision.n_needed_gate == max(expected)
    assert decision.to_dict()["n_needed_gate"] == max(expected)
    assert decision.gate_planned_for.startswith("for an equal candidate to PASS all 2 guards with 80% power")


def test_harness_plan_gate_prints_the_gates_plan(tmp_path: Path) -> None:
    config = _many_queries(tmp_path, "{measure: nDCG@5, max_drop: 0.05}, {measure: AP, max_drop: 0.05}")
    out = io.StringIO()
    main(["run", str(config), "--json", "--quiet"], out, io.StringIO())
    folder = json.loads(out.getvalue())["results_dir"]
    gate = json.loads((Path(folder) / "gate.json").read_text())
    out = io.StringIO()
    assert main(["plan", folder, "--gate"], out, io.StringIO()) == 0
    lines = out.getvalue().splitlines()
    assert lines[0] == f"the whole gate: {gate['n_needed_gate']:,} users {gate['gate_planned_for']}"
    assert [line.split(":")[0].strip() for line in lines[1:]] == [g["guard"].split(":")[0] for g in gate["guards"]]
    err = io.StringIO()
    assert main(["plan", "--gate"], io.StringIO(), err) == 2 and "--gate plans a results folder's gate" in err.getvalue()
