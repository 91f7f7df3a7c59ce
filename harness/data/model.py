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
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from harness.data._arrow import contiguous as _contiguous
from harness.data._arrow import float_values, from_numpy, to_numpy
from harness.errors import InputFormatError

if TYPE_CHECKING:
    import pandas as pd


def _check_numbers(values: np.ndarray, role: str, source: str) -> None:
    if values.size and np.isnan(values.min()):  # a NaN anywhere makes the minimum NaN: one pass, no mask of every row
        row = int(np.flatnonzero(np.isnan(values))[0])
        raise InputFormatError(
            f"{role} missing or NaN in data row {row + 1}", row=row, path=source, hint=f"give every row a numeric {role}"
        )
    if role == "relevance" and values.size and not largest_magnitude(values) < 2.0**53:
        row = int(np.flatnonzero(~(np.abs(values) < 2.0**53))[0])  # a label must be a number a double holds exactly
        raise InputFormatError(
            f"relevance {values[row]} is out of range in data row {row + 1}",
            row=row,
            path=source,
            hint="relevance labels are small numbers (0, 1, 2, ...)",
        )


def largest_magnitude(values: np.ndarray) -> float:
    """``np.abs(values).max()`` without the column of absolute values (31 MB for 3.9M judgments); NaN if any is.

    >>> largest_magnitude(np.array([1.0, -3.0, 2.0]))
    3.0
    """
    return float(max(-values.min(), values.max()))


CONTROL_CHARACTERS = "[\\x00-\\x1f\\x7f]"  # C0 and DEL, as a regular expression (RE2)


def first_control_character(text: str) -> str | None:
    """The first C0 control character or DEL in ``text``, else None.

    >>> first_control_character("d\\x072"), first_control_character("café")
    ('\\x07', None)
    """
    return next((c for c in text if ord(c) < 0x20 or ord(c) == 0x7F), None)


def control_character_row(ids: pa.Array | pa.ChunkedArray) -> tuple[int, str] | None:
    """The first row whose id holds a control character (a C0 one such as NUL, TAB or a line break, or DEL) and that
    character; None when there is none. Ids are names: a NUL ends them in C tools, MLflow and browsers, a line break
    splits a TREC line, and none of them can be seen in a report. One pass over the characters' bytes, no copy.

    >>> control_character_row(pa.array(["d1", "d\\x012"]))
    (1, '\\x01')
    >>> control_character_row(pa.array(["d1", "café"])) is None
    True
    """
    start = 0
    for chunk in ids.chunks if isinstance(ids, pa.ChunkedArray) else [ids]:
        _, offsets, data = chunk.buffers()
        if data is not None and len(chunk):
            ends = np.frombuffer(offsets, dtype=np.int64 if pa.types.is_large_string(chunk.type) else np.int32)
            used = np.frombuffer(data, dtype=np.uint8)[ends[chunk.offset] : ends[chunk.offset + len(chunk)]]  # not padding
            if used.size and (used.min() < 0x20 or (used.max() >= 0x7F and bool((used == 0x7F).any()))):
                hits = pc.match_substring_regex(chunk, CONTROL_CHARACTERS).to_numpy(zero_copy_only=False)
                row = int(np.flatnonzero(hits)[0])
                text = chunk[row].as_py()
                return start + row, str(first_control_character(text))
        start += len(chunk)
    return None


def control_character_message(character: str, role: str) -> tuple[str, str]:
    """The message and the fix for a control character in a ``role`` id."""
    return (
        f"a control character ({character!r}) in a {role} id",
        "ids are printable text: remove the control character (a NUL, tab or line break inside an id)",
    )


def _distinct(ids: pa.Array | pa.ChunkedArray) -> int:
    return int(pc.count_distinct(ids).as_py())


@dataclass(frozen=True, eq=False)
class QueryBlocks:
    """A query id column held as blocks: rows ``starts[b]:starts[b + 1]`` all have the id ``ids[b]``, one block per run
    of lines with equal ids (a query whose lines are in two places of the file has two blocks). What the compiled
    reader leaves of a run's or the judgments' query column: at 200,000 queries x 100 lines, 200,000 ids and starts
    where the column holds 20M ids (210 MB).

    >>> blocks = QueryBlocks(np.array([0, 2, 3]), pa.array(["q1", "q2"]))
    >>> len(blocks), blocks.column().to_pylist()
    (3, ['q1', 'q1', 'q2'])
    """

    starts: np.ndarray  # int64, one more than the blocks: the last is the number of rows
    ids: pa.Array  # string, one per block

    def __len__(self) -> int:
        return int(self.starts[-1])

    def column(self) -> pa.Array:
        """The column itself: each block's id repeated over its rows."""
        return self.ids.take(from_numpy(np.repeat(np.arange(len(self.ids), dtype=np.int64), np.diff(self.starts))))

    def first(self) -> str:
        """The first row's id."""
        return str(self.ids[0].as_py())

    def distinct(self) -> int:
        return _distinct(self.ids)


class QueryIds:
    """The ``query_id`` field of :class:`Qrels` and :class:`Run`: an Arrow string column, given as one or as
    :class:`QueryBlocks` (what the compiled reader gives), which becomes the column the first time it is read, once.
    ``query_blocks`` reads the blocks without building the column (alignment, counts, the first id).

    >>> run = Run.from_blocks(QueryBlocks(np.array([0, 2]), pa.array(["q1"])), pa.array(["d1", "d2"]), np.array([2.0, 1.0]))
    >>> run.query_blocks is not None, run.query_id.to_pylist()
    (True, ['q1', 'q1'])
    """

    def __get__(self, obj: object, owner: type | None = None) -> pa.Array | pa.ChunkedArray:
        if obj is None:
            raise AttributeError("query_id")  # no default: a dataclass field that must be given
        given = obj.__dict__["_query_ids"]
        if not isinstance(given, QueryBlocks):
            return given  # type: ignore[no-any-return]
        column = obj.__dict__.get("_query_column")
        if column is None:
            column = obj.__dict__["_query_column"] = given.column()
        return column  # type: ignore[no-any-return]

    def __set__(self, obj: object, value: pa.Array | pa.ChunkedArray | QueryBlocks) -> None:
        obj.__dict__["_query_ids"] = value


def _query_blocks(obj: object) -> QueryBlocks | None:
    given = obj.__dict__["_query_ids"]
    return given if isinstance(given, QueryBlocks) else None


def _first_query(obj: Qrels | Run) -> str:
    blocks = _query_blocks(obj)
    return blocks.first() if blocks is not None else str(obj.query_id[0].as_py())


def _distinct_queries(obj: Qrels | Run) -> int:
    blocks = _query_blocks(obj)
    return blocks.distinct() if blocks is not None else _distinct(obj.query_id)


def _id_column(frame: pd.DataFrame, given: str | None, kind: str) -> str:
    """The column of ``kind`` ids: the one named, else ``kind`` or ``kind_id``, whichever the frame has (``kind`` when
    neither: the error then names it)."""
    if given is not None:
        return given
    return f"{kind}_id" if kind not in frame.columns and f"{kind}_id" in frame.columns else kind


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
    """Relevance judgments: one row per (query, document, label).

    Made by :func:`harness.read_qrels` from a file, or by ``from_dict``, ``from_records`` and ``from_frame``.

    Attributes
    ----------
    query_id, doc_id : pyarrow array of str
        Each row's query and document.
    relevance : numpy array of float64
        Each row's label (graded; below 1 is not relevant unless a measure's level says otherwise).
    source : str
        Where the rows came from (a file's path), for messages.
    file_rows : numpy array of int, optional
        Each row's line in its file, for errors that name it.

    Examples
    --------
    >>> qrels = Qrels.from_dict({"q1": {"d1": 2, "d2": 0}, "q2": {"d3": 1}})
    >>> qrels.query_id.to_pylist(), qrels.doc_id.to_pylist(), qrels.relevance.tolist()
    (['q1', 'q1', 'q2'], ['d1', 'd2', 'd3'], [2.0, 0.0, 1.0])
    """

    query_id: pa.Array | pa.ChunkedArray
    if not TYPE_CHECKING:  # given as a column or as QueryBlocks (the reader's, through from_blocks); read as a column
        query_id = QueryIds()
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
        return f"Qrels({len(self)} judgments, {_distinct_queries(self)} queries, from {self.source})"

    @property
    def query_blocks(self) -> QueryBlocks | None:
        """The query ids as blocks when they were given so (the compiled reader), else None."""
        return _query_blocks(self)

    @classmethod
    def from_blocks(cls, query_blocks: QueryBlocks, doc_id: pa.Array, relevance: np.ndarray, source: str = "<qrels>") -> Qrels:
        """Judgments whose query ids are blocks (the compiled reader's): the column is built only if it is read."""
        return cls(cast(Any, query_blocks), doc_id, relevance, source)

    @classmethod
    def from_frame(
        cls,
        frame: pd.DataFrame,
        query: str | None = None,
        doc: str | None = None,
        relevance: str = "relevance",
        source: str = "<DataFrame>",
    ) -> Qrels:
        """Judgments from a DataFrame's columns (ids kept as strings: "007" and "7" differ). The id columns are
        ``query`` and ``doc``, or ``query_id`` and ``doc_id`` (harness's own tables, ir_measures'), unless named.

        >>> import pandas as pd
        >>> len(Qrels.from_frame(pd.DataFrame({"query_id": ["q1"], "doc_id": ["d1"], "relevance": [1]})))
        1
        """
        columns = {"query": _id_column(frame, query, "query"), "doc": _id_column(frame, doc, "doc"), "relevance": relevance}
        return table_qrels(_table(frame, columns, source), columns, source)

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
class Intents:
    """Subtopic judgments (ndeval's ``qid subtopic docno judgment``): which subtopics (intents) of a query each
    document is relevant to, for the intent-aware measures. ``judgments()`` are the per-document labels the other
    measures read: each document's largest judgment over the query's subtopics.

    Attributes
    ----------
    query_id, subtopic, doc_id : pyarrow array of str
        Each row's query, subtopic and document.
    judgment : numpy array of float64
        Each row's judgment: 1 or more is relevant to that subtopic.
    source : str
        Where the rows came from, for messages.

    Examples
    --------
    >>> intents = Intents.from_records([("q1", "1", "d1", 1), ("q1", "2", "d1", 0), ("q1", "2", "d2", 2)])
    >>> judged = intents.judgments()
    >>> judged.doc_id.to_pylist(), judged.relevance.tolist()
    (['d1', 'd2'], [1.0, 2.0])
    """

    query_id: pa.Array
    subtopic: pa.Array
    doc_id: pa.Array
    judgment: np.ndarray
    source: str = "<subtopic qrels>"

    def __len__(self) -> int:
        return len(self.judgment)

    def __repr__(self) -> str:
        return f"Intents({len(self)} subtopic judgments, {_distinct(self.query_id)} queries, from {self.source})"

    @classmethod
    def from_records(cls, rows: Any, source: str = "<subtopic qrels>") -> Intents:
        rows = list(rows)
        return cls(
            *(pa.array([str(r[i]) for r in rows], pa.string()) for i in range(3)),
            np.asarray([float(r[3]) for r in rows], dtype=np.float64),
            source,
        )  # type: ignore[call-arg]

    def judgments(self) -> Qrels:
        """One label per (query, document): the largest of its subtopic judgments, in first-appearance order."""
        table = pa.table({"q": self.query_id, "d": self.doc_id, "j": self.judgment, "row": np.arange(len(self))})
        grouped = table.group_by(["q", "d"], use_threads=False).aggregate([("j", "max"), ("row", "min")])
        grouped = grouped.take(pc.sort_indices(grouped["row_min"]))
        return Qrels(
            grouped["q"].combine_chunks(),
            grouped["d"].combine_chunks(),
            grouped["j_max"].to_numpy().astype(np.float64),
            self.source,
        )


@dataclass(frozen=True, eq=False)
class Run:
    """A system's ranked lists: one row per (query, document, score); row order is file order.

    Made by :func:`harness.read_run` from a file, or by ``from_dict``, ``from_records`` and ``from_frame``. Each
    query's documents are ranked by score, descending, ties broken by the conventions in force.

    Attributes
    ----------
    query_id, doc_id : pyarrow array of str
        Each row's query and document.
    score : numpy array of float64
        Each row's score.
    name : str
        The run's name (a TREC run's tag, or the file's name).
    source : str
        Where the rows came from (a file's path), for messages.
    file_rows : numpy array of int, optional
        Each row's line in its file, for errors that name it.
    sample : pyarrow array, optional
        A stochastic run's sample of each row (expected exposure).

    Examples
    --------
    >>> run = Run.from_dict({"q1": {"d1": 0.5, "d2": 1.5}}, name="bm25")
    >>> run.name, run.doc_id.to_pylist(), run.score.tolist()
    ('bm25', ['d1', 'd2'], [0.5, 1.5])
    """

    query_id: pa.Array | pa.ChunkedArray
    if not TYPE_CHECKING:  # given as a column or as QueryBlocks (the reader's, through from_blocks); read as a column
        query_id = QueryIds()
    doc_id: pa.Array | pa.ChunkedArray
    score: np.ndarray
    name: str = "run"
    source: str = "<run>"
    file_rows: np.ndarray | None = field(default=None, repr=False)  # as Qrels.file_rows
    # a stochastic run's sample (one ranking of the query) of each row: expeval's second column, or a table's column;
    # None: one ranking per query. The measures of one ranking read each query's first sample (:meth:`first_sample`)
    sample: pa.Array | pa.ChunkedArray | None = field(default=None, repr=False)

    def file_row(self, row: int) -> int:
        return row if self.file_rows is None else int(self.file_rows[row])

    def __post_init__(self) -> None:
        _check_numbers(self.score, "score", self.source)

    def first_sample(self) -> Run:
        """Each query's first sample, the one with the smallest id (byte order, whatever the file's order): the
        ranking the measures of one ranking read.

        >>> run = Run.from_records([("q", "b", 2.0), ("q", "a", 1.0), ("q", "a", 2.0), ("q", "b", 1.0)])
        >>> stochastic = Run(run.query_id, run.doc_id, run.score, sample=pa.array(["1", "1", "0", "0"]))
        >>> stochastic.first_sample().doc_id.to_pylist()
        ['a', 'b']
        """
        if self.sample is None:
            return self
        query = to_numpy(pc.dictionary_encode(_contiguous(self.query_id)).indices).astype(np.int64)
        sample, _ = self.samples_by_id()
        first = np.full(int(query.max(initial=-1)) + 1, np.iinfo(np.int64).max, dtype=np.int64)
        np.minimum.at(first, query, sample)
        keep = np.flatnonzero(sample == first[query])
        rows = from_numpy(keep)
        return Run(
            self.query_id.take(rows),
            self.doc_id.take(rows),
            self.score[keep],
            self.name,
            self.source,
            keep if self.file_rows is None else self.file_rows[keep],
        )

    def samples_by_id(self) -> tuple[np.ndarray, list[str]]:
        """(each row's sample as its id's place among the run's sample ids in byte order, those ids in that order);
        without samples every row is in one, ``"0"``.

        >>> run = Run.from_records([("q", "a", 1.0), ("q", "b", 1.0)])
        >>> Run(run.query_id, run.doc_id, run.score, sample=pa.array(["7", "10"])).samples_by_id()[0].tolist()
        [1, 0]
        """
        if self.sample is None:
            return np.zeros(len(self), dtype=np.int64), ["0"]
        encoded = pc.dictionary_encode(_contiguous(self.sample))
        by_id = to_numpy(pc.sort_indices(encoded.dictionary)).astype(np.int64)
        place = np.empty(by_id.size, dtype=np.int64)
        place[by_id] = np.arange(by_id.size)
        ids = encoded.dictionary.to_pylist()
        return place[to_numpy(encoded.indices).astype(np.int64)], [str(ids[i]) for i in by_id.tolist()]

    def __len__(self) -> int:
        return len(self.score)

    def __repr__(self) -> str:
        return f"Run({self.name!r}: {len(self)} rows, {_distinct_queries(self)} queries, from {self.source})"

    @property
    def query_blocks(self) -> QueryBlocks | None:
        """The query ids as blocks when they were given so (the compiled reader), else None."""
        return _query_blocks(self)

    @classmethod
    def from_blocks(
        cls, query_blocks: QueryBlocks, doc_id: pa.Array, score: np.ndarray, name: str = "run", source: str = "<run>"
    ) -> Run:
        """A run whose query ids are blocks (the compiled reader's): the column is built only if it is read."""
        return cls(cast(Any, query_blocks), doc_id, score, name, source)

    def first_query_id(self) -> str:
        """The first row's query id (without building the column from blocks)."""
        return _first_query(self)

    @classmethod
    def from_frame(
        cls,
        frame: pd.DataFrame,
        query: str | None = None,
        doc: str | None = None,
        score: str = "score",
        name: str = "run",
        source: str = "<DataFrame>",
    ) -> Run:
        """A run from a DataFrame's columns; row order is kept (it is the input order for ties: input_order). The id
        columns are ``query`` and ``doc``, or ``query_id`` and ``doc_id``, unless named."""
        columns = {"query": _id_column(frame, query, "query"), "doc": _id_column(frame, doc, "doc"), "score": score}
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
            header=True,
        )
    return table[name]


def table_ids(column: pa.ChunkedArray, role: str, path: Path) -> pa.Array:
    if column.null_count:
        row = int(np.flatnonzero(pc.is_null(column).combine_chunks().to_numpy(zero_copy_only=False))[0])
        raise InputFormatError(f"empty {role} id in data row {row + 1}", row=row, path=path, hint=f"every row needs a {role} id")
    if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)):
        column = pc.cast(column, pa.string())
    ids = column.combine_chunks()
    if pa.types.is_large_string(ids.type) and ids.nbytes < 2**31:  # pandas 3's str columns: one id type throughout
        ids = ids.cast(pa.string())
    # "" is no id either; a view of the lengths: pyarrow's copying to_numpy imports pandas (0.2 s of start-up)
    empty = np.flatnonzero(to_numpy(pc.binary_length(ids)) == 0)
    if empty.size:
        raise InputFormatError(
            f"empty {role} id in data row {int(empty[0]) + 1}", row=int(empty[0]), path=path, hint=f"every row needs a {role} id"
        )
    control = control_character_row(ids)
    if control is not None:
        message, hint = control_character_message(control[1], role)
        raise InputFormatError(f"{message} in data row {control[0] + 1}", row=control[0], path=path, hint=hint)
    return ids


def _parses(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def table_numbers(column: pa.ChunkedArray, role: str, path: Path) -> np.ndarray:
    try:
        values = float_values(pc.cast(column, pa.float64()))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        texts = column.cast(pa.string()).to_pylist() if pa.types.is_string(column.type) else []
        row = next((i for i, text in enumerate(texts) if text is not None and not _parses(text)), None)
        if row is None:
            raise InputFormatError(
                f"the {role} column holds values that are not numbers", path=path, hint=f"the {role} must be numeric"
            ) from None
        raise InputFormatError(
            f"{role} {texts[row]!r} is not a number in data row {row + 1}", row=row, path=path, hint=f"the {role} must be numeric"
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
    sample = columns.get("sample")  # a stochastic run: the column saying which sampled ranking a row is in
    return Run(
        _contiguous(table_ids(table_column(table, columns["query"], "query", path), "query", path)),
        _contiguous(table_ids(table_column(table, columns["doc"], "doc", path), "doc", path)),
        table_numbers(table_column(table, columns["score"], "score", path), "score", path),
        name,
        str(source),
        sample=None if not sample else _contiguous(table_ids(table_column(table, sample, "sample", path), "sample", path)),
    )
