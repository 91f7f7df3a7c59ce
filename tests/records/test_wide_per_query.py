"""A results folder's per-query values with a column per system or per measure: read off the rows where they line up,
and always pandas' pivot of them, bit for bit (the report's charts and top changes, each child run's artifact)."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from harness.records.store import SavedResults

AP, RR = "AP", "RR"
LINED_UP = [
    ("a", "q2", "new", AP, 0.5), ("a", "q2", "new", RR, 1.0),
    ("a", "q1", "old", AP, -0.0), ("a", "q1", "old", RR, 0.5),
    ("a", "q3", "old", AP, 1.0), ("a", "q3", "old", RR, 0.2),
    ("b", "q2", "new", AP, 0.25), ("b", "q2", "new", RR, 0.5),
    ("b", "q1", "old", AP, 0.75), ("b", "q1", "old", RR, 1.0),
    ("b", "q3", "old", AP, -0.0), ("b", "q3", "old", RR, 0.2),
]  # fmt: skip
CASES = {
    "lined up": True,  # True: read off the rows, no pivot
    "the second system's rows first": True,
    "another order": False,
    "a missing value": False,
    "an infinite value": False,
    "a query twice": False,
    "a query one system lacks": False,
    "seeds": True,  # with the seed a key, a query once in each run; without it, the runs' mean
    "a query twice in one run": False,
    "a missing segment": False,  # the pivot leaves out a row whose key is missing
}


def _rows(case: str) -> tuple[list[tuple[str, str, str, str, float]], list[str] | None]:
    rows, seeds = list(LINED_UP), None
    if case == "another order":
        rows[6:8], rows[8:10] = rows[8:10], rows[6:8]
    elif case == "a missing value":
        rows[8] = (*rows[8][:4], float("nan"))
    elif case == "an infinite value":
        rows[4] = (*rows[4][:4], float("inf"))
    elif case == "a query twice":
        rows[10] = ("b", "q1", "old", AP, 0.125)
    elif case == "a query one system lacks":
        del rows[10:]
    elif case == "seeds":
        seeds = ["1"] * len(rows) + ["2"] * len(rows)
        rows += [(s, q, g, m, v / 2) for s, q, g, m, v in rows]
    elif case == "a query twice in one run":
        seeds = ["1"] * len(rows) + ["2"] * len(rows)
        rows += [(s, q, g, m, v / 2) for s, q, g, m, v in rows]
        rows[16] = ("a", "q2", "new", AP, 0.125)  # run 2 of system a: q2's AP where q3's was
    elif case == "a missing segment":
        rows[2] = ("a", "q1", None, AP, -0.0)  # type: ignore[assignment]
    elif case == "the second system's rows first":
        rows = rows[6:] + rows[:6]
    return rows, seeds


def _results(case: str) -> SavedResults:
    rows, seeds = _rows(case)
    frame = pd.DataFrame(rows, columns=["system", "query_id", "segment", "measure", "value"])
    frame.insert(0, "dataset", "d")
    if seeds is not None:
        frame.insert(2, "seed", seeds)
    return SavedResults(Path("."), {}, {}, frame, pd.DataFrame(), pd.DataFrame())


def _pivot(results: SavedResults, by: str, of: str, keys: list[str]) -> pd.DataFrame:
    """What the wide table must be: pandas' pivot of the rows, computed here independently."""
    table = results.per_query
    fixed = "measure" if by == "system" else "system"
    rows = table[(table["dataset"] == "d") & (table[fixed] == of)]
    return rows.pivot_table(index=[k for k in keys if k in table], columns=by, values="value", sort=False).reset_index()


def _parquet(frame: pd.DataFrame) -> bytes:
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False)
    return buffer.getvalue()


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize(("by", "of"), [("system", AP), ("system", RR), ("measure", "a"), ("measure", "b")])
@pytest.mark.parametrize("keys", [("seed", "query_id", "segment"), ("query_id", "segment")])
def test_the_wide_table_is_the_pivot_of_its_rows(
    case: str, by: str, of: str, keys: tuple[str, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    results = _results(case)
    expected = _pivot(results, by, of, list(keys))
    if CASES[case]:  # lined up: read off the rows, never pivoted

        def refused(*args: object, **kwargs: object) -> None:
            raise AssertionError("pivoted")

        monkeypatch.setattr(pd.DataFrame, "pivot_table", refused)
    wide = results.wide_per_query("d", by, of, keys=keys)  # type: ignore[arg-type]
    monkeypatch.undo()
    assert list(wide.columns) == list(expected.columns) and wide.columns.name == expected.columns.name == by
    for column in expected.columns:
        mine, theirs = wide[column].to_numpy(), expected[column].to_numpy()
        if theirs.dtype.kind == "f":
            assert np.where(np.isnan(mine), np.nan, mine).tobytes() == np.where(np.isnan(theirs), np.nan, theirs).tobytes()
        else:
            assert mine.tolist() == theirs.tolist()
    assert _parquet(wide) == _parquet(expected)  # each child run's artifact: the same bytes


@pytest.mark.parametrize("runs", [1, 2, 3, 5])
@pytest.mark.parametrize("layout", ["run after run", "query by query"])
def test_a_systems_runs_are_averaged_as_the_pivot_averages_them(runs: int, layout: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the seed among the keys a cell is the mean of a system's runs (seeds): read off the runs' rows, the
    pivot's mean to the last bit, for values of any magnitude and signed zeros."""
    rng = np.random.default_rng(runs)
    ids = [f"q{i:02d}" for i in range(30)]
    records = []
    for seed in range(runs):
        for system in ("a", "b"):
            values = rng.normal(size=30) * 10.0 ** rng.integers(-200, 200, size=30)
            values[:3] = -0.0
            values[3:5] = rng.integers(0, 3, size=2) / 3
            records += [
                (system, str(seed), q, "new" if i % 2 else "old", AP, float(v))
                for i, (q, v) in enumerate(zip(ids, values, strict=True))
            ]
    frame = pd.DataFrame(records, columns=["system", "seed", "query_id", "segment", "measure", "value"])
    frame.insert(0, "dataset", "d")
    if layout == "query by query":
        frame = frame.sort_values(["query_id", "seed"], kind="stable").reset_index(drop=True)
    results = SavedResults(Path("."), {}, {}, frame, pd.DataFrame(), pd.DataFrame())
    expected = _pivot(results, "system", AP, ["query_id", "segment"])

    def refused(*args: object, **kwargs: object) -> None:
        raise AssertionError("pivoted")

    monkeypatch.setattr(pd.DataFrame, "pivot_table", refused)
    wide = results.wide_per_query("d", "system", AP, keys=("query_id", "segment"))
    monkeypatch.undo()
    assert list(wide.columns) == list(expected.columns)
    assert wide[["query_id", "segment"]].equals(expected[["query_id", "segment"]])
    for system in ("a", "b"):
        assert wide[system].to_numpy().tobytes() == expected[system].to_numpy().tobytes()
