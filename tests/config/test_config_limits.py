"""Configs that once ended in an internal error (exit 70) or ran without limit: each is now one line naming the key
and the fix (exit 2), or decided as written."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from harness.cli import main
from tests.records.test_previous import _many_queries

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning")


def _validate(config: Path) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    return main(["validate", str(config), "--quiet"], out, err), err.getvalue()


def test_two_guards_of_one_measure_over_all_users_and_on_a_segment(tmp_path: Path) -> None:
    config = _many_queries(tmp_path, "{measure: nDCG@5, max_drop: 0.05}, {measure: nDCG@5, max_drop: 0.05, segment: new}")
    (tmp_path / "seg.csv").write_text("query,segment\n" + "".join(f"q{q:02d},{'new' if q < 25 else 'old'}\n" for q in range(50)))
    config.write_text(config.read_text().replace("qrels: qrels.txt", "qrels: qrels.txt, segments: {path: seg.csv}"))
    assert _validate(config)[0] == 0
    out, err = io.StringIO(), io.StringIO()
    assert main(["run", str(config), "--json", "--quiet"], out, err) in (0, 1, 3), err.getvalue()
    gate = json.loads((Path(json.loads(out.getvalue())["results_dir"]) / "gate.json").read_text())
    assert [g["segment"] for g in gate["guards"]] == ["all", "new"]


MANY = "measures: [nDCG@5, P, AP]\ncutoffs: [" + ", ".join(map(str, range(1, 5001))) + "]"


@pytest.mark.parametrize(
    ("replace", "by", "message", "key"),
    [
        ("measures: [nDCG@5, AP, P@5]", "measures: [nDCG@5, P]\ncutoffs: [5, 1000000000000]", "from 1 to 1,000,000", "cutoffs:"),
        ("measures: [nDCG@5, AP, P@5]", "measures: [nDCG@5, nDCG@18446744073709551617]", "at most 1,000,000", "measures:"),
        ("stats: {", "stats: {alpha: 0.9, ", "alpha must be above 0 and at most 0.5, got 0.9", "stats:"),
        ("measures: [nDCG@5, AP, P@5]", MANY, "measures expand to more than 1,000 measures", "measures:"),
    ],
)
def test_limits_are_one_line_with_the_key(tmp_path: Path, replace: str, by: str, message: str, key: str) -> None:
    config = _many_queries(tmp_path, "{measure: nDCG@5, max_drop: 0.05}")
    text = config.read_text().replace(replace, by)
    config.write_text(text)
    line = next(n for n, row in enumerate(text.splitlines(), start=1) if row.startswith(key))
    code, err = _validate(config)
    assert code == 2 and message in err and f"line {line}:" in err and err.count("\n") == 1, err


def test_the_api_and_the_command_line_take_the_same_alpha(tmp_path: Path) -> None:
    from harness import Qrels, Run, decide, evaluate
    from harness.errors import HarnessError

    qrels = Qrels.from_dict({f"q{i}": {"a": 1, "b": 0} for i in range(20)})
    runs = [
        evaluate(qrels, Run.from_dict({f"q{i}": {"a": 2.0, "b": float(i % 3)} for i in range(20)}, name=n), ["RR"]) for n in "xy"
    ]
    with pytest.raises(HarnessError, match=r"alpha must be above 0 and at most 0\.5, got 0\.9"):
        decide(runs, "x", "y", [{"measure": "RR", "max_drop": 0.1}], alpha=0.9)
    out, err = io.StringIO(), io.StringIO()
    assert main(["plan", "--sd", "0.2", "--margin", "0.01", "--alpha", "0.6"], out, err) == 2
    assert "--alpha: must be above 0 and at most 0.5, got 0.6" in err.getvalue()


def test_runs_as_a_path_alone_with_one_dataset(tmp_path: Path) -> None:
    from harness.config.load import load_config
    from harness.errors import ConfigError

    config = _many_queries(tmp_path, "{measure: nDCG@5, max_drop: 0.05}")
    config.write_text(config.read_text().replace("{name: a, runs: {d: a.run}}", "{name: a, runs: a.run}"))
    assert load_config(config).system("a").runs == (("d", tmp_path / "a.run"),)
    config.write_text(config.read_text().replace("{name: a, runs: a.run}", "{name: a, runs: [a.run, c.run]}"))
    assert [label for label, _ in load_config(config).system("a").runs_of("d")] == ["a", "c"]
    two = config.read_text().replace(
        "datasets: [{name: d, qrels: qrels.txt}]", "datasets: [{name: d, qrels: qrels.txt}, {name: e, qrels: qrels.txt}]"
    )
    config.write_text(two.replace("{name: a, runs: [a.run, c.run]}", "{name: a, runs: a.run}"))
    with pytest.raises(ConfigError) as raised:
        load_config(config)
    assert "is a path alone, and there are 2 datasets" in str(raised.value) and "runs: {d: a.run, ...}" in str(raised.value)
    assert raised.value.line == 4


def test_user_and_item_name_the_columns_of_a_table(tmp_path: Path) -> None:
    from harness.config.load import load_config
    from harness.errors import ConfigError

    config = _many_queries(tmp_path, "{measure: nDCG@5, max_drop: 0.05}")
    text = config.read_text().replace(
        "{name: d, qrels: qrels.txt}", "{name: d, qrels: qrels.txt, run_columns: {user: u, item: i}, columns: {user: u2}}"
    )
    config.write_text(text)
    dataset = load_config(config).datasets[0]
    assert (dataset.run_columns.query, dataset.run_columns.doc, dataset.qrels_columns.query) == ("u", "i", "u2")
    config.write_text(text.replace("{user: u, item: i}", "{user: u, query: q}"))
    with pytest.raises(ConfigError, match=r"run_columns\.user' and query name the same column|user and query"):
        load_config(config)


@pytest.mark.parametrize(
    ("guard", "says"),
    [
        ("{measure: nDCG@5, max_drop: 1%}", "for 1% of production's value write max_drop_pct: 1"),
        ("{measure: nDCG@20, max_drop: 0.05}", "or add nDCG@20 to measures:"),
    ],
)
def test_a_guard_written_as_people_write_it_gets_its_fix(tmp_path: Path, guard: str, says: str) -> None:
    config = _many_queries(tmp_path, guard)
    code, err = _validate(config)
    assert code == 2 and says in err and err.count("\n") == 1, err


def test_another_tools_measure_name_is_said_as_harness_reads_it(tmp_path: Path) -> None:
    config = _many_queries(tmp_path, "{measure: nDCG@5, max_drop: 0.05}")
    text = config.read_text().replace(
        "measures: [nDCG@5, AP, P@5]", "measures: [nDCG@5, map@100, {measure: recall, cutoffs: [10]}, ndcg@10]"
    )
    config.write_text(text)
    line = next(n for n, row in enumerate(text.splitlines(), start=1) if row.startswith("measures:"))
    code, err = _validate(config)
    assert code == 0 and err.splitlines() == [
        f"harness: note: {config}: line {line}: map@100 is read as AP@100 (map is another tool's name for it)",
        f"harness: note: {config}: line {line}: recall is read as R (recall is another tool's name for it)",
    ], err  # nDCG and ndcg differ in case only: no note
