"""The results' per-query table: built in Arrow where pandas keeps text there, it is the table Python strings give,
to the parquet file's last byte, with seeds, measures of their own queries and segments."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

from harness.evaluation import results
from harness.measures.parse import parse_measure


@pytest.mark.parametrize("seed", [None, "seed-2"])
@pytest.mark.parametrize("own_queries", [False, True])
def test_the_table_is_the_one_python_strings_give(seed: str | None, own_queries: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(4)
    n = 500
    ids = np.array([f"u{i}" if i % 7 else f"é{i}" for i in range(n)], dtype=object)
    segments = rng.choice(["new", "returning", ""], n).astype(object)
    measures = tuple(parse_measure(m) for m in ("nDCG@10", "P@10", "RR"))
    values = rng.random((n, len(measures)))
    evaluated = rng.random((n, len(measures))) < 0.8 if own_queries else None
    built = results.per_query_rows("data", "sys", ids, segments, measures, values, seed, evaluated)
    monkeypatch.setattr(results, "_arrow_text", lambda: None)  # every column from Python strings
    plain = results.per_query_rows("data", "sys", ids, segments, measures, values, seed, evaluated)
    pd.testing.assert_frame_equal(built, plain, check_exact=True)
    first, second = io.BytesIO(), io.BytesIO()
    built.to_parquet(first, index=False)
    plain.to_parquet(second, index=False)
    assert first.getvalue() == second.getvalue()
    kept = evaluated.reshape(-1) if evaluated is not None else np.ones(n * len(measures), bool)
    assert built["query_id"].tolist() == np.repeat(ids, len(measures))[kept].tolist()
    assert built["measure"].tolist() == np.tile(["nDCG@10", "P@10", "RR"], n)[kept].tolist()
