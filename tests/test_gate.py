"""The release gate as a CI job sees it (issue 9): decided with the results, saved in gate.json,
never hidden by a later failure, and its guards checked before anything is computed."""

from __future__ import annotations

import io
import itertools
import json
import textwrap
from pathlib import Path

import pytest

from harness.cli import main
from tests.mlflow_server import free_port

pytestmark = pytest.mark.filterwarnings(
    "ignore::DeprecationWarning", "ignore::PendingDeprecationWarning", "ignore::FutureWarning"
)

# b against a on nDCG@10, by hand: a = (1 + 0 + 1) / 3 = 0.6667; b = (1/log2(3) + 1 + 0) / 3 = 0.5436; a drop of 0.1231
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
        assert "tracking failed" in err and err.count("\n") <= 2 and "Traceback" not in err
    if report == "on" and tracking == "ok":
        assert "MLflow: not tracked" not in (folder / "report.html").read_text()


def test_verdict_is_on_the_parent_run(tmp_path: Path) -> None:
    from mlflow import MlflowClient

    code, outcome, err = _run(_config(tmp_path, 0.0, "{enabled: true}", "on"))
    assert code == 3, err
    client = MlflowClient(tracking_uri=str(outcome["tracking_uri"]))
    run = client.get_run(str(outcome["mlflow_run_id"]))
    assert run.data.tags["release.verdict"] == "FAIL" and run.data.tags["release.candidate"] == "b"
    assert run.data.metrics["release_gate_passed"] == 0.0
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
