"""The alignment contract, held against every engine: a slow, obvious reference in plain Python.

For each engine in ``harness.data.align.ENGINES`` and each combination of conventions, every
query's ranked documents (ids, via the kept source rows), their labels, the judged labels, the
query universe and which queries the run answered must equal what the reference computes
from the rules written out in README "Conventions".
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from harness import Conventions, Qrels, Run
from harness.data.align import ENGINES, PreparedQrels
from tests.generated import adversarial

Row = tuple[str, str, float]


def _data(seed: int) -> tuple[list[Row], list[Row]]:
    qrels, run = adversarial(seed, n_queries=30)
    q_rows = [(q, d, float(r)) for q, docs in qrels.items() for d, r in docs.items()]
    r_rows = [(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    rng = np.random.default_rng(seed)
    for i in rng.choice(len(r_rows), size=8, replace=False).tolist():  # the same (query, doc) again, another score
        q, d, s = r_rows[i]
        r_rows.insert(int(rng.integers(0, len(r_rows))), (q, d, s + float(rng.choice([-0.5, 0.0, 0.5]))))
    return q_rows, r_rows


def _reference(q_rows: list[Row], r_rows: list[Row], c: Conventions) -> dict[str, list[tuple[str, float]]]:
    """{query: [(doc, label), ...] in rank order} by the written rules, one query at a time."""
    labels = {(q, d): (max(r, 0.0) if c.negative_labels.value == "nonrelevant" else r) for q, d, r in q_rows}
    judged = sorted({q for q, _, _ in q_rows})
    in_run = sorted({q for q, _, _ in r_rows})
    universe = {"qrels": judged, "intersection": [q for q in in_run if q in set(judged)], "run": in_run}[c.queries.value]
    out: dict[str, list[tuple[str, float]]] = {}
    for q in universe:
        kept: dict[str, tuple[float, int]] = {}
        for line, (rq, d, s) in enumerate(r_rows):
            if rq != q:
                continue
            if d not in kept or (c.duplicates.value == "max" and s > kept[d][0]):
                kept[d] = (s, line)  # "first": the first line; "max": the best line (the first of equals), where it stands
        rows = [(d, s, line, labels.get((q, d), math.nan)) for d, (s, line) in kept.items()]

        def key(row: tuple[str, float, int, float]) -> tuple[float, ...]:
            _, s, line, label = row
            level = -math.inf if math.isnan(label) else label
            return {"input_order": (-s, line), "optimistic": (-s, -level), "pessimistic": (-s, level)}.get(c.ties.value, (-s,))

        # doc id descending in byte order (trec_eval's strcmp) first; the stable sort on the key keeps it for ties
        by_doc = rows if c.ties.value == "input_order" else sorted(rows, key=lambda row: row[0].encode(), reverse=True)
        ranked = sorted(by_doc, key=key)[: c.depth] if c.depth else sorted(by_doc, key=key)
        if c.judged_only:
            ranked = [r for r in ranked if r[3] >= 0]
        out[q] = [(d, label) for d, _, _, label in ranked]
    return out


CONVENTIONS = [
    Conventions.from_mapping(
        {"ties": ties, "queries": queries, "duplicates": dup, "negative_labels": neg, "depth": depth, "judged_only": judged}
    )
    for ties, queries, dup, neg, depth, judged in itertools.product(
        ("trec_eval", "input_order", "optimistic", "pessimistic", "average"),
        ("qrels", "intersection", "run"),
        ("first", "max"),
        ("unjudged", "nonrelevant"),
        (None, 7),
        (False, True),
    )
]


@pytest.mark.parametrize("engine", sorted(ENGINES))
@pytest.mark.parametrize("seed", [1, 2])
def test_every_engine_honours_the_alignment_contract(engine: str, seed: int) -> None:
    q_rows, r_rows = _data(seed)
    qrels, run = Qrels.from_records(q_rows), Run.from_records(r_rows)
    for conventions in CONVENTIONS:
        aligned = ENGINES[engine](PreparedQrels.build(qrels, conventions), run, None)
        expected = _reference(q_rows, r_rows, conventions)
        assert aligned.query_ids.tolist() == list(expected), conventions
        items, lists = aligned.item_ids(), aligned.lists
        for i, q in enumerate(aligned.query_ids.tolist()):
            start, end = lists.offsets[i], lists.offsets[i + 1]
            got = list(zip(items[start:end], lists.label[start:end].tolist(), strict=True))
            want = expected[q]
            assert [d for d, _ in got] == [d for d, _ in want], (conventions, q)
            assert all(a == b or (a != a and b != b) for (_, a), (_, b) in zip(got, want, strict=True)), (conventions, q)
            judged = sorted(lists.judged_label[lists.judged_offsets[i] : lists.judged_offsets[i + 1]].tolist())
            own = [r for qq, _, r in q_rows if qq == q]
            assert judged == sorted(max(r, 0.0) if conventions.negative_labels.value == "nonrelevant" else r for r in own)
            assert aligned.in_run[i] == any(rq == q for rq, _, _ in r_rows)
