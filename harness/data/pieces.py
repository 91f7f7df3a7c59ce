"""Runs and judgments as Parquet pieces: the rows of a file, a block at a time, for workers to read.

Every row becomes (query, doc, value, line, kind): ``line`` keeps its place in its file, so
an engine that moves rows around can put them back in file order (``ties: input_order``,
``duplicates: first``), and ``kind`` tells a run's rows from the judgments' once stacked.
Text files are converted block by block, never whole in memory.

>>> import tempfile
>>> folder = Path(tempfile.mkdtemp())
>>> _ = (folder / "qrels.txt").write_text("q1 0 d1 1\\nq1 0 d2 0\\n")
>>> pieces = to_pieces(QrelsSource(folder / "qrels.txt"), folder / "pieces")
>>> pieces.rows, [path.name for path in pieces.paths]
(2, ['part-00000.parquet'])
>>> pq.read_table(pieces.paths[0]).to_pydict()["line"]
[0, 1]
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from harness.config.formats import table_format_of
from harness.data.load import QRELS_COLUMNS, RUN_COLUMNS, load_qrels, load_run
from harness.data.model import Intents, Qrels, Run
from harness.data.tables import stream_table_run
from harness.data.trec import stream_qrels, stream_run
from harness.errors import NotStreamable

# rows per piece, each an input partition of the workers: 1M-row pieces killed 768 MiB workers while a shuffle
# stacked them (50M rows); 200,000 rows (~8 MB of text) keep a piece well inside
ROWS_PER_FILE = 200_000
QRELS, RUN = 0, 1  # the ``kind`` column


@dataclass(frozen=True)
class RunSource:
    """A run file for workers, not read whole here: TREC text, CSV, TSV and JSONL are converted to Parquet block by
    block (a block that does not check out, or JSONL ids written as numbers, send the file to harness's reader, which
    names the line at fault or reads it whole), Parquet files and folders are read by the workers as they are.
    ``columns``: query, doc, score -> column (tables)."""

    path: Path
    name: str
    columns: dict[str, str] | None = None


@dataclass(frozen=True)
class QrelsSource:
    """A judgments file for workers, not read whole here: as :class:`RunSource`. ``columns``: query, doc, relevance
    -> column (tables); ``fmt``: the format when the file name does not say it ("trec" for TREC text)."""

    path: Path
    columns: dict[str, str] | None = None
    fmt: str | None = None

    @property
    def source(self) -> str:
        return str(self.path)


Source = Run | RunSource | Qrels | Intents | QrelsSource


@dataclass(frozen=True)
class Pieces:
    """A source's rows as Parquet pieces (``paths``), or, for a Parquet source, where the user's own pieces are
    (``parquet``: the workers read it as it is, named by ``columns``)."""

    paths: tuple[Path, ...]
    rows: int
    parquet: Path | None = None
    columns: tuple[str, str, str] = ("query", "doc", "value")
    kind: int = RUN


def rows_table(
    query: Any,
    doc: Any,
    value: np.ndarray,
    kind: int,
    file_rows: np.ndarray | None = None,
    subtopic: pa.Array | None = None,
    sample: Any = None,
) -> pa.Table:
    """Rows as a piece's columns; ``file_rows`` their lines (default: 0, 1, ...)."""
    rows = np.arange(len(value), dtype=np.int64) if file_rows is None else file_rows
    columns = {
        "query": pa.chunked_array([query]) if isinstance(query, pa.Array) else query,
        "doc": pa.chunked_array([doc]) if isinstance(doc, pa.Array) else doc,
        "value": pa.array(np.asarray(value, dtype=np.float64)),
        "line": pa.array(rows),
        "kind": pa.array(np.full(len(value), kind, dtype=np.int8)),
    }
    if subtopic is not None:  # subtopic judgments (ndeval's): each judgment's subtopic
        columns["subtopic"] = subtopic
    if sample is not None:  # a stochastic run: each row's sampled ranking
        columns["sample"] = pa.chunked_array([sample]) if isinstance(sample, pa.Array) else sample
    return pa.table(columns)


def write_pieces(folder: Path, tables: Iterable[pa.Table]) -> tuple[Path, ...]:
    """The rows as Parquet files of at most ROWS_PER_FILE rows in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    paths: list[Path] = []
    for table in tables:
        for start in range(0, max(len(table), 1), ROWS_PER_FILE):
            paths.append(folder / f"part-{len(paths):05d}.parquet")
            # a dictionary for the query ids only (each repeats along its list; document ids rarely do), lz4: half the
            # time of the defaults to write (0.9 against 1.85 s for 5M rows), and a third less to read, at the same size
            pq.write_table(table.slice(start, ROWS_PER_FILE), paths[-1], use_dictionary=["query"], compression="lz4")
    return tuple(paths)


def to_pieces(source: Source, folder: Path, samples: bool = False) -> Pieces:
    """``source``'s rows as Parquet pieces in ``folder``, a block at a time for text files.

    ``samples``: a measure reads stochastic runs: a run is read whole here with its samples (a TREC run's second
    column), as is a table run that names a sample column."""
    if isinstance(source, RunSource) and (samples or (source.columns or {}).get("sample")):
        return to_pieces(load_run(source.path, source.columns, name=source.name, samples=True), folder)
    if isinstance(source, Intents):  # read whole here (diversity judgments are small), sent with the subtopics
        table = rows_table(source.query_id, source.doc_id, source.judgment, QRELS, subtopic=source.subtopic)
        return Pieces(write_pieces(folder, [table]), len(source))
    if isinstance(source, (Run, Qrels)):
        kind, value = (RUN, source.score) if isinstance(source, Run) else (QRELS, source.relevance)
        sample = source.sample if isinstance(source, Run) else None
        return Pieces(write_pieces(folder, [rows_table(source.query_id, source.doc_id, value, kind, sample=sample)]), len(source))
    path = Path(source.path)
    is_run = isinstance(source, RunSource)
    kind, role = (RUN, "score") if is_run else (QRELS, "relevance")
    fmt = "parquet" if path.is_dir() else (None if is_run else source.fmt) or table_format_of(path)  # type: ignore[union-attr]
    names = {**(RUN_COLUMNS if is_run else QRELS_COLUMNS), **(source.columns or {})}
    if fmt == "parquet":
        return Pieces((), 0, path, (names["query"], names["doc"], names[role]), kind)
    if fmt in (None, "trec", "csv", "tsv", "jsonl"):  # streamed, never whole in memory here
        if fmt in (None, "trec"):
            blocks = stream_run(path, ROWS_PER_FILE) if is_run else stream_qrels(path, ROWS_PER_FILE)
        else:
            blocks = stream_table_run(path, names, str(fmt), ROWS_PER_FILE, value=role)
        written = 0

        def numbered(block: pa.Table) -> pa.Table:  # each row keeps its place in the file
            nonlocal written
            rows = np.arange(written, written + len(block), dtype=np.int64)
            written += len(block)
            return rows_table(block["qid"], block["docid"], block[block.column_names[2]].to_numpy(), kind, rows)

        try:
            paths = write_pieces(folder, map(numbered, blocks))
            if written:
                return Pieces(paths, written)
        except NotStreamable:
            for stale in folder.glob("*.parquet"):
                stale.unlink()
    # harness's reader names the line at fault, or reads what streaming could not
    whole = (
        load_run(path, source.columns, name=source.name)
        if isinstance(source, RunSource)
        else load_qrels(path, source.columns, source.fmt)
    )
    return to_pieces(whole, folder)
