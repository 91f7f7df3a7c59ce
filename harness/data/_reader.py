"""The one-pass reader of plain TREC files: two id columns and a number column, straight into the arrays alignment reads.

A plain file (fields separated by spaces or tabs, printable ASCII, no comments, plain
decimal numbers, the format's count of fields on every line) is cut into one range of
whole lines per core; compiled code (``_reader_kernels.pyx``) reads each range straight
into the output columns, in one pass. Where a range starts in them is estimated from the
exact counts of the file's first megabytes, with room to spare; each range is then moved
down over its own place to close the gap before it (a move over memory already written,
but for the gap). A range that outgrows its room sends the file through an exact count
first, then the same pass. Arrow's CSV reader tokenises every field into chunked columns,
which are then copied into one contiguous column each; this writes each kept field once.
At 20M lines (640 MB): 0.37 s on two cores and 0.67 s on one, where counting first took
0.58 s and 1.1 s.

Any other file gives None, and :mod:`harness.data.trec` reads it with Arrow or line by
line, which name the line at fault. The values are the same either way (the tests hold
the three readers to each other).
"""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np
import pyarrow as pa

from harness.data import _reader_kernels as kernels
from harness.data._arrow import STRING_BYTES_MAX, from_numpy, strings_from
from harness.data.model import QueryBlocks
from harness.kernels._parallel import concurrently, run_split, threads

SMALLEST_PART = 1 << 20  # bytes: smaller files are read by one thread


def read_plain(
    path: Path, n_fields: int, ids: tuple[int, int], number: int, parts: int | None = None, blocks: bool = False
) -> tuple[pa.Array | QueryBlocks, pa.Array, np.ndarray] | None:
    """The fields ``ids`` (two string columns) and ``number`` (float64) of every line of ``path``, a file of
    ``n_fields`` fields a line; None when the file is not plain (see the module) or cannot be read so. ``parts``: the
    ranges the file is cut into (default: one per core, none under :data:`SMALLEST_PART` bytes). ``blocks``: the first
    id field as :class:`QueryBlocks` (one id and start row per run of lines with equal ids) instead of a column.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = Path(folder) / "run"
    ...     _ = path.write_text("q1 Q0 d7 1 2.5 bm25\\n\\nq1\\tQ0 d3 2 -1e-3 bm25\\nq2 Q0 d3 1 1 bm25\\n")
    ...     qid, doc, score = read_plain(path, 6, (0, 2), 4)
    ...     blocks = read_plain(path, 6, (0, 2), 4, blocks=True)[0]
    ...     bad = path.write_text("q1 Q0 d7 1 2,5 bm25\\n") and read_plain(path, 6, (0, 2), 4)
    >>> qid.to_pylist(), doc.to_pylist(), score.tolist(), bad
    (['q1', 'q1', 'q2'], ['d7', 'd3', 'd3'], [2.5, -0.001, 1.0], None)
    >>> blocks.starts.tolist(), blocks.ids.to_pylist()
    ([0, 2, 3], ['q1', 'q2'])
    """
    if path.suffix == ".gz":
        return None
    try:
        size = path.stat().st_size
        cuts = _line_starts(path, size, parts or min(threads(), max(1, size // SMALLEST_PART)))
        with open(path, "rb") as handle:
            sample_end = _next_line_start(handle, min(SAMPLE, cuts[1]))
    except OSError:
        return None
    reader = _Reader(os.fsencode(path), list(itertools.pairwise(cuts)), n_fields, ids, number, blocks)
    # One pass: each part written where the file's first bytes say it will start (a part's first line after the
    # estimated rows and bytes of the parts before it, with room to spare), the gaps then closed. A part that
    # outgrows its room (lines unlike the first ones) has all of them read again where an exact count places them.
    columns = reader.fill(reader.estimated_places(sample_end))
    if columns is None:
        counts = reader.counts()
        if counts is None:
            return None
        columns = reader.fill(_Places.from_counts(counts, blocks))
    return columns


SAMPLE = 1 << 22  # bytes at the file's start counted exactly, to place the parts after the first
ROOM = 1.125  # a part placed before another is given this much more room than its estimate


@dataclass(frozen=True)
class _Places:
    """Where each part's rows, id bytes and blocks start in the output columns (``row[k]`` for part k, ``row[-1]`` the
    column's size), and whether they are exact (each part meets the next) or estimated (gaps to be closed)."""

    row: np.ndarray
    a: np.ndarray
    b: np.ndarray
    block: np.ndarray
    exact: bool

    @classmethod
    def from_counts(cls, counts: np.ndarray, blocks: bool) -> _Places:
        """From each part's counts (rows, a bytes, b bytes, blocks in columns 1, 2, 3, 5)."""
        row, a, b, block = (np.concatenate([[0], np.cumsum(counts[:, i])]).astype(np.int64) for i in (1, 2, 3, 5))
        return cls(row, a, b, block if blocks else row, True)


class _Reader:
    """The compiled reader's passes over one file's parts."""

    def __init__(
        self, name: bytes, ranges: list[tuple[int, int]], n_fields: int, ids: tuple[int, int], number: int, blocks: bool
    ) -> None:
        self.name, self.ranges, self.n_fields, self.ids, self.number, self.blocks = name, ranges, n_fields, ids, number, blocks

    def _count(self, start: int, stop: int, out: np.ndarray) -> None:
        offsets, data, numbers, starts = np.zeros(1, np.int32), np.zeros(1, np.uint8), np.zeros(1), np.zeros(1, np.int64)
        kernels.read_part(
            self.name,
            start,
            stop,
            self.n_fields,
            self.ids[0],
            self.ids[1],
            self.number,
            offsets,
            data,
            offsets,
            data,
            numbers,
            0,
            0,
            0,
            0,
            0,
            0,
            self.blocks,
            starts,
            0,
            0,
            False,
            out,
        )

    def counts(self) -> np.ndarray | None:
        """Each part's (status, rows, a bytes, b bytes, lines, blocks), counted side by side on the cores; None when the
        file is not plain or has no rows (the careful readers say what an empty file lacks)."""
        counts = np.zeros((len(self.ranges), 6), np.int64)
        run_split(lambda k, _: self._count(*self.ranges[k], counts[k]), [(k, k + 1) for k in range(len(self.ranges))])
        if (counts[:, 0] != kernels.OK).any() or not counts[:, 1].sum():
            return None
        return counts

    def estimated_places(self, sample_end: int) -> _Places:
        """Each part given room for the rows and bytes the counts of the file's first ``sample_end`` bytes (whole lines)
        estimate for it, and placed after the room of the ones before it: ``ROOM`` times the estimate, twice it for the
        last part (nothing follows it to move) and eight times it for blocks' ids (few bytes, but query ids often grow
        longer down a file: q9, then q99999). Room not written is never backed by memory, but it is allocated."""
        sample = np.zeros(6, np.int64)
        self._count(0, sample_end, sample)
        per_byte = sample[[1, 2, 3]] / max(sample_end, 1) if sample[0] == kernels.OK else np.zeros(3)
        sizes = np.array([stop - start for start, stop in self.ranges], np.int64)
        room = np.full(sizes.size, ROOM)
        room[-1] = 2.0
        most_rows = sizes // (2 * self.n_fields) + 1  # a line holds each field and its separator, a byte or more each
        rows = np.minimum(most_rows, np.ceil(per_byte[0] * sizes * room).astype(np.int64) + 256)
        a_room = np.full(sizes.size, 8.0) if self.blocks else room
        a = np.minimum(sizes, np.ceil(per_byte[1] * sizes * a_room).astype(np.int64) + 65536)
        b = np.minimum(sizes, np.ceil(per_byte[2] * sizes * room).astype(np.int64) + 4096)
        row, a_at, b_at = (np.concatenate([[0], np.cumsum(x)]).astype(np.int64) for x in (rows, a, b))
        return _Places(row, a_at, b_at, row, False)

    def fill(self, places: _Places) -> tuple[pa.Array | QueryBlocks, pa.Array, np.ndarray] | None:
        """Every part read into its place, side by side on the cores, then the gaps between parts closed; None when the
        file is not plain, or when a part outgrew its estimated place."""
        n_rows, n_a = int(places.row[-1]), int(places.block[-1])
        width = np.int32 if max(places.a[-1], places.b[-1]) <= STRING_BYTES_MAX else np.int64
        a_offsets, b_offsets = np.empty(n_a + 1, width), np.empty(n_rows + 1, width)
        a_data, b_data = np.empty(max(int(places.a[-1]), 1), np.uint8), np.empty(max(int(places.b[-1]), 1), np.uint8)
        numbers = np.empty(max(n_rows, 1), np.float64)
        starts = np.empty(max(n_a + 1, 1) if self.blocks else 1, np.int64)
        results = np.zeros((len(self.ranges), 6), np.int64)
        # estimated places leave a part one row (and block) short of the next one's start, so that the two never
        # write the same offset; exact ones meet, both writing the same value there
        short = 0 if places.exact else 1
        last = len(self.ranges) - 1

        def fill(k: int, _: int) -> None:
            end = 0 if k == last else short
            kernels.read_part(
                self.name,
                *self.ranges[k],
                self.n_fields,
                self.ids[0],
                self.ids[1],
                self.number,
                a_offsets,
                a_data,
                b_offsets,
                b_data,
                numbers,
                int(places.row[k]),
                int(places.row[k + 1]) - end,
                int(places.a[k]),
                int(places.a[k + 1]),
                int(places.b[k]),
                int(places.b[k + 1]),
                self.blocks,
                starts,
                int(places.block[k]),
                int(places.block[k + 1]) - end,
                True,
                results[k],
            )

        run_split(fill, [(k, k + 1) for k in range(len(self.ranges))])  # one part a task
        if (results[:, 0] != kernels.OK).any() or not results[:, 1].sum():
            return None
        rows, n_blocks = int(results[:, 1].sum()), int(results[:, 5].sum())
        if not places.exact:
            _close_gaps(places, results, self.blocks, a_offsets, a_data, b_offsets, b_data, numbers, starts)
        n_a = n_blocks if self.blocks else rows
        # the columns as long as what was read (the buffers' room past it is never written, so never backed by memory)
        first = strings_from(a_offsets[: n_a + 1], a_data[: max(int(results[:, 2].sum()), 1)])
        if self.blocks:
            starts[n_a] = rows
            first = _joined_at_cuts(starts[: n_a + 1], first, np.cumsum(results[:-1, 5]))
        return first, strings_from(b_offsets[: rows + 1], b_data[: max(int(results[:, 3].sum()), 1)]), numbers[:rows]


def _close_gaps(
    places: _Places,
    results: np.ndarray,
    blocks: bool,
    a_offsets: np.ndarray,
    a_data: np.ndarray,
    b_offsets: np.ndarray,
    b_data: np.ndarray,
    numbers: np.ndarray,
    starts: np.ndarray,
) -> None:
    """Each part after the first moved down to where the one before it ends (rows, bytes and blocks), its offsets and
    block starts shifted by as much: the columns of one exact pass. A part moves over its own old place, which it
    overlaps but for the gap, so only the gap is memory not written before. The columns move side by side."""
    row_at, a_at, b_at, block_at = (np.concatenate([[0], np.cumsum(results[:, i])]) for i in (1, 2, 3, 5))
    a_places, a_done, a_counts = (places.block, block_at, results[:, 5]) if blocks else (places.row, row_at, results[:, 1])
    # (column, its parts' places, where they go, their lengths, what each part's values shift by: offsets and starts)
    moves = [
        (numbers, places.row, row_at, results[:, 1], None),
        (b_offsets, places.row, row_at, results[:, 1] + 1, places.b[:-1] - b_at[:-1]),
        (b_data, places.b, b_at, results[:, 3], None),
        (a_offsets, a_places, a_done, a_counts + 1, places.a[:-1] - a_at[:-1]),
        (a_data, places.a, a_at, results[:, 2], None),
    ]
    if blocks:
        moves.append((starts, places.block, block_at, results[:, 5], places.row[:-1] - row_at[:-1]))

    def close(column: np.ndarray, source: np.ndarray, to: np.ndarray, count: np.ndarray, shift: np.ndarray | None) -> None:
        for k in range(1, len(results)):
            _move(column, int(source[k]), int(to[k]), int(count[k]))
            if shift is not None:
                column[int(to[k]) : int(to[k] + count[k])] -= int(shift[k])

    concurrently(*[lambda m=m: close(*m) for m in moves])


def _move(column: np.ndarray, source: int, to: int, n: int) -> None:
    """``column[to:to + n] = column[source:source + n]`` in place, the ranges overlapping or not (``to <= source``)."""
    if n > 0 and to != source:
        size = column.itemsize
        kernels.move_bytes(column.view(np.uint8), source * size, to * size, n * size)


def _joined_at_cuts(starts: np.ndarray, ids: pa.Array, cuts: np.ndarray) -> QueryBlocks:
    """The blocks of the whole file from its parts': a part's first line starts a block, so a run of equal ids that
    spans a cut between parts (``cuts``: each part's first block) is one block again.

    >>> _joined_at_cuts(np.array([0, 2, 3, 5]), pa.array(["a", "a", "b"]), np.array([1])).starts.tolist()
    [0, 3, 5]
    """
    joined = [int(b) for b in cuts if 0 < b < len(ids) and ids[int(b)].as_py() == ids[int(b) - 1].as_py()]
    if not joined:
        return QueryBlocks(starts, ids)
    keep = np.ones(len(ids), dtype=bool)
    keep[joined] = False
    return QueryBlocks(np.append(starts[:-1][keep], starts[-1]), ids.take(from_numpy(np.flatnonzero(keep))))


def _line_starts(path: Path, size: int, parts: int) -> list[int]:
    """``parts`` + 1 byte positions (or fewer): 0, the first line start at or after each even cut, and ``size``."""
    cuts = [0]
    with open(path, "rb") as handle:
        for k in range(1, parts):
            cut = _next_line_start(handle, max(size * k // parts, cuts[-1] + 1))
            if cut >= size:
                break
            cuts.append(cut)
    return [*cuts, size]


def _next_line_start(handle: BinaryIO, at: int) -> int:
    """The first line start at or after byte ``at`` of the file open as ``handle`` (its size when none is)."""
    if at <= 0:
        return 0
    handle.seek(at - 1)
    while True:  # to the byte after the next line break
        chunk = handle.read(1 << 16)
        if not chunk:
            return handle.tell()
        found = chunk.find(b"\n")
        if found >= 0:
            return handle.tell() - len(chunk) + found + 1
