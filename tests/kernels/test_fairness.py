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
    measures = [
        "ExposureShare(group=provider,category=0,patience=0.5)@2",
        "ExposureShare(group=provider,category=1,weight=uniform)@2",
    ]
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


def test_text_labels_group_items_as_their_codes_do(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A provider column of names groups items as a column of numbers does (labels sorted: acme = 0, zeta = 1), and
    is no feature; ExposureShare(category=acme) by hand: b's exposure 0.85 of 1 + 0.85 + 1 + 0.85 (lists (a, c) and
    (c, b), patience 0.85). A mixed column named with --items-groups (or groups: in a config) is read as labels."""
    import io
    import json

    from harness.cli import main

    qrels = Qrels.from_records([("u1", "a", 1), ("u2", "b", 1), ("u2", "c", 1)])
    run = Run.from_records([("u1", "a", 2.0), ("u1", "c", 1.0), ("u2", "c", 2.0), ("u2", "b", 1.0), ("u2", "d", 0.5)])
    train = Interactions.from_records([("u3", "a"), ("u1", "b")])
    named = Catalog.from_frame(
        pd.DataFrame({"item": ["a", "b", "c", "d"], "provider": ["zeta", "acme", "zeta", ""], "year": [1999, 2004, 2011, 2020]})
    )
    numbered = Catalog.from_frame(pd.DataFrame({"item": ["a", "b", "c"], "provider": [1, 0, 1], "year": [1999, 2004, 2011]}))
    assert named.feature_names == ("year",) and named.groups["provider"][1] == ("acme", "zeta")
    values = {}
    for items, category in ((named, "acme"), (numbered, 0)):
        measures = [
            f"ExposureShare(group=provider,category={category!r})@2",
            "REO(group=provider)@2",
            "RSP(group=provider)@3",
            "ItemMAD(group=provider)@3",
        ]
        evaluator = Evaluator(qrels, measures, train=train, items=items)
        got = evaluator.system_values(evaluator.item_lists(evaluator.align(run)))
        values[category] = [float(v[0]) for v in got.values()]
    assert values["acme"] == values[0]
    assert math.isclose(values["acme"][0], 0.85 / 3.7, rel_tol=1e-12)
    (tmp_path / "q.txt").write_text("u1 0 a 1\nu2 0 b 1\nu2 0 c 1\n")
    (tmp_path / "r.txt").write_text("u1 Q0 a 1 2 r\nu1 Q0 c 2 1 r\nu2 Q0 c 1 2 r\nu2 Q0 b 2 1 r\nu2 Q0 d 3 0.5 r\n")
    (tmp_path / "t.csv").write_text("user,item\nu3,a\nu1,b\n")
    (tmp_path / "i.csv").write_text("item,provider\na,1984\nb,acme\nc,1984\nd,\n")  # 1984: a name here, not a number
    out, err = io.StringIO(), io.StringIO()
    argv = [
        "eval",
        "--format",
        "json",
        "-m",
        "ExposureShare(group=provider,category=acme)@2",
        "--train",
        str(tmp_path / "t.csv"),
        "--items",
        str(tmp_path / "i.csv"),
        "--items-groups",
        "provider",
        str(tmp_path / "q.txt"),
        str(tmp_path / "r.txt"),
    ]
    assert main(argv, out, err) == 0, err.getvalue()
    (row,) = [r for r in json.loads(out.getvalue())["results"] if r["query_id"] == "all"]
    assert math.isclose(row["value"], 0.85 / 3.7, rel_tol=1e-12)


def test_nnrbp_of_a_query_without_a_relevant_subtopic() -> None:
    """q2's only subtopic judgment is 0: nNRBP is 0 there by default, ndeval's NaN with empty=nan (and left out of the
    mean). q1 by hand: d1 covers subtopic 1 at rank 1, gain 1, so NRBP = (1 - 0.5 x 0.5) / 1 x 1 = 0.75, and the
    ideal is the same ranking: nNRBP = 1."""
    from harness import aggregate
    from harness.data.model import Intents

    intents = Intents.from_records([("q1", "1", "d1", 1), ("q2", "1", "d5", 0)])
    run = Run.from_records([("q1", "d1", 2.0), ("q1", "d2", 1.0), ("q2", "d5", 1.0)])
    per_query = Evaluator(intents, ["NRBP", "nNRBP", "nNRBP(empty=nan)"]).evaluate(run)
    assert per_query.query_ids.tolist() == ["q1", "q2"]
    assert per_query.values[0].tolist() == [0.75, 1.0, 1.0]
    assert per_query.values[1, :2].tolist() == [0.0, 0.0] and math.isnan(per_query.values[1, 2])
    means = {str(m): v for m, v in aggregate(per_query).items()}
    assert means["nNRBP"] == 0.5 and means["nNRBP(empty='nan')"] == 1.0


def test_sparse_terms_sum_as_a_dense_product_and_share_their_bits_across_rows_of_weights() -> None:
    """Item MAD's per-user terms are kept as CSR arrays: summed under one row of weights (the run's value, numpy
    only) or many (the resamples, scipy), every row gets the same bits as alone, and the values of the dense product."""
    import numpy as np

    from harness.kernels._segments import RowTerms

    rng = np.random.default_rng(5)
    lengths = rng.integers(0, 6, size=40)
    indptr = np.concatenate(([0], np.cumsum(lengths)))
    columns = np.concatenate([rng.choice(30, size=n, replace=False) for n in lengths]).astype(np.int64)
    terms = RowTerms(indptr, columns, (rng.random(columns.size) * 10, None), width=30)
    weights = rng.poisson(1.0, size=(4, 40)).astype(np.float64)
    many = terms.weighted_sums(weights)
    dense = np.zeros((40, 60))  # by hand: each entry's value at its column, and 1 at 30 + its column
    for user in range(40):
        for i in range(indptr[user], indptr[user + 1]):
            dense[user, columns[i]] += terms.blocks[0][i]  # type: ignore[index]
            dense[user, 30 + columns[i]] += 1.0
    assert np.array_equal(terms.toarray(), dense)
    for b in range(4):
        assert np.array_equal(many[b], terms.weighted_sums(weights[b : b + 1])[0])
    np.testing.assert_allclose(many, weights @ terms.toarray(), rtol=1e-12)
    rows = np.array([3, 3, 0, 39])
    assert np.array_equal(terms[rows].toarray(), terms.toarray()[rows])
    stacked = RowTerms.stack([terms[rows], terms], zero_rows=2).toarray()
    assert np.array_equal(stacked, np.vstack([terms.toarray()[rows], terms.toarray(), np.zeros((2, 60))]))
