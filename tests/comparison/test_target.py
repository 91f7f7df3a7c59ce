"""Direction is a fact of the registry (issue 47): a measure best at a value inside its range, BiasDisparity's BD at 0
(signed) and its BR and BS at 1 (ratios), reads a move towards that value as a gain, from either side, everywhere:
comparisons, "what changed", the release table, the main table's best, harness compare, and the guards.

Before: BD was "lower is better", so a candidate moving BD from -0.108 to +0.002, towards parity, got it as its worst
change, with production's -0.108 in bold as best."""

from __future__ import annotations

import io
import json
import math
import shutil
from pathlib import Path

import pandas as pd
import pytest

from harness.cli import main
from harness.comparison.rows import Comparison, Comparisons
from harness.measures.parse import parse_measure
from harness.measures.registry import REGISTRY
from harness.report.model import release_changes, what_changed
from tests.conftest import FAIRNESS

BD = "BiasDisparity(group=provider,category=0,user_group='high',kind=BD)@10"
BR = "BiasDisparity(group=provider,category=0,user_group='high',kind=BR)@10"


@pytest.mark.parametrize(("kind", "target"), [("BD", 0.0), ("BR", 1.0), ("BS", 1.0)])
def test_every_measure_with_a_target_names_it(kind: str, target: float) -> None:
    measure = parse_measure(f"BiasDisparity(group=provider, category=0, user_group='high', kind={kind})@10")
    assert REGISTRY.definition(measure).target_of(measure) == target
    assert REGISTRY.definition(parse_measure("nDCG@10")).target_of(parse_measure("nDCG@10")) is None


def _row(mean_a: float, mean_b: float, target: float) -> Comparison:
    return Comparison(
        dataset="d",
        segment="all",
        measure=BD,
        system_a="production",
        system_b="candidate",
        aggregate="system",
        mean_a=mean_a,
        mean_b=mean_b,
        delta=mean_b - mean_a,
        ci_low=0.1,
        ci_high=0.12,
        higher_is_better=False,
        target=target,
        n_queries=154,
        p_adj=0.004,
        significant=True,
    )


def test_a_move_towards_the_target_is_a_gain_from_either_side() -> None:
    towards = _row(-0.108, 0.002, 0.0)  # the case: delta +0.110 on a "lower is better" measure
    assert towards.better and towards.reversed().better is False
    assert not _row(0.05, -0.09, 0.0).better  # crossing the target to farther away: a loss
    assert _row(1.4, 0.9, 1.0).better  # a ratio closer to parity, from above


def test_what_changed_and_the_release_table_file_it_under_gains() -> None:
    rows = Comparisons((_row(-0.108, 0.002, 0.0),))
    (line,) = what_changed(rows, None, "production", str)
    assert line.startswith("candidate is significantly better than production on d in 1 measure(s)")
    table = release_changes(rows, "production", "candidate", str)
    assert table is not None and table.rows[0][5].classes == "sig-up"


def _fairness_experiment(root: Path, guard: str) -> Path:
    for name in ("test.csv", "run.csv", "train.csv", "items.csv"):
        shutil.copy(FAIRNESS / name, root / name)
    users = pd.read_csv(FAIRNESS / "users.csv", dtype={"user": str})
    segments = pd.DataFrame({"query": users["user"], "segment": users["activity"].map({0: "low", 1: "high"})})
    segments.to_csv(root / "seg.csv", index=False)
    run = pd.read_csv(FAIRNESS / "run.csv", dtype={"user": str, "item": str})
    providers = pd.read_csv(FAIRNESS / "items.csv", dtype={"item": str}).set_index("item")["provider"]
    dropped = (run["item"].map(providers) == 0) & (run["user"].str[-1].astype(int) % 2 == 0)
    run[~dropped].to_csv(root / "rerank.csv", index=False)  # provider 0 leaves half the users' lists
    columns = "columns: {query: user, doc: item, relevance: rating}, run_columns: {query: user, doc: item, score: score}"
    (root / "config.yaml").write_text(
        "experiment: target\n"
        f"datasets:\n  - {{name: golden, qrels: test.csv, {columns}, relevance_level: 4, segments: {{path: seg.csv}},\n"
        "     train: {path: train.csv, columns: {query: user, doc: item}},\n"
        "     items: {path: items.csv, id: item, groups: [provider]}}\n"
        "systems:\n  - {name: production, runs: {golden: run.csv}}\n  - {name: candidate, runs: {golden: rerank.csv}}\n"
        f'measures: [nDCG@10, "{BD}", "{BR}"]\n'
        "baseline: production\nstats: {permutations: 200, system_resamples: 200, seed: 5}\n"
        f"release:\n  production: production\n  candidate: candidate\n  guards: [{guard}]\n"
        "tracking: {enabled: false}\noutput: out\n"
    )
    return root / "config.yaml"


def test_the_pipeline_reads_the_target_everywhere(tmp_path: Path) -> None:
    config = _fairness_experiment(tmp_path, f'{{measure: "{BD}", max_drop: 0.01}}')
    out, err = io.StringIO(), io.StringIO()
    main(["run", str(config), "--json", "--quiet"], out, err)
    outcome = json.loads(out.getvalue())
    folder = Path(outcome["results_dir"])
    summary = pd.read_parquet(folder / "summary.parquet").set_index(["system", "segment", "measure"])["value"]
    comparisons = pd.read_parquet(folder / "comparisons.parquet")
    checked = 0
    for row in comparisons.itertuples():
        target = {str(parse_measure(BD)): 0.0, str(parse_measure(BR)): 1.0}.get(str(row.measure))
        if target is None or not math.isfinite(row.delta):
            continue
        assert row.target == target
        closer = abs(row.mean_b - target) < abs(row.mean_a - target)
        assert Comparison.from_record(row._asdict()).better == closer
        checked += 1
    assert checked >= 2
    # the guard's drop is how much farther from 0 the candidate's BD is, computed here from the two values
    (guard,) = json.loads((folder / "gate.json").read_text())["guards"]
    prod, cand = (float(summary[(s, "all", str(parse_measure(BD)))]) for s in ("production", "candidate"))
    assert guard["drop"] == pytest.approx(abs(cand) - abs(prod), abs=1e-12)
    # the main table's bold "best" is the value closest to the target, not the lower one
    import re

    html = (folder / "report.html").read_text()
    best = set(re.findall(r'<td class="best[^"]*" data-sort="([^"]+)"', html))
    closest, farther = sorted((prod, cand), key=abs)
    assert closest != farther and repr(closest) in best and repr(farther) not in best


def test_harness_plan_plans_what_the_gate_plans_for_a_system_measure(tmp_path: Path) -> None:
    """A measure with one value per run (REO) has no per-user values for a t-test plan: harness plan reads the
    bootstrap sd of the gate's guard on it and plans as the gate does, to the user (issue 47: it refused before,
    where the gate printed its users needed). Without a guard on the measure, it says why it cannot."""
    reo = "REO(group=provider)@10"
    config = _fairness_experiment(tmp_path, f"{{measure: '{reo}', max_drop: 0.05}}")
    config.write_text(config.read_text().replace(f'"{BR}"]', f'"{BR}", "{reo}", "RSP(group=provider)@10"]'))
    out, err = io.StringIO(), io.StringIO()
    main(["run", str(config), "--json", "--quiet"], out, err)
    folder = Path(json.loads(out.getvalue())["results_dir"])
    (guard,) = json.loads((folder / "gate.json").read_text())["guards"]
    assert guard["n_needed"] and guard["sd"] > 0, guard
    out, err = io.StringIO(), io.StringIO()
    assert main(["plan", str(folder), "--measure", reo, "--margin", "0.05", "--format", "json"], out, err) == 0, err.getvalue()
    plan = json.loads(out.getvalue())
    assert plan["n_queries"] == guard["n_needed"] and plan["sd"] == guard["sd"] and plan["n_now"] == guard["n_queries"]
    assert plan["mde_now"] == pytest.approx(guard["mde"], rel=1e-12)
    out, err = io.StringIO(), io.StringIO()
    assert main(["plan", str(folder), "--measure", "RSP(group=provider)@10", "--margin", "0.05"], out, err) == 2
    assert "no guard on it" in err.getvalue() and "descriptive: true is enough" in err.getvalue()


def test_system_measure_intervals_stay_within_the_values_the_measure_can_take(tmp_path: Path) -> None:
    """A centred bootstrap interval reaches past what a measure can be (issue 47: REO's went below 0): every system
    measure's interval in summary.parquet lies within its registry bounds, and touches them only where clipped."""
    from harness.comparison.compare import _centred_interval  # noqa: F401 - the interval being clipped

    measures = [
        "REO(group=provider)@10",
        "RSP(group=provider)@10",
        "ItemMAD(group=provider)@10",
        "Gini@10",
        "Coverage@10",
        "ExposureGini@10",
    ]
    config = _fairness_experiment(tmp_path, f'{{measure: "{BD}", max_drop: 0.01}}')
    config.write_text(config.read_text().replace(f'"{BR}"]', f'"{BR}", ' + ", ".join(f'"{m}"' for m in measures) + "]"))
    out, err = io.StringIO(), io.StringIO()
    main(["run", str(config), "--json", "--quiet"], out, err)
    summary = pd.read_parquet(Path(json.loads(out.getvalue())["results_dir"]) / "summary.parquet")
    checked = 0
    for row in summary.itertuples():
        measure = parse_measure(str(row.measure))
        definition = REGISTRY.definition(measure)
        if not definition.is_system(measure) or not math.isfinite(row.value):
            continue
        low, high = definition.bounds_of(measure)
        assert low <= row.ci_low <= row.value <= row.ci_high <= high, row
        checked += 1
    assert checked >= 2 * len(measures)
