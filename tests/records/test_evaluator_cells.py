"""The MLflow evaluator reads each cell of the evaluation DataFrame as what it must be, and names the row and
column of one that is not: no string read as its characters, no mapping ranked by its insertion order, no missing
user read as the query "nan". Fast: :func:`write_experiment` is called with the data MLflow would hand it."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from harness.errors import InputFormatError
from harness.pipeline.mlflow_evaluator import write_experiment


def _write(tmp_path: Path, users: list[object], ranked: list[object], relevant: list[object]) -> Path:
    data = SimpleNamespace(
        features_data=pd.DataFrame({"user": users}, index=[10 + i for i in range(len(users))]),
        predictions_data=pd.Series(ranked),
        labels_data=pd.Series(relevant),
        targets_name="relevant",
        predictions_name="ranked",
    )
    return write_experiment(data, None, {"query": "user"}, tmp_path, "sqlite:///unused.db")


def test_lists_tuples_arrays_and_graded_mappings_are_read(tmp_path: Path) -> None:
    _write(
        tmp_path,
        ["u1", "u2", 3],
        [["a", "b"], ("c",), np.array(["d", "e"])],
        [["a"], {"c": 2, "x": 1.0}, np.array(["e"])],
    )
    run = pd.read_csv(tmp_path / "run.csv", dtype=str)
    assert run.values.tolist() == [["u1", "a", "2"], ["u1", "b", "1"], ["u2", "c", "1"], ["3", "d", "2"], ["3", "e", "1"]]
    qrels = pd.read_csv(tmp_path / "qrels.csv", dtype=str)
    assert qrels.values.tolist() == [["3", "e", "1"], ["u1", "a", "1"], ["u2", "c", "2"], ["u2", "x", "1"]]


@pytest.mark.parametrize(
    ("users", "ranked", "relevant", "message"),
    [
        (["u1", "u2"], [["a"], "i10"], [["a"], ["i10"]], "row 11, column 'ranked': str 'i10' is not a list of items"),
        (["u1", "u2"], [["a"], {"b": 0.9, "a": 0.1}], [["a"], ["a"]], "row 11, column 'ranked': a mapping is not a ranking"),
        (["u1", "u2"], [["a"], ["b"]], ["a", "i10"], "row 10, column 'relevant': str 'a' is not a list of items"),
        (["u1", "u2"], [["a"], ["b"]], [["a"], {"b": "high"}], "row 11, column 'relevant': item 'b' has grade 'high'"),
        (["u1", float("nan")], [["a"], ["b"]], [["a"], ["b"]], "row 11, column 'user': the query id is missing"),
        (["u1", "u2"], [["a", None], ["b"]], [["a"], ["b"]], "row 10, column 'ranked': an item id is None"),
        (["u1", "u2"], [["a"], 7], [["a"], ["b"]], "row 11, column 'ranked': int '7' is not a list of items"),
    ],
)
def test_a_bad_cell_is_named_by_row_and_column(
    tmp_path: Path, users: list[object], ranked: list[object], relevant: list[object], message: str
) -> None:
    with pytest.raises(InputFormatError) as raised:
        _write(tmp_path, users, ranked, relevant)
    assert message in str(raised.value), str(raised.value)
    assert not (tmp_path / "run.csv").exists() and not (tmp_path / "qrels.csv").exists()
