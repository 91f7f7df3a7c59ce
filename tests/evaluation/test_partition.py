"""Partition invariance: a query's value is a function of that query's rows only, bit for bit.

Every registered measure, under every convention, is evaluated on the whole data and on
random subsets of the queries given in a random order (judgments and run rows both
shuffled); each query's value must be *equal* (``==``, not close) to its value in the
whole evaluation. This is what makes evaluation in partitions (Dask) give the same bits.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from harness import Conventions, Evaluator, Qrels, Run
from harness.measures.parse import parse_measure
from harness.measures.registry import REGISTRY
from tests.generated import adversarial
from tests.measures.test_invariants import MEASURES

# gains and depths whose running sums are not integers, so rounding order matters
EXTRA = [parse_measure(m) for m in ("nDCG(gains={0:0,1:0.3,2:1.7,3:2.9,4:7.1})@10", "nDCG(gain='exp')", "DCG@20", "RBP")]

CONVENTIONS = [
    {
        "ties": ties,
        "queries": queries,
        "negative_labels": negative,
        "ideal_from": ideal,
        "ap_denominator": ap,
        "duplicates": "max",
        "judged_only": i % 2 == 1,
    }
    for i, (ties, queries, negative, ideal, ap) in enumerate(
        itertools.product(
            ("trec_eval", "input_order", "average", "optimistic", "pessimistic"),
            ("qrels", "intersection", "run"),
            ("unjudged", "nonrelevant"),
            ("judgments", "run"),
            ("R", "min_R_k"),
        )
    )
]


def _rows(qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]], queries: list[str]) -> tuple[list, list]:  # type: ignore[type-arg]
    q_rows = [(q, d, float(r)) for q in queries for d, r in qrels.get(q, {}).items()]
    r_rows = [(q, d, s) for q in queries for d, s in run.get(q, {}).items()]
    return q_rows, r_rows


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_every_measure_is_partition_invariant_under_every_convention(seed: int) -> None:
    qrels, run = adversarial(seed, n_queries=60)
    # continuous scores with deliberate ties, so every tie rule has work to do
    rng = np.random.default_rng(seed)
    run = {q: {d: (s if rng.random() < 0.5 else s + float(rng.random())) for d, s in docs.items()} for q, docs in run.items()}
    every = sorted(set(qrels) | set(run))
    for raw in CONVENTIONS[seed - 1 :: 3]:  # each seed covers a third of the 120 combinations
        conventions = Conventions.from_mapping(raw)
        measures = [m for m in (*MEASURES, *EXTRA) if conventions.ties != "average" or REGISTRY.definition(m).ties_average_ok]
        q_rows, r_rows = _rows(qrels, run, every)
        whole = Evaluator(Qrels.from_records(q_rows), measures, conventions).evaluate(Run.from_records(r_rows))
        position = {q: i for i, q in enumerate(whole.query_ids.tolist())}
        for _ in range(3):
            subset = list(rng.choice(every, size=int(rng.integers(1, len(every))), replace=False))
            q_part, r_part = _rows(qrels, run, subset)
            rng.shuffle(q_part)  # type: ignore[arg-type]
            if conventions.ties != "input_order":  # input order is defined by the file: keep each query's lines in order
                rng.shuffle(r_part)  # type: ignore[arg-type]
            else:
                r_part.sort(key=lambda row: subset.index(row[0]))
            if not any(q in qrels for q in subset) or not r_part:
                continue
            part = Evaluator(Qrels.from_records(q_part), measures, conventions).evaluate(Run.from_records(r_part))
            for i, q in enumerate(part.query_ids.tolist()):
                expected, got = whole.values[position[q]], part.values[i]
                differ = [
                    str(m) for m, a, b in zip(whole.measures, expected, got, strict=True) if not (a == b or (a != a and b != b))
                ]
                assert not differ, f"{raw}: query {q} differs in {differ}"


BEYOND = [
    parse_measure(m)
    for m in (
        "ILD@3",
        "ILD(sim=features)@5",
        "Serendipity@4",
        "Serendipity(sim=features,rel=2)",
        "ARP(pop=users)@5",
        "Novelty@5",
        "Novelty(cold=skip)",
        "TailShare(tail=0.3)@5",
        "APLT@5",
        "ACLT",
        "EFD(rel=1)@5",
        "EPC@5",
    )
]


@pytest.mark.parametrize("ties", ["trec_eval", "input_order"])
def test_beyond_accuracy_measures_are_partition_invariant(ties: str) -> None:
    from harness.data.items import Catalog, Interactions

    rng = np.random.default_rng(11)
    items = [f"i{i:02d}" for i in range(40)]
    popularity = rng.zipf(1.5, size=len(items)).astype(float)
    users = [f"u{u:02d}" for u in range(50)]
    share = popularity / popularity.sum()
    train = Interactions.from_records(
        [(u, str(i)) for u in users for i in rng.choice(items, size=int(rng.integers(0, 12)), replace=False, p=share)]
    )
    features = rng.random((len(items), 6)) * (rng.random((len(items), 6)) < 0.6)  # some all-zero rows
    catalog = Catalog(Qrels.from_records([(i, i, 0) for i in items]).query_id, features, tuple("abcdef"))
    qrels = {u: {str(i): int(rng.integers(0, 4)) for i in rng.choice(items, size=3, replace=False)} for u in users[:40]}
    run = {
        u: {
            str(i): float(rng.integers(0, 6))
            for i in rng.choice([*items, "cold1", "cold2"], size=int(rng.integers(0, 9)), replace=False)
        }
        for u in users[:45]
    }
    conventions = Conventions.from_mapping({"ties": ties})
    every = sorted(set(qrels) | set(run))
    q_rows, r_rows = _rows(qrels, run, every)

    def evaluate(q: list, r: list):  # type: ignore[no-untyped-def,type-arg]
        return Evaluator(Qrels.from_records(q), BEYOND, conventions, train=train, items=catalog).evaluate(Run.from_records(r))

    whole = evaluate(q_rows, r_rows)
    assert np.isfinite(whole.values).sum() > len(every) * len(BEYOND) // 2  # most users have most measures defined
    position = {q: i for i, q in enumerate(whole.query_ids.tolist())}
    for _ in range(6):
        subset = list(rng.choice(every, size=int(rng.integers(1, len(every))), replace=False))
        q_part, r_part = _rows(qrels, run, subset)
        rng.shuffle(q_part)  # type: ignore[arg-type]
        if not q_part or not r_part:
            continue
        part = evaluate(q_part, r_part)
        for i, q in enumerate(part.query_ids.tolist()):
            a, b = whole.values[position[q]], part.values[i]
            assert ((a == b) | (np.isnan(a) & np.isnan(b))).all(), f"query {q}: {a} != {b}"


def test_a_stochastic_runs_values_depend_on_each_querys_rows_only() -> None:
    """expeval's golden stochastic run: a third of its queries, their lines shuffled (samples, ranks, queries mixed),
    give every query the same expected exposure and the same nDCG of its first sample, bit for bit."""
    from harness.data.load import load_qrels, load_run
    from tests.conftest import FAIRNESS

    measures = ["EE_L", "EE_D", "EE_R", "EE_L(model=rbp,target=judged)", "EE_R(norm=expeval)", "nDCG@10", "AP"]
    qrels, run = load_qrels(FAIRNESS / "ee_qrels.txt"), load_run(FAIRNESS / "ee_run.txt", samples=True)
    whole = Evaluator(qrels, measures).evaluate(run)
    position = {q: i for i, q in enumerate(whole.query_ids.tolist())}
    rng = np.random.default_rng(5)
    for _ in range(3):
        subset = set(rng.choice(whole.query_ids, size=10, replace=False).tolist())
        keep = np.array([q in subset for q in run.query_id.to_pylist()])
        rows = np.flatnonzero(keep)
        rng.shuffle(rows)
        part_run = Run(run.query_id.take(rows), run.doc_id.take(rows), run.score[rows], sample=run.sample.take(rows))
        judged = np.flatnonzero([q in subset for q in qrels.query_id.to_pylist()])
        rng.shuffle(judged)
        part_qrels = Qrels(qrels.query_id.take(judged), qrels.doc_id.take(judged), qrels.relevance[judged])
        part = Evaluator(part_qrels, measures).evaluate(part_run)
        assert set(part.query_ids.tolist()) == subset
        for i, q in enumerate(part.query_ids.tolist()):
            assert np.array_equal(part.values[i], whole.values[position[q]]), q
