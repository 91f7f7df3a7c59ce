"""Fairness measures checked by hand on a tiny case (the peers' values are in test_fairness_golden.py)."""

from __future__ import annotations

import math

import pandas as pd

from harness import Catalog, Evaluator, Interactions, Qrels, Run


def test_exposure_share_by_hand() -> None:
    """Two users, lists (a, c) and (c, b); a, b in provider 0, c in 1. Geometric exposure 1, 0.5 by rank; so provider 0
    gets 1 + 0.5 of 3, and with uniform weights 2 of 4 recommendations."""
    items = Catalog.from_frame(pd.DataFrame({"item": ["a", "b", "c"], "provider": [0, 0, 1]}))
    qrels = Qrels.from_records([("u1", "a", 1), ("u2", "b", 1)])
    run = Run.from_records([("u1", "a", 2.0), ("u1", "c", 1.0), ("u2", "c", 2.0), ("u2", "b", 1.0)])
    measures = ["ExposureShare(group=provider,category=0,patience=0.5)@2",
                "ExposureShare(group=provider,category=1,weight=uniform)@2"]  # fmt: skip
    evaluator = Evaluator(qrels, measures, train=Interactions.from_records([("u3", "a")]), items=items)
    values = {str(m): v.tolist() for m, v in evaluator.system_values(evaluator.item_lists(evaluator.align(run))).items()}
    assert math.isclose(values["ExposureShare(category=0,group='provider',patience=0.5)@2"][0], 1.5 / 3)
    assert values["ExposureShare(category=1,group='provider',weight='uniform')@2"] == [2 / 4]
