"""compare(): pairs, families, directions and reproducibility on hand-made per-query values."""

from __future__ import annotations

import numpy as np
import pytest

from harness.comparison.compare import CompareSettings, compare
from harness.evaluation.results import PerQuery, RunResult
from harness.measures.parse import parse_measure


def _result(system: str, values: dict[str, list[float]], segments: list[str] | None = None) -> RunResult:
    measures = tuple(parse_measure(m) for m in values)
    matrix = np.array(list(values.values())).T
    n = matrix.shape[0]
    ids = np.array([f"q{i:02d}" for i in range(n)], dtype=object)
    seg = np.array(segments or [""] * n, dtype=object)
    return RunResult("d", system, PerQuery(system, ids, measures, matrix, np.ones(n, bool)), seg, {})


def _rows(results: list[RunResult], **settings: object) -> list[dict[str, object]]:
    measures = results[0].per_query.measures
    rows = [r.to_record() for r in compare(results, measures, CompareSettings(permutations=2000, resamples=2000, **settings))]  # type: ignore[arg-type]
    return rows


def test_baseline_mode_pairs_and_values() -> None:
    rng = np.random.default_rng(0)
    base = rng.random(30)
    results = [
        _result("base", {"AP": list(base)}),
        _result("better", {"AP": list(base + 0.1)}),
        _result("same", {"AP": list(base)}),
    ]
    rows = _rows(results, baseline="base", mode="baseline")
    assert [(r["system_a"], r["system_b"]) for r in rows] == [("base", "better"), ("base", "same")]
    better, same = rows
    assert better["delta"] == pytest.approx(0.1) and better["wins"] == 30 and better["significant"]
    assert same["p_t"] == 1 and same["p_randomization"] == 1 and not same["significant"] and same["ties"] == 30
    assert better["p_adj"] == better["p_randomization_adj"]
    assert not np.isnan(better["p_tukey_hsd"])  # three systems: randomised Tukey HSD


def test_all_pairs_and_holm_within_each_measure() -> None:
    rng = np.random.default_rng(1)
    values = {s: {"AP": list(rng.random(20)), "P@5": list(rng.random(20))} for s in "abc"}
    rows = _rows([_result(s, v) for s, v in values.items()], mode="all_pairs", correction="holm", tests=("t",), primary="t")
    assert {(r["system_a"], r["system_b"]) for r in rows} == {("a", "b"), ("a", "c"), ("b", "c")}
    for measure in ("AP", "P@5"):
        family = [r for r in rows if r["measure"] == measure]
        raw = np.array([r["p_t"] for r in family])
        order = np.argsort(raw)
        expected = np.maximum.accumulate(raw[order] * np.array([3, 2, 1]))
        got = np.array([r["p_t_adj"] for r in family])[order]
        np.testing.assert_allclose(got, np.minimum(expected, 1.0))


def test_grid_family_spans_measures() -> None:
    rng = np.random.default_rng(2)
    results = [_result(s, {"AP": list(rng.random(20)), "P@5": list(rng.random(20))}) for s in "ab"]
    rows = _rows(results, mode="all_pairs", correction="bonferroni", family="grid", tests=("t",), primary="t")
    for row in rows:
        assert row["p_t_adj"] == pytest.approx(min(1.0, row["p_t"] * 2))


def test_lower_is_better_measures_count_wins_the_other_way() -> None:
    results = [_result("a", {"Unj@5": [0.4, 0.4, 0.2]}), _result("b", {"Unj@5": [0.2, 0.4, 0.4]})]
    (row,) = _rows(results, mode="all_pairs")
    assert (row["wins"], row["ties"], row["losses"]) == (1, 1, 1)
    results = [_result("a", {"Unj@5": [0.4, 0.4, 0.2]}), _result("b", {"Unj@5": [0.2, 0.2, 0.2]})]
    (row,) = _rows(results, mode="all_pairs")
    assert (row["wins"], row["losses"]) == (2, 0) and row["few_queries"]


def test_segments_are_compared_apart_and_results_reproduce() -> None:
    rng = np.random.default_rng(3)
    seg = ["new"] * 10 + ["old"] * 10
    results = [_result(s, {"AP": list(rng.random(20))}, seg) for s in "ab"]
    one = _rows(results, mode="all_pairs", seed=5)
    two = _rows(results, mode="all_pairs", seed=5)
    assert [r["segment"] for r in one] == ["all", "new", "old"]
    assert [r["n_queries"] for r in one] == [20, 10, 10]
    import pandas as pd

    assert pd.DataFrame(one).equals(pd.DataFrame(two))  # NaN-aware: every number identical


def test_too_few_permutations_for_the_family_are_flagged() -> None:
    rng = np.random.default_rng(4)
    results = [_result(s, {f"P@{k}": list(rng.random(10)) for k in range(1, 11)}) for s in "ab"]
    rows = [
        r.to_record()
        for r in compare(
            results, results[0].per_query.measures, CompareSettings(permutations=100, family="grid", mode="all_pairs")
        )
    ]
    assert all(r["resolution_limited"] for r in rows)  # 10 x 1/101 >= 0.05


def test_the_union_of_the_systems_queries_is_in_pythons_order_whatever_the_ids() -> None:
    """The union the tests run over is built in Arrow (UTF-8 bytes sorted, membership hashed): it is sorted() of the
    ids as Python orders them (by code point), for ids of any script, digits, case, a NUL or an emoji, each system's
    values on it where it has them."""
    from harness.comparison.compare import _on_union

    ids = ["b", "a", "é", "Z", "z", "ä", "a\x00b", "日本", "🙂", "10", "9", "ß", "ss", "\uffff", "\U0001f600", "A"]
    rng = np.random.default_rng(4)
    a = _result("a", {"AP": list(rng.random(len(ids)))})
    b = _result("b", {"AP": list(rng.random(len(ids)))})
    a = RunResult(
        "d",
        "a",
        PerQuery("a", np.array(ids, dtype=object), a.per_query.measures, a.per_query.values, np.ones(len(ids), bool)),
        np.array([""] * len(ids), dtype=object),
        {},
    )
    kept = [i for i in ids if i not in ("9", "🙂")]
    b = RunResult(
        "d",
        "b",
        PerQuery(
            "b", np.array(kept, dtype=object), b.per_query.measures, b.per_query.values[: len(kept)], np.ones(len(kept), bool)
        ),
        np.array([""] * len(kept), dtype=object),
        {},
    )
    union, values, evaluated = _on_union({"a": a, "b": b}, "all", ["a", "b"], a.per_query.measures, same=False)
    assert union.tolist() == sorted(ids)
    assert evaluated["b"].tolist() == [[i in kept for i in sorted(ids)]] and evaluated["a"].all()  # (measures, queries)
    by_id = dict(zip(ids, a.per_query.values[:, 0], strict=True))
    assert values["a"][0].tolist() == [by_id[i] for i in sorted(ids)]
    assert np.isnan(values["b"][~evaluated["b"]]).all()


def _shuffled(result: RunResult, order: np.ndarray) -> RunResult:
    """The same run with its per-query table's rows in another order."""
    table = result.per_query
    evaluated = None if table.evaluated is None else table.evaluated[order]
    per_query = PerQuery(table.run, table.query_ids[order], table.measures, table.values[order], table.in_run[order], evaluated)
    return RunResult(result.dataset, result.system, per_query, result.segments[order], {})


@pytest.mark.parametrize("systems", [2, 3])
def test_tables_with_the_same_queries_are_compared_by_position_as_by_id(systems: int) -> None:
    """Where every system's table holds the same queries in ascending order (the usual case), the comparisons read
    them by position; the rows are those of the same tables in other orders, compared by id, bit for bit."""
    from harness.decision.release import paired_values
    from harness.evaluation.results import same_queries

    rng = np.random.default_rng(12)
    segments = list(rng.choice(["new", "old"], size=40))
    results = [
        _result(f"s{i}", {"AP": list(rng.random(40)), "P@5": list(rng.integers(0, 6, 40) / 5)}, segments) for i in range(systems)
    ]
    shuffled = [_shuffled(r, rng.permutation(40)) for r in results]
    assert same_queries(results[0].per_query, results[1].per_query)
    assert not same_queries(results[0].per_query, shuffled[1].per_query)
    by_position = _rows(results, mode="all_pairs", resampling="always")
    by_id = _rows([results[0], *shuffled[1:]], mode="all_pairs", resampling="always")
    assert len(by_position) == len(by_id) == 3 * 2 * systems * (systems - 1) // 2
    for mine, theirs in zip(by_position, by_id, strict=True):
        assert mine.keys() == theirs.keys()
        for key, value in mine.items():
            assert value == theirs[key] or (value != value and theirs[key] != theirs[key]), key  # NaN alike
    for segment in ("all", "new"):
        masks = [dict(r.segment_masks())[segment] for r in (results[0], results[1], shuffled[1])]
        fast = paired_values(results[0].per_query, results[1].per_query, results[0].measures[0], masks[0], masks[1])
        slow = paired_values(results[0].per_query, shuffled[1].per_query, results[0].measures[0], masks[0], masks[2])
        assert fast.production.tobytes() == slow.production.tobytes()  # type: ignore[union-attr]
        assert fast.candidate.tobytes() == slow.candidate.tobytes()  # type: ignore[union-attr]


def test_each_measure_is_tested_over_its_own_queries() -> None:
    """A measure evaluated under conventions of its own counts its own queries (``PerQuery.evaluated``): its row's
    means, differences and tests are over those, as if the others were not there, and the NaN outside are no error."""
    rng = np.random.default_rng(3)
    a, b = rng.random((30, 2)), rng.random((30, 2))
    counted = np.ones((30, 2), dtype=bool)
    counted[:8, 1] = False  # the second measure counts the last 22 queries only
    for values in (a, b):
        values[:8, 1] = np.nan

    def result(system: str, values: np.ndarray, evaluated: np.ndarray | None, rows: slice) -> RunResult:
        ids = np.array([f"q{i:02d}" for i in range(30)], dtype=object)[rows]
        measures = (parse_measure("AP"), parse_measure("P@10"))
        return RunResult(
            "d",
            system,
            PerQuery(system, ids, measures, values[rows], np.ones(len(ids), bool), evaluated),
            np.array([""] * len(ids), dtype=object),
            {},
        )

    rows = _rows([result("a", a, counted, slice(None)), result("b", b, counted, slice(None))], nan="error")
    alone = _rows([result("a", a, None, slice(8, None)), result("b", b, None, slice(8, None))])
    ap, p10 = rows
    assert ap["n_queries"] == 30 and p10["n_queries"] == 22 and p10["n_dropped_nan"] == 0
    keys = ("mean_a", "mean_b", "delta", "ci_low", "ci_high", "p_t", "p_randomization", "n_queries")
    assert {k: p10[k] for k in keys} == {k: alone[1][k] for k in keys}


@pytest.mark.parametrize(("systems", "segments"), [(2, None), (3, None), (4, ["new"] * 10 + ["old"] * 10)])
def test_progress_counts_every_block_compare_advances_by(systems: int, segments: list[str] | None) -> None:
    """count_blocks is the number of advance() calls compare makes: each pair in each segment, and with three systems
    or more ten for each segment's ANOVA and Tukey HSD, a tenth of its trials each (the slow part at scale, so the
    bar moves through it)."""
    from harness.comparison.compare import TUKEY_STEPS, count_blocks

    rng = np.random.default_rng(9)
    results = [_result(f"s{i}", {"AP": list(rng.random(20)), "P@5": list(rng.random(20))}, segments) for i in range(systems)]
    settings = CompareSettings(permutations=200, resamples=200, mode="all_pairs")
    calls: list[None] = []
    compare(results, results[0].per_query.measures, settings, lambda: calls.append(None))
    pairs, parts = systems * (systems - 1) // 2, 1 + len(set(segments or []))
    assert len(calls) == count_blocks(results, settings) == parts * (pairs + TUKEY_STEPS * (systems >= 3))
