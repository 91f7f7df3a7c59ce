"""Qrels x Run x Conventions -> RankedLists.

The only place that decides the query universe, detects duplicates, joins labels
to retrieved documents, breaks ties and truncates at depth. Judgments are
prepared once (:class:`PreparedQrels`) and aligned with many runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from harness.conventions import Conventions, Duplicates, IdealFrom, NegativeLabels, Queries, Ties
from harness.data._hash import combine, string_fingerprints
from harness.data.model import Qrels, Run
from harness.data.trec import line_of_row
from harness.errors import InputFormatError
from harness.kernels._segments import RankedLists


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
    score: np.ndarray  # float64 per row, aligned with lists.label
    stats: AlignStats


def _qid_order(values: list[str]) -> np.ndarray:
    # trec_eval orders queries by strcmp; Python's str order is code point order,
    # which is UTF-8 byte order.
    return np.array(sorted(values), dtype=object)


def _codes(query_id: pa.Array, universe: dict[str, int]) -> np.ndarray:
    """Position of each row's query in the universe, -1 when it is not in it."""
    encoded = pc.dictionary_encode(query_id)
    if isinstance(encoded, pa.ChunkedArray):
        encoded = encoded.combine_chunks()
    mapping = np.array([universe.get(q, -1) for q in encoded.dictionary.to_pylist()], dtype=np.int64)
    indices = encoded.indices.to_numpy(zero_copy_only=False)
    return mapping[indices] if mapping.size else np.zeros(0, dtype=np.int64)


def _duplicate_rows(codes: np.ndarray, docs: pa.Array, prefer: np.ndarray | None) -> np.ndarray:
    """Rows that repeat an earlier (query, doc) pair: the ones to drop.

    ``prefer`` (e.g. the score) decides which copy is kept (the highest); the first
    row wins otherwise. Fingerprints find candidates; strings confirm them.
    """
    if codes.size < 2:
        return np.zeros(0, dtype=np.int64)
    with np.errstate(over="ignore"):
        keys = combine(codes, string_fingerprints(docs))
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    same = sorted_keys[1:] == sorted_keys[:-1]
    if not same.any():
        return np.zeros(0, dtype=np.int64)
    flagged = np.zeros(codes.size, dtype=bool)
    flagged[order[1:][same]] = True
    flagged[order[:-1][same]] = True
    rows = np.flatnonzero(flagged)
    table = pa.table(
        {
            "q": pa.array(codes[rows]),
            "d": docs.take(pa.array(rows)),
            "p": pa.array(np.zeros(rows.size) if prefer is None else prefer[rows]),
            "row": pa.array(rows),
        }
    )
    sort = pc.sort_indices(table, sort_keys=[("q", "ascending"), ("d", "ascending"), ("p", "descending"), ("row", "ascending")])
    table = table.take(sort)
    q = table["q"].to_numpy()
    d = table["d"]
    repeat = np.zeros(len(table), dtype=bool)
    if len(table) > 1:
        equal_doc = pc.equal(d.slice(1), d.slice(0, len(table) - 1)).to_numpy(zero_copy_only=False)
        repeat[1:] = (q[1:] == q[:-1]) & equal_doc
    return np.sort(table["row"].to_numpy()[repeat])


def _duplicate_error(source: str, what: str, qid: str, doc: str, row: int) -> InputFormatError:
    return InputFormatError(
        f"document {doc!r} is listed twice for query {qid!r} in the {what}",
        path=source,
        line=line_of_row(source, row) if not source.startswith("<") else None,
        hint="remove the repeated line, or set the duplicates convention to 'first' or 'max'",
    )


def _take(array: pa.Array, rows: np.ndarray) -> pa.Array:
    return array.take(pa.array(rows, type=pa.int64()))


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
    index: dict[str, int]
    codes: np.ndarray  # per judgment, sorted by (query, key)
    keys: np.ndarray  # uint64 join key per judgment, sorted within the whole array
    key_order: np.ndarray  # judgment rows in key order
    docs: pa.Array
    labels: np.ndarray
    judged_offsets: np.ndarray
    judged_labels: np.ndarray  # labels grouped by query (universe order)
    stats: dict[str, int] = field(default_factory=dict)

    @classmethod
    def build(cls, qrels: Qrels, conventions: Conventions) -> PreparedQrels:
        labels = np.asarray(qrels.relevance, dtype=np.float64)
        if (labels < 0).any():
            if conventions.negative_labels is NegativeLabels.ERROR:
                row = int(np.flatnonzero(labels < 0)[0])
                raise InputFormatError(
                    f"negative relevance label {labels[row]:g}",
                    path=qrels.source,
                    line=line_of_row(qrels.source, row) if not qrels.source.startswith("<") else None,
                    hint="set negative_labels to 'unjudged' (trec_eval) or 'nonrelevant'",
                )
            if conventions.negative_labels is NegativeLabels.NONRELEVANT:
                labels = np.maximum(labels, 0.0)
        qid_values = pc.unique(qrels.query_id).to_pylist()
        query_ids = _qid_order(qid_values)
        index = {q: i for i, q in enumerate(query_ids)}
        codes = _codes(qrels.query_id, index)
        docs = qrels.doc_id
        dropped = _duplicate_rows(codes, docs, labels if conventions.duplicates is Duplicates.MAX else None)
        if dropped.size:
            if conventions.duplicates is Duplicates.ERROR:
                row = int(dropped[0])
                raise _duplicate_error(qrels.source, "qrels", str(qrels.query_id[row]), str(docs[row]), row)
            keep = np.ones(codes.size, dtype=bool)
            keep[dropped] = False
            rows = np.flatnonzero(keep)
            codes, labels, docs = codes[rows], labels[rows], _take(docs, rows)
        with np.errstate(over="ignore"):
            keys = combine(codes, string_fingerprints(docs))
        key_order = np.argsort(keys, kind="stable")
        by_query = np.argsort(codes, kind="stable")
        judged_offsets = np.zeros(len(query_ids) + 1, dtype=np.int64)
        np.cumsum(np.bincount(codes, minlength=len(query_ids)), out=judged_offsets[1:])
        return cls(
            source=qrels.source,
            conventions=conventions,
            query_ids=query_ids,
            index=index,
            codes=codes,
            keys=keys[key_order],
            key_order=key_order,
            docs=docs,
            labels=labels,
            judged_offsets=judged_offsets,
            judged_labels=labels[by_query],
            stats={"judgments": int(codes.size), "duplicates_dropped": int(dropped.size)},
        )

    def labels_for(self, codes: np.ndarray, docs: pa.Array) -> np.ndarray:
        """Label of each (query code, doc) in the judgments; NaN when not judged."""
        with np.errstate(over="ignore"):
            keys = combine(codes, string_fingerprints(docs))
        out = np.full(codes.size, np.nan)
        if self.keys.size == 0 or codes.size == 0:
            return out
        # A fingerprint may (rarely) repeat; walk every judgment that shares it.
        lo = np.searchsorted(self.keys, keys, side="left")
        hi = np.searchsorted(self.keys, keys, side="right")
        span = hi - lo
        for extra in range(int(span.max()) if span.size else 0):
            rows = np.flatnonzero((span > extra) & np.isnan(out))
            if rows.size == 0:
                break
            judged = self.key_order[lo[rows] + extra]
            same_query = self.codes[judged] == codes[rows]
            same_doc = pc.equal(_take(docs, rows), _take(self.docs, judged)).to_numpy(zero_copy_only=False)
            match = same_query & same_doc
            out[rows[match]] = self.labels[judged[match]]
        return out


def align(prepared: PreparedQrels, run: Run, query_ids: np.ndarray | None = None) -> Aligned:
    """Build the ranked lists of ``run`` against prepared judgments.

    ``query_ids`` fixes the universe explicitly (the ``file`` query policy);
    otherwise the ``queries`` convention decides it.
    """
    conv = prepared.conventions
    run_qids = pc.unique(run.query_id).to_pylist()
    judged = set(prepared.index)
    if query_ids is not None:
        universe = np.asarray(query_ids, dtype=object)
    elif conv.queries is Queries.QRELS:
        universe = prepared.query_ids
    elif conv.queries is Queries.INTERSECTION:
        universe = _qid_order([q for q in run_qids if q in judged])
    else:
        universe = _qid_order(run_qids)
    index = {q: i for i, q in enumerate(universe)}
    n_q = len(universe)

    codes = _codes(run.query_id, index)
    keep = np.flatnonzero(codes >= 0)
    docs = _take(run.doc_id, keep) if keep.size != codes.size else run.doc_id
    codes, score = codes[keep], np.asarray(run.score, dtype=np.float64)[keep]

    dropped = _duplicate_rows(codes, docs, score if conv.duplicates is Duplicates.MAX else None)
    if dropped.size:
        if conv.duplicates is Duplicates.ERROR:
            row = int(dropped[0])
            raise _duplicate_error(run.source, "run", str(universe[codes[row]]), str(docs[row]), int(keep[row]))
        mask = np.ones(codes.size, dtype=bool)
        mask[dropped] = False
        rows = np.flatnonzero(mask)
        codes, score, docs = codes[rows], score[rows], _take(docs, rows)

    # Judgment codes follow the qrels' own order; translate the run's codes to them.
    to_judged = np.array([prepared.index.get(q, -1) for q in universe], dtype=np.int64)
    judged_codes = to_judged[codes] if codes.size else codes
    labels = np.full(codes.size, np.nan)
    has_judgments = judged_codes >= 0
    labels[has_judgments] = prepared.labels_for(judged_codes[has_judgments], _take(docs, np.flatnonzero(has_judgments)))

    sort_keys: list[tuple[str, str]] = [("q", "ascending"), ("s", "descending")]
    columns: dict[str, pa.Array] = {"q": pa.array(codes), "s": pa.array(score)}
    if conv.ties in (Ties.OPTIMISTIC, Ties.PESSIMISTIC):
        columns["l"] = pa.array(np.nan_to_num(labels, nan=-np.inf))
        sort_keys.append(("l", "descending" if conv.ties is Ties.OPTIMISTIC else "ascending"))
    if conv.ties is not Ties.INPUT_ORDER:  # Arrow's sort is stable: input order breaks what remains
        columns["d"] = docs
        sort_keys.append(("d", "descending"))
    order = pc.sort_indices(pa.table(columns), sort_keys=sort_keys).to_numpy()
    codes, score, labels = codes[order], score[order], labels[order]

    counts = np.bincount(codes, minlength=n_q)
    beyond = 0
    if conv.depth is not None and codes.size:
        starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
        pos = np.arange(codes.size) - np.repeat(starts, counts)
        within = pos < conv.depth
        beyond = int((~within).sum())
        codes, score, labels = codes[within], score[within], labels[within]
        counts = np.bincount(codes, minlength=n_q)
    offsets = np.zeros(n_q + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])

    # Judgments of each universe query, in universe order.
    j_counts = np.where(to_judged >= 0, np.diff(prepared.judged_offsets)[np.maximum(to_judged, 0)], 0)
    j_offsets = np.zeros(n_q + 1, dtype=np.int64)
    np.cumsum(j_counts, out=j_offsets[1:])
    starts = np.where(to_judged >= 0, prepared.judged_offsets[:-1][np.maximum(to_judged, 0)], 0)
    take = np.repeat(starts - j_offsets[:-1], j_counts) + np.arange(j_offsets[-1])
    judged_labels = prepared.judged_labels[take]

    tie_group = None
    if conv.ties is Ties.AVERAGE and codes.size:
        new_group = np.ones(codes.size, dtype=bool)
        new_group[1:] = (codes[1:] != codes[:-1]) | (score[1:] != score[:-1])
        tie_group = np.cumsum(new_group) - 1

    lists = RankedLists(
        offsets=offsets,
        label=labels,
        judged_offsets=j_offsets,
        judged_label=judged_labels,
        relevance_level=conv.relevance_level,
        tie_group=tie_group,
        ideal_from_run=conv.ideal_from is IdealFrom.RUN,
    )
    stats = AlignStats(
        run_rows=len(run),
        run_queries=len(run_qids),
        run_queries_unjudged=sum(1 for q in run_qids if q not in judged),
        judged_queries_missing=sum(1 for q in prepared.query_ids if q not in index or counts[index[q]] == 0),
        duplicates_dropped=int(dropped.size),
        rows_beyond_depth=beyond,
    )
    return Aligned(query_ids=universe, lists=lists, in_run=counts > 0, score=score, stats=stats)
