"""The gate's sentences are written from its numbers alone: each branch of a guard's reason, exactly, from a result
built by hand, and the wording module computes nothing (it imports no statistics)."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

from harness.decision import wording
from harness.decision.verdict import Decision, GuardResult

_RESULT = GuardResult(
    "AP on d: drop <= 0.01",
    "PASS",
    "",
    "AP",
    "d",
    "all",
    condition="max_drop",
    method=wording.T_TEST,
    production=0.5,
    candidate=0.498,
    drop=0.002,
    margin=0.01,
    drop_low=-0.001,
    drop_high=0.005,
    p_pass=0.003,
    p_fail=0.99,
    p_fail_adj=0.99,
    n_queries=1000,
    n_changed=800,
    mde=0.004,
    n_needed=600,
    planned_for="for an equal candidate",
)


def test_a_pass_names_the_bound_below_the_margin_and_its_p() -> None:
    assert wording.guard_reason(_RESULT, "AP on d", 0.05, 0.8) == (
        "AP on d: 0.5000 -> 0.4980, drop +0.0020 (800 of 1,000 users changed); one-sided 95% upper bound "
        "+0.0050 < 0.0100 (p = 0.003, t-test)"
    )


def test_a_min_gain_guard_is_worded_as_a_gain() -> None:
    gain = dataclasses.replace(_RESULT, condition="min_gain", drop=-0.02, drop_low=-0.03, drop_high=-0.015, margin=-0.01)
    assert wording.guard_reason(gain, "AP on d", 0.05, 0.8) == (
        "AP on d: 0.5000 -> 0.4980, gain +0.0200 (800 of 1,000 users changed); one-sided 95% lower bound "
        "+0.0150 > 0.0100 (p = 0.003, t-test)"
    )


def test_a_fail_names_the_holm_corrected_p() -> None:
    fail = dataclasses.replace(_RESULT, verdict="FAIL", drop=0.03, drop_low=0.02, drop_high=0.04, p_fail_adj=0.00001)
    assert wording.guard_reason(fail, "AP on d", 0.05, 0.8).endswith(
        "one-sided 95% lower bound +0.0200 > 0.0100 (Holm-corrected p < 0.0001, t-test)"
    )


def test_an_undecided_guard_states_both_one_sided_bounds_and_both_plans() -> None:
    open_ = dataclasses.replace(_RESULT, verdict="INCONCLUSIVE", drop_low=-0.004, drop_high=0.012, n_needed_observed=2000)
    assert wording.guard_reason(open_, "AP on d", 0.05, 0.8) == (
        "AP on d: 0.5000 -> 0.4980, drop +0.0020 (800 of 1,000 users changed); neither one-sided 95% bound "
        "(drop >= -0.0040, drop <= +0.0120) excludes the 0.0100 it names (t-test). 1,000 users detect a distance of "
        "0.0040 from it with 80% power; at the observed difference (0.0080 from it) about 2,000 users would decide "
        "it; about 600 users would decide it for an equal candidate"
    )
    alone = wording.guard_reason(open_, "AP on d", 0.05, 0.8, beyond_alone=True, family=3)
    assert "lower bound -0.0040 > 0.0100 for this guard alone, but not after Holm's correction across the 3 guards" in alone


def test_the_headline_reads_the_decisions_labels() -> None:
    decision = Decision("v1", "v2", (_RESULT, dataclasses.replace(_RESULT, guard="RR on d: drop <= 0.01")))
    assert (
        wording.headline(decision)
        == decision.headline()
        == ("release gate PASS: v2 against v1: all 2 guard(s) within their margins (false-PASS rate <= 0.05)")
    )


def test_the_wording_module_imports_no_statistics() -> None:
    tree = ast.parse(Path(wording.__file__).read_text())
    imported = {
        node.module if isinstance(node, ast.ImportFrom) else alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    assert {name for name in imported if name and name.startswith("harness")} == {"harness.config.schema"}
