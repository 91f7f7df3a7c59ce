"""Any split of a run's queries, each part evaluated apart and the parts combined, gives the whole run's evaluation.

The reference is one process's evaluation of the whole run (the local engine's calls): per-query values, diagnostics,
the long tail's counts, the rows outside the items' universes, and the system measures' values from the gathered
lists. The parts are random splits of the queries, given in a random order, each holding all of its queries' rows in
file order (as a Dask partition does after the shuffle), with cold items first met in different parts.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from harness import Catalog, Conventions, Evaluator, Interactions, Qrels, Run
from harness.evaluation.diagnostics import diagnose
from harness.evaluation.partial import combine, evaluate_part
from harness.evaluation.results import long_tail_cutoff, recommendation_counts

QUERY_MEASURES = ("nDCG@5", "AP", "RR", "P@5", "Novelty@5", "ILD@5", "ARP@5")
SYSTEM_MEASURES = ("Coverage@5", "Gini@5", "RSP(group=provider)@5", "Entropy@5", "ExposureGini@5")
MEASURES = QUERY_MEASURES + SYSTEM_MEASURES
CUTOFFS = (5, 10)


def _data(seed: int) -> tuple[list[tuple[str, str, float]], list[tuple[str, str, float]], Interactions, Catalog]:
    rng = np.random.default_rng(seed)
    items = [f"i{i:02d}" for i in range(30)]
    users = [f"u{u:02d}" for u in range(40)]
    share = rng.zipf(1.6, size=len(items)).astype(float)
    share /= share.sum()
    train = Interactions.from_records(
        [(u, str(i)) for u in users for i in rng.choice(items, size=int(rng.integers(1, 8)), replace=False, p=share)]
    )
    catalog = Catalog.from_frame(
        pd.DataFrame({"item": items, "provider": [("acme", "zeta", "omni")[i % 3] for i in range(len(items))]})
    )
    judged = [(u, str(i), float(rng.integers(0, 3))) for u in users[:34] for i in rng.choice(items, 4, replace=False)]
    ranked = [
        (u, str(i), float(rng.integers(0, 4)))  # tied scores: the file order decides, as on one machine
        for u in users[4:]
        for i in rng.choice([*items, "cold1", "cold2", "cold3"], size=int(rng.integers(0, 12)), replace=False)
    ]
    return judged, ranked, train, catalog


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("ties", ["trec_eval", "input_order"])
def test_any_split_of_the_queries_combines_to_the_whole_run(seed: int, ties: str) -> None:
    judged, ranked, train, catalog = _data(seed)
    conventions = Conventions.from_mapping({"ties": ties})
    whole = Evaluator(Qrels.from_records(judged), MEASURES, conventions, train=train, items=catalog)
    aligned = whole.align(Run.from_records(ranked, "r"))
    lists = whole.item_lists(aligned)
    per_query = whole.evaluate_aligned("r", aligned, lists)
    assert lists.items is not None and lists.items.cold_ids is not None and len(lists.items.cold_ids) >= 2
    tail = long_tail_cutoff(whole.measures)

    rng = np.random.default_rng(seed + 10)
    queries = sorted({q for q, _, _ in judged} | {q for q, _, _ in ranked})
    for n_parts in (1, 3, 7):
        part_of = dict(zip(queries, rng.integers(0, n_parts, size=len(queries)).tolist(), strict=True))
        order = rng.permutation(n_parts)
        parts = [
            evaluate_part(
                Qrels.from_records([row for row in judged if part_of[row[0]] == p]),
                Run.from_records([row for row in ranked if part_of[row[0]] == p], "r"),
                [str(m) for m in whole.measures],
                conventions,
                CUTOFFS,
                whole.items,
                tail,
                5,
            )
            for p in order.tolist()
        ]
        combined = combine("r", whole.query_measures, parts, CUTOFFS, tail, context=whole.items)

        assert combined.per_query.query_ids.tolist() == per_query.query_ids.tolist()
        assert np.array_equal(combined.per_query.values, per_query.values, equal_nan=True)
        assert np.array_equal(combined.per_query.in_run, per_query.in_run)
        assert combined.stats == aligned.stats
        assert combined.diagnostics == diagnose(aligned, CUTOFFS)
        assert np.array_equal(combined.item_counts, recommendation_counts(lists, tail))
        assert combined.item_rows == lists.items.rows_outside()
        assert combined.lists is not None
        expected = whole.system_values(lists)
        got = whole.system_values(combined.lists)
        assert set(got) == set(expected) and len(expected) == len(SYSTEM_MEASURES)
        for measure, value in expected.items():
            assert np.array_equal(got[measure], value), measure


def test_a_part_without_a_judged_query_counts_its_rows_only() -> None:
    part = evaluate_part(
        Qrels.from_records([]), Run.from_records([("q1", "d1", 1.0), ("q2", "d1", 1.0)], "r"), ["AP"], Conventions(), (10,)
    )
    assert part.per_query is None
    assert (part.stats.run_rows, part.stats.run_queries, part.stats.run_queries_unjudged) == (2, 2, 2)
