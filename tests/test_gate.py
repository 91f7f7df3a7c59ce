"""The release gate as a CI job sees it (issue 9): decided with the results, saved in gate.json,
never hidden by a later failure, and its guards checked before anything is computed."""

from __future__ import annotations

import io
import itertools
import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from tests.mlflow_server import free_port

pytestmark = pytest.mark.filterwarnings(
    "ignore::DeprecationWarning", "ignore::PendingDeprecationWarning", "ignore::FutureWarning"
)

# b against a on nDCG@10, by hand: a = (1 + 0 + 1) / 3 = 0.6667; b = (1/log2(3) + 1 + 0) / 3 = 0.5436; a drop of 0.1230
QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\nq3 0 d4 1\n"
RUN_A = "q1 Q0 d1 1 2.0 a\nq1 Q0 d2 2 1.0 a\nq2 Q0 d9 1 1.0 a\nq3 Q0 d4 1 1.0 a\n"
RUN_B = "q1 Q0 d2 1 2.0 b\nq1 Q0 d1 2 1.0 b\nq2 Q0 d3 1 1.0 b\n"


def _config(tmp_path: Path, max_drop: float, tracking: str, report: str, guard_extra: str = "") -> Path:
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "a.run").write_text(RUN_A)
    (tmp_path / "b.run").write_text(RUN_B)
    (tmp_path / "seg.csv").write_text("query,segment\nq1,head\nq2,tail\nq3,tail\n")
    path = tmp_path / "exp.yaml"
    path.write_text(
        textwrap.dedent(
            f"""\
            experiment: gated
            datasets: [{{name: d, qrels: qrels.txt, segments: {{path: seg.csv}}}}]
            systems:
              - {{name: a, runs: {{d: a.run}}}}
              - {{name: b, runs: {{d: b.run}}}}
            measures: [nDCG@10, AP]
            baseline: a
            stats: {{permutations: 200, resamples: 200}}
            tracking: {tracking}
            report:
              enabled: {report != "off"}
              release:
                production: a
                candidate: b
                guards:
                  - {{measure: nDCG@10, max_drop: {max_drop}{guard_extra}}}
            output: out
            """
        )
    )
    return path


TRACKING = {"ok": "{enabled: true}", "down": None, "off": "{enabled: false}"}


def _run(config: Path, *extra: str) -> tuple[int, dict[str, object], str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["run", str(config), "--json", "--quiet", *extra], out, err)
    return code, json.loads(out.getvalue()) if out.getvalue() else {}, err.getvalue()


CASES = list(itertools.product(("pass", "fail"), ("ok", "down", "off"), ("on", "off", "failing")))


@pytest.mark.parametrize(("gate", "tracking", "report"), CASES, ids=["-".join(c) for c in CASES])
def test_exit_code_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gate: str, tracking: str, report: str) -> None:
    closed = f"{{uri: 'http://127.0.0.1:{free_port()}'}}"  # nothing listens there: a tracking outage
    config = _config(tmp_path, 0.5 if gate == "pass" else 0.0, TRACKING[tracking] or closed, report)
    if report == "failing":  # fault injection: the renderer breaks (the real renderer is tested in test_report.py)
        import harness.report.render

        def broken(*_: object) -> str:
            raise RuntimeError("template exploded")

        monkeypatch.setattr(harness.report.render, "render_html", broken)
    code, outcome, err = _run(config)
    expected = 3 if gate == "fail" else 4 if tracking == "down" else 5 if report == "failing" else 0
    assert code == expected, err
    assert outcome["exit_code"] == expected and outcome["gate"] == gate
    assert outcome["tracking"] == {"ok": "ok", "down": "failed", "off": "disabled"}[tracking]
    assert outcome["report_status"] == {"on": "ok", "off": "disabled", "failing": "failed"}[report]
    folder = Path(str(outcome["results_dir"]))
    saved = json.loads((folder / "gate.json").read_text())  # saved with the results, whatever happened after
    assert saved["verdict"] == gate.upper()
    (guard,) = saved["guards"]
    assert guard["drop"] == pytest.approx(2 / 3 - (1 / 1.584962500721156 + 1) / 3, abs=1e-12)
    assert (folder / "report.html").exists() == (report == "on")
    if tracking == "down":
        assert "tracking failed: " in err and "cannot connect to the server" in err and "Traceback" not in err
        assert len([line for line in err.splitlines() if "tracking" in line]) == 1
    if report == "on" and tracking == "ok":
        assert "MLflow: not tracked" not in (folder / "report.html").read_text()


def test_verdict_is_on_the_parent_run(tmp_path: Path) -> None:
    from mlflow import MlflowClient

    config = _config(tmp_path, 0.0, "{enabled: true}", "on")
    config.write_text(
        config.read_text().replace(
            "measures: [nDCG@10, AP]", "measures: [nDCG@10, AP]\ngains: {linear: linear, graded: {1: 1, 2: 3}}"
        )
    )
    code, outcome, err = _run(config)
    assert code == 3, err
    client = MlflowClient(tracking_uri=str(outcome["tracking_uri"]))
    run = client.get_run(str(outcome["mlflow_run_id"]))
    assert run.data.tags["release.verdict"] == "FAIL" and run.data.tags["release.candidate"] == "b"
    assert run.data.metrics["release_gate_passed"] == 0.0
    guard = json.loads((Path(str(outcome["results_dir"])) / "gate.json").read_text())["guards"][0]
    assert run.data.metrics["guard.ndcg_at_10.d.delta"] == pytest.approx(guard["delta"], abs=0)
    assert run.data.metrics["guard.ndcg_at_10.d.passed"] == 0.0
    children = client.search_runs([run.info.experiment_id], filter_string=f"tags.mlflow.parentRunId = '{run.info.run_id}'")
    assert {"ndcg_at_10", "ndcg_graded_at_10"} <= set(children[0].data.metrics)  # a named scheme gives a readable key
    artifacts = {a.path for a in client.list_artifacts(run.info.run_id)}
    assert {"gate.json", "report.html", "summary.md"} <= artifacts  # the report as rendered once, after tracking


GUARD_MISTAKES = [
    # (guard measure, extra keys, message pattern)
    ("nDCG@20", "", r"exp\.yaml: line 16: guard measure 'nDCG@20' is not among the measures this experiment computes\. "
                    r"Fix: did you mean 'nDCG@10'"),
    ("nDGC@10", "", r"line 16: guard measure: unknown measure 'nDGC'\. Fix: did you mean"),
    ("nDCG@10", ", segment: tial", r"exp\.yaml: line 16: guard segment 'tial' is not a segment of any dataset\. "
                                   r"Fix: did you mean 'tail'\?"),
    ("nDCG@10", ", dataset: e", r"line 16: guard dataset 'e' is not a dataset\. Fix: use one of d"),
]  # fmt: skip


@pytest.mark.parametrize(("measure", "extra", "pattern"), GUARD_MISTAKES)
def test_guard_mistakes_are_found_before_anything_runs(tmp_path: Path, measure: str, extra: str, pattern: str) -> None:
    import re

    config = _config(tmp_path, 0.0, "{enabled: false}", "off", extra)
    config.write_text(config.read_text().replace("{measure: nDCG@10,", f"{{measure: {measure},"))
    for command in ("validate", "run"):
        out, err = io.StringIO(), io.StringIO()
        assert main([command, str(config), "--quiet"], out, err) == 2
        assert re.search(pattern, err.getvalue()), err.getvalue()
        assert err.getvalue().count("\n") == 1
    assert not (tmp_path / "out").exists()


def test_guard_accepts_the_reports_label(tmp_path: Path) -> None:
    config = _config(tmp_path, 0.5, "{enabled: false}", "off")
    text = config.read_text().replace("measures: [nDCG@10, AP]", "measures: [nDCG@10, AP]\ngains: {graded: {1: 1, 2: 3}}")
    config.write_text(text.replace("{measure: nDCG@10,", "{measure: 'nDCG@10 [graded]',"))
    code, outcome, err = _run(config)
    assert code == 0, err
    saved = json.loads((Path(str(outcome["results_dir"])) / "gate.json").read_text())
    assert saved["guards"][0]["guard"].startswith("nDCG(gains={1:1,2:3})@10")
    out = io.StringIO()
    assert main(["validate", str(config), "--quiet"], out, io.StringIO()) == 0
    assert "measures: nDCG(gains={1:1,2:3})@10, AP" in out.getvalue()  # what gains did to nDCG@10, said up front


@pytest.mark.parametrize(
    ("condition", "passed", "reason"),
    [
        ("max_drop_pct: 20", True, "nDCG@10 on d: 0.6667 -> 0.5436, difference -0.1230 [95% CI"),
        ("max_drop_pct: 15", False, "nDCG@10 on d dropped by 18.45% (0.6667 -> 0.5436), more than 15%"),
        ("min_gain: 0.01", False, "nDCG@10 on d gained -0.1230 (0.6667 -> 0.5436), less than the required 0.01"),
        ("min_gain: -0.2", True, "nDCG@10 on d: 0.6667 -> 0.5436"),
    ],
)
def test_relative_drop_and_minimum_gain(tmp_path: Path, condition: str, passed: bool, reason: str) -> None:
    config = _config(tmp_path, 0.0, "{enabled: false}", "off")
    config.write_text(config.read_text().replace("max_drop: 0.0", condition))
    code, outcome, err = _run(config)
    assert code == (0 if passed else 3), err
    (guard,) = json.loads((Path(str(outcome["results_dir"])) / "gate.json").read_text())["guards"]
    assert guard["passed"] is passed and guard["reason"].startswith(reason), guard["reason"]
    assert guard["delta"] == pytest.approx((1 / 1.584962500721156 + 1) / 3 - 2 / 3, abs=1e-12)


def _many_queries(tmp_path: Path, guard: str, extra_system: bool = False) -> Path:
    """50 queries; b is a slightly changed copy of a (query q swaps its top two documents when q % 7 == 0)."""
    rng = __import__("numpy").random.default_rng(5)
    qrels, run_a, run_b, run_c = [], [], [], []
    for q in range(50):
        labels = rng.integers(0, 3, size=10)
        labels[0] = 1
        for i, rel in enumerate(labels):
            qrels.append(f"q{q:02d} 0 d{i} {rel}\n")
        order = list(rng.permutation(10))
        swapped = [order[1], order[0], *order[2:]] if q % 7 == 0 else order
        worse = order[::-1]
        for rank, (da, db, dc) in enumerate(zip(order, swapped, worse, strict=True)):
            run_a.append(f"q{q:02d} Q0 d{da} {rank + 1} {10 - rank} a\n")
            run_b.append(f"q{q:02d} Q0 d{db} {rank + 1} {10 - rank} b\n")
            run_c.append(f"q{q:02d} Q0 d{dc} {rank + 1} {10 - rank} c\n")
    for name, lines in (("qrels.txt", qrels), ("a.run", run_a), ("b.run", run_b), ("c.run", run_c)):
        (tmp_path / name).write_text("".join(lines))
    third = "\n  - {name: c, runs: {d: c.run}}" if extra_system else ""
    path = tmp_path / "exp.yaml"
    path.write_text(
        f"experiment: ni\ndatasets: [{{name: d, qrels: qrels.txt}}]\nsystems:\n  - {{name: a, runs: {{d: a.run}}}}\n"
        f"  - {{name: b, runs: {{d: b.run}}}}{third}\nmeasures: [nDCG@5, AP, P@5]\nbaseline: a\n"
        "stats: {permutations: 500, resamples: 500}\ntracking: {enabled: false}\nreport:\n  enabled: false\n"
        f"  release: {{production: a, candidate: b, guards: [{guard}]}}\noutput: out\n"
    )
    return path


def _per_query_diffs(folder: Path, measure: str) -> Any:
    import pandas as pd

    table = pd.read_parquet(folder / "per_query.parquet")
    table = table[(table["measure"] == measure) & (table["segment"] == "")].pivot(
        index="query_id", columns="system", values="value"
    )
    return (table["b"] - table["a"]).to_numpy()


@pytest.mark.parametrize(("margin", "passed"), [(0.05, True), (0.0005, False)])
def test_non_inferiority_is_a_one_sided_paired_t_test(tmp_path: Path, margin: float, passed: bool) -> None:
    from scipy import stats

    code, outcome, err = _run(_many_queries(tmp_path, f"{{measure: nDCG@5, non_inferiority: {margin}}}"))
    assert code == (0 if passed else 3), err
    folder = Path(str(outcome["results_dir"]))
    (guard,) = json.loads((folder / "gate.json").read_text())["guards"]
    d = _per_query_diffs(folder, "nDCG@5")
    expected = stats.ttest_1samp(d + margin, 0.0, alternative="greater").pvalue
    assert guard["p"] == pytest.approx(expected, rel=1e-9) and guard["p_adj"] == pytest.approx(expected, rel=1e-9)
    assert guard["passed"] is passed
    assert passed or "not shown non-inferior within 0.0005" in guard["reason"]


def test_guard_significance_is_corrected_among_guards_only(tmp_path: Path) -> None:
    guards = "{measure: nDCG@5, max_drop: 1, significant: true}, {measure: AP, max_drop: 1, significant: true}"
    outcomes = []
    for extra in (False, True):
        folder = tmp_path / str(extra)
        folder.mkdir()
        code, outcome, err = _run(_many_queries(folder, guards, extra_system=extra))
        assert code in (0, 3), err
        outcomes.append(json.loads((Path(str(outcome["results_dir"])) / "gate.json").read_text())["guards"])
    alone, crowded = outcomes
    for one, two in zip(alone, crowded, strict=True):  # a third system (and its comparisons) changes nothing
        assert (one["p"], one["p_adj"], one["passed"]) == (two["p"], two["p_adj"], two["passed"])
    p = sorted(g["p"] for g in alone)  # Holm over the two guarded comparisons, by hand
    adjusted = sorted(g["p_adj"] for g in alone)
    assert adjusted[0] == pytest.approx(min(1.0, 2 * p[0])) and adjusted[1] == pytest.approx(max(adjusted[0], min(1.0, p[1])))


def test_report_shows_guarded_measures_run_after_run(tmp_path: Path) -> None:
    config = _config(tmp_path, 0.5, "{enabled: false}", "on")
    folders = []
    for _ in range(3):
        code, outcome, err = _run(config)
        assert code == 0, err
        folders.append(Path(str(outcome["results_dir"])))
    html = (folders[-1] / "report.html").read_text()
    trend = html[html.index('<section id="trend">') : html.index("</section>", html.index('<section id="trend">'))]
    assert "nDCG@10 on d, run after run" in trend
    assert trend.count("<circle") == 2 * 3  # production and candidate, in each of the three runs
    assert trend.count("<polyline") == 2


def test_every_guard_line_shows_the_difference_its_ci_and_p(tmp_path: Path) -> None:
    config = _config(tmp_path, 0.0, "{enabled: false}", "on", ", significant: true")
    text = config.read_text().replace("measures: [nDCG@10, AP]", "measures: [nDCG@10, AP]\ngains: {graded: {1: 1, 2: 3}}")
    config.write_text(text.replace("{measure: nDCG@10,", "{measure: 'nDCG@10 [graded]',"))
    code, outcome, err = _run(config)
    assert code == 3, err
    folder = Path(str(outcome["results_dir"]))
    (guard,) = json.loads((folder / "gate.json").read_text())["guards"]
    assert "dropped by" in guard["reason"] and "difference -" in guard["reason"] and "[95% CI " in guard["reason"]
    assert "corrected p = " in guard["reason"]
    summary = (folder / "summary.md").read_text()
    assert "nDCG@10 \\[graded\\] on d dropped by" in summary and "gains=" not in summary  # one name for a measure


def test_a_significance_guard_says_when_no_test_was_possible(tmp_path: Path) -> None:
    config = _config(tmp_path, 0.5, "{enabled: false}", "off", ", significant: true")
    config.write_text(config.read_text().replace("stats: {permutations: 200, resamples: 200}",
                                                 "stats: {permutations: 200, resamples: 200, primary: bootstrap}"))  # fmt: skip
    code, outcome, err = _run(config)  # 3 queries: the bootstrap is not computed below 10
    assert code == 0, err
    (guard,) = json.loads((Path(str(outcome["results_dir"])) / "gate.json").read_text())["guards"]
    assert guard["passed"] and "no significance test possible" in guard["reason"]
