"""The report's per-query values of each system, read off the parts where they line up, are pandas' pivot of them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from harness.measures.parse import parse_measure
from harness.records.store import SavedResults
from harness.report.model import _wides


def _results(rows: list[tuple[str, str, str, str, float]], seeds: list[str] | None = None) -> SavedResults:
    frame = pd.DataFrame(rows, columns=["system", "query_id", "segment", "measure", "value"])
    frame.insert(0, "dataset", "d")
    if seeds is not None:
        frame.insert(2, "seed", seeds)
    return SavedResults(Path("."), {}, {}, frame, pd.DataFrame(), pd.DataFrame())


def _pivot(results: SavedResults, measure: str) -> pd.DataFrame:
    rows = results.per_query[(results.per_query["dataset"] == "d") & (results.per_query["measure"] == measure)]
    return rows.pivot_table(index=["query_id", "segment"], columns="system", values="value", sort=False)


def _bits(values: np.ndarray) -> list[int]:
    return np.where(np.isnan(values), np.nan, values).view(np.int64).tolist()


AP, RR = "AP", "RR"
LINED_UP = [
    ("a", "q2", "new", AP, 0.5), ("a", "q1", "old", AP, -0.0), ("a", "q3", "old", AP, 1.0),
    ("b", "q2", "new", AP, 0.25), ("b", "q1", "old", AP, 0.75), ("b", "q3", "old", AP, -0.0),
    ("a", "q2", "new", RR, 1.0), ("a", "q1", "old", RR, 0.5), ("a", "q3", "old", RR, 0.2),
    ("b", "q2", "new", RR, 0.5), ("b", "q1", "old", RR, 1.0), ("b", "q3", "old", RR, 0.2),
]  # fmt: skip


@pytest.mark.parametrize(
    "case",
    [
        "lined up",
        "another order",
        "a missing value",
        "an infinite value",
        "a query twice",
        "a query one system lacks",
        "seeds",
        "the baseline's rows later",
    ],
)
def test_each_measures_values_are_the_pivot_of_its_rows(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    rows, seeds = list(LINED_UP), None
    if case == "another order":
        rows[3], rows[4] = rows[4], rows[3]
    elif case == "a missing value":
        rows[4] = (*rows[4][:4], float("nan"))
    elif case == "an infinite value":
        rows[2] = (*rows[2][:4], float("inf"))
    elif case == "a query twice":
        rows[5] = ("b", "q1", "old", AP, 0.125)
    elif case == "a query one system lacks":
        del rows[5]
    elif case == "seeds":
        seeds = ["1"] * len(rows)
        rows += [(s, q, g, m, v / 2) for s, q, g, m, v in rows]
        seeds += ["2"] * len(LINED_UP)
    elif case == "the baseline's rows later":
        rows = rows[3:6] + rows[:3] + rows[6:]
    results = _results(rows, seeds)
    if case in ("lined up", "the baseline's rows later"):  # read off the parts: no pivot

        def refused(*args: object, **kwargs: object) -> None:
            raise AssertionError("pivoted")

        with monkeypatch.context() as patched:
            patched.setattr(pd.DataFrame, "pivot_table", refused)
            wides = _wides(results, "d", [parse_measure(AP), parse_measure(RR)])
    else:
        wides = _wides(results, "d", [parse_measure(AP), parse_measure(RR)])
    for measure, wide in wides.items():
        expected = _pivot(results, str(measure))
        assert [wide.label(i) for i in range(len(expected))] == list(expected.index)
        assert sorted(wide.values) == sorted(expected.columns)
        for system in expected.columns:
            assert _bits(wide[system]) == _bits(expected[system].to_numpy())
