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
import pyarrow as pa
import pytest

from harness import Conventions, Qrels, Run
from harness.data import align as align_module
from harness.data.align import ENGINES, PreparedQrels
from harness.data.model import QueryBlocks
from harness.errors import InputFormatError
from tests.generated import adversarial

Row = tuple[str, str, float]


def _grouped(rows: list[Row]) -> list[Row]:
    """Each query's lines together (the usual layout), queries by first appearance, file order within."""
    first = {q: i for i, (q, _, _) in reversed(list(enumerate(rows)))}
    return sorted(rows, key=lambda row: first[row[0]])


def _first_repeat(rows: list[Row]) -> tuple[str, str]:
    """The (query, doc) of the first line that repeats an earlier one."""
    seen: set[tuple[str, str]] = set()
    for q, d, _ in rows:
        if (q, d) in seen:
            return q, d
        seen.add((q, d))
    raise AssertionError("no repeated line")


def _data(seed: int, grouped: bool, ranked: bool = False) -> tuple[list[Row], list[Row]]:
    """Judgments and run lines; ``grouped``: each query's lines together; ``ranked``: and in trec_eval's rank order
    too (score descending, then doc id descending), as most run files come (the compiled engine confirms it in one
    pass; under other tie rules the pass finds an inversion at a tie and ranks the block)."""
    qrels, run = adversarial(seed, n_queries=30)
    q_rows = [(q, d, float(r)) for q, docs in qrels.items() for d, r in docs.items()]
    r_rows = [(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    rng = np.random.default_rng(seed)
    # long queries (hundreds of rows: the compiled engine sorts these by radix, then each tie), with
    # coarse scores (long ties), -0.0 beside 0.0, infinities, and judged documents among them
    for q in range(3):
        qid = f"long{q}"
        docs = [f"d{int(d)}" for d in rng.choice(5000, size=300 + 100 * q, replace=False)]
        scores = np.round(rng.normal(size=len(docs)) * 3) / 2
        scores[:5] = [0.0, -0.0, np.inf, -np.inf, 0.0]
        r_rows += [(qid, d, float(s)) for d, s in zip(docs, scores, strict=True)]
        q_rows += [(qid, d, float(rng.integers(-1, 4))) for d in rng.choice(docs, size=60, replace=False)]
        q_rows += [(qid, f"notretrieved{i}", 1.0) for i in range(3)]
    # scores one C float apart, distinct as doubles: 58.82473373 and 58.82473348 tie in trec_eval (a float each),
    # so the rank of a judged document among them depends on the scores convention
    near = 58.82473373 - 2.5e-7 * np.arange(40)
    docs = [f"n{int(d)}" for d in rng.choice(1000, size=near.size, replace=False)]
    r_rows += [("near", d, float(s)) for d, s in zip(docs, near, strict=True)]
    q_rows += [("near", d, float(rng.integers(0, 3))) for d in docs[::3]]
    for i in rng.choice(len(r_rows), size=12, replace=False).tolist():  # the same (query, doc) again, another score
        q, d, s = r_rows[i]
        r_rows.insert(int(rng.integers(0, len(r_rows))), (q, d, s + float(rng.choice([-0.5, 0.0, 0.5]))))
    if ranked:
        r_rows = sorted(r_rows, key=lambda row: row[1].encode(), reverse=True)
        r_rows = sorted(r_rows, key=lambda row: -row[2])  # stable: doc id descending within a score
    return q_rows, _grouped(r_rows) if grouped or ranked else r_rows


def _reference(q_rows: list[Row], r_rows: list[Row], c: Conventions) -> dict[str, list[tuple[str, float]]]:
    """{query: [(doc, label), ...] in rank order} by the written rules, one query at a time."""
    labels = {(q, d): (max(r, 0.0) if c.negative_labels.value == "nonrelevant" else r) for q, d, r in q_rows}
    judged = sorted({q for q, _, _ in q_rows})
    in_run = sorted({q for q, _, _ in r_rows})
    universe = {"qrels": judged, "intersection": [q for q in in_run if q in set(judged)], "run": in_run}[c.queries.value]
    out: dict[str, list[tuple[str, float]]] = {}
    for q in universe:
        kept: dict[str, tuple[float, int]] = {}
        for line, (rq, d, written) in enumerate(r_rows):
            if rq != q:
                continue
            s = float(np.float32(written)) if c.scores.value == "float32" else written  # a C float, as trec_eval reads
            if d not in kept or (c.duplicates.value == "max" and s > kept[d][0]):
                kept[d] = (s, line)  # "first": the first line; "max": the best line (the first of equals), where it stands
        rows = [(d, s, line, labels.get((q, d), math.nan)) for d, (s, line) in kept.items()]

        def key(row: tuple[str, float, int, float]) -> tuple[float, ...]:
            _, s, line, label = row
            level = -math.inf if math.isnan(label) else label
            return {"input_order": (-s, line), "optimistic": (-s, -level), "pessimistic": (-s, level)}.get(c.ties.value, (-s,))

        # doc id descending in byte order (trec_eval's strcmp; ascending for pyndeval's) first; the stable sort on the
        # key keeps it for ties
        by_doc = (
            rows
            if c.ties.value == "input_order"
            else sorted(rows, key=lambda row: row[0].encode(), reverse=c.ties.value != "docno_ascending")
        )
        ranked = sorted(by_doc, key=key)[: c.depth] if c.depth else sorted(by_doc, key=key)
        if c.judged_only:
            ranked = [r for r in ranked if r[3] >= 0]
        out[q] = [(d, label) for d, _, _, label in ranked]
    return out


CONVENTIONS = [
    Conventions.from_mapping(
        {
            "ties": ties,
            "queries": queries,
            "duplicates": dup,
            "negative_labels": neg,
            "depth": depth,
            "judged_only": judged,
            "scores": scores,
        }
    )
    for ties, queries, dup, neg, depth, (judged, scores) in itertools.product(
        ("trec_eval", "input_order", "optimistic", "pessimistic", "average", "docno_ascending"),
        ("qrels", "intersection", "run"),
        ("first", "max"),
        ("unjudged", "nonrelevant"),
        (None, 7),
        ((False, "float32"), (True, "float64")),
    )
]


def _blocks(rows: list[tuple[str, str, float]]) -> QueryBlocks:
    """The query ids of ``rows`` as the compiled reader keeps them: one id and start row per run of equal ids."""
    starts = [i for i in range(len(rows)) if i == 0 or rows[i][0] != rows[i - 1][0]]
    return QueryBlocks(np.array([*starts, len(rows)], dtype=np.int64), pa.array([rows[i][0] for i in starts]))


def _read_as(ids: str, q_rows: list[tuple[str, str, float]], r_rows: list[tuple[str, str, float]]) -> tuple[Qrels, Run]:
    """The judgments and the run with their query ids as columns, or as the reader's blocks."""
    qrels, run = Qrels.from_records(q_rows), Run.from_records(r_rows)
    if ids == "columns":
        return qrels, run
    return (
        Qrels.from_blocks(_blocks(q_rows), qrels.doc_id, qrels.relevance),
        Run.from_blocks(_blocks(r_rows), run.doc_id, run.score),
    )


@pytest.mark.parametrize("engine", sorted(ENGINES))
@pytest.mark.parametrize("layout", ["scattered", "grouped", "ranked"])
@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("ids", ["columns", "blocks"])
def test_every_engine_honours_the_alignment_contract(engine: str, layout: str, seed: int, ids: str) -> None:
    q_rows, r_rows = _data(seed, grouped=layout != "scattered", ranked=layout == "ranked")
    qrels, run = _read_as(ids, q_rows, r_rows)
    scores: dict[tuple[str, str], list[float]] = {}
    for q, d, s in r_rows:
        scores.setdefault((q, d), []).append(s)
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
        # the scores travel with their rows, and what alignment saw is counted alike by every engine
        row_query = np.repeat(aligned.query_ids, np.diff(lists.offsets)).tolist()
        assert all(s in scores[(q, d)] for q, d, s in zip(row_query, items, aligned.score.tolist(), strict=True))
        assert aligned.stats == ENGINES["arrow"](PreparedQrels.build(qrels, conventions), run, None).stats, conventions


@pytest.mark.parametrize("engine", sorted(ENGINES))
def test_every_engine_names_the_first_repeated_line(engine: str) -> None:
    q_rows, r_rows = _data(3, grouped=True)
    run = Run.from_records(r_rows, source="<run>")
    prepared = PreparedQrels.build(Qrels.from_records(q_rows), Conventions.from_mapping({"duplicates": "error"}))
    first = _first_repeat(r_rows)
    with pytest.raises(InputFormatError, match=f"document '{first[1]}' is listed twice for query '{first[0]}'"):
        ENGINES[engine](prepared, run, None)


def test_the_engine_is_chosen_by_the_run_size_or_named_never_by_what_is_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    q_rows, r_rows = _data(4, grouped=True)
    qrels, run = Qrels.from_records(q_rows), Run.from_records(r_rows)
    prepared = PreparedQrels.build(qrels, Conventions.from_mapping({"duplicates": "first"}))
    used: list[str] = []
    for name in ENGINES:
        engine = ENGINES[name]
        monkeypatch.setitem(ENGINES, name, lambda p, r, q, _e=engine, _n=name: used.append(_n) or _e(p, r, q))
        monkeypatch.setattr(align_module, f"align_{name}", ENGINES[name])
    monkeypatch.setattr(align_module, "COMPILED_FROM_ROWS", len(run) + 1)
    small = align_module.align(prepared, run)
    monkeypatch.setattr(align_module, "COMPILED_FROM_ROWS", len(run))
    large = align_module.align(prepared, run)  # loads the compiled engine
    monkeypatch.setattr(align_module, "COMPILED_FROM_ROWS", len(run) + 1)
    align_module.align(prepared, run)  # loaded or not, a small run keeps to the Arrow engine
    align_module.align(prepared, run, engine="compiled")
    assert used == ["arrow", "compiled", "arrow", "compiled"]
    np.testing.assert_array_equal(small.lists.label, large.lists.label)  # NaN: retrieved, not judged


@pytest.mark.parametrize("grouped", [False, True], ids=["scattered", "grouped"])
def test_large_judgments_are_prepared_as_small_ones_are(monkeypatch: pytest.MonkeyPatch, grouped: bool) -> None:
    """From COMPILED_FROM_ROWS judgments on, duplicates are found in each query's block: the same result."""
    q_rows, _ = _data(5, grouped)
    rng = np.random.default_rng(5)
    for i in rng.choice(len(q_rows), size=10, replace=False).tolist():  # the same judgment again, another label
        q, d, r = q_rows[i]
        q_rows.insert(int(rng.integers(0, len(q_rows))), (q, d, r + float(rng.choice([-1.0, 0.0, 1.0]))))
    qrels = Qrels.from_records(_grouped(q_rows) if grouped else q_rows)
    as_read, _ = _read_as("blocks", _grouped(q_rows) if grouped else q_rows, [])
    for duplicates in ("first", "max"):
        conventions = Conventions.from_mapping({"duplicates": duplicates})
        small = PreparedQrels.build(qrels, conventions)
        monkeypatch.setattr(align_module, "COMPILED_FROM_ROWS", 1)
        large = PreparedQrels.build(qrels, conventions)
        read = PreparedQrels.build(as_read, conventions)
        assert read.query_ids.tolist() == small.query_ids.tolist() and read.codes.tolist() == small.codes.tolist()
        monkeypatch.undo()
        assert large.query_ids.tolist() == small.query_ids.tolist()
        assert large.duplicates_dropped == small.duplicates_dropped == 10
        assert large.docs.to_pylist() == small.docs.to_pylist()
        for field in ("codes", "labels", "judged_offsets", "judged_labels", "keys"):
            assert np.array_equal(getattr(large, field), getattr(small, field)), (duplicates, field)
    monkeypatch.setattr(align_module, "COMPILED_FROM_ROWS", 1)
    q, d = _first_repeat(_grouped(q_rows) if grouped else q_rows)
    with pytest.raises(InputFormatError, match=f"document '{d}' is listed twice for query '{q}' in the qrels"):
        PreparedQrels.build(qrels, Conventions.from_mapping({"duplicates": "error"}))
