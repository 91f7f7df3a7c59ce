"""Data diagnostics, hand-computed."""

from __future__ import annotations

import pytest

from harness import Evaluator, Qrels, Run
from harness.evaluation.diagnostics import diagnose


def test_ties_and_judged_fraction() -> None:
    qrels = Qrels.from_records([("q1", "a", 1), ("q1", "b", 0), ("q2", "x", 1), ("q3", "z", 1)])
    run = Run.from_records(
        [
            # q1: scores 3, 2, 2, 1 -> ranks 2 and 3 tie: straddles k=2, not k=1 or k=3;
            # trec_eval order a, c, b, d (ties by docno descending): judged a; a, b
            ("q1", "a", 3.0),
            ("q1", "b", 2.0),
            ("q1", "c", 2.0),
            ("q1", "d", 1.0),
            # q2: one document, judged; q3 is judged but not retrieved; q9 is not judged
            ("q2", "x", 1.0),
            ("q9", "y", 1.0),
        ]
    )
    aligned = Evaluator(qrels, ["P@1"]).align(run)
    found = diagnose(aligned, (1, 2, 3))
    assert [found[f"ties_straddling_at_{k}"] for k in (1, 2, 3)] == [0, 1, 0]
    # judged fraction over the retrieved queries q1, q2: at 2 -> (1/2 + 1/1) / 2; at 3 -> (2/3 + 1) / 2
    assert found["judged_fraction_at_2"] == pytest.approx(0.75)
    assert found["judged_fraction_at_3"] == pytest.approx((2 / 3 + 1) / 2)
    assert found["queries_evaluated"] == 3 and found["queries_retrieved"] == 2
    assert found["judged_queries_missing_from_run"] == 1 and found["run_queries_without_judgments"] == 1
