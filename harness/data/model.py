"""Columnar, immutable judgments and runs, as they come out of the readers or a notebook.

Ids are always strings (Arrow string arrays: no Python object per row); relevance
labels and scores are float64. ``source`` names the file, for error messages. Every
way in (files, DataFrames, dicts, tuples) is validated the same way: a NaN label or
score is an error naming the row, as on the command line.

>>> import pandas as pd
>>> Qrels.from_frame(pd.DataFrame({"user": ["u1", "u1"], "item": ["7", "007"], "rating": [5, 3]}),
...                  query="user", doc="item", relevance="rating")
Qrels(2 judgments, 1 queries, from <DataFrame>)
>>> Run.from_dict({"q1": {"d1": 1.5, "d2": 0.5}}, name="bm25")
Run('bm25': 2 rows, 1 queries, from <dict>)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from harness.data._arrow import contiguous as _contiguous
from harness.errors import InputFormatError

if TYPE_CHECKING:
    import pandas as pd


def _check_numbers(values: np.ndarray, role: str, source: str) -> None:
    bad = np.flatnonzero(np.isnan(values))
    if bad.size:
        raise InputFormatError(
            f"{role} missing or NaN in data row {int(bad[0]) + 1}", path=source, hint=f"give every row a numeric {role}"
        )


def _distinct(ids: pa.Array | pa.ChunkedArray) -> int:
    return int(pc.count_distinct(ids).as_py())


def _table(frame: pd.DataFrame, columns: dict[str, str], source: str) -> pa.Table:
    missing = [c for c in columns.values() if c not in frame.columns]
    if missing:
        raise InputFormatError(
            f"no column {missing[0]!r} (columns: {', '.join(map(str, frame.columns))})",
            path=source,
            hint="name the columns: " + ", ".join(f"{role}=..." for role in columns),
        )
    return pa.Table.from_pandas(frame[list(columns.values())], preserve_index=False)


@dataclass(frozen=True, eq=False)
class Qrels:
    """Relevance judgments: one row per (query, document, label)."""

    query_id: pa.Array | pa.ChunkedArray
    doc_id: pa.Array | pa.ChunkedArray
    relevance: np.ndarray
    source: str = "<qrels>"
    # each row's data row in ``source`` when these rows are a piece of it (a Dask partition): errors name the file's line
    file_rows: np.ndarray | None = field(default=None, repr=False)

    def file_row(self, row: int) -> int:
        return row if self.file_rows is None else int(self.file_rows[row])

    def __post_init__(self) -> None:
        _check_numbers(self.relevance, "relevance", self.source)

    def __len__(self) -> int:
        return len(self.relevance)

    def __repr__(self) -> str:
        return f"Qrels({len(self)} judgments, {_distinct(self.query_id)} queries, from {self.source})"

    @classmethod
    def from_frame(
        cls,
        frame: pd.DataFrame,
        query: str = "query",
        doc: str = "doc",
        relevance: str = "relevance",
        source: str = "<DataFrame>",
    ) -> Qrels:
        """Judgments from a DataFrame's columns (ids kept as strings: "007" and "7" differ)."""
        return table_qrels(_table(frame, {"query": query, "doc": doc, "relevance": relevance}, source),
                           {"query": query, "doc": doc, "relevance": relevance}, source)  # fmt: skip

    @classmethod
    def from_dict(cls, judgments: Mapping[str, Mapping[str, Any]], source: str = "<dict>") -> Qrels:
        """pytrec_eval's layout: ``{query: {doc: relevance}}``."""
        return cls.from_records([(q, d, r) for q, docs in judgments.items() for d, r in docs.items()], source)

    @classmethod
    def from_records(cls, rows: list[tuple[str, str, float]], source: str = "<qrels>") -> Qrels:
        """Small qrels from Python tuples, e.g. for tests and the API.

        >>> len(Qrels.from_records([("q1", "d1", 2), ("q1", "d2", 0)]))
        2
        """
        return cls(
            query_id=pa.array([str(r[0]) for r in rows], pa.string()),
            doc_id=pa.array([str(r[1]) for r in rows], pa.string()),
            relevance=np.asarray([float(r[2]) for r in rows], dtype=np.float64),
            source=source,
        )


@dataclass(frozen=True, eq=False)
class Run:
    """A system's ranked lists: one row per (query, document, score); row order is file order."""

    query_id: pa.Array | pa.ChunkedArray
    doc_id: pa.Array | pa.ChunkedArray
    score: np.ndarray
    name: str = "run"
    source: str = "<run>"
    file_rows: np.ndarray | None = field(default=None, repr=False)  # as Qrels.file_rows

    def file_row(self, row: int) -> int:
        return row if self.file_rows is None else int(self.file_rows[row])

    def __post_init__(self) -> None:
        _check_numbers(self.score, "score", self.source)

    def __len__(self) -> int:
        return len(self.score)

    def __repr__(self) -> str:
        return f"Run({self.name!r}: {len(self)} rows, {_distinct(self.query_id)} queries, from {self.source})"

    @classmethod
    def from_frame(
        cls, frame: pd.DataFrame, query: str = "query", doc: str = "doc", score: str = "score", name: str = "run",
        source: str = "<DataFrame>",
    ) -> Run:  # fmt: skip
        """A run from a DataFrame's columns; row order is kept (it is the input order for ties: input_order)."""
        columns = {"query": query, "doc": doc, "score": score}
        return table_run(_table(frame, columns, source), columns, source, name)

    @classmethod
    def from_dict(cls, scores: Mapping[str, Mapping[str, Any]], name: str = "run", source: str = "<dict>") -> Run:
        """pytrec_eval's layout: ``{query: {doc: score}}``."""
        return cls.from_records([(q, d, s) for q, docs in scores.items() for d, s in docs.items()], name, source)

    @classmethod
    def from_records(cls, rows: list[tuple[str, str, float]], name: str = "run", source: str = "<run>") -> Run:
        """Small runs from Python tuples.

        >>> len(Run.from_records([("q1", "d1", 2.0), ("q1", "d2", 1.0)]))
        2
        """
        return cls(
            query_id=pa.array([str(r[0]) for r in rows], pa.string()),
            doc_id=pa.array([str(r[1]) for r in rows], pa.string()),
            score=np.asarray([float(r[2]) for r in rows], dtype=np.float64),
            name=name,
            source=source,
        )


# Arrow tables -> Qrels / Run: the one validation every way in (files, DataFrames) shares.
def table_column(table: pa.Table, name: str, role: str, path: Path) -> pa.ChunkedArray:
    if name not in table.column_names:
        raise InputFormatError(
            f"no column {name!r} for the {role} (columns: {', '.join(table.column_names)})",
            path=path,
            hint=f"map {role} to one of the existing columns",
        )
    return table[name]


def table_ids(column: pa.ChunkedArray, role: str, path: Path) -> pa.Array:
    if column.null_count:
        row = int(np.flatnonzero(pc.is_null(column).combine_chunks().to_numpy(zero_copy_only=False))[0])
        raise InputFormatError(f"empty {role} id in data row {row + 1}", path=path, hint=f"every row needs a {role} id")
    if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)):
        column = pc.cast(column, pa.string())
    ids = column.combine_chunks()
    if pa.types.is_large_string(ids.type) and ids.nbytes < 2**31:  # pandas 3's str columns: one id type throughout
        ids = ids.cast(pa.string())
    empty = np.flatnonzero(pc.binary_length(ids).to_numpy(zero_copy_only=False) == 0)  # "" is no id either
    if empty.size:
        raise InputFormatError(f"empty {role} id in data row {int(empty[0]) + 1}", path=path, hint=f"every row needs a {role} id")
    return ids


def table_numbers(column: pa.ChunkedArray, role: str, path: Path) -> np.ndarray:
    try:
        values = pc.cast(column, pa.float64()).combine_chunks().to_numpy(zero_copy_only=False)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        raise InputFormatError(
            f"the {role} column holds values that are not numbers", path=path, hint=f"the {role} must be numeric"
        ) from None
    _check_numbers(values, role, str(path))
    return values


def table_qrels(table: pa.Table, columns: Mapping[str, str], source: str | Path) -> Qrels:
    """Qrels from an Arrow table; ``columns`` maps ``query``, ``doc``, ``relevance`` to column names."""
    path = Path(source)
    if table.num_rows == 0:
        raise InputFormatError("the table has no rows", path=path, hint="give at least one judgment")
    return Qrels(
        table_ids(table_column(table, columns["query"], "query", path), "query", path),
        table_ids(table_column(table, columns["doc"], "doc", path), "doc", path),
        table_numbers(table_column(table, columns["relevance"], "relevance", path), "relevance", path),
        str(source),
    )


def table_run(table: pa.Table, columns: Mapping[str, str], source: str | Path, name: str) -> Run:
    """A run from an Arrow table; ``columns`` maps ``query``, ``doc``, ``score`` to column names."""
    path = Path(source)
    if table.num_rows == 0:
        raise InputFormatError("the run is empty: no ranked documents", path=path, hint="give at least one scored row")
    return Run(
        _contiguous(table_ids(table_column(table, columns["query"], "query", path), "query", path)),
        _contiguous(table_ids(table_column(table, columns["doc"], "doc", path), "doc", path)),
        table_numbers(table_column(table, columns["score"], "score", path), "score", path),
        name,
        str(source),
    )
