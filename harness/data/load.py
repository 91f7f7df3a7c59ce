"""One entry point per input kind: a path (and, for tables, a column mapping) -> Qrels or Run.

The format follows the file name (``.csv``, ``.tsv``, ``.parquet``, ``.jsonl``, with an
optional ``.gz``), or ``fmt`` when given; anything else is TREC text.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from harness.data.model import Qrels, Run
from harness.data.tables import read_table_qrels, read_table_run, table_format_of
from harness.data.trec import read_qrels, read_run

QRELS_COLUMNS = {"query": "query", "doc": "doc", "relevance": "relevance"}
RUN_COLUMNS = {"query": "query", "doc": "doc", "score": "score"}


def load_qrels(path: str | Path, columns: Mapping[str, str] | None = None, fmt: str | None = None) -> Qrels:
    """Qrels from TREC text or a table; ``columns`` maps query, doc, relevance to column names."""
    fmt = fmt or table_format_of(Path(path)) or "trec"
    if fmt == "trec":
        return read_qrels(path)
    return read_table_qrels(path, {**QRELS_COLUMNS, **(columns or {})}, fmt)


def load_run(path: str | Path, columns: Mapping[str, str] | None = None, name: str | None = None) -> Run:
    """A run from TREC text or a table; ``columns`` maps query, doc, score to column names."""
    fmt = table_format_of(Path(path))
    if fmt is None:
        return read_run(path, name=name)
    return read_table_run(path, {**RUN_COLUMNS, **(columns or {})}, fmt, name=name)
