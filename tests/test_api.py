"""The notebook API (issue 14): DataFrames and dicts in, the CLI's validation, string-indexed aggregates,
a public compare() and run_experiment(), short reprs."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import harness
from harness import Qrels, Run, aggregate, compare, evaluate
from harness.errors import HarnessError, InputFormatError
from tests.generated import adversarial, to_harness

MEASURES = ["nDCG@10", "AP", "P@5", "RR"]


def _frames(seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    qrels, run = adversarial(seed)
    judged = pd.DataFrame([(q, d, r) for q, docs in qrels.items() for d, r in docs.items()], columns=["user", "item", "rating"])
    scored = pd.DataFrame([(q, d, s) for q, docs in run.items() for d, s in docs.items()], columns=["user", "item", "pred"])
    return judged, scored


def test_frames_and_dicts_give_the_same_values_as_records() -> None:
    qrels_dict, run_dict = adversarial(3)
    judged, scored = _frames(3)
    reference = evaluate(*to_harness(qrels_dict, run_dict), MEASURES).values
    from_frames = evaluate(
        Qrels.from_frame(judged, query="user", doc="item", relevance="rating"),
        Run.from_frame(scored, query="user", doc="item", score="pred"),
        MEASURES,
    ).values
    from_dicts = evaluate(qrels_dict, run_dict, MEASURES).values
    default_columns = evaluate(
        judged.set_axis(["query", "doc", "relevance"], axis=1), scored.set_axis(["query", "doc", "score"], axis=1), MEASURES
    ).values
    for got in (from_frames, from_dicts, default_columns):
        np.testing.assert_array_equal(got, reference)


def test_ids_stay_strings() -> None:
    frame = pd.DataFrame({"query": [1, 1], "doc": ["007", "7"], "relevance": [1, 0]})
    per_query = evaluate(Qrels.from_frame(frame), {"1": {"7": 2.0, "007": 1.0}}, ["P@1"])
    assert per_query.query_ids.tolist() == ["1"] and per_query.values[0, 0] == 0.0  # "7" (not relevant) ranks first


@pytest.mark.parametrize(
    "make",
    [
        lambda: Run.from_frame(pd.DataFrame({"query": ["q"] * 3, "doc": ["a", "b", "c"], "score": [1.0, np.nan, 2.0]})),
        lambda: Run.from_records([("q", "a", 1.0), ("q", "b", float("nan"))]),
        lambda: Qrels.from_dict({"q": {"a": 1, "b": float("nan")}}),
    ],
    ids=["frame", "records", "dict"],
)
def test_nan_is_an_error_with_its_row(make) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InputFormatError, match=r"(score|relevance) missing or NaN in data row 2\. Fix"):
        make()


def test_missing_column_is_named() -> None:
    with pytest.raises(InputFormatError, match=r"no column 'score' \(columns: query, doc, pred\)"):
        Run.from_frame(pd.DataFrame({"query": ["q"], "doc": ["a"], "pred": [1.0]}))


def test_aggregate_is_indexable_by_name() -> None:
    per_query = evaluate(*to_harness(*adversarial(4)), MEASURES)
    means = aggregate(per_query)
    column = per_query.column("nDCG@10").tolist()
    assert means["nDCG@10"] == float(sum(map(Fraction, column)) / len(column))  # the exact mean, rounded once
    assert means["ndcg@10"] == means["nDCG@10"] and "AP" in means and "R@5" not in means
    assert means.to_dict()["RR"] == means["RR"]
    with pytest.raises(KeyError):
        means["R@5"]


def test_public_compare_agrees_with_scipy() -> None:
    qrels, _ = adversarial(5)
    judged = Qrels.from_dict(qrels)
    rng = np.random.default_rng(0)
    runs = {name: {q: {d: float(rng.random()) for d in [*docs, "x", "y"]} for q, docs in qrels.items()} for name in "ab"}
    tables = [evaluate(judged, Run.from_dict(r, name=n), MEASURES) for n, r in runs.items()]
    table = compare(tables, baseline="a", permutations=2000, seed=3)
    assert list(table["measure"]) == MEASURES and set(table["system_b"]) == {"b"}
    for row in table.itertuples():
        a, b = tables[0].column(row.measure), tables[1].column(row.measure)
        assert row.p_t == pytest.approx(stats.ttest_rel(b, a).pvalue, rel=1e-10)
        assert row.delta == pytest.approx(float(b.mean() - a.mean()), abs=1e-15)
    again = compare(tables, baseline="a", permutations=2000, seed=3)
    pd.testing.assert_frame_equal(table, again)
    with pytest.raises(HarnessError, match="baseline 'c' is not among the runs"):
        compare(tables, baseline="c")


def test_run_experiment_returns_dataframes(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from tests.decision.test_gate import GATES, _config

    outcome = harness.run_experiment(_config(tmp_path, GATES["pass"][1]))
    assert outcome.gate == "PASS" and outcome.gate_verdict == "PASS" and "false-PASS rate" in str(outcome.gate_errors)
    assert isinstance(outcome.per_query, pd.DataFrame) and isinstance(outcome.comparisons, pd.DataFrame)
    pd.testing.assert_frame_equal(outcome.summary, pd.read_parquet(outcome.results_dir / "summary.parquet"))


def test_reprs_are_short() -> None:
    qrels_dict, run_dict = adversarial(6, n_queries=400)
    qrels, run = to_harness(qrels_dict, run_dict)
    per_query = evaluate(qrels, run, ["nDCG@10", "AP", "P@5", "RR", "R@100"])
    for value in (qrels, run, per_query):
        assert len(repr(value)) < 120, repr(value)
    assert repr(per_query).endswith("nDCG@10, AP, P@5, RR, ...)")


def test_read_qrels_and_read_run_take_tables_too(tmp_path) -> None:  # type: ignore[no-untyped-def]
    judged, scored = _frames(2)
    judged.to_csv(tmp_path / "qrels.csv", index=False)
    scored.to_parquet(tmp_path / "run.parquet", index=False)
    qrels = harness.read_qrels(tmp_path / "qrels.csv", {"query": "user", "doc": "item", "relevance": "rating"})
    run = harness.read_run(tmp_path / "run.parquet", {"query": "user", "doc": "item", "score": "pred"})
    reference = evaluate(*to_harness(*adversarial(2)), MEASURES).values
    np.testing.assert_array_equal(evaluate(qrels, run, MEASURES).values, reference)


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ({"correction": "fdr"}, "unknown correction 'fdr'. Fix: use one of holm, bonferroni, bh, none"),
        ({"family": "all"}, "unknown family 'all'. Fix: use one of per_measure, grid"),
        ({"nan": "skip"}, "unknown nan 'skip'. Fix: use one of error, drop"),
        ({"tests": ("t", "sign")}, "unknown test 'sign'. Fix: use one of t, wilcoxon, randomization, bootstrap"),
        ({"primary": "bootstrap", "tests": ("t",)}, "the primary test 'bootstrap' is not among tests=('t',)"),
        ({"alpha": 1.5}, "alpha must be above 0 and at most 0.5, got 1.5"),
        ({"permutations": 0}, "permutations must be a whole number of at least 1, got 0"),
    ],
)
def test_compare_refuses_a_setting_outside_its_choices_with_harness_error(setting: dict[str, object], message: str) -> None:
    """The API checks its closed options as the config does (the same Literal types), before any test runs."""
    qrels = Qrels.from_dict({f"q{i}": {"a": 1} for i in range(3)})
    tables = [evaluate(qrels, Run.from_dict({f"q{i}": {"a": 1.0} for i in range(3)}, name=n), ["RR"]) for n in "xy"]
    with pytest.raises(HarnessError) as raised:
        compare(tables, **setting)  # type: ignore[arg-type]
    assert message in str(raised.value)


def test_pandas_string_columns_give_the_same_values_as_object_columns() -> None:
    """pandas 3's ``str`` columns (Arrow large strings) with training data and a catalogue: no ArrowTypeError, and the
    values of the object-dtype frames (the workaround users had), which the hand computation below also gives."""
    from harness import Catalog, Evaluator, Interactions

    def frames(kind: str) -> tuple[object, ...]:
        s = (lambda xs: pd.array(xs, dtype="str")) if kind == "str" else (lambda xs: pd.Series(xs, dtype=object))
        train = Interactions.from_frame(pd.DataFrame({"user": s(["u1", "u2", "u2"]), "item": s(["i1", "i1", "i2"])}))
        catalog = Catalog.from_frame(pd.DataFrame({"item": s(["i1", "i2", "i3"]), "f1": [0.1, 0.2, 0.3]}))
        qrels = Qrels.from_frame(pd.DataFrame({"query": s(["u1", "u2"]), "doc": s(["i3", "i3"]), "relevance": [1, 1]}))
        scores = pd.DataFrame({"query": s(["u1", "u1", "u2"]), "doc": s(["i1", "i2", "i9"]), "score": [2.0, 1.0, 1.0]})
        run = Run.from_frame(scores)
        evaluator = Evaluator(qrels, ["ARP@2", "Coverage(catalog=recbole)@2"], train=train, items=catalog)
        aligned = evaluator.align(run)
        lists = evaluator.item_lists(aligned)
        return (
            evaluator.evaluate_aligned("r", aligned, lists).values.tolist(),
            {str(k): v.tolist() for k, v in evaluator.system_values(lists).items()},
        )

    assert frames("str") == frames("object")
    # u1: (2 + 1) / 2 training rows; u2: i9 is cold (0). Coverage: 3 items of 3 catalogue + 1 cold + [PAD]
    assert frames("str") == ([[1.5], [0.0]], {"Coverage(catalog='recbole')@2": [0.6]})


def test_the_api_refuses_and_warns_as_the_command_line_does(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """No query in common: the CLI's error, as harness's own InputFormatError. Judged queries the run misses: the CLI's
    note, as a DataWarning. ``relevance_level=`` is the CLI's ``-l`` (and pytrec_eval's ``relevance_level``)."""
    import io

    import pytrec_eval

    from harness.cli import main
    from harness.errors import DataWarning, InputFormatError

    with pytest.raises(InputFormatError, match="no query of the run is judged in <dict>"):
        harness.evaluate({"q1": {"a": 1}}, {"x1": {"a": 1.0}}, ["P@5"])
    qrels = {f"q{i}": {"a": 1, "b": 2, "c": 0} for i in range(4)}
    run = {"q0": {"a": 3.0, "b": 2.0, "c": 1.0}, "q1": {"c": 3.0, "b": 2.0}}
    with pytest.warns(DataWarning, match="2 judged queries are not in <dict> and count as 0") as caught:
        values = harness.evaluate(qrels, run, ["RR", "P@2"], relevance_level=2)
    assert caught[0].filename == __file__  # the warning points at the caller's line, not at harness's
    peer = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank", "P.2"}, relevance_level=2).evaluate(run)
    assert values.values[:2].tolist() == [[peer[q]["recip_rank"], peer[q]["P_2"]] for q in ("q0", "q1")]
    assert values.values[2:].tolist() == [[0.0, 0.0], [0.0, 0.0]]
    (tmp_path / "q").write_text("".join(f"{q} 0 {d} {r}\n" for q, docs in qrels.items() for d, r in docs.items()))
    (tmp_path / "r").write_text("".join(f"{q} Q0 {d} 0 {s} x\n" for q, docs in run.items() for d, s in docs.items()))
    out, err = io.StringIO(), io.StringIO()
    assert main(["eval", "-q", "-l", "2", "-m", "RR", str(tmp_path / "q"), str(tmp_path / "r")], out, err) == 0
    assert "2 judged queries are not in" in err.getvalue()
    cli = {q: float(v) for name, q, v in (line.split("\t") for line in out.getvalue().splitlines()) if q != "all"}
    assert cli == {q: values.values[i, 0] for i, q in enumerate(values.query_ids.tolist())}


def test_the_package_lists_its_public_names_and_frames_take_harness_s_own_columns() -> None:
    """Tab completion offers the public API; ``query_id``/``doc_id`` frames (harness's per-query tables, ir_measures')
    are read without naming the columns, with the same values as ``query``/``doc`` frames."""
    assert {"evaluate", "compare", "decide", "Qrels", "Run", "aggregate"} <= set(dir(harness))
    assert "import_module" not in dir(harness) and "TYPE_CHECKING" not in dir(harness)
    judged, scored = _frames(1)
    plain = evaluate(
        judged.rename(columns={"user": "query", "item": "doc", "rating": "relevance"}),
        scored.rename(columns={"user": "query", "item": "doc", "pred": "score"}),
        MEASURES,
    )
    ids = evaluate(
        judged.rename(columns={"user": "query_id", "item": "doc_id", "rating": "relevance"}),
        scored.rename(columns={"user": "query_id", "item": "doc_id", "pred": "score"}),
        MEASURES,
    )
    assert np.array_equal(plain.values, ids.values) and plain.query_ids.tolist() == ids.query_ids.tolist()
