"""Some of a run's queries evaluated apart, and the parts put together as the whole run's evaluation.

A query's values depend on its own rows only (``tests/evaluation/test_partition.py``), so
any split of the queries, each part evaluated by the single-machine
:class:`~harness.evaluation.evaluator.Evaluator` and :func:`combine`-d, gives the per-query
values of one process, bit for bit. A part keeps what the whole run's result needs of its
queries: their values, alignment counts and diagnostics sums, and (for system measures) their
lists down to the cutoff. Never all their rows: what an engine sends from where the rows are.

>>> from harness.data.model import Qrels, Run
>>> from harness.measures.conventions import Conventions
>>> from harness.measures.parse import parse_measure
>>> judged = {"q1": [("q1", "d1", 1)], "q2": [("q2", "d2", 1)]}
>>> ranked = {"q1": [("q1", "d3", 2.0), ("q1", "d1", 1.0)], "q2": [("q2", "d9", 1.0)]}
>>> parts = [  # each part all of its queries' rows: here one query each, the last first
...     evaluate_part(Qrels.from_records(judged[q]), Run.from_records(ranked[q], "bm25"), ["RR"], Conventions(), (10,))
...     for q in ("q2", "q1")
... ]
>>> whole = combine("bm25", [parse_measure("RR")], parts, (10,))
>>> whole.per_query.query_ids.tolist(), whole.per_query.values[:, 0].tolist()
(['q1', 'q2'], [0.5, 0.0])
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Sequence
from dataclasses import dataclass
from functools import reduce
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from harness.data._arrow import contiguous
from harness.data.align import AlignStats
from harness.data.items import ItemContext
from harness.data.model import Intents, Qrels, Run
from harness.evaluation.diagnostics import DiagnosticSums, per_query_parts
from harness.evaluation.diagnostics import combine as combine_diagnostics
from harness.evaluation.evaluator import Evaluator
from harness.evaluation.results import PerQuery
from harness.kernels._segments import RankedLists
from harness.kernels.beyond import stack_terms
from harness.kernels.relstring import relstrings
from harness.measures.conventions import Conventions, Queries
from harness.measures.spec import Measure

_LISTED = {"query": pa.string(), "pos": pa.int64(), "item": pa.string()}


@dataclass(frozen=True)
class Part:
    """Some queries of a run, evaluated: never their documents, except the items of the lists system measures read."""

    per_query: PerQuery | None  # None when the part has no query to evaluate
    stats: AlignStats
    sums: DiagnosticSums  # the diagnostics' sums over its queries
    relstrings: dict[int, list[str]] = dataclasses.field(default_factory=dict)  # length -> each query's
    known_counts: np.ndarray | None = None  # recommendations per known item code within the long-tail cutoff
    cold_counts: dict[str, int] | None = None  # the same per cold item id
    item_rows: dict[str, int] | None = None  # rows recommending items outside each universe (the diagnostics')
    listed: pa.Table | None = None  # query, pos, item of the rows above the system measures' cutoff
    cold_first: pa.Table | None = None  # each cold item's first (query, pos) here, for the run's cold numbering
    user_parts: dict[Any, Any] | None = None  # the system measures' per-user terms of its queries, in their order


@dataclass(frozen=True)
class Combined:
    """A run's parts put together: its per-query values, alignment counts and diagnostics, as one process gives them."""

    per_query: PerQuery
    stats: AlignStats
    diagnostics: dict[str, object]
    item_rows: dict[str, int] | None = None  # rows recommending items outside training, the catalogue, or both
    item_counts: np.ndarray | None = None  # the long tail: recommendations per recommended item, descending
    item_counts_cutoff: int | None = None
    lists: RankedLists | None = None  # down to the system measures' cutoff, with items: what system measures read
    relstrings: dict[int, list[str]] = dataclasses.field(default_factory=dict)  # length -> each query's, as per_query


def evaluate_part(
    qrels: Qrels | Intents,
    run: Run,
    measures: Sequence[str],
    conventions: Conventions,
    cutoffs: tuple[int, ...],
    item_context: ItemContext | None = None,
    tail_cutoff: int | None = None,
    list_depth: int | None = None,
    relstring_lengths: tuple[int, ...] = (),
) -> Part:
    """The queries of ``run`` and ``qrels`` (all of each query's rows, in file order) through the evaluator.

    ``tail_cutoff``: the long tail's counts are of the rows above it; ``list_depth``: the lists down to it come back
    with their items (system measures read them).
    """
    if not len(qrels) and (conventions.queries is not Queries.RUN or not len(run)):
        # no judged query here: under queries=qrels/intersection nothing to evaluate; the rows still count
        n_queries = len(pc.unique(run.query_id))
        return Part(None, AlignStats(len(run), n_queries, n_queries, 0, 0, 0), DiagnosticSums.empty(cutoffs))
    evaluator = Evaluator(qrels, list(measures), conventions, item_context=item_context)
    aligned = evaluator.align(run)
    lists = evaluator.item_lists(aligned)
    per_query = evaluator.evaluate_aligned(run.name, aligned, lists)
    parts = per_query_parts(aligned, cutoffs)  # summed here: only their sums leave
    sums = DiagnosticSums.of(per_query.in_run, parts, cutoffs)
    strings = {length: relstrings(aligned.lists, length) for length in relstring_lengths}
    if lists.items is None:
        return Part(per_query, aligned.stats, sums, strings)
    # the long tail's counts: by code for known items (the same codes everywhere), by id for cold ones
    data = lists.items
    counts = np.bincount(data.code if tail_cutoff is None else data.code[lists.pos < tail_cutoff], minlength=data.n_codes)
    cold_ids = [] if data.cold_ids is None else data.cold_ids.to_pylist()
    listed = cold_first = None
    if list_depth is not None:
        query = np.repeat(per_query.query_ids, lists.n_ret)
        item = aligned.item_array(evaluator.item_rows(aligned))
        cold = np.flatnonzero(data.code >= data.n_known)
        first = cold[np.unique(data.code[cold], return_index=True)[1]] if cold.size else cold

        def rows(which: np.ndarray) -> pa.Table:
            columns = [pa.array(query[which], pa.string()), pa.array(lists.pos[which]), item.take(pa.array(which))]
            return pa.table(dict(zip(_LISTED, columns, strict=True)))

        listed, cold_first = rows(np.flatnonzero(lists.pos < list_depth)), rows(first)
    return Part(
        per_query,
        aligned.stats,
        sums,
        strings,
        known_counts=counts[: data.n_known],
        cold_counts=dict(zip(cold_ids, counts[data.n_known :].tolist(), strict=True)),
        item_rows=data.rows_outside(),  # every row, as the diagnostics count
        listed=listed,
        cold_first=cold_first,
        user_parts=data.user_parts,
    )


def combine(
    name: str,
    measures: Sequence[Measure],
    done: Sequence[Part],
    cutoffs: tuple[int, ...],
    tail_cutoff: int | None = None,
    relstring_lengths: tuple[int, ...] = (),
    context: ItemContext | None = None,
) -> Combined:
    """The parts' counts summed, and their values in the universe's query order (strcmp order, as on one machine:
    Python's str order is code point order, which is UTF-8 byte order). With ``context`` (the parts kept their lists:
    ``list_depth``), the run's lists for the system measures too."""
    item_counts: np.ndarray | None = None
    item_rows: dict[str, int] | None = None
    counted = [p for p in done if p.known_counts is not None]
    if counted:  # integer counts: summed exactly, whatever the partitioning
        known = np.sum([p.known_counts for p in counted if p.known_counts is not None], axis=0)
        cold: dict[str, int] = {}
        item_rows = {
            key: sum((p.item_rows or {}).get(key, 0) for p in counted)
            for key in ("cold_recommendations", "recommendations_outside_train", "recommendations_outside_catalogue")
        }
        for p in counted:
            for item, count in (p.cold_counts or {}).items():
                cold[item] = cold.get(item, 0) + count
        every = np.concatenate([known, np.array(list(cold.values()), dtype=known.dtype)])
        item_counts = np.sort(every[every > 0])[::-1].astype(np.float64)
    total = AlignStats(*(sum(getattr(p.stats, f.name) for p in done) for f in dataclasses.fields(AlignStats)))
    diagnostics = combine_diagnostics(total, reduce(operator.add, (p.sums for p in done), DiagnosticSums.empty(cutoffs)), cutoffs)
    tables = [p.per_query for p in done if p.per_query is not None]
    ids = np.concatenate([t.query_ids.astype(object, copy=False) for t in tables]) if tables else np.zeros(0, dtype=object)
    order = np.argsort(ids, kind="stable")
    values = np.concatenate([t.values for t in tables]) if tables else np.zeros((0, len(measures)))
    in_run = np.concatenate([t.in_run for t in tables]) if tables else np.zeros(0, dtype=bool)
    strings = {k: [s for p in done if p.per_query is not None for s in p.relstrings[k]] for k in relstring_lengths}
    per_query = PerQuery(name, ids[order], tuple(measures), values[order], in_run[order])
    lists = None if context is None else _system_lists(done, per_query.query_ids, context)
    return Combined(
        per_query,
        total,
        diagnostics,
        item_rows,
        item_counts,
        tail_cutoff,
        lists,
        relstrings={k: [v[i] for i in order.tolist()] for k, v in strings.items()},
    )


def _system_lists(done: Sequence[Part], query_ids: np.ndarray, context: ItemContext) -> RankedLists:
    """The run's lists down to the system measures' cutoff, in the universe's order, with the item codes one process
    gives them: known items by the dataset's codes, cold items numbered by first appearance over the whole run."""

    def ordered(tables: list[pa.Table]) -> pa.Table:
        table = pa.concat_tables(tables) if tables else pa.schema(_LISTED).empty_table()
        return table.take(pc.sort_indices(table, sort_keys=[("query", "ascending"), ("pos", "ascending")]))

    listed = ordered([p.listed for p in done if p.listed is not None])
    cold_order = contiguous(pc.unique(ordered([p.cold_first for p in done if p.cold_first is not None])["item"]))
    where = pc.index_in(listed["query"], value_set=pa.array(query_ids.tolist(), pa.string()))
    counts = np.bincount(where.to_numpy(zero_copy_only=False).astype(np.int64), minlength=len(query_ids))
    offsets = np.zeros(len(query_ids) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    items = context.for_run(listed["item"].combine_chunks(), query_ids, cold_order=cold_order)
    items = dataclasses.replace(items, user_parts=_gathered_parts(done, query_ids))
    n = int(offsets[-1])
    return RankedLists(offsets, np.zeros(n), np.zeros(len(query_ids) + 1, dtype=np.int64), np.zeros(0), items=items)


def _gathered_parts(done: Sequence[Part], query_ids: np.ndarray) -> dict[Any, Any] | None:
    """The parts' per-user terms of the system measures, as rows in the universe's query order (a query no part
    evaluated has none: zeros)."""
    pieces = [(p.user_parts, p.per_query.query_ids) for p in done if p.user_parts and p.per_query is not None]
    if not pieces:
        return None
    # each part's queries found among the universe's, as _system_lists finds the listed rows' (Arrow, not a dict)
    universe = pa.array(query_ids, pa.string())
    found = [pc.index_in(pa.array(queries, pa.string()), value_set=universe) for _, queries in pieces]
    rows = np.concatenate([f.to_numpy(zero_copy_only=False) for f in found]).astype(np.int64)
    # each universe query's row among the stacked ones; a query of no part: the zero row after them
    source = np.full(len(query_ids), rows.size, dtype=np.int64)
    source[rows] = np.arange(rows.size)
    return {measure: stack_terms([parts[measure] for parts, _ in pieces], zero_rows=1)[source] for measure in pieces[0][0]}
