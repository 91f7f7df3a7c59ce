"""The compiled alignment engine: every phase after the universe, one query at a time.

The Arrow engine sorts and joins all rows at once: a sort of 64-bit keys for duplicates, a
three-key sort for the ranking, a searched join. At 7M rows that is 3 s. Runs are almost
always written one query after another, so this engine works inside each query's block of
rows, where everything is small and in cache:

1. the blocks: rows where the query id changes (one pass over the id bytes); when a
   query's rows are split over several blocks, a stable counting sort groups them first;
2. per block, in compiled code on every core: an open-addressing table of the block's
   documents (a 64-bit hash, confirmed on the bytes) finds the repeated lines and then
   serves the join, each of the query's judgments looking itself up; a block already in
   rank order (as most run files list it) is confirmed in one pass, any other is ranked
   by a radix sort on the leading bits in which the block's scores differ, each run those
   bits leave equal finished by a merge sort on (score, tie rule); the first ``depth``
   rows are written straight into the block's place in the output.

A query's rows, label and rank depend on that query's rows only. Strings are read in
place from the Arrow buffers; nothing per row passes through Python. At 7M rows (7,000
queries x 1,000) this takes 0.2-0.5 s (ranked or shuffled blocks) where the Arrow engine
takes 2.2 s.

The kernels are C, compiled ahead of time by the package's build (``_align_kernels.pyx``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from harness.data import _align_kernels as kernels
from harness.data._arrow import contiguous, from_numpy, to_numpy
from harness.data.model import QueryBlocks
from harness.kernels._parallel import even_split, run_split, split, threads

# tie rules, as the kernel sees them
TIE_TREC_EVAL, TIE_OPTIMISTIC, TIE_PESSIMISTIC, TIE_INPUT_ORDER, TIE_DOCNO_ASCENDING = 0, 1, 2, 3, 4
HASHED_ON_THREADS_FROM = 1 << 16  # strings: fewer are hashed in this thread
TIES = {
    "optimistic": TIE_OPTIMISTIC,
    "pessimistic": TIE_PESSIMISTIC,
    "input_order": TIE_INPUT_ORDER,
    "docno_ascending": TIE_DOCNO_ASCENDING,
}  # else trec_eval's
# which copy of a repeated (query, doc) stays: the first line, or the highest score (the first of equals)
KEEP_FIRST, KEEP_MAX = 0, 1


@dataclass(frozen=True)
class Strings:
    """An Arrow string column as the kernels read it: offsets into one byte buffer."""

    offsets: np.ndarray  # int32 or int64, n + 1
    data: np.ndarray  # uint8

    @classmethod
    def of(cls, values: pa.Array | pa.ChunkedArray) -> Strings:
        values = contiguous(values)
        if not (pa.types.is_string(values.type) or pa.types.is_large_string(values.type)):
            values = pc.cast(values, pa.string())
        width = np.int64 if pa.types.is_large_string(values.type) else np.int32
        buffers = values.buffers()
        offsets = np.frombuffer(buffers[1], dtype=width, count=len(values) + 1, offset=values.offset * np.dtype(width).itemsize)
        data = np.frombuffer(buffers[2], dtype=np.uint8) if buffers[2] is not None and buffers[2].size else np.zeros(1, np.uint8)
        return cls(offsets, data)


@dataclass(frozen=True)
class JudgmentIndex:
    """Each judged query's judgments, with their document hashes: what the join looks up."""

    bounds: np.ndarray  # judged query j's judgments are rows[bounds[j]:bounds[j + 1]]
    rows: np.ndarray  # judgment rows (into the prepared judgments)
    hashes: np.ndarray  # their document hashes
    docs: Strings


def judgment_index(bounds: np.ndarray, rows: np.ndarray, docs: pa.Array | pa.ChunkedArray) -> JudgmentIndex:
    """Index the judgments for :func:`rank_blocks`: ``rows``, the judgments grouped by judged query (those of query j
    at ``bounds[j]:bounds[j + 1]``), with the hashes of their documents, hashed on every core."""
    strings = Strings.of(docs)
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    hashes = np.empty(rows.size, np.uint64)
    run_split(lambda lo, hi: kernels.hash_rows(rows, strings.offsets, strings.data, hashes, lo, hi), _string_ranges(rows.size))
    return JudgmentIndex(np.ascontiguousarray(bounds, dtype=np.int64), rows, hashes, strings)


def query_blocks(query_id: pa.Array | pa.ChunkedArray | QueryBlocks) -> tuple[np.ndarray | None, np.ndarray, pa.Array]:
    """(row order, block bounds, each block's query id): rows grouped into one block per query; ``query_id``, a column
    or the blocks the reader kept (runs of equal ids), which are read as they are.

    The row order is None (the file order) when each query's rows are contiguous, the
    usual layout; otherwise a stable counting sort groups them, keeping file order
    within a query. Blocks appear in order of first appearance.

    >>> order, bounds, ids = query_blocks(pa.array(["b", "b", "a", "b"]))
    >>> order.tolist(), bounds.tolist(), ids.to_pylist()
    ([0, 1, 3, 2], [0, 3, 4], ['b', 'a'])
    """
    starts, ids = id_blocks(query_id)
    if all_distinct(ids):
        return None, starts, ids
    # the blocks' ids hashed, not every row's (a query's first row starts its first block, so the codes are those of
    # every row's id, in order of first appearance): 3.9M judgments in 400k blocks, 0.14 -> 0.04 s
    encoded = pc.dictionary_encode(ids)
    codes = np.repeat(to_numpy(encoded.indices).astype(np.int64), np.diff(starts))
    order, bounds = kernels.group_rows(codes, len(encoded.dictionary))
    return order, bounds, encoded.dictionary


def all_distinct(ids: pa.Array | pa.ChunkedArray) -> bool:
    """Are the strings all different? (Arrow's count_distinct: 87 ms for 200,000 query ids, this a few.)

    >>> all_distinct(pa.array(["a", "b"])), all_distinct(pa.array(["a", "b", "a"]))
    (True, False)
    """
    strings = Strings.of(ids)
    return bool(kernels.first_repeat(strings.offsets, strings.data) < 0)


def id_blocks(query_id: pa.Array | pa.ChunkedArray | QueryBlocks) -> tuple[np.ndarray, pa.Array]:
    """(starts, ids): the runs of equal ids of a column (its rows ``starts[b]:starts[b + 1]`` hold ``ids[b]``), or of the
    blocks the reader kept, as they are.

    >>> starts, ids = id_blocks(pa.array(["b", "b", "a", "b"]))
    >>> starts.tolist(), ids.to_pylist()
    ([0, 2, 3, 4], ['b', 'a', 'b'])
    """
    if isinstance(query_id, QueryBlocks):
        return np.ascontiguousarray(query_id.starts, dtype=np.int64), contiguous(query_id.ids)
    strings = Strings.of(query_id)
    starts = kernels.block_starts(strings.offsets, strings.data, len(query_id))
    return starts, contiguous(query_id.take(from_numpy(starts[:-1])))


def group_by_code(codes: np.ndarray, n_codes: int) -> tuple[np.ndarray, np.ndarray]:
    """(the rows grouped by code, in file order within each; each code's bounds): ``np.argsort(codes, kind="stable")``
    and the codes' offsets, by one counting sort.

    >>> [a.tolist() for a in group_by_code(np.array([1, 0, 1, 0]), 3)]
    [[1, 3, 0, 2], [0, 2, 4, 4]]
    """
    return kernels.group_rows(np.ascontiguousarray(codes, dtype=np.int64), n_codes)


def duplicate_rows(
    order: np.ndarray | None, bounds: np.ndarray, docs: pa.Array | pa.ChunkedArray, prefer: np.ndarray | None
) -> np.ndarray:
    """Rows (ascending) that repeat a document within their block: every copy but the one kept.

    The kept copy is the first, or with ``prefer`` (a judgment's label) the highest, the
    first of equals. ``order``/``bounds``: the blocks, as :func:`query_blocks` gives them.

    >>> order, bounds, _ = query_blocks(pa.array(["q", "q", "r", "q"]))
    >>> duplicate_rows(order, bounds, pa.array(["a", "b", "a", "a"]), np.array([0.0, 1.0, 1.0, 2.0])).tolist()
    [0]
    """
    strings = Strings.of(docs)
    drop = np.zeros(len(docs), np.bool_)
    rows = np.zeros(0, np.int64) if order is None else order
    values = np.zeros(0) if prefer is None else np.asarray(prefer, dtype=np.float64)

    def task(lo: int, hi: int) -> None:
        kernels.duplicate_blocks(
            lo, hi, bounds, rows, order is None, strings.offsets, strings.data, values, prefer is not None, drop.view(np.uint8)
        )

    run_split(task, split(np.diff(bounds).astype(np.float64), threads()))
    return np.flatnonzero(drop)


@dataclass(frozen=True)
class Ranked:
    """The kept rows of every block, ranked, block after block in the order asked for."""

    rows: np.ndarray  # run row of each ranked row
    labels: np.ndarray
    kept: np.ndarray  # per block: rows kept (after duplicates and depth)
    dropped: np.ndarray  # per block: duplicate copies dropped
    beyond: np.ndarray  # per block: rows cut at depth
    first_dropped: int  # the first dropped copy's run row, -1 when none


def rank_blocks(
    order: np.ndarray | None,
    bounds: np.ndarray,
    judged: np.ndarray,
    position: np.ndarray,
    docs: pa.Array | pa.ChunkedArray,
    score: np.ndarray,
    index: JudgmentIndex,
    labels: np.ndarray,
    keep: int,
    ties: int,
    depth: int,
    single: bool,
) -> Ranked:
    """Label, deduplicate, rank and cut the blocks; ``position``: each block's place in the output, -1 to leave it out.

    ``judged``: each block's judged-query code, or -1. Every block is given room for all
    its rows (``depth`` at most) and written straight into the output; only when
    duplicates leave a block shorter are the outputs closed up.
    """
    strings = Strings.of(docs)
    n_blocks = bounds.size - 1
    room = np.diff(bounds) if depth < 0 else np.minimum(np.diff(bounds), depth)
    room = np.where(position >= 0, room, 0)
    start = np.zeros(n_blocks, np.int64)
    placed = np.flatnonzero(position >= 0)
    placed = placed[np.argsort(position[placed])]
    start[placed] = np.cumsum(room[placed]) - room[placed]
    total = int(room.sum())
    # run rows fit int32 below 2^31 rows: 4 bytes a row less for as long as the lists live (28 MB at 7M rows)
    out_rows = np.empty(total, np.int32 if len(docs) < 2**31 else np.int64)
    out_labels = np.empty(total, np.float64)
    kept = np.zeros(n_blocks, np.int64)
    dropped = np.zeros(n_blocks, np.int64)
    beyond = np.zeros(n_blocks, np.int64)
    first_dropped = np.full(n_blocks, -1, np.int64)
    rows = np.zeros(0, np.int64) if order is None else order

    active = (position >= 0).view(np.uint8)
    score = np.ascontiguousarray(score, dtype=np.float64)

    def task(lo: int, hi: int) -> None:
        kernels.rank_blocks(
            lo,
            hi,
            bounds,
            rows,
            order is None,
            judged,
            active,
            strings.offsets,
            strings.data,
            score,
            index.bounds,
            index.rows,
            index.hashes,
            index.docs.offsets,
            index.docs.data,
            labels,
            keep,
            ties,
            single,
            depth,
            start,
            out_rows,
            out_labels,
            kept,
            dropped,
            beyond,
            first_dropped,
        )

    run_split(task, split(np.where(position >= 0, np.diff(bounds), 0).astype(np.float64), threads()))
    if (kept < room).any():  # duplicates dropped: close up the gaps they left
        filled = np.repeat(kept[placed], room[placed]) > np.arange(total) - np.repeat(start[placed], room[placed])
        out_rows, out_labels = out_rows[filled], out_labels[filled]
    any_dropped = first_dropped[first_dropped >= 0]
    return Ranked(out_rows, out_labels, kept, dropped, beyond, int(any_dropped.min()) if any_dropped.size else -1)


def positions_of(column: pa.Array | pa.ChunkedArray, distinct: pa.Array, rows: np.ndarray | None = None) -> np.ndarray:
    """``positions_in(column.take(rows), distinct)`` (int64, -1 where absent), without taking the strings: a table
    of the distinct ones, probed by each row's hash in compiled code on every core. Mapping a 20M-row run's items
    to their codes: 1.3 s through Arrow's take and index_in, 0.1-0.2 s so.

    >>> positions_of(pa.array(["b", "z", "a"]), pa.array(["a", "b"]), np.array([2, 2, 1, 0])).tolist()
    [0, 0, -1, 1]
    """
    strings, known = Strings.of(column), Strings.of(distinct)
    table = kernels.string_table(known.offsets, known.data)
    picked = np.zeros(0, dtype=np.int64) if rows is None else np.ascontiguousarray(rows)
    if picked.dtype not in (np.int32, np.int64):
        picked = picked.astype(np.int64)
    n = len(column) if rows is None else picked.size
    out = np.empty(n, dtype=np.int64)

    def find(lo: int, hi: int) -> None:
        kernels.find_strings(strings.offsets, strings.data, picked, known.offsets, known.data, table, out, lo, hi)

    run_split(find, _string_ranges(n))
    return out


def _string_ranges(n: int) -> list[tuple[int, int]]:
    """``range(n)`` split over the cores for a pass that hashes one string each, when there are enough of them
    (``HASHED_ON_THREADS_FROM``) to pay for the threads' start."""
    return even_split(n, threads() if n >= HASHED_ON_THREADS_FROM else 1)
