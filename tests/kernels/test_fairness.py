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


def test_psp_ideal_takes_the_largest_inverse_propensities_whichever_way_they_run() -> None:
    """PSP@2's ideal term: the user's two relevant items of largest 1/p = 1 + C (n_i + B)^-A, from pyxclib's formula.
    With 2 training users C = (ln 2 - 1)(B + 1)^A < 0: rare items weigh *less*, so the ideal picks the popular ones;
    with 20 users C > 0 and it picks the rare ones."""
    a, b = 0.55, 1.5
    qrels = Qrels.from_records([("u", "x", 1), ("u", "y", 1), ("u", "z", 1)])
    run = Run.from_records([("u", "x", 3.0)])
    for n_users, seen in ((2, {"x": 2, "y": 1, "z": 0}), (20, {"x": 20, "y": 3, "z": 0})):
        pairs = [(f"t{j}", item) for item, users in seen.items() for j in range(users)]
        pairs += [(f"t{j}", "w") for j in range(n_users)]  # every training user counts, whatever they saw
        evaluator = Evaluator(qrels, ["PSP(norm=pyxclib)@2"], train=Interactions.from_records(pairs))
        lists = evaluator.item_lists(evaluator.align(run))
        c = (math.log(n_users) - 1.0) * (b + 1.0) ** a
        weight = {item: 1 + c * (users + b) ** -a for item, users in seen.items()}
        ideal = sum(sorted(weight.values(), reverse=True)[:2]) / 2
        value = next(iter(evaluator.system_values(lists).values()))[0]
        assert math.isclose(value, (weight["x"] / 2) / ideal, rel_tol=1e-12)
