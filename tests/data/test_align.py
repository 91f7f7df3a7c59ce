"""Alignment: the fast path for runs written in rank order gives exactly what the full sort gives."""

from __future__ import annotations

import numpy as np

from harness import Evaluator, Qrels, Run
from harness.data.align import _presorted_order, _sorted_order
from harness.measures.conventions import Conventions, Ties
from harness.measures.trec_names import parse_trec_measure


def _data(seed: int) -> tuple[Qrels, list[tuple[str, str, float]]]:
    rng = np.random.default_rng(seed)
    qrels, run = [], []
    for q in range(30):
        docs = [f"d{d}" for d in rng.choice(500, size=60, replace=False)]
        qrels += [(f"q{q}", d, float(rng.integers(-1, 4))) for d in docs[:40]]
        scores = rng.permutation(1000)[:50] / 7.0  # distinct within the query
        run += [(f"q{q}", d, float(s)) for d, s in zip(docs[10:], scores, strict=True)]
    return Qrels.from_records(qrels), run


def test_presorted_runs_take_the_fast_path_with_identical_values() -> None:
    qrels, rows = _data(0)
    ranked = sorted(rows, key=lambda r: (-int(r[0][1:]), -r[2]))  # grouped by query (not in id order), rank order within
    shuffled = list(np.random.default_rng(1).permutation(np.array(rows, dtype=object)))
    measures = [i.measure for i in parse_trec_measure("all_trec") if i.measure is not None]
    evaluator = Evaluator(qrels, measures)
    fast = evaluator.evaluate(Run.from_records(ranked))
    full = evaluator.evaluate(Run.from_records([tuple(r) for r in shuffled]))  # type: ignore[misc]
    np.testing.assert_array_equal(fast.values, full.values)


def test_fast_path_conditions() -> None:
    codes = np.array([1, 1, 1, 0, 0])
    assert _presorted_order(codes, np.array([3.0, 2.0, 1.0, 5.0, 4.0])).tolist() == [3, 4, 0, 1, 2]
    assert _presorted_order(codes, np.array([3.0, 3.0, 1.0, 5.0, 4.0])) is None  # a tie: docno decides
    assert _presorted_order(codes, np.array([1.0, 2.0, 3.0, 5.0, 4.0])) is None  # not in rank order
    assert _presorted_order(np.array([1, 0, 1]), np.array([3.0, 5.0, 2.0])) is None  # a query split in two blocks
    # and where it declines, the full sort breaks the tie by docno descending
    import pyarrow as pa

    order = _sorted_order(np.array([0, 0]), np.array([1.0, 1.0]), np.array([0.0, 0.0]), pa.array(["a", "b"]), Ties.TREC_EVAL)
    assert order.tolist() == [1, 0]


def test_kernel_conventions_are_those_kernel_settings_reads() -> None:
    """KERNEL_CONVENTIONS (what alignment_conventions resets, so that explain aligns once and reads the lists under
    each) names exactly the conventions that change kernel_settings: one left out would be shared between
    alignments that differ, one too many would give two alignments the kernels' defaults."""
    import dataclasses
    from enum import Enum

    from harness.data.align import KERNEL_CONVENTIONS, alignment_conventions, kernel_settings

    default = Conventions()
    for field in dataclasses.fields(Conventions):
        value = getattr(default, field.name)
        if isinstance(value, Enum):
            other: object = next(member for member in type(value) if member is not value)
        elif isinstance(value, bool):
            other = not value
        else:
            other = 7 if value is None else value + 2
        changed = dataclasses.replace(default, **{field.name: other})
        assert (kernel_settings(changed) != kernel_settings(default)) == (field.name in KERNEL_CONVENTIONS), field.name
        assert (alignment_conventions(changed) == default) == (field.name in KERNEL_CONVENTIONS), field.name
