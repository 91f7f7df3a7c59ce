"""The release gate as a CI job sees it (issues 9 and 24): one-sided guards decided PASS, FAIL or INCONCLUSIVE with the
results, saved in gate.json with the error each verdict controls, never hidden by a later failure, and checked before
anything is computed."""

from __future__ import annotations

import io
import itertools
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from harness.cli import main
from tests.mlflow_server import free_port

pytestmark = pytest.mark.filterwarnings(
    "ignore::DeprecationWarning", "ignore::PendingDeprecationWarning", "ignore::FutureWarning"
)

# 50 queries. b is a: production, with its top two documents swapped on every 7th query (nearly equal);
# c ranks the least relevant documents first (clearly worse). The gate's mechanics are under test here: with
# min_affected 0.2 auto's t decides from 24 queries on (each segment has 25), as t decided before that rule; the
# rule itself is tested in tests/decision/test_min_affected.py.
GUARD_LINE = 18  # the line of the first guard in the config below


def _config(
    tmp_path: Path,
    guards: str,
    tracking: str = "{enabled: false}",
    report: str = "off",
    candidate: str = "b",
    extra_system: bool = False,
    release_extra: str = "",
) -> Path:
    rng = np.random.default_rng(5)
    qrels, runs = [], {"a": [], "b": [], "c": []}
    for q in range(50):
        labels = rng.integers(0, 3, size=10)
        labels[0] = 1
        qrels += [f"q{q:02d} 0 d{i} {rel}\n" for i, rel in enumerate(labels)]
        order = [int(d) for d in rng.permutation(10)]
        ranked = {
            "a": order,
            "b": [order[1], order[0], *order[2:]] if q % 7 == 0 else order,
            "c": sorted(range(10), key=lambda d: (labels[d], d)),
        }
        for name, docs in ranked.items():
            runs[name] += [f"q{q:02d} Q0 d{d} {rank + 1} {10 - rank} {name}\n" for rank, d in enumerate(docs)]
    (tmp_path / "qrels.txt").write_text("".join(qrels))
    for name, lines in runs.items():
        (tmp_path / f"{name}.run").write_text("".join(lines))
    segments = "".join(f"q{q:02d},{'head' if q < 25 else 'tail'}\n" for q in range(50))
    (tmp_path / "seg.csv").write_text("query,segment\n" + segments)
    third = "\n  - {name: x, runs: {d: c.run}}" if extra_system else ""
    path = tmp_path / "exp.yaml"
    path.write_text(
        "experiment: gated\n"
        "datasets: [{name: d, qrels: qrels.txt, segments: {path: seg.csv}}]\n"
        "systems:\n  - {name: a, runs: {d: a.run}}\n  - {name: b, runs: {d: b.run}}\n  - {name: c, runs: {d: c.run}}"
        f"{third}\n"
        "measures: [nDCG@5, AP, P@5]\n"
        "baseline: a\n"
        "stats: {permutations: 200, resamples: 200}\n"
        f"tracking: {tracking}\n"
        "report:\n"
        f"  enabled: {report != 'off'}\n"
        "release:\n"
        "  production: a\n"
        f"  candidate: {candidate}{release_extra}\n"
        "  min_affected: 0.2\n"
        "  guards:\n" + "".join(f"    - {g}\n" for g in guards.split(" ; ")) + "output: out\n"
    )
    moved = release_extra or extra_system  # a line more above the guards
    assert moved or path.read_text().splitlines()[GUARD_LINE - 1].startswith("    - "), "GUARD_LINE moved"
    return path


GATES = {  # (candidate, guard) -> the verdict it gets
    "pass": ("b", "{measure: nDCG@5, max_drop: 0.05}"),
    "inconclusive": ("b", "{measure: nDCG@5, max_drop: 0.0}"),
    "fail": ("c", "{measure: nDCG@5, max_drop: 0.0}"),
}
TRACKING = {"ok": "{enabled: true}", "down": None, "off": "{enabled: false}"}


def _run(config: Path, *extra: str) -> tuple[int, dict[str, object], str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["run", str(config), "--json", "--quiet", *extra], out, err)
    return code, json.loads(out.getvalue()) if out.getvalue() else {}, err.getvalue()


CASES = list(itertools.product(("pass", "fail", "inconclusive"), ("ok", "down", "off"), ("on", "off", "failing")))


@pytest.mark.parametrize(("gate", "tracking", "report"), CASES, ids=["-".join(c) for c in CASES])
def test_exit_code_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gate: str, tracking: str, report: str) -> None:
    closed = f"{{uri: 'http://127.0.0.1:{free_port()}'}}"  # nothing listens there: a tracking outage
    candidate, guard = GATES[gate]
    config = _config(tmp_path, guard, TRACKING[tracking] or closed, report, candidate)
    if report == "failing":  # fault injection: the renderer breaks (the real renderer is tested in test_report.py)
        import harness.report.render

        def broken(*_: object) -> str:
            raise RuntimeError("template exploded")

        monkeypatch.setattr(harness.report.render, "render_html", broken)
    code, outcome, err = _run(config)
    expected = {"fail": 3, "inconclusive": 6}.get(gate) or (4 if tracking == "down" else 5 if report == "failing" else 0)
    assert code == expected, err
    assert outcome["exit_code"] == expected and outcome["gate"] == gate.upper() and outcome["gate_verdict"] == gate.upper()
    assert outcome["tracking"] == {"ok": "ok", "down": "failed", "off": "disabled"}[tracking]
    assert outcome["report_status"] == {"on": "ok", "off": "disabled", "failing": "failed"}[report]
    folder = Path(str(outcome["results_dir"]))
    saved = json.loads((folder / "gate.json").read_text())  # saved with the results, whatever happened after
    assert saved["verdict"] == gate.upper() and saved["errors"] == outcome["gate_errors"]
    statement = {"pass": "false-PASS rate", "fail": "false-FAIL rate", "inconclusive": "not evidence of no drop"}[gate]
    assert statement in saved["errors"]
    (guard_result,) = saved["guards"]
    a, b = _per_query(folder, "nDCG@5", "a"), _per_query(folder, "nDCG@5", candidate)
    assert guard_result["drop"] == pytest.approx(a.mean() - b.mean(), abs=1e-12)
    assert (folder / "report.html").exists() == (report == "on")
    if tracking == "down":
        assert "tracking failed: " in err and "cannot connect to the server" in err and "Traceback" not in err
        assert len([line for line in err.splitlines() if "tracking" in line]) == 1
    if report == "on" and tracking == "ok":
        assert "MLflow: not tracked" not in (folder / "report.html").read_text()


def _per_query(folder: Path, measure: str, system: str) -> Any:
    import pandas as pd

    table = pd.read_parquet(folder / "per_query.parquet")
    rows = table[(table["measure"] == measure) & (table["system"] == system)].sort_values("query_id")
    return rows["value"].to_numpy()


def test_verdict_and_the_errors_it_controls_are_on_the_parent_run(tmp_path: Path) -> None:
    from mlflow import MlflowClient

    config = _config(tmp_path, "{measure: nDCG@5, max_drop: 0.0}", "{enabled: true}", "on", candidate="c")
    graded = "measures: [nDCG@5, AP, P@5]\ngains: {linear: linear, graded: {1: 1, 2: 3}}"
    config.write_text(config.read_text().replace("measures: [nDCG@5, AP, P@5]", graded))
    code, outcome, err = _run(config)
    assert code == 3, err
    client = MlflowClient(tracking_uri=str(outcome["tracking_uri"]))
    run = client.get_run(str(outcome["mlflow_run_id"]))
    assert run.data.tags["release.verdict"] == "FAIL" and run.data.tags["release.outcome"] == "FAIL"
    assert run.data.tags["release.candidate"] == "c" and "false-FAIL rate" in run.data.tags["release.errors"]
    assert run.data.metrics["release_gate_passed"] == 0.0 and run.data.metrics["release_gate_inconclusive"] == 0.0
    guard = json.loads((Path(str(outcome["results_dir"])) / "gate.json").read_text())["guards"][0]
    assert run.data.metrics["guard.ndcg_at_5.d.difference"] == pytest.approx(guard["difference"], abs=0)
    assert run.data.metrics["guard.ndcg_at_5.d.p_fail_adj"] == pytest.approx(guard["p_fail_adj"], abs=0)
    assert run.data.metrics["guard.ndcg_at_5.d.passed"] == 0.0
    children = client.search_runs([run.info.experiment_id], filter_string=f"tags.mlflow.parentRunId = '{run.info.run_id}'")
    assert {"ndcg_at_5", "ndcg_graded_at_5"} <= set(children[0].data.metrics)  # a named scheme gives a readable key
    artifacts = {a.path for a in client.list_artifacts(run.info.run_id)}
    assert {"gate.json", "report.html", "summary.md"} <= artifacts  # the report as rendered once, after tracking


L = GUARD_LINE
GUARD_MISTAKES = [
    # (guard, message pattern): each found by validate and by run before anything is computed
    (
        "{measure: nDCG@20, max_drop: 0.01}",
        rf"exp\.yaml: line {L}: guard measure 'nDCG@20' is not among the measures "
        r"this experiment computes\. Fix: did you mean 'nDCG@5'",
    ),
    ("{measure: nDGC@5, max_drop: 0.01}", rf"line {L}: guard measure: unknown measure 'nDGC'\. Fix: did you mean"),
    (
        "{measure: nDCG@5, max_drop: 0.01, segment: tial}",
        rf"exp\.yaml: line {L}: guard segment 'tial' is not a segment of "
        r"any dataset\. Fix: did you mean 'tail'\?",
    ),
    ("{measure: nDCG@5, max_drop: 0.01, dataset: e}", rf"line {L}: guard dataset 'e' is not a dataset\. Fix: use one of d"),
    # earlier spellings: refused with the new one, never silently reinterpreted
    (
        "{measure: nDCG@5, max_drop: 0.01, significant: true}",
        rf"line {L}: 'significant' was removed: every guard is now a "
        r"one-sided test.*Fix: delete significant:",
    ),
    ("{measure: nDCG@5, non_inferiority: 0.01}", rf"line {L}: 'non_inferiority' was renamed.*Fix: write max_drop: 0\.01"),
    ("{measure: nDCG@5}", rf"line {L}: the guard on nDCG@5 states no margin\. Fix: add max_drop: 0\.01"),
    (
        "{measure: nDCG@5, max_drop: 0.01, min_gain: 0.0}",
        rf"line {L}: the guard on nDCG@5 states max_drop and min_gain: a "
        r"guard is one test\. Fix: write one guard per condition",
    ),
    ("{measure: nDCG@5, max_drop: -0.01}", rf"line {L}: max_drop must be 0 or more, got -0\.01"),
    ("{measure: nDCG@5, max_drop_pct: 100}", rf"line {L}: max_drop_pct must be below 100"),
]


@pytest.mark.parametrize(("guard", "pattern"), GUARD_MISTAKES)
def test_guard_mistakes_are_found_before_anything_runs(tmp_path: Path, guard: str, pattern: str) -> None:
    import re

    config = _config(tmp_path, guard)
    for command in ("validate", "run"):
        out, err = io.StringIO(), io.StringIO()
        assert main([command, str(config), "--quiet"], out, err) == 2
        assert re.search(pattern, err.getvalue()), err.getvalue()
        assert err.getvalue().count("\n") == 1
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ("on_inconclusive: maybe", "line 16: release.on_inconclusive must be one of inconclusive, fail, pass, got 'maybe'"),
        ("power: 0.3", "line 16: release.power must lie in [0.5, 1), got 0.3. Fix: write power: 0.8"),
    ],
)
def test_release_settings_are_checked_where_they_are_written(tmp_path: Path, setting: str, message: str) -> None:
    config = _config(tmp_path, GATES["pass"][1], release_extra=f"\n  {setting}")
    err = io.StringIO()
    assert main(["validate", str(config), "--quiet"], io.StringIO(), err) == 2
    assert message in err.getvalue()


def test_the_gate_under_report_is_refused_with_where_it_goes(tmp_path: Path) -> None:
    """The gate's own key is ``release:``; written under ``report:`` it is refused at its line, with the move to make."""
    config = _config(tmp_path, GATES["pass"][1])
    text = config.read_text()
    nested = text.replace("release:\n", "  release:\n").replace("\n  production", "\n    production")
    nested = nested.replace("\n  candidate", "\n    candidate").replace("\n  guards:", "\n    guards:")
    nested = nested.replace("\n  min_affected", "\n    min_affected")
    nested = nested.replace("\n    - {", "\n      - {")
    assert nested.count("\n  release:\n    production: a\n") == 1
    config.write_text(nested)
    err = io.StringIO()
    assert main(["validate", str(config), "--quiet"], io.StringIO(), err) == 2
    line = nested.splitlines().index("  release:") + 1
    assert f"line {line}: the release gate is configured at the top level, not under report:" in err.getvalue()
    assert "move release: (with the same keys) out of report: to the top level" in err.getvalue()


@pytest.mark.parametrize("label", ["'nDCG@5 [graded]'", "'nDCG@5 [linear]'", "nDCG@5"])
def test_guard_accepts_the_reports_label(tmp_path: Path, label: str) -> None:
    config = _config(tmp_path, f"{{measure: {label}, max_drop: 0.5}}")
    graded = "measures: [nDCG@5, AP]\ngains: {linear: linear, graded: {1: 1, 2: 3}}"
    config.write_text(config.read_text().replace("measures: [nDCG@5, AP, P@5]", graded))
    code, outcome, err = _run(config)
    assert code == 0, err
    saved = json.loads((Path(str(outcome["results_dir"])) / "gate.json").read_text())
    expected = "nDCG(gains={1:1,2:3})@5" if "graded" in label else "nDCG@5"
    assert saved["guards"][0]["measure"] == expected


CONDITIONS = [  # (guard condition, candidate, the per-user excess drop, from a's and b's values, by hand)
    ("max_drop: 0.02", "b", lambda a, b: (a - b) - 0.02),
    ("max_drop: 0.0", "c", lambda a, b: a - b),
    ("max_drop_pct: 5", "b", lambda a, b: (a - b) - 0.05 * a),
    ("min_gain: 0.01", "b", lambda a, b: (a - b) + 0.01),
    ("min_gain: 0.0", "c", lambda a, b: a - b),
]


@pytest.mark.parametrize(("condition", "candidate", "excess"), CONDITIONS, ids=[c[0] for c in CONDITIONS])
def test_a_guard_is_a_one_sided_paired_t_test_against_its_margin(
    tmp_path: Path, condition: str, candidate: str, excess: Any
) -> None:
    from scipy import stats

    code, outcome, err = _run(_config(tmp_path, f"{{measure: AP, {condition}}}", candidate=candidate))
    folder = Path(str(outcome["results_dir"]))
    (guard,) = json.loads((folder / "gate.json").read_text())["guards"]
    e = excess(_per_query(folder, "AP", "a"), _per_query(folder, "AP", candidate))
    p_pass = stats.ttest_1samp(e, 0.0, alternative="less").pvalue  # H0: excess >= 0 (the drop at least the margin)
    p_fail = stats.ttest_1samp(e, 0.0, alternative="greater").pvalue
    assert guard["p_pass"] == pytest.approx(p_pass, rel=1e-9) and guard["p_fail"] == pytest.approx(p_fail, rel=1e-9)
    assert guard["p_fail_adj"] == pytest.approx(p_fail, rel=1e-9)  # one guard: Holm changes nothing
    high = stats.t.ppf(0.95, e.size - 1) * e.std(ddof=1) / np.sqrt(e.size)  # one-sided 95% bounds of the mean excess
    assert guard["drop_high"] - guard["margin"] == pytest.approx(e.mean() + high, rel=1e-9)
    assert guard["drop_low"] - guard["margin"] == pytest.approx(e.mean() - high, rel=1e-9)
    expected = "PASS" if p_pass < 0.05 else "FAIL" if p_fail < 0.05 else "INCONCLUSIVE"
    assert guard["verdict"] == expected and code == {"PASS": 0, "FAIL": 3, "INCONCLUSIVE": 6}[expected], err


def test_fail_is_holm_corrected_across_guards_and_other_systems_change_nothing(tmp_path: Path) -> None:
    guards = "{measure: nDCG@5, max_drop: 0.1} ; {measure: AP, max_drop: 0.05} ; {measure: P@5, max_drop: 0.0, segment: head}"
    decided = []
    for extra in (False, True):
        folder = tmp_path / str(extra)
        folder.mkdir()
        code, outcome, err = _run(_config(folder, guards, candidate="c", extra_system=extra))
        assert code in (3, 6), err
        decided.append(json.loads((Path(str(outcome["results_dir"])) / "gate.json").read_text())["guards"])
    alone, crowded = decided
    for one, two in zip(alone, crowded, strict=True):  # another system (and its comparisons) changes nothing
        assert {k: one[k] for k in ("p_pass", "p_fail", "p_fail_adj", "verdict")} == {
            k: two[k] for k in ("p_pass", "p_fail", "p_fail_adj", "verdict")
        }
    p = np.array([g["p_fail"] for g in alone])  # Holm over the three guards, by hand
    order = np.argsort(p)
    holm = np.minimum(1, np.maximum.accumulate(p[order] * np.arange(3, 0, -1)))
    assert [alone[i]["p_fail_adj"] for i in order] == pytest.approx(holm.tolist(), rel=1e-12)


@pytest.mark.parametrize(
    ("policy", "code", "words"), [("fail", 3, "Treated as FAIL"), ("pass", 0, "false-PASS rate is then NOT controlled")]
)
def test_inconclusive_says_how_many_users_would_decide_and_can_be_mapped(
    tmp_path: Path, policy: str, code: int, words: str
) -> None:
    from statsmodels.stats.power import TTestPower

    (tmp_path / "default").mkdir()
    code_default, outcome, err = _run(_config(tmp_path / "default", "{measure: nDCG@5, max_drop: 0.005}"))
    (result,) = json.loads((Path(str(outcome["results_dir"])) / "gate.json").read_text())["guards"]
    assert code_default == 6 and result["verdict"] == "INCONCLUSIVE", err
    # the users an equal candidate needs to pass a 0.005 margin with 80% power, and what these 50 detect (statsmodels)
    d = 0.005 / result["sd"]
    assert result["n_needed"] == int(np.ceil(TTestPower().solve_power(d, alpha=0.05, power=0.8, alternative="larger")))
    assert result["mde"] == pytest.approx(
        result["sd"] * TTestPower().solve_power(nobs=50, alpha=0.05, power=0.8, alternative="larger"), rel=1e-5
    )
    assert f"about {result['n_needed']:,} users would decide it for an equal candidate to pass" in result["reason"]
    mapped = tmp_path / policy
    mapped.mkdir()
    got, outcome, err = _run(
        _config(mapped, "{measure: nDCG@5, max_drop: 0.005}", release_extra=f"\n  on_inconclusive: {policy}")
    )
    assert got == code, err
    saved = json.loads((Path(str(outcome["results_dir"])) / "gate.json").read_text())
    assert saved["verdict"] == "INCONCLUSIVE" and saved["outcome"] == policy.upper() and words in saved["errors"]


def test_a_descriptive_guard_is_shown_but_never_decides(tmp_path: Path) -> None:
    code, outcome, err = _run(
        _config(tmp_path, "{measure: nDCG@5, max_drop: 0.05} ; {measure: AP, max_drop: 0.0, descriptive: true}")
    )
    assert code == 0, err
    _, descriptive = json.loads((Path(str(outcome["results_dir"])) / "gate.json").read_text())["guards"]
    assert descriptive["verdict"] == "DESCRIPTIVE" and "does not decide the gate" in descriptive["reason"]


def test_report_shows_guarded_measures_run_after_run(tmp_path: Path) -> None:
    config = _config(tmp_path, GATES["pass"][1], report="on")
    folders = []
    for _ in range(3):
        code, outcome, err = _run(config)
        assert code == 0, err
        folders.append(Path(str(outcome["results_dir"])))
    html = (folders[-1] / "report.html").read_text()
    trend = html[html.index('<section id="trend">') : html.index("</section>", html.index('<section id="trend">'))]
    assert "nDCG@5 on d, run after run" in trend
    assert trend.count("<circle") == 2 * 3  # production and candidate, in each of the three runs
    assert trend.count("<polyline") == 2


def test_every_guard_shows_its_bounds_margin_and_users_in_the_report_and_summary(tmp_path: Path) -> None:
    config = _config(tmp_path, "{measure: 'nDCG@5 [graded]', max_drop: 0.02}", report="on", candidate="c")
    config.write_text(
        config.read_text().replace("measures: [nDCG@5, AP, P@5]", "measures: [nDCG@5, AP]\ngains: {graded: {1: 1, 2: 3}}")
    )
    code, outcome, err = _run(config)
    folder = Path(str(outcome["results_dir"]))
    (guard,) = json.loads((folder / "gate.json").read_text())["guards"]
    assert code == {"PASS": 0, "FAIL": 3, "INCONCLUSIVE": 6}[guard["verdict"]], err
    assert "one-sided 95%" in guard["reason"]
    summary = (folder / "summary.md").read_text()
    assert "nDCG@5 \\[graded\\] on d" in summary and "gains=" not in summary  # one name for a measure
    assert f"**Release gate: {guard['verdict']}**" in summary and "rate" in summary
    html = (folder / "report.html").read_text()
    verdict = html[html.index('<section id="verdict"') : html.index("</section>", html.index('<section id="verdict"'))]
    # the one bound the verdict rests on, as one value: the drop's lower bound for a FAIL, else its upper bound
    bound = f"drop ≥ {guard['drop_low']:+.4f}" if guard["verdict"] == "FAIL" else f"drop ≤ {guard['drop_high']:+.4f}"
    assert bound in verdict and f"{guard['margin']:+.4f}" in verdict


def test_a_segments_file_listing_a_user_twice_is_refused(tmp_path: Path) -> None:
    config = _config(tmp_path, GATES["pass"][1])
    (tmp_path / "seg.csv").write_text("query,segment\nq00,head\nq01,head\nq00,tail\n")
    err = io.StringIO()
    assert main(["run", str(config), "--quiet"], io.StringIO(), err) == 2
    assert "seg.csv: line 4: query 'q00' is listed twice (rows 1 and 3)" in err.getvalue()
    assert "Fix: keep one row per query" in err.getvalue() and err.getvalue().count("\n") == 1
    assert not (tmp_path / "out").exists()


def _system_guard_config(tmp_path: Path, measure: str, guard: str) -> Path:
    from harness.demo import generate

    generate(tmp_path)
    demo = tmp_path / "runs" / "demo"
    config = tmp_path / "exp.yaml"
    config.write_text(
        "experiment: system-guard\n"
        f"datasets: [{{qrels: {demo / 'ratings.csv'}, columns: {{query: user, doc: item, relevance: rating}},\n"
        "  run_columns: {query: user, doc: item, score: score}, relevance_level: 4,\n"
        f"  train: {{path: {demo / 'train.csv'}, columns: {{query: user, doc: item}}}}}}]\n"
        f"systems:\n  - {{name: production, runs: {{default: {demo / 'production.csv'}}}}}\n"
        f"  - {{name: candidate, runs: {{default: {demo / 'candidate-v2.csv'}}}}}\n"
        f"measures: ['{measure}']\nbaseline: production\n"
        "stats: {alpha: 0.025, permutations: 200, resamples: 200, system_resamples: 200}\ntracking: {enabled: false}\n"
        "report:\n  enabled: false\nrelease:\n  production: production\n  candidate: candidate\n"
        f"  guards: [{{measure: '{measure}', {guard}}}]\noutput: out\n"
    )
    return config


@pytest.mark.slow
def test_a_catalogue_measure_cannot_decide_a_guard(tmp_path: Path) -> None:
    """Coverage counts distinct items: no resampling of users gives its error, so a deciding guard on it is refused
    before anything runs (exit 2, the line, the fix), and a descriptive one is shown."""
    config = _system_guard_config(tmp_path, "Coverage@10", "max_drop: 0.15")
    code, _, err = _run(config)
    assert code == 2 and "counts distinct items over the users" in err and "descriptive: true" in err, err
    assert f"{config.name}: line 17: Coverage@10" in err and not (tmp_path / "out").exists()
    code, outcome, err = _run(_system_guard_config(tmp_path, "Coverage@10", "max_drop: 0.15, descriptive: true"))
    (guard,) = json.loads((Path(str(outcome["results_dir"])) / "gate.json").read_text())["guards"]
    assert guard["verdict"] == "DESCRIPTIVE" and code == 6, err  # no deciding guard: the gate decides nothing


def test_a_system_measure_guard_reads_the_comparisons_bootstrap(tmp_path: Path) -> None:
    """PopRSP has one value per run, from sums over users: its guard resamples users with the comparisons' keyed draws, so
    at alpha 0.025 its one-sided bounds are the comparison row's 95% bootstrap interval of candidate - production (lower
    is better: a drop is a rise)."""
    import pandas as pd

    code, outcome, err = _run(_system_guard_config(tmp_path, "PopRSP@10", "max_drop: 0.15"))
    folder = Path(str(outcome["results_dir"]))
    (guard,) = json.loads((folder / "gate.json").read_text())["guards"]
    row = pd.read_parquet(folder / "comparisons.parquet").query("segment == 'all'").iloc[0]
    assert (row["system_a"], row["system_b"], row["measure"]) == ("production", "candidate", "PopRSP@10")
    assert guard["method"] == "bootstrap over users (approximate)" and guard["n_queries"] == row["n_queries"]
    # lower is better: the drop is candidate - production, the comparison's own difference and interval
    assert guard["drop"] == pytest.approx(row["delta"], abs=1e-12)
    assert guard["drop_low"] == pytest.approx(row["ci_low_bootstrap"], rel=1e-9)
    assert guard["drop_high"] == pytest.approx(row["ci_high_bootstrap"], rel=1e-9)
    expected = "PASS" if guard["drop_high"] < 0.15 else "FAIL" if guard["drop_low"] > 0.15 else "INCONCLUSIVE"
    assert guard["verdict"] == expected and code == {"PASS": 0, "FAIL": 3, "INCONCLUSIVE": 6}[expected], err


def test_a_candidate_identical_to_production_is_never_passed(tmp_path: Path) -> None:
    """harness run with the candidate's run file production's own: no user changed, so no spread bounds the mean; the
    t-test would PASS it with p = 0 (sd 0) at any n. The gate says INCONCLUSIVE, with the 0 changed users."""
    config = _config(tmp_path, "{measure: nDCG@5, max_drop: 0.05} ; {measure: AP, max_drop_pct: 5}", candidate="c")
    config.write_text(config.read_text().replace("{name: c, runs: {d: c.run}}", "{name: c, runs: {d: a.run}}"))
    for bound in ("auto", "t", "betting"):
        code, outcome, err = _run(config, "--set", f"release.bound={bound}")
        gate = json.loads((Path(str(outcome["results_dir"])) / "gate.json").read_text())
        assert code == 6 and gate["verdict"] == "INCONCLUSIVE" and gate["bound"] == bound, (bound, err)
        assert [g["n_changed"] for g in gate["guards"]] == [0, 0] and all(
            "(0 of 50 users changed)" in g["reason"] for g in gate["guards"]
        ), gate["guards"]


@pytest.mark.parametrize(
    ("conditions", "says"),
    [
        (("min_gain",), "not evidence of no gain"),
        (("max_drop",), "not evidence of no drop,"),
        (("max_drop", "min_gain"), "of no drop (nor, for a min_gain guard, of no gain)"),
    ],
)
def test_an_inconclusive_verdict_names_what_it_is_not_evidence_of(conditions: tuple[str, ...], says: str) -> None:
    """A min_gain guard left undecided is not evidence of no gain (before: "not evidence of no drop" for every gate)."""
    from harness.decision.verdict import Decision, GuardResult

    guards = tuple(
        GuardResult(
            guard=f"AP: {c}",
            verdict="INCONCLUSIVE",
            reason="",
            measure="AP",
            dataset="d",
            segment="all",
            condition=c,
            threshold=0.01,
        )
        for c in conditions
    )
    decision = Decision("production", "candidate", guards)
    assert decision.verdict == "INCONCLUSIVE" and says in decision.errors
    assert decision.controls == "none" and decision.to_dict()["controls"] == "none"


def test_bound_betting_on_a_measure_with_no_range_decides_nothing_and_says_why() -> None:
    """The betting bound needs the values' range; a count (NumRet) has none. Under bound: betting the guard was
    decided by t without a word; it is INCONCLUSIVE, saying that betting needs a range and auto lets t decide. The
    same values under auto are decided (t is trusted: every user changed by about the same)."""
    import harness
    from harness.stats.bounds import NO_RANGE_FOR_BETTING

    qrels = harness.Qrels.from_dict({f"q{i}": {"a": 1} for i in range(80)})
    prod = harness.Run.from_dict({f"q{i}": {f"d{j}": float(j) for j in range(10)} for i in range(80)}, name="p")
    cand = harness.Run.from_dict({f"q{i}": {f"d{j}": float(j) for j in range(10 + i % 2)} for i in range(80)}, name="c")
    tables = [harness.evaluate(qrels, prod, ["NumRet"]), harness.evaluate(qrels, cand, ["NumRet"])]
    guard = [{"measure": "NumRet", "max_drop": 0.5}]
    betting = harness.decide(tables, "p", "c", guard, bound="betting")
    (result,) = betting.guards
    assert betting.verdict == "INCONCLUSIVE" and NO_RANGE_FOR_BETTING in result.reason, result.reason
    # NumRet is a sum over users: 40 of the 80 retrieve one more document (a drop of -40)
    assert result.p_pass == 1.0 and result.drop == pytest.approx(-40.0, abs=1e-12)
    assert harness.decide(tables, "p", "c", guard, bound="auto").verdict == "PASS"
