"""Under a tool's profile, each measure is evaluated under the conventions that tool uses for it (its per-measure ones,
harness.measures.peers): Elliot reads every test user's list for its fairness and popularity metrics, and only the
users with a relevant item for its accuracy metrics. One eval, compare or run gives each of them its own users; a
convention the user sets stays theirs for every measure.

The reference values are Elliot's own (the fairness golden case, tests/fixtures/fairness) and counts and precisions
computed here from the CSV files with the csv module.
"""

from __future__ import annotations

import csv
import html
import io
import json
import re
import textwrap
from pathlib import Path

import pandas as pd
import pytest
import yaml

from harness.cli import main
from harness.config.load import load_config
from harness.errors import ConfigError
from harness.pipeline import run_experiment
from tests.repo import ROOT

GOLDEN = ROOT / "tests" / "fixtures" / "fairness"
EXPECTED = {
    v["id"]: v["value"]
    for v in json.loads((GOLDEN / "expected.json").read_text())["values"]
    if v.get("ties", "input_order") == "input_order"
}
LEVEL = 4
INPUTS = [
    "--qrels-columns",
    "query=user,doc=item,relevance=rating",
    "--run-columns",
    "query=user,doc=item,score=score",
    "--train",
    str(GOLDEN / "train.csv"),
    "--train-columns",
    "query=user,doc=item",
    "--items",
    str(GOLDEN / "items.csv"),
    "--items-groups",
    "provider",
    "-l",
    str(LEVEL),
    "--profile",
    "elliot",
    "--quiet",
]


def _judged() -> dict[str, dict[str, int]]:
    judged: dict[str, dict[str, int]] = {}
    with (GOLDEN / "test.csv").open() as f:
        for row in csv.DictReader(f):
            judged.setdefault(row["user"], {})[row["item"]] = int(row["rating"])
    return judged


def _precision_at(k: int, run: Path) -> dict[str, float]:
    """P@k of every user with a relevant item (rating >= LEVEL), the run's items by score, ties in file order."""
    judged = _judged()
    ranked: dict[str, list[tuple[float, str]]] = {}
    with run.open() as f:
        for row in csv.DictReader(f):
            ranked.setdefault(row["user"], []).append((float(row["score"]), row["item"]))
    out = {}
    for user, ratings in judged.items():
        if any(r >= LEVEL for r in ratings.values()):
            top = [item for _, item in sorted(ranked.get(user, []), key=lambda pair: -pair[0])[:k]]
            out[user] = sum(ratings.get(item, 0) >= LEVEL for item in top) / k
    return out


def _eval(*extra: str) -> tuple[dict, str]:  # type: ignore[type-arg]
    out, err = io.StringIO(), io.StringIO()
    command = ["eval", str(GOLDEN / "test.csv"), str(GOLDEN / "run.csv"), *INPUTS, "--format", "json", *extra]
    assert main(command, out, err) == 0, err.getvalue()
    return json.loads(out.getvalue()), err.getvalue()


def test_eval_under_a_profile_gives_each_measure_the_tools_value_over_its_own_users() -> None:
    printed, err = _eval("-m", "RSP(group=provider)@10,P@5,ARP@5", "-q")
    assert err == ""
    rows: dict[str, dict[str, float]] = {}
    for record in printed["results"]:
        rows.setdefault(record["measure"], {})[record["query_id"]] = record["value"]
    # RSP reads every test user's list, as Elliot does: Elliot's value (some users have no rating of 4 or more)
    assert rows["RSP(group=provider)@10"]["all"] == pytest.approx(EXPECTED["elliot.RSP.provider@10"], rel=1e-12)
    precision = _precision_at(5, GOLDEN / "run.csv")
    judged = _judged()
    assert len(precision) < len(judged)  # the case has users without a relevant item: the two sets differ
    # P@5 over the users with a relevant item, ARP@5 over every test user, in one run
    assert {q for q in rows["P@5"] if q != "all"} == set(precision)
    assert {q for q in rows["ARP@5"] if q != "all"} == set(judged)
    assert rows["P@5"]["all"] == pytest.approx(sum(precision.values()) / len(precision), rel=1e-12)
    for user, value in precision.items():
        assert rows["P@5"][user] == pytest.approx(value, abs=1e-12)
    assert printed["conventions"]["queries"] == "relevant"
    assert printed["measure_conventions"] == {"RSP(group=provider)@10": {"queries": "qrels"}, "ARP@5": {"queries": "qrels"}}


def test_a_convention_the_user_sets_stays_theirs_for_every_measure() -> None:
    printed, _ = _eval("-m", "RSP(group=provider)@10", "--queries", "relevant")
    assert "measure_conventions" not in printed
    # over the users with a relevant item only: not Elliot's value, as asked
    assert printed["results"][0]["value"] != pytest.approx(EXPECTED["elliot.RSP.provider@10"], rel=1e-6)


def _second_run(folder: Path) -> Path:
    """The golden run with each user's items in reverse order of score: other lists to compare."""
    frame = pd.read_csv(GOLDEN / "run.csv")
    frame["score"] = -frame["score"]
    path = folder / "reversed.csv"
    frame.to_csv(path, index=False)
    return path


def test_compare_under_a_profile_pairs_each_measure_on_its_own_users(tmp_path: Path) -> None:
    other = _second_run(tmp_path)
    out, err = io.StringIO(), io.StringIO()
    command = ["compare", str(GOLDEN / "test.csv"), str(GOLDEN / "run.csv"), str(other), *INPUTS]
    assert main([*command, "-m", "P@5,ARP@5", "--format", "json", "--permutations", "200"], out, err) == 0, err.getvalue()
    rows = {r["measure"]: r for r in json.loads(out.getvalue())}
    a, b = _precision_at(5, GOLDEN / "run.csv"), _precision_at(5, other)
    assert rows["P@5"]["n_queries"] == len(a) and rows["ARP@5"]["n_queries"] == len(_judged())
    assert rows["P@5"]["mean_a"] == pytest.approx(sum(a.values()) / len(a), rel=1e-12)
    assert rows["P@5"]["mean_b"] == pytest.approx(sum(b.values()) / len(b), rel=1e-12)


def _config(folder: Path, measures: str, profile: str = "elliot", conventions: str = "") -> Path:
    path = folder / "exp.yaml"
    path.write_text(
        textwrap.dedent(
            f"""\
            experiment: fair
            profile: {profile}
            {conventions}
            datasets:
              - name: d
                qrels: {GOLDEN / "test.csv"}
                columns: {{query: user, doc: item, relevance: rating}}
                run_columns: {{query: user, doc: item, score: score}}
                relevance_level: {LEVEL}
                train: {{path: {GOLDEN / "train.csv"}, columns: {{query: user, doc: item}}}}
                items: {{path: {GOLDEN / "items.csv"}, id: item, groups: [provider]}}
            systems:
              - {{name: a, runs: {{d: {GOLDEN / "run.csv"}}}}}
              - {{name: b, runs: {{d: {_second_run(folder)}}}}}
            measures: {measures}
            stats: {{permutations: 200, resamples: 200}}
            tracking: {{enabled: false}}
            output: {folder / "out"}
            """
        )
    )
    return path


def test_a_run_under_a_profile_records_each_measure_over_its_own_users(tmp_path: Path) -> None:
    experiment = load_config(_config(tmp_path, '["RSP(group=provider)@10", P@5, ARP@5]'))
    assert experiment.notes == ()
    folder = run_experiment(experiment).results_dir
    assert folder is not None
    summary = pd.read_parquet(folder / "summary.parquet").set_index(["system", "measure"])["value"]
    assert summary[("a", "RSP(group='provider')@10")] == pytest.approx(EXPECTED["elliot.RSP.provider@10"], rel=1e-12)
    a = _precision_at(5, GOLDEN / "run.csv")
    assert summary[("a", "P@5")] == pytest.approx(sum(a.values()) / len(a), rel=1e-12)
    per_query = pd.read_parquet(folder / "per_query.parquet")
    users = per_query.groupby(["system", "measure"])["query_id"].agg(set)
    for system in ("a", "b"):
        assert users[(system, "P@5")] == set(a) and users[(system, "ARP@5")] == set(_judged())
    comparisons = pd.read_parquet(folder / "comparisons.parquet").set_index("measure")
    assert comparisons.loc["P@5", "n_queries"] == len(a) and comparisons.loc["ARP@5", "n_queries"] == len(_judged())
    recorded = yaml.safe_load((folder / "config.resolved.yaml").read_text())
    assert recorded["measure_conventions"] == {"RSP(group='provider')@10": {"queries": "qrels"}, "ARP@5": {"queries": "qrels"}}
    report = html.unescape((folder / "report.html").read_text())
    # the report lists each measure's own conventions, and draws per-query charts of the per-query measures only
    assert '<dt>ARP@5</dt><dd>queries: qrels <span class="muted">(as in Elliot)</span>' in report
    select = re.search(r'<select class="measure-select"[^>]*>(.*?)</select>', report, re.S)
    assert select is not None and re.findall(r"<option[^>]*>(.*?)</option>", select.group(1)) == ["P@5", "ARP@5"]


def test_a_config_that_sets_the_convention_evaluates_every_measure_under_it(tmp_path: Path) -> None:
    experiment = load_config(_config(tmp_path, '["RSP(group=provider)@10", P@5]', conventions="conventions: {queries: relevant}"))
    assert experiment.measure_conventions() == {}
    folder = run_experiment(experiment).results_dir
    assert folder is not None
    assert "measure_conventions" not in yaml.safe_load((folder / "config.resolved.yaml").read_text())
    summary = pd.read_parquet(folder / "summary.parquet").set_index(["system", "measure"])["value"]
    assert summary[("a", "RSP(group='provider')@10")] != pytest.approx(EXPECTED["elliot.RSP.provider@10"], rel=1e-6)


def test_system_measures_a_tool_computes_over_different_users_are_refused_at_their_line(tmp_path: Path) -> None:
    # Microsoft Recommenders reads every recommended list for its coverage, and Gini is no measure of its own
    path = _config(tmp_path, '["Coverage@10", "Gini@10"]', profile="msrec")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    error = caught.value
    assert "Coverage@10 and Gini@10 over different users" in error.message
    assert error.line == next(i for i, line in enumerate(path.read_text().splitlines(), 1) if line.startswith("measures"))
    assert "queries: run" in (error.hint or "")


def test_a_system_reused_from_a_folder_keeps_each_measures_own_users(tmp_path: Path) -> None:
    """previous: reads back a folder evaluated under the profile with each measure over its own users (its per-query
    rows say which), so the comparisons equal the folder's; a config whose conventions would count other users for a
    measure refuses the reuse."""
    measures = "[P@5, ARP@5]"
    first = run_experiment(load_config(_config(tmp_path, measures))).results_dir
    assert first is not None
    again = tmp_path / "again"
    again.mkdir()
    config = _config(again, measures).read_text()
    reuse = config.replace(f"{{name: a, runs: {{d: {GOLDEN / 'run.csv'}}}}}", f"{{name: a, previous: {{results: {first}}}}}")
    assert reuse != config
    (again / "exp.yaml").write_text(reuse)
    reused = run_experiment(load_config(again / "exp.yaml")).results_dir
    assert reused is not None
    keys = ["measure", "n_queries", "mean_a", "mean_b", "delta", "p_t", "p_randomization"]
    expected = pd.read_parquet(first / "comparisons.parquet")[keys]
    pd.testing.assert_frame_equal(pd.read_parquet(reused / "comparisons.parquet")[keys], expected, check_exact=True)
    assert list(expected["n_queries"]) == [len(_precision_at(5, GOLDEN / "run.csv")), len(_judged())]

    (again / "exp.yaml").write_text(reuse.replace("profile: elliot", "profile: elliot\nconventions: {queries: relevant}"))
    with pytest.raises(ConfigError, match=re.escape("ARP@5 under queries: qrels there, the experiment's conventions here")):
        run_experiment(load_config(again / "exp.yaml"))
