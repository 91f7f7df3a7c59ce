"""Every config mistake a user can make: one line naming the place and the fix, exit 2, nothing written."""

from __future__ import annotations

import io
import textwrap
from pathlib import Path

import pytest

from harness.cli import main

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n"
RUN = "q1 Q0 d1 1 2.0 a\nq1 Q0 d2 2 1.0 a\nq2 Q0 d3 1 1.0 a\n"


def _setup(tmp_path: Path, config: str) -> Path:
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "a.run").write_text(RUN)
    (tmp_path / "b.run").write_text(RUN.replace(" a\n", " b\n"))
    path = tmp_path / "exp.yaml"
    path.write_text(textwrap.dedent(config))
    return path


GOOD = """\
experiment: t
datasets:
  - name: d
    qrels: qrels.txt
systems:
  - name: a
    runs: {d: a.run}
  - name: b
    runs: {d: b.run}
measures: [P@1, AP]
baseline: a
tracking: {enabled: false}
report: {enabled: false}
output: out
"""


def _run(config: Path, *extra: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["run", str(config), "--quiet", *extra], out, err)
    return code, out.getvalue(), err.getvalue()


def _assert_nothing_written(tmp_path: Path) -> None:
    out = tmp_path / "out"
    leftovers = [p for p in out.rglob("*")] if out.exists() else []
    assert not [p for p in leftovers if p.is_file()], leftovers


def test_good_config_runs(tmp_path: Path) -> None:
    code, out, err = _run(_setup(tmp_path, GOOD))
    assert code == 0, err
    assert "results:" in out


CASES = [
    # (what to change, expected message pattern, expected line)
    (
        "qrels: qrels.txt",
        "qrels: nope.txt",
        r"exp\.yaml: line 4: datasets\[0\]\.qrels: file not found: .*nope\.txt\. Fix: check the path",
        4,
    ),
    ("measures: [P@1, AP]", "measurez: [P@1, AP]", r"line 10: unknown key 'measurez'\. Fix: did you mean 'measures'\?", 10),
    ("baseline: a", "baseline: c", r"line 11: baseline 'c' is not among the systems\. Fix: use one of a, b", 11),
    ("measures: [P@1, AP]", "measures: [P@1, nDGC@10]", r"line 10: measures: unknown measure 'nDGC'\. Fix: did you mean", 10),
    ("measures: [P@1, AP]", "measures: [P@1, P]", r"line 10: P needs a cutoff\. Fix: add cutoffs", 10),
    ("experiment: t", "experiment: [t]", r"line 1: experiment must be a str, got \['t'\]", 1),
    ("tracking: {enabled: false}", "tracking: {enabled: maybe}", r"line 12: tracking\.enabled must be a bool, got 'maybe'", 12),
    (
        "baseline: a",
        "baseline: a\nprofile: pyterrier",
        r"line 12: unknown profile 'pyterrier'\. Fix: use one of trec_eval, ir_measures, pytrec_eval, ranx, msrec, recbole, "
        r"elliot, mlflow, spark, sklearn, torchmetrics",
        12,
    ),
    ("baseline: a", "baseline: a\nconventions: {ties: random}", r"line 12: conventions: ties must be one of", 12),
    ("runs: {d: a.run}", "runs: {e: a.run}", r"line 7: unknown key 'systems\[0\]\.runs\.e'\. Fix: valid keys here: d", 7),
    ("qrels: qrels.txt", "qrels: ${NO_SUCH_VARIABLE_XYZ}", r"line 4: environment variable NO_SUCH_VARIABLE_XYZ is not set", 4),
    ("baseline: a", "baseline: a\nbaseline: b", r"line 12: key 'baseline' appears twice", 12),
    ("experiment: t", "experiment: t\n  bad: [", r"invalid YAML", None),
    ("baseline: a", "baseline: a\nstats: {alpha: 2}", r"line 12: alpha must be above 0 and at most 0.5", 12),
    (
        "baseline: a",
        "baseline: a\nstats: {nan: ignore}",
        r"line 12: .*unknown NaN policy 'ignore'\. Fix: use error .* or drop",
        12,
    ),
    ("baseline: a", "baseline: a\nevil: !!python/object/apply:os.system ['true']", r"line 12: unknown key 'evil'", 12),
    ("output: out", "output: {path: out, csv: maybe}", r"line 14: output\.csv must be a bool", 14),
    ("output: out", "output: {path: out, cvs: true}", r"line 14: unknown key 'output\.cvs'\. Fix: did you mean 'csv'", 14),
]


@pytest.mark.parametrize(
    ("old", "new", "pattern", "line"), CASES, ids=[c[1].split(":")[0][:30] + str(i) for i, c in enumerate(CASES)]
)
def test_config_mistake(tmp_path: Path, old: str, new: str, pattern: str, line: int | None) -> None:
    config = _setup(tmp_path, GOOD.replace(old, new, 1))
    code, out, err = _run(config)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1, err  # one line, no traceback
    assert err.startswith("harness: error: ")
    import re

    assert re.search(pattern, err), err
    assert str(config) in err
    if line is not None:
        assert f"line {line}:" in err
    _assert_nothing_written(tmp_path)


def test_python_tags_are_refused_not_run(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    config = _setup(tmp_path, GOOD.replace("experiment: t", f"experiment: !!python/object/apply:os.system ['touch {marker}']"))
    code, _, err = _run(config)
    assert code == 2 and "unsupported YAML" in err and "line 1" in err
    assert not marker.exists()


def test_empty_run(tmp_path: Path) -> None:
    config = _setup(tmp_path, GOOD)
    (tmp_path / "b.run").write_text("")
    code, _, err = _run(config)
    assert code == 2
    assert "b.run: the run is empty" in err and "Fix:" in err
    _assert_nothing_written(tmp_path)


def test_bad_run_line(tmp_path: Path) -> None:
    config = _setup(tmp_path, GOOD)
    (tmp_path / "b.run").write_text("q1 Q0 d1 1 2.0 b\nq1 Q0 d2 2\n")
    code, _, err = _run(config)
    assert code == 2
    assert "b.run: line 2: expected 6 columns (qid Q0 docid rank score tag), got 4" in err
    _assert_nothing_written(tmp_path)


def test_qrels_with_no_overlap(tmp_path: Path) -> None:
    config = _setup(tmp_path, GOOD)
    (tmp_path / "b.run").write_text("x1 Q0 d1 1 2.0 b\n")
    code, _, err = _run(config)
    assert code == 2
    assert (
        "b.run: no query of the run is judged in dataset 'd'" in err
        and "Fix: check that the run and the qrels use the same query ids" in err
    )
    _assert_nothing_written(tmp_path)


def test_duplicate_in_run(tmp_path: Path) -> None:
    config = _setup(tmp_path, GOOD)
    (tmp_path / "b.run").write_text("q1 Q0 d1 1 2.0 b\n# note\nq1 Q0 d1 2 1.0 b\n")
    code, _, err = _run(config)
    assert code == 2
    assert "b.run: line 3: document 'd1' is listed twice for query 'q1' in the run" in err
    _assert_nothing_written(tmp_path)


def test_missing_config_and_validate(tmp_path: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    assert main(["validate", str(tmp_path / "none.yaml")], out, err) == 2
    assert "none.yaml: config file not found" in err.getvalue()
    config = _setup(tmp_path, GOOD)
    out, err = io.StringIO(), io.StringIO()
    assert main(["validate", str(config)], out, err) == 0, err.getvalue()
    assert "OK" in out.getvalue() and "3 judgments over 2 queries" in out.getvalue()
    assert not (tmp_path / "out").exists()


def test_set_overrides_any_key(tmp_path: Path) -> None:
    import json

    config = _setup(tmp_path, GOOD)
    out, err = io.StringIO(), io.StringIO()
    sets = ["stats.permutations=300", "ties=average", "datasets.0.relevance_level=2", "measures=[P@1, nDCG@2]", "report.title=T"]
    argv = ["run", str(config), "--quiet", "--json", *[x for s in sets for x in ("--set", s)]]
    assert main(argv, out, err) == 0, err.getvalue()
    resolved = (Path(json.loads(out.getvalue())["results_dir"]) / "config.resolved.yaml").read_text()
    for expected in ("permutations: 300", "ties: average", "relevance_level: 2", "- P@1\n- nDCG@2", "title: T"):
        assert expected in resolved, expected


@pytest.mark.parametrize(
    ("setting", "pattern"),
    [
        (
            "stats.permutations=10",
            r"exp\.yaml: line 1: permutations must be at least 100, got 10 \(from --set stats\.permutations=10\)",
        ),
        ("statz.seed=1", r"--set statz\.seed: unknown key 'statz'\. Fix: did you mean 'stats'\?"),
        ("datasets.3.qrels=x", r"--set datasets\.3\.qrels: '3' is not an item of the list\. Fix: use an index from 0 to 0"),
        ("noequals", r"cannot read --set 'noequals'"),
    ],
)
def test_set_mistakes_are_one_line(tmp_path: Path, setting: str, pattern: str) -> None:
    import re

    config = _setup(tmp_path, GOOD)
    code, _, err = _run(config, "--set", setting)
    assert code == 2 and re.search(pattern, err) and err.count("\n") == 1, err
    _assert_nothing_written(tmp_path)


def test_an_environment_variable_gets_a_note_never_its_value(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """${VAR} in a config: one note on stderr naming the variable and its line (its value goes into what the results,
    the report and MLflow show), never the value; nothing of it in the recorded config but the value it gave."""
    import io
    import json

    from harness.cli import main

    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\nq2 0 d2 1\n")
    (tmp_path / "a.run").write_text("q1 Q0 d1 1 1.0 a\nq2 Q0 d2 1 1.0 a\n")
    config = tmp_path / "exp.yaml"
    config.write_text(
        "experiment: env\n"
        "description: owned by ${TEAM}\n"
        "datasets: [{name: d, qrels: qrels.txt}]\n"
        "systems: [{name: a, runs: {d: a.run}}]\n"
        "measures: [P@1]  # ${NOT_READ}\n"
        "tracking: {enabled: false}\nreport: {enabled: false}\noutput: out\n"
    )
    monkeypatch.setenv("TEAM", "s3cr3t-team")
    out, err = io.StringIO(), io.StringIO()
    assert main(["run", str(config), "--json", "--quiet"], out, err) == 0, err.getvalue()
    notes = [line for line in err.getvalue().splitlines() if line.startswith("harness: note: ")]
    assert notes == [
        f"harness: note: {config}: line 2: the value of ${{TEAM}} is written into config.resolved.yaml, the report "
        "and MLflow: keep secrets out of it"
    ]
    assert "s3cr3t-team" not in err.getvalue()
    recorded = (Path(json.loads(out.getvalue())["results_dir"]) / "config.resolved.yaml").read_text()
    assert "description: owned by s3cr3t-team" in recorded and "notes" not in recorded


def test_a_set_mistake_names_the_override_that_is_wrong(tmp_path: Path) -> None:
    """Two overrides whose last keys are alike: the error names the wrong one, not the first that shares its name
    (a valid relevance level for the dataset, a wrong one for the conventions)."""
    config = _setup(tmp_path, GOOD)
    code, _, err = _run(config, "--set", "datasets.0.relevance_level=2", "--set", "relevance_level=zero")
    assert code == 2 and "(from --set relevance_level=zero)" in err and "datasets.0" not in err, err
    _assert_nothing_written(tmp_path)
