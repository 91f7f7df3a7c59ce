"""The one-pass reader of plain TREC files: two id columns and a number column, straight into the arrays alignment reads.

A plain file (fields separated by spaces or tabs, printable ASCII, no comments, plain
decimal numbers, the format's count of fields on every line) is cut into one range of
whole lines per core; compiled code (``_reader_kernels.pyx``) counts each range's rows
and id bytes, then reads each range straight into its place in the output columns.
Arrow's CSV reader tokenises every field into chunked columns, which are then copied
into one contiguous column each; this writes each kept field once, where it stays.

Any other file gives None, and :mod:`harness.data.trec` reads it with Arrow or line by
line, which name the line at fault. The values are the same either way (the tests hold
the three readers to each other).
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import numpy as np
import pyarrow as pa

from harness.data import _reader_kernels as kernels
from harness.data._arrow import STRING_BYTES_MAX, from_numpy, strings_from
from harness.data.model import QueryBlocks
from harness.kernels._parallel import run_split, threads

SMALLEST_PART = 1 << 20  # bytes: smaller files are read by one thread


def read_plain(path: Path, n_fields: int, ids: tuple[int, int], number: int, parts: int | None = None,
               blocks: bool = False) -> tuple[pa.Array | QueryBlocks, pa.Array, np.ndarray] | None:  # fmt: skip
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
    except OSError:
        return None
    ranges = list(itertools.pairwise(cuts))
    name = os.fsencode(path)
    # Two passes over each part, side by side on the cores: the first counts each part's rows, blocks and id bytes, so
    # that the second writes every field once, straight into its place in columns of the exact size.
    counts = np.zeros((len(ranges), 6), np.int64)
    nothing, no_bytes, no_numbers, no_starts = np.zeros(1, np.int32), np.zeros(1, np.uint8), np.zeros(1), np.zeros(1, np.int64)

    def count(lo: int, hi: int) -> None:
        for k in range(lo, hi):
            kernels.read_part(name, *ranges[k], n_fields, ids[0], ids[1], number, nothing, no_bytes, nothing, no_bytes,
                              no_numbers, 0, 0, 0, 0, 0, 0, blocks, no_starts, 0, 0, False, counts[k])  # fmt: skip

    run_split(count, [(k, k + 1) for k in range(len(ranges))])
    if (counts[:, 0] != kernels.OK).any() or not counts[:, 1].sum():  # the careful readers say what an empty file lacks
        return None
    row_at, a_at, b_at, block_at = (np.concatenate([[0], np.cumsum(counts[:, i])]).astype(np.int64) for i in (1, 2, 3, 5))
    rows, n_a = int(row_at[-1]), int(block_at[-1]) if blocks else int(row_at[-1])
    width = np.int32 if max(a_at[-1], b_at[-1]) <= STRING_BYTES_MAX else np.int64
    a_offsets, b_offsets = np.empty(n_a + 1, width), np.empty(rows + 1, width)
    a_data, b_data = np.empty(max(int(a_at[-1]), 1), np.uint8), np.empty(max(int(b_at[-1]), 1), np.uint8)
    numbers = np.empty(rows, np.float64)
    starts = np.empty(max(n_a + 1, 1) if blocks else 1, np.int64)
    results = np.zeros((len(ranges), 6), np.int64)

    def fill(lo: int, hi: int) -> None:
        for k in range(lo, hi):
            kernels.read_part(name, *ranges[k], n_fields, ids[0], ids[1], number, a_offsets, a_data, b_offsets, b_data,
                              numbers, int(row_at[k]), int(row_at[k + 1]), int(a_at[k]), int(a_at[k + 1]), int(b_at[k]),
                              int(b_at[k + 1]), blocks, starts, int(block_at[k]), int(block_at[k + 1]), True,
                              results[k])  # fmt: skip

    run_split(fill, [(k, k + 1) for k in range(len(ranges))])
    if (results[:, 0] != kernels.OK).any() or (results[:, 1:4] != counts[:, 1:4]).any() or \
            (results[:, 5] != counts[:, 5]).any():  # fmt: skip
        return None
    first = strings_from(a_offsets, a_data)
    if blocks:
        starts[n_a] = rows
        first = _joined_at_cuts(starts, first, block_at[1:-1])
    return first, strings_from(b_offsets, b_data), numbers


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
            handle.seek(max(size * k // parts - 1, cuts[-1]))
            while True:  # to the byte after the next line break
                chunk = handle.read(1 << 16)
                if not chunk:
                    return [*cuts, size]
                found = chunk.find(b"\n")
                if found >= 0:
                    cuts.append(handle.tell() - len(chunk) + found + 1)
                    break
            if cuts[-1] >= size:
                cuts.pop()
                break
    return [*cuts, size]
