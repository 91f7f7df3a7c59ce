"""Qrels x Run x Conventions -> RankedLists.

The only place that decides the query universe, detects duplicates, joins labels
to retrieved documents, breaks ties and truncates at depth. Judgments are
prepared once (:class:`PreparedQrels`) and aligned with many runs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from harness.conventions import APDenominator, Conventions, Duplicates, IdealFrom, NegativeLabels, Queries, Ties
from harness.data._arrow import from_numpy, to_numpy
from harness.data._hash import pair_keys, sort_with_rows, string_fingerprints
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


def _dictionary(query_id: pa.Array) -> tuple[np.ndarray, list[str], np.ndarray]:
    """(index per row into the distinct ids, the distinct ids, their fingerprints)."""
    encoded = pc.dictionary_encode(query_id)
    if isinstance(encoded, pa.ChunkedArray):
        encoded = encoded.combine_chunks()
    indices = to_numpy(encoded.indices).astype(np.int64)
    return indices, encoded.dictionary.to_pylist(), string_fingerprints(encoded.dictionary)


def _encode_queries(encoded: tuple[np.ndarray, list[str], np.ndarray], universe: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
    """(universe code per row or -1, fingerprint of each row's query)."""
    indices, distinct, fingerprints = encoded
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
        line=line_of_row(source, row) if not source.startswith("<") else None,
        hint="remove the repeated line, or set the duplicates convention to 'first' or 'max'",
    )


def _take(array: pa.Array, rows: np.ndarray) -> pa.Array:
    return array.take(from_numpy(rows.astype(np.int64)))


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
    codes: np.ndarray  # per judgment: position of its query in query_ids
    keys: np.ndarray  # per judgment: (query, doc) fingerprint
    docs: pa.Array
    labels: np.ndarray
    judged_offsets: np.ndarray
    judged_labels: np.ndarray  # labels grouped by query, in query_ids order
    duplicates_dropped: int = 0

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
        encoded = _dictionary(qrels.query_id)
        query_ids = _qid_order(encoded[1])
        index = {q: i for i, q in enumerate(query_ids)}
        codes, query_fp = _encode_queries(encoded, index)
        docs = qrels.doc_id
        keys = pair_keys(query_fp, string_fingerprints(docs))
        sorted_keys = _SortedKeys(*sort_with_rows(keys))
        dropped = _duplicate_rows(sorted_keys, codes, docs, labels if conventions.duplicates is Duplicates.MAX else None)
        if dropped.size:
            if conventions.duplicates is Duplicates.ERROR:
                row = int(dropped[0])
                raise _duplicate_error(qrels.source, "qrels", str(qrels.query_id[row]), str(docs[row]), row)
            keep = np.ones(codes.size, dtype=bool)
            keep[dropped] = False
            rows = np.flatnonzero(keep)
            codes, labels, docs, keys = codes[rows], labels[rows], _take(docs, rows), keys[rows]
        by_query = np.argsort(codes, kind="stable")
        judged_offsets = np.zeros(len(query_ids) + 1, dtype=np.int64)
        np.cumsum(np.bincount(codes, minlength=len(query_ids)), out=judged_offsets[1:])
        return cls(
            source=qrels.source,
            conventions=conventions,
            query_ids=query_ids,
            index=index,
            codes=codes,
            keys=keys,
            docs=docs,
            labels=labels,
            judged_offsets=judged_offsets,
            judged_labels=labels[by_query],
            duplicates_dropped=int(dropped.size),
        )

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
        sort_keys.append(("d", "descending"))
    return to_numpy(pc.sort_indices(pa.table(columns), sort_keys=sort_keys))


def align(prepared: PreparedQrels, run: Run, query_ids: np.ndarray | None = None) -> Aligned:
    """Build the ranked lists of ``run`` against prepared judgments.

    ``query_ids`` fixes the universe explicitly (a query file); otherwise the
    ``queries`` convention decides it.
    """
    conv = prepared.conventions
    encoded = _dictionary(run.query_id)
    run_qids = encoded[1]
    judged = prepared.index
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

    codes, query_fp = _encode_queries(encoded, index)
    keep = np.flatnonzero(codes >= 0)
    if keep.size != codes.size:
        docs = _take(run.doc_id, keep)
        codes, query_fp, score = codes[keep], query_fp[keep], np.asarray(run.score, dtype=np.float64)[keep]
    else:
        docs, score = run.doc_id, np.asarray(run.score, dtype=np.float64)

    keys = pair_keys(query_fp, string_fingerprints(docs))
    del query_fp
    sorted_keys = _SortedKeys(*sort_with_rows(keys))
    del keys
    dropped = _duplicate_rows(sorted_keys, codes, docs, score if conv.duplicates is Duplicates.MAX else None)
    if dropped.size and conv.duplicates is Duplicates.ERROR:
        row = int(dropped[0])
        raise _duplicate_error(run.source, "run", str(universe[codes[row]]), str(docs[row]), int(keep[row]))

    # Judgment codes follow the qrels' own order; translate the universe's codes to them.
    to_judged = np.array([judged.get(q, -1) for q in universe], dtype=np.int64)
    judged_codes = to_judged[codes] if codes.size else codes
    labels = prepared.labels_for(sorted_keys, judged_codes, docs)
    del sorted_keys, judged_codes
    if dropped.size:
        mask = np.ones(codes.size, dtype=bool)
        mask[dropped] = False
        rows = np.flatnonzero(mask)
        codes, score, labels, docs = codes[rows], score[rows], labels[rows], _take(docs, rows)

    order = _presorted_order(codes, score)
    if order is None:
        order = _sorted_order(codes, score, labels, docs, conv.ties)
    codes, score, labels = codes[order], score[order], labels[order]
    del order
    counts = np.bincount(codes, minlength=n_q)
    beyond = 0
    if conv.depth is not None and codes.size:
        starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
        within = np.arange(codes.size) - np.repeat(starts, counts) < conv.depth
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

    tie_group = None
    if conv.ties is Ties.AVERAGE and codes.size:
        new_group = np.ones(codes.size, dtype=bool)
        new_group[1:] = (codes[1:] != codes[:-1]) | (score[1:] != score[:-1])
        tie_group = np.cumsum(new_group) - 1

    lists = RankedLists(
        offsets=offsets,
        label=labels,
        judged_offsets=j_offsets,
        judged_label=prepared.judged_labels[take],
        relevance_level=conv.relevance_level,
        tie_group=tie_group,
        ideal_from_run=conv.ideal_from is IdealFrom.RUN,
        ap_min_r_k=conv.ap_denominator is APDenominator.MIN_R_K,
        collection_size=conv.collection_size,
    )
    in_run = counts > 0  # before -J: a query whose documents are all unjudged was still answered
    if conv.judged_only:
        keep = labels >= 0  # judged: relevant or not (NaN, not in the qrels, and negative, unjudged, go)
        lists, score = lists.judged_subset(), score[keep]
    stats = AlignStats(
        run_rows=len(run),
        run_queries=len(run_qids),
        run_queries_unjudged=sum(1 for q in run_qids if q not in judged),
        judged_queries_missing=sum(1 for q in prepared.query_ids if q not in index or not in_run[index[q]]),
        duplicates_dropped=int(dropped.size),
        rows_beyond_depth=beyond,
    )
    return Aligned(query_ids=universe, lists=lists, in_run=in_run, score=score, stats=stats)
