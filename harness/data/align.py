"""Qrels x Run x Conventions -> RankedLists.

The only place that decides the query universe, detects duplicates, joins labels
to retrieved documents, breaks ties and truncates at depth. Judgments are
prepared once (:class:`PreparedQrels`) and aligned with many runs.

Alignment is a pipeline of named phases over the run's rows (:class:`_Rows`):

1. ``universe``   which queries are evaluated, and each row's query code (rows of other queries go);
2. ``duplicates`` a (query, document) twice: an error, or the copy to keep;
3. ``join``       each row's label from the judgments (NaN when not judged);
4. ``order``      the ranking within each query, by score and the tie convention;
5. ``depth``      the first N documents of each query (trec_eval -M), then -J.

An engine is a function ``(PreparedQrels, Run, query_ids) -> Aligned``; ``ENGINES``
lists them and one contract test (``tests/data/test_align_engines.py``) holds each to a slow,
obvious reference. Every aligned row keeps its row in the run file (``source_rows``),
from which its item id follows (``Aligned.item_ids()``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from harness.data._arrow import contiguous, from_numpy, positions_in, string_array, to_numpy
from harness.data._hash import pair_keys, sort_with_rows, string_fingerprints
from harness.data.model import Qrels, QueryBlocks, Run
from harness.data.tables import line_of_source_row
from harness.errors import InputFormatError
from harness.kernels._segments import RankedLists, segment_rows
from harness.measures.conventions import (
    APDenominator,
    Conventions,
    Duplicates,
    GradedBelowLevel,
    IdealFrom,
    IPrecCut,
    NegativeLabels,
    Queries,
    Scores,
    ShortLists,
    Ties,
)


@dataclass(frozen=True)
class AlignStats:
    """What alignment saw, for the data diagnostics of a report."""

    run_rows: int
    run_queries: int
    run_queries_unjudged: int  # retrieved for, but no judgments: dropped under queries=qrels
    judged_queries_missing: int  # judged, nothing retrieved: scored 0 under queries=qrels
    duplicates_dropped: int
    rows_beyond_depth: int


@dataclass(frozen=True, eq=False)
class Aligned:
    query_ids: np.ndarray  # object array of str, in output order
    lists: RankedLists
    in_run: np.ndarray  # bool per query: the run retrieved something for it
    stats: AlignStats
    source_rows: np.ndarray  # per row, its row in the run (file order): int64, or int32 from the compiled engine
    run_score: np.ndarray  # the run's score column, as read (by file row)
    run_doc_ids: pa.Array | pa.ChunkedArray  # the run's document column, as read
    samples: Any = None  # a stochastic run's rankings per query (harness.data.samples), when a measure reads them
    query_id_array: pa.Array | None = None  # query_ids as Arrow strings (for lookups without building them again)
    scores: Scores = Scores.FLOAT32  # the precision the rows were ranked at

    @property
    def score(self) -> np.ndarray:
        """The score of every aligned row as written (a predicted rating is a value), aligned with ``lists.label``."""
        return self.run_score[self.source_rows]

    def scores_at(self, rows: np.ndarray) -> np.ndarray:
        """The scores of a few aligned rows as written, without a score array over every row."""
        return self.run_score[self.source_rows[rows]]

    def ranked_scores_at(self, rows: np.ndarray) -> np.ndarray:
        """The scores of a few aligned rows as they were ranked (:func:`ranked_scores`): equal here, tied there."""
        return ranked_scores(self.scores_at(rows), self.scores)

    def item_ids(self) -> list[str]:
        """The document (item) id of every aligned row, in ranking order."""
        return self.item_array().to_pylist()  # type: ignore[no-any-return]

    def item_array(self, rows: np.ndarray | None = None) -> pa.Array:
        """The document (item) id of every aligned row (or of ``rows`` of them), in ranking order, as Arrow strings."""
        return _take(self.run_doc_ids, self.source_rows if rows is None else self.source_rows[rows])


@dataclass
class _Rows:
    """The run's rows as they pass through the phases: parallel arrays, filtered and reordered together."""

    codes: np.ndarray  # universe code of each row's query
    score: np.ndarray
    docs: pa.Array | pa.ChunkedArray  # in the same row order as codes until the order phase (only sorting reads it after)
    source: np.ndarray  # row in the run
    labels: np.ndarray | None = None

    def keep(self, rows: np.ndarray, docs_too: bool = True) -> None:
        self.codes, self.score, self.source = self.codes[rows], self.score[rows], self.source[rows]
        if self.labels is not None:
            self.labels = self.labels[rows]
        if docs_too:
            self.docs = _take(self.docs, rows)


def _qid_order(values: list[str]) -> np.ndarray:
    # trec_eval orders queries by strcmp; Python's str order is code point order,
    # which is UTF-8 byte order.
    return np.array(sorted(values), dtype=object)


def _dictionary(query_id: pa.Array) -> tuple[np.ndarray, list[str], np.ndarray, pa.Array]:
    """(index per row into the distinct ids, the distinct ids, their fingerprints, the same as Arrow)."""
    encoded = pc.dictionary_encode(query_id)
    if isinstance(encoded, pa.ChunkedArray):
        encoded = encoded.combine_chunks()
    indices = to_numpy(encoded.indices).astype(np.int64)
    return indices, encoded.dictionary.to_pylist(), string_fingerprints(encoded.dictionary), encoded.dictionary


def _encode_queries(
    encoded: tuple[np.ndarray, list[str], np.ndarray, pa.Array], universe: dict[str, int]
) -> tuple[np.ndarray, np.ndarray]:
    """(universe code per row or -1, fingerprint of each row's query)."""
    indices, distinct, fingerprints, _ = encoded
    mapping = np.array([universe.get(q, -1) for q in distinct], dtype=np.int64)
    if not mapping.size:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.uint64)
    return mapping[indices], fingerprints[indices]


@dataclass(frozen=True)
class _SortedKeys:
    prefix: np.ndarray
    rows: np.ndarray
    bits: int


def _duplicate_rows(sorted_keys: _SortedKeys, codes: np.ndarray, docs: pa.Array, prefer: np.ndarray | None) -> np.ndarray:
    """Rows that repeat an earlier (query, doc) pair: the ones to drop.

    ``prefer`` (e.g. the score) decides which copy is kept (the highest); the first
    row wins otherwise. Equal key prefixes are candidates; strings confirm them.
    """
    prefix, order = sorted_keys.prefix, sorted_keys.rows
    same = prefix[1:] == prefix[:-1]
    if not same.any():
        return np.zeros(0, dtype=np.int64)
    flagged = np.zeros(codes.size, dtype=bool)
    flagged[order[1:][same]] = True
    flagged[order[:-1][same]] = True
    rows = np.flatnonzero(flagged)
    table = pa.table(
        {
            "q": from_numpy(codes[rows]),
            "d": _take(docs, rows),
            "p": from_numpy(np.zeros(rows.size) if prefer is None else prefer[rows]),
            "row": from_numpy(rows),
        }
    )
    sort = pc.sort_indices(table, sort_keys=[("q", "ascending"), ("d", "ascending"), ("p", "descending"), ("row", "ascending")])
    table = table.take(sort)
    q = to_numpy(table["q"])
    d = table["d"]
    repeat = np.zeros(len(table), dtype=bool)
    if len(table) > 1:
        equal_doc = to_numpy(pc.equal(d.slice(1), d.slice(0, len(table) - 1)))
        repeat[1:] = (q[1:] == q[:-1]) & equal_doc
    return np.sort(to_numpy(table["row"])[repeat])


def _duplicate_error(source: str, what: str, qid: str, doc: str, row: int) -> InputFormatError:
    return InputFormatError(
        f"document {doc!r} is listed twice for query {qid!r} in the {what}",
        path=source,
        line=line_of_source_row(source, row),
        hint="remove the repeated line, or set the duplicates convention to 'first' or 'max'",
    )


def _compact_query_ids(rows: Qrels | Run) -> pa.Array | pa.ChunkedArray | QueryBlocks:
    """The query ids as blocks when the reader kept them so (the column is not built), else the column."""
    blocks = rows.query_blocks
    return rows.query_id if blocks is None else blocks


def _take(array: pa.Array, rows: np.ndarray) -> pa.Array:
    return array.take(from_numpy(rows if rows.dtype in (np.int32, np.int64) else rows.astype(np.int64)))


@dataclass(frozen=True, eq=False)
class PreparedQrels:
    """Judgments prepared once: universe order, join keys, per-query labels.

    >>> q = Qrels.from_records([("q1", "d1", 2), ("q1", "d2", 0), ("q2", "d9", 1)])
    >>> prepared = PreparedQrels.build(q, Conventions())
    >>> prepared.query_ids.tolist(), prepared.judged_offsets.tolist()
    (['q1', 'q2'], [0, 2, 3])
    """

    source: str
    conventions: Conventions
    query_ids: np.ndarray  # sorted judged query ids
    query_id_array: pa.Array  # the same as Arrow strings (for vectorised lookups)
    codes: np.ndarray  # per judgment: position of its query in query_ids
    docs: pa.Array
    labels: np.ndarray
    judged_offsets: np.ndarray
    judged_labels: np.ndarray  # labels grouped by query, in query_ids order
    judged_rows: np.ndarray  # each judgment's row, grouped by query in query_ids order (parallel to judged_labels)
    duplicates_dropped: int = 0

    @cached_property
    def keys(self) -> np.ndarray:
        """Per judgment: its (query, doc) fingerprint, the Arrow engine's join key (built on first use)."""
        return pair_keys(string_fingerprints(self.query_id_array)[self.codes], string_fingerprints(self.docs))

    @cached_property
    def judged(self) -> frozenset[str]:
        """The judged query ids as a set (built on first use)."""
        return frozenset(self.query_ids.tolist())

    @cached_property
    def judgment_index(self) -> Any:
        """The judgments indexed for the compiled engine's join (built on first use, then kept)."""
        from harness.data._align_compiled import judgment_index  # compiled kernels: loaded only when the compiled engine is used

        return judgment_index(self.judged_offsets, self.judged_rows, self.docs)

    @classmethod
    def build(cls, qrels: Qrels, conventions: Conventions, engine: EngineChoice = "auto") -> PreparedQrels:
        """The judgments indexed once for every run; ``engine`` as :func:`align`'s (the same index either way)."""
        labels = np.asarray(qrels.relevance, dtype=np.float64)
        if (labels < 0).any():
            if conventions.negative_labels is NegativeLabels.ERROR:
                row = int(np.flatnonzero(labels < 0)[0])
                raise InputFormatError(
                    f"negative relevance label {labels[row]:g}",
                    path=qrels.source,
                    line=line_of_source_row(qrels.source, qrels.file_row(row)),
                    hint="set negative_labels to 'unjudged' (trec_eval) or 'nonrelevant'",
                )
            if conventions.negative_labels is NegativeLabels.NONRELEVANT:
                labels = np.maximum(labels, 0.0)
        prefer = labels if conventions.duplicates is Duplicates.MAX else None
        docs = qrels.doc_id
        compiled_engine = engine_for(len(qrels), engine) is align_compiled
        if compiled_engine:  # in each query's block, by the compiled engine's kernels
            from harness.data import _align_compiled as compiled  # compiled kernels: loaded only when the compiled engine is used

            # each run of equal query ids (the reader's blocks: 400k for 3.9M judgments) coded by its id's place in byte
            # order, the code repeated down its rows in file order, the rows grouped by code (a counting sort): the
            # groups in which duplicates are looked for, and the judgments by query when none is dropped
            starts, block_ids = compiled.id_blocks(_compact_query_ids(qrels))
            if compiled.all_distinct(block_ids):  # each query's judgments together, as qrels files list them
                distinct, block_id = block_ids, np.arange(len(block_ids), dtype=np.int64)
            else:
                encoded = pc.dictionary_encode(block_ids)
                distinct, block_id = encoded.dictionary, to_numpy(encoded.indices).astype(np.int64)
            by_id = to_numpy(pc.sort_indices(distinct)).astype(np.int64)
            query_id_array = contiguous(distinct.take(from_numpy(by_id)))
            query_ids = np.array(query_id_array.to_pylist(), dtype=object)
            code_of = np.empty(by_id.size, dtype=np.int64)
            code_of[by_id] = np.arange(by_id.size)
            codes = np.repeat(code_of[block_id], np.diff(starts))
            grouped = compiled.group_by_code(codes, len(query_ids))
            dropped = compiled.duplicate_rows(*grouped, docs, prefer)
        else:
            encoded = _dictionary(qrels.query_id)
            query_ids = _qid_order(encoded[1])
            query_id_array = string_array(query_ids.tolist())
            codes, query_fp = _encode_queries(encoded, {q: i for i, q in enumerate(query_ids)})
            sorted_keys = _SortedKeys(*sort_with_rows(pair_keys(query_fp, string_fingerprints(docs))))
            dropped = _duplicate_rows(sorted_keys, codes, docs, prefer)
        if dropped.size:
            if conventions.duplicates is Duplicates.ERROR:
                row = int(dropped[0])
                raise _duplicate_error(qrels.source, "qrels", str(qrels.query_id[row]), str(docs[row]), qrels.file_row(row))
            keep = np.ones(codes.size, dtype=bool)
            keep[dropped] = False
            rows = np.flatnonzero(keep)
            codes, labels, docs = codes[rows], labels[rows], _take(docs, rows)
        if compiled_engine:  # a stable counting sort: argsort's order (3.9M judgments: 0.15 -> 0.04 s)
            by_query, judged_offsets = compiled.group_by_code(codes, len(query_ids)) if dropped.size else grouped
        else:
            by_query = np.argsort(codes, kind="stable")
            judged_offsets = np.zeros(len(query_ids) + 1, dtype=np.int64)
            np.cumsum(np.bincount(codes, minlength=len(query_ids)), out=judged_offsets[1:])
        judged_labels = labels[by_query]
        for shared in (judged_offsets, judged_labels):  # every run's lists read them as they are: never written
            shared.flags.writeable = False
        return cls(
            source=qrels.source,
            conventions=conventions,
            query_ids=query_ids,
            query_id_array=query_id_array,
            codes=codes,
            docs=docs,
            labels=labels,
            judged_offsets=judged_offsets,
            judged_labels=judged_labels,
            judged_rows=by_query,
            duplicates_dropped=int(dropped.size),
        )

    @cached_property
    def judged_docs(self) -> pa.Array:
        """The judged documents grouped by query, in ``query_ids`` order (parallel to ``judged_labels``)."""
        return _take(self.docs, self.judged_rows)

    def judged_rows_of(self, query_ids: np.ndarray) -> np.ndarray:
        """The judgments' rows of each of ``query_ids`` in that order, as :func:`align` lays out ``judged_label``
        (nothing for a query without judgments)."""
        if query_ids is self.query_ids or (len(query_ids) == len(self.query_ids) and bool((query_ids == self.query_ids).all())):
            return self.judged_rows  # the judged queries themselves, in their order (the usual universe): no lookup
        codes = positions_in(string_array([str(q) for q in query_ids]), self.query_id_array)
        counts = np.where(codes >= 0, np.diff(self.judged_offsets)[np.maximum(codes, 0)], 0)
        starts = np.where(codes >= 0, self.judged_offsets[:-1][np.maximum(codes, 0)], 0)
        return self.judged_rows[segment_rows(starts, counts)[1]]

    def judged_docs_of(self, query_ids: np.ndarray) -> pa.Array:
        """The judged documents of each of ``query_ids`` in that order, as :func:`align` lays out ``judged_label``
        (nothing for a query without judgments).

        >>> q = Qrels.from_records([("q1", "d1", 2), ("q2", "d9", 1), ("q1", "d2", 0)])
        >>> PreparedQrels.build(q, Conventions()).judged_docs_of(np.array(["q2", "q0", "q1"])).to_pylist()
        ['d9', 'd1', 'd2']
        """
        rows = self.judged_rows_of(query_ids)
        return self.judged_docs if rows is self.judged_rows else _take(self.docs, rows)

    def labels_for(self, sorted_keys: _SortedKeys, judged_codes: np.ndarray, docs: pa.Array) -> np.ndarray:
        """Label of each run row (NaN when not judged), given the run's sorted key prefixes.

        Each judgment looks itself up among the run's keys (the small side searches
        the large one); a shared prefix is walked and confirmed on query and doc.
        """
        out = np.full(judged_codes.size, np.nan)
        if self.keys.size == 0 or judged_codes.size == 0:
            return out
        # Searching in sorted order walks the run's keys monotonically: cache friendly.
        wanted_order = np.argsort(self.keys)
        wanted = self.keys[wanted_order] >> np.uint64(sorted_keys.bits)
        lo = np.empty(wanted.size, dtype=np.int64)
        hi = np.empty(wanted.size, dtype=np.int64)
        lo[wanted_order] = np.searchsorted(sorted_keys.prefix, wanted, side="left")
        hi[wanted_order] = np.searchsorted(sorted_keys.prefix, wanted, side="right")
        span = hi - lo
        for extra in range(int(span.max())):  # almost always 1 round: prefixes rarely repeat
            judgment = np.flatnonzero(span > extra)
            rows = sorted_keys.rows[lo[judgment] + extra]
            same_query = judged_codes[rows] == self.codes[judgment]
            judgment, rows = judgment[same_query], rows[same_query]
            same_doc = to_numpy(pc.equal(_take(docs, rows), _take(self.docs, judgment)))
            out[rows[same_doc]] = self.labels[judgment[same_doc]]
        return out


def _presorted_order(codes: np.ndarray, score: np.ndarray) -> np.ndarray | None:
    """The ranking order without a sort, when the run is written the usual way.

    If every query's lines are contiguous and their scores strictly decrease, the
    file order within a query is the rank order under every tie convention (there
    are no ties), and only whole query blocks need ordering: a stable sort of the
    query codes, linear on such input. None when that does not hold.
    """
    if codes.size < 2:
        return np.arange(codes.size)
    same_query = codes[1:] == codes[:-1]
    if not (score[1:][same_query] < score[:-1][same_query]).all():
        return None  # ties or a different order within a query: the full sort decides
    starts = np.flatnonzero(np.concatenate(([True], ~same_query)))
    if np.unique(codes[starts]).size != starts.size:
        return None  # a query's lines are split into several blocks
    return np.argsort(codes, kind="stable")


def _sorted_order(codes: np.ndarray, score: np.ndarray, labels: np.ndarray, docs: pa.Array, ties: Ties) -> np.ndarray:
    """Rows by query, then score descending, then the tie convention (Arrow's sort is stable)."""
    sort_keys: list[tuple[str, str]] = [("q", "ascending"), ("s", "descending")]
    columns: dict[str, pa.Array] = {"q": from_numpy(codes), "s": from_numpy(score)}
    if ties in (Ties.OPTIMISTIC, Ties.PESSIMISTIC):
        columns["l"] = from_numpy(np.nan_to_num(labels, nan=-np.inf))
        sort_keys.append(("l", "descending" if ties is Ties.OPTIMISTIC else "ascending"))
    if ties is not Ties.INPUT_ORDER:  # input order breaks what remains
        columns["d"] = docs
        sort_keys.append(("d", "ascending" if ties is Ties.DOCNO_ASCENDING else "descending"))
    return to_numpy(pc.sort_indices(pa.table(columns), sort_keys=sort_keys))


def evaluated_query_ids(
    prepared: PreparedQrels, run_ids: pa.Array, query_ids: np.ndarray | None, conventions: Conventions | None = None
) -> tuple[np.ndarray, pa.Array]:
    """The evaluated queries (by the ``queries`` convention, or ``query_ids``) in strcmp order, also as Arrow.

    ``run_ids``: the run's distinct query ids. Arrow sorts strings by their bytes, as
    trec_eval's strcmp and Python's str order (code points, UTF-8's byte order) do. ``conventions``: whose
    ``queries`` and relevance level decide (default: the judgments' own, as they were prepared).
    """
    conv = prepared.conventions if conventions is None else conventions
    if query_ids is not None:
        return np.asarray(query_ids, dtype=object), string_array([str(q) for q in query_ids])
    if conv.queries is Queries.QRELS:
        return prepared.query_ids, prepared.query_id_array
    if conv.queries is Queries.RELEVANT:
        # a query's own judgments decide: the same universe for every run, and per query on every engine
        relevant = (
            np.bincount(prepared.codes, weights=prepared.labels >= conv.relevance_level, minlength=len(prepared.query_ids)) > 0
        )
        keep = np.flatnonzero(relevant)
        return prepared.query_ids[keep], prepared.query_id_array.take(from_numpy(keep))
    if conv.queries is Queries.INTERSECTION:
        run_ids = run_ids.filter(pc.is_in(run_ids, value_set=prepared.query_id_array))
    universe = run_ids.take(pc.sort_indices(run_ids))
    return np.array(universe.to_pylist(), dtype=object), universe


def ranked_scores(score: np.ndarray, scores: Scores) -> np.ndarray:
    """A run's scores as they are ranked (float64): under ``scores: float32`` each rounded to a C float, as trec_eval
    reads them (``atof`` into a ``float``), so two scores one float apart tie.

    >>> ranked_scores(np.array([58.82473373, 58.82473348]), Scores.FLOAT32).tolist()
    [58.82473373413086, 58.82473373413086]
    >>> ranked_scores(np.array([58.82473373, 58.82473348]), Scores.FLOAT64).tolist()
    [58.82473373, 58.82473348]
    """
    score = np.asarray(score, dtype=np.float64)
    if scores is Scores.FLOAT64:
        return score
    with np.errstate(over="ignore"):  # beyond a float's range: +-inf, as C's conversion gives trec_eval
        return score.astype(np.float32).astype(np.float64)


def _universe(
    prepared: PreparedQrels, run: Run, query_ids: np.ndarray | None
) -> tuple[np.ndarray, pa.Array, pa.Array, _Rows, np.ndarray]:
    """Phase 1: the evaluated queries and the rows that belong to them."""
    encoded = _dictionary(run.query_id)
    universe, universe_ids = evaluated_query_ids(prepared, encoded[3], query_ids)
    codes, query_fp = _encode_queries(encoded, {q: i for i, q in enumerate(universe)})
    score = ranked_scores(run.score, prepared.conventions.scores)
    keep = np.flatnonzero(codes >= 0)
    if keep.size != codes.size:
        return universe, universe_ids, encoded[3], _Rows(codes[keep], score[keep], _take(run.doc_id, keep), keep), query_fp[keep]
    return universe, universe_ids, encoded[3], _Rows(codes, score, run.doc_id, np.arange(codes.size)), query_fp


def _duplicates(
    prepared: PreparedQrels, run: Run, universe: np.ndarray, rows: _Rows, query_fp: np.ndarray
) -> tuple[_SortedKeys, np.ndarray]:
    """Phase 2: the sorted (query, doc) keys and the rows that repeat a pair (an error under ``duplicates: error``)."""
    conv = prepared.conventions
    keys = pair_keys(query_fp, string_fingerprints(rows.docs))
    sorted_keys = _SortedKeys(*sort_with_rows(keys))
    del keys
    dropped = _duplicate_rows(sorted_keys, rows.codes, rows.docs, rows.score if conv.duplicates is Duplicates.MAX else None)
    if dropped.size and conv.duplicates is Duplicates.ERROR:
        row = int(dropped[0])
        raise _duplicate_error(
            run.source, "run", str(universe[rows.codes[row]]), str(rows.docs[row]), run.file_row(int(rows.source[row]))
        )
    return sorted_keys, dropped


def _join(prepared: PreparedQrels, to_judged: np.ndarray, rows: _Rows, sorted_keys: _SortedKeys, dropped: np.ndarray) -> None:
    """Phase 3: each row's label (NaN when not judged), without the duplicate copies.

    ``to_judged``: each universe query's code in the judgments (their own order), or -1.
    """
    judged_codes = to_judged[rows.codes] if rows.codes.size else rows.codes
    rows.labels = prepared.labels_for(sorted_keys, judged_codes, rows.docs)
    if dropped.size:
        mask = np.ones(rows.codes.size, dtype=bool)
        mask[dropped] = False
        rows.keep(np.flatnonzero(mask))


def _order(rows: _Rows, ties: Ties) -> None:
    """Phase 4: rows grouped by query and ranked (score descending, then the tie convention)."""
    assert rows.labels is not None
    order = _presorted_order(rows.codes, rows.score)
    if order is None:
        order = _sorted_order(rows.codes, rows.score, rows.labels, rows.docs, ties)
    rows.keep(order, docs_too=False)  # the documents are not read after ranking


def _depth(rows: _Rows, n_q: int, depth: int | None) -> tuple[np.ndarray, int]:
    """Phase 5: the first ``depth`` rows of each query; (rows per query, rows cut)."""
    counts = np.bincount(rows.codes, minlength=n_q)
    if depth is None or not rows.codes.size:
        return counts, 0
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    within = np.arange(rows.codes.size) - np.repeat(starts, counts) < depth
    rows.keep(np.flatnonzero(within), docs_too=False)
    return np.bincount(rows.codes, minlength=n_q), int((~within).sum())


def align_arrow(prepared: PreparedQrels, run: Run, query_ids: np.ndarray | None = None) -> Aligned:
    """The Arrow engine: the phases above over all rows at once (numpy and Arrow sorts)."""
    conv = prepared.conventions
    universe, universe_ids, run_ids, rows, query_fp = _universe(prepared, run, query_ids)
    sorted_keys, dropped = _duplicates(prepared, run, universe, rows, query_fp)
    del query_fp
    to_judged = positions_in(universe_ids, prepared.query_id_array)
    _join(prepared, to_judged, rows, sorted_keys, dropped)
    del sorted_keys
    _order(rows, conv.ties)
    counts, beyond = _depth(rows, len(universe), conv.depth)
    assert rows.labels is not None
    return _assemble(
        prepared,
        run,
        universe,
        universe_ids,
        to_judged,
        positions_in(run_ids, prepared.query_id_array),
        counts,
        rows.labels,
        rows.source,
        int(dropped.size),
        beyond,
    )


def align_compiled(prepared: PreparedQrels, run: Run, query_ids: np.ndarray | None = None) -> Aligned:
    """The compiled engine: phases 2-5 inside each query's block of rows (:mod:`harness.data._align_compiled`)."""
    from harness.data import _align_compiled as compiled  # compiled kernels: loaded only when the compiled engine is used

    conv = prepared.conventions
    order, bounds, run_ids = compiled.query_blocks(_compact_query_ids(run))
    universe, universe_ids = evaluated_query_ids(prepared, run_ids, query_ids)
    judged = positions_in(run_ids, prepared.query_id_array)
    block_code = judged if universe_ids is prepared.query_id_array else positions_in(run_ids, universe_ids)
    score = np.asarray(run.score, dtype=np.float64)
    ranked = compiled.rank_blocks(
        order,
        bounds,
        judged,
        block_code,
        run.doc_id,
        score,
        prepared.judgment_index,
        prepared.labels,
        keep=compiled.KEEP_MAX if conv.duplicates is Duplicates.MAX else compiled.KEEP_FIRST,
        ties=compiled.TIES.get(conv.ties.value, compiled.TIE_TREC_EVAL),
        depth=-1 if conv.depth is None else conv.depth,
        single=conv.scores is Scores.FLOAT32,
    )
    if ranked.first_dropped >= 0 and conv.duplicates is Duplicates.ERROR:
        row = ranked.first_dropped
        raise _duplicate_error(run.source, "run", str(run.query_id[row]), str(run.doc_id[row]), run.file_row(row))
    counts = np.zeros(len(universe), dtype=np.int64)
    counts[block_code[block_code >= 0]] = ranked.kept[block_code >= 0]
    to_judged = (
        np.arange(len(universe))
        if universe_ids is prepared.query_id_array
        else positions_in(universe_ids, prepared.query_id_array)
    )
    return _assemble(
        prepared,
        run,
        universe,
        universe_ids,
        to_judged,
        judged,
        counts,
        ranked.labels,
        ranked.rows,
        int(ranked.dropped.sum()),
        int(ranked.beyond.sum()),
    )


def _assemble(
    prepared: PreparedQrels,
    run: Run,
    universe: np.ndarray,
    universe_ids: pa.Array,
    to_judged: np.ndarray,
    run_judged: np.ndarray,
    counts: np.ndarray,
    labels: np.ndarray,
    source: np.ndarray,
    duplicates: int,
    beyond: int,
) -> Aligned:
    """The ranked rows (grouped by query in universe order, ``counts`` each) as lists with their judgments.

    ``to_judged``: each universe query's code in the judgments, or -1; ``run_judged``: the same for each of the
    run's distinct query ids.
    """
    conv = prepared.conventions
    n_q = len(universe)
    offsets = np.zeros(n_q + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])

    # Judgments of each universe query, in universe order: the prepared ones as they are when the universe is the
    # judged queries (the default), without a copy of every judgment's label (31 MB at 3.9M judgments)
    if universe_ids is prepared.query_id_array:
        j_offsets, judged_label = prepared.judged_offsets, prepared.judged_labels
    else:
        j_counts = np.where(to_judged >= 0, np.diff(prepared.judged_offsets)[np.maximum(to_judged, 0)], 0)
        starts = np.where(to_judged >= 0, prepared.judged_offsets[:-1][np.maximum(to_judged, 0)], 0)
        j_offsets, take = segment_rows(starts, j_counts)
        judged_label = prepared.judged_labels[take]

    run_score = np.asarray(run.score, dtype=np.float64)
    tie_group = None
    if conv.ties is Ties.AVERAGE and source.size:
        score = ranked_scores(run_score[source], conv.scores)
        codes = np.repeat(np.arange(n_q), counts)
        new_group = np.ones(score.size, dtype=bool)
        new_group[1:] = (codes[1:] != codes[:-1]) | (score[1:] != score[:-1])
        tie_group = np.cumsum(new_group) - 1

    lists = RankedLists(
        offsets=offsets,
        label=labels,
        judged_offsets=j_offsets,
        judged_label=judged_label,
        tie_group=tie_group,
        **kernel_settings(conv),
    )
    in_run = counts > 0  # before -J: a query whose documents are all unjudged was still answered
    if conv.judged_only:
        keep = labels >= 0  # judged: relevant or not (NaN, not in the qrels, and negative, unjudged, go)
        lists, source = lists.judged_subset(), source[keep]
    stats = AlignStats(
        run_rows=len(run),
        run_queries=len(run_judged),
        run_queries_unjudged=int((run_judged < 0).sum()),
        judged_queries_missing=len(prepared.query_ids) - int((in_run & (to_judged >= 0)).sum()),
        duplicates_dropped=duplicates,
        rows_beyond_depth=beyond,
    )
    return Aligned(universe, lists, in_run, stats, source, run_score, run.doc_id, query_id_array=universe_ids, scores=conv.scores)


Engine = Callable[[PreparedQrels, Run, "np.ndarray | None"], Aligned]
# The contract test (tests/data/test_align_engines.py) runs every engine here.
ENGINES: dict[str, Engine] = {"arrow": align_arrow, "compiled": align_compiled}
# The compiled engine (ahead-of-time C) against the Arrow engine, 2 cores, medians of 3: 10k rows 4.1 ms against
# 1.9 ms (its threads' start), 100k 7.4 against 21 ms, 1M 24 against 207 ms, 7M 0.15 against 2.8 s. Both engines give
# the same lists (tests/data/test_align_engines.py).
COMPILED_FROM_ROWS = 50_000


EngineChoice = Literal["auto", "arrow", "compiled"]


def engine_for(rows: int, choice: EngineChoice = "auto") -> Engine:
    """The alignment engine: the one named, or for ``auto`` the faster at ``rows`` (the compiled one from
    :data:`COMPILED_FROM_ROWS`). Decided by the arguments alone, never by what this process has loaded.

    >>> engine_for(10) is align_arrow, engine_for(10, "compiled") is align_compiled
    (True, True)
    """
    if choice == "auto":
        return align_compiled if rows >= COMPILED_FROM_ROWS else align_arrow
    return ENGINES[choice]


# the conventions kernel_settings hands the kernels: the alignment itself reads none of them (but the relevance
# level under queries: relevant)
KERNEL_CONVENTIONS = (
    "relevance_level",
    "ideal_from",
    "ap_denominator",
    "short_lists",
    "graded_below_level",
    "iprec_cut",
    "collection_size",
)


def kernel_settings(conventions: Conventions) -> dict[str, Any]:
    """The conventions the kernels read from the lists (:class:`RankedLists`' fields), not from the alignment: lists
    aligned once can be read under each of them (``dataclasses.replace(lists, **kernel_settings(c))``)."""
    return {
        "relevance_level": conventions.relevance_level,
        "ideal_from_run": conventions.ideal_from is IdealFrom.RUN,
        "ap_min_r_k": conventions.ap_denominator is APDenominator.MIN_R_K,
        "short_lists_truncate": conventions.short_lists is ShortLists.TRUNCATE,
        "graded_below_level_zero": conventions.graded_below_level is GradedBelowLevel.ZERO,
        "iprec_plus_09": conventions.iprec_cut is IPrecCut.TREC_EVAL9,
        "collection_size": conventions.collection_size,
    }


def alignment_conventions(conventions: Conventions) -> Conventions:
    """``conventions`` with those only the kernels read (:func:`kernel_settings`) at their defaults: two conventions
    with the same alignment conventions give the same aligned rows. The relevance level stays when it decides the
    universe (``queries: relevant``).

    >>> alignment_conventions(Conventions(ap_denominator="min_R_k", relevance_level=2)) == Conventions()
    True
    """
    default = Conventions()
    kept = ("relevance_level",) if conventions.queries is Queries.RELEVANT else ()
    return dataclasses.replace(conventions, **{name: getattr(default, name) for name in KERNEL_CONVENTIONS if name not in kept})


def align(prepared: PreparedQrels, run: Run, query_ids: np.ndarray | None = None, engine: EngineChoice = "auto") -> Aligned:
    """Build the ranked lists of ``run`` against prepared judgments, with the engine named (``auto``: the faster
    at the run's size; every engine gives the same lists).

    ``query_ids`` fixes the universe explicitly (a query file); otherwise the
    ``queries`` convention decides it.
    """
    return engine_for(len(run), engine)(prepared, run, query_ids)
