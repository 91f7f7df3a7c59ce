"""Tables (CSV, TSV, Parquet, JSONL) with a column mapping, read as qrels or runs.

A recommender's ``user,item,rating`` table loads as qrels with
``columns={"query": "user", "doc": "item", "relevance": "rating"}``, and
``user,item,score`` as a run with ``{"query": "user", "doc": "item", "score": "score"}``.
Ids are read as strings whatever they look like (``007`` stays ``007``).
"""

from __future__ import annotations

import contextlib
import csv
import json
import math
from collections.abc import Iterator, Mapping
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from harness.config.formats import TABLE_FORMATS, table_format_of
from harness.data.limits import arrow_source, bounded_lines, open_binary
from harness.data.model import Qrels, Run, control_character_row, table_column, table_ids, table_qrels, table_run
from harness.data.trec import check_exists, line_of_row, not_utf8, regroup, stream_block_size
from harness.errors import InputFormatError, NotStreamable

TEXT_TABLES = ("csv", "tsv", "jsonl")  # formats whose rows are lines a user can open and point at


def _delimiter(fmt: str) -> str:
    return "," if fmt == "csv" else "\t"


def _text_rows(path: Path, fmt: str) -> Iterator[tuple[int, list[str] | str]]:
    """Every record of a text table, its header first, with the line each starts on (CSV/TSV: parsed fields, quoted
    line breaks kept; JSONL: the line's text), blank lines skipped as Arrow skips them."""
    with open_binary(path) as handle:
        text = (raw.decode("utf-8", errors="replace") for raw in bounded_lines(handle, path))
        if fmt == "jsonl":
            for number, line in enumerate(text, start=1):
                if line.strip():
                    yield number, line
            return
        reader = csv.reader(text, delimiter=_delimiter(fmt))
        start = 1
        for record in reader:
            if record:
                yield start, record
            start = reader.line_num + 1


def _records(path: Path, fmt: str) -> Iterator[tuple[int, list[str] | str]]:
    """A text table's data records with the line each starts on: :func:`_text_rows` after the CSV/TSV header."""
    rows = _text_rows(path, fmt)
    if fmt != "jsonl":
        next(rows, None)  # the header
    return rows


def table_line(path: Path, fmt: str, row: int) -> int | None:
    """The line of a text table on which data row ``row`` (0-based) starts; None for Parquet or a row not found.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "s.csv").write_text('user,item,score\\nu1,"i\\n1",0.5\\n\\nu2,i2,0.1\\n')
    >>> table_line(folder / "s.csv", "csv", 1)  # the quoted line break and the blank line are counted
    5
    """
    if fmt not in TEXT_TABLES:
        return None
    try:
        for index, (number, _) in enumerate(_records(path, fmt)):
            if index == row:
                return number
    except (OSError, csv.Error):
        return None
    return None


def line_of_source_row(source: str, row: int) -> int | None:
    """The line of data row ``row`` (0-based) of the file ``source`` names, TREC text or a table; None when the rows
    came from memory (``<DataFrame>``) or from a binary table."""
    if source.startswith("<"):
        return None
    path = Path(source)
    fmt = table_format_of(path)
    return line_of_row(path, row) if fmt is None else table_line(path, fmt, row)


@contextlib.contextmanager
def rows_located(path: Path, fmt: str) -> Iterator[None]:
    """Name the file's line of an error raised inside about a data row (``row``) or, in a CSV/TSV file, the header:
    the checks that find them know rows and columns, not lines."""
    try:
        yield
    except InputFormatError as error:
        if error.line is None and error.row is not None:
            error.line = table_line(path, fmt, error.row)
        elif error.line is None and error.header and fmt in ("csv", "tsv"):
            error.line = 1
        raise


def _text_fault(path: Path, fmt: str) -> tuple[int, str, str] | None:
    """The first line of a text table Arrow refused, and why: Arrow's own message counts rows within a block."""
    try:
        undecodable = not_utf8(path)
        if undecodable.line is not None:
            return undecodable.line, undecodable.message, "save the file as UTF-8"
        if fmt == "jsonl":
            for number, line in _records(path, fmt):
                try:
                    json.loads(str(line), parse_constant=lambda name: math.inf, parse_float=_finite_float)
                except ValueError as exc:
                    return number, str(exc).split(":")[0], "check that the file is valid jsonl"
            return None
        rows = _text_rows(path, fmt)
        first = next(rows, None)
        width = len(first[1]) if first is not None else None  # the header's
        for number, record in rows:
            if width is not None and len(record) != width:
                return number, f"expected {width} columns, got {len(record)}", f"check that the file is valid {fmt}"
    except (OSError, csv.Error):
        return None
    return None


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise ValueError(f"the number {text} overflows a double")
    return value


def _check_overflow(table: pa.Table, path: Path, fmt: str, column: str, role: str) -> None:
    """A CSV/TSV number too large for a double reads as infinity: refuse it with its line unless the file says
    ``inf`` (or ``infinity``) there, which is legal (it ranks first)."""
    if fmt not in ("csv", "tsv") or column not in table.column_names or not pa.types.is_floating(table[column].type):
        return
    # by Arrow's kernels: converting the column to numpy imports pandas (0.5 s that small files then wait for)
    infinite = pc.is_inf(table[column])
    if not pc.any(infinite).as_py():
        return
    wanted = set(pc.indices_nonzero(infinite).to_pylist())
    index = table.column_names.index(column)
    for row, (number, record) in enumerate(_records(path, fmt)):
        if row in wanted and len(record) > index:
            text = record[index].strip()
            if text.lstrip("+-").lower() not in ("inf", "infinity"):
                raise InputFormatError(
                    f"{role} {text} overflows a double (it would be read as infinity)",
                    path=path,
                    line=number,
                    hint=f"write a finite {role}, or 'inf' where infinity is meant",
                )


def read_table(path: Path, fmt: str, string_columns: list[str]) -> pa.Table:
    check_exists(path, "table", folder_ok=fmt == "parquet")  # a Parquet dataset may be a folder of pieces
    try:
        if fmt in ("csv", "tsv"):
            import pyarrow.csv as pacsv

            with arrow_source(path) as source:
                return pacsv.read_csv(
                    source,
                    parse_options=pacsv.ParseOptions(delimiter=_delimiter(fmt)),
                    convert_options=pacsv.ConvertOptions(column_types={c: pa.string() for c in string_columns}),
                )
        if fmt == "parquet":
            import pyarrow.parquet as pq

            return pq.read_table(path)
        if fmt == "jsonl":
            import pyarrow.json as pajson

            with arrow_source(path) as source:
                return pajson.read_json(source)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OSError) as exc:
        detail = str(exc).splitlines()[0]
        fault = _text_fault(path, fmt) if fmt in TEXT_TABLES and not isinstance(exc, OSError) else None
        if fault is not None:
            raise InputFormatError(f"cannot be read as {fmt}: {fault[1]}", path=path, line=fault[0], hint=fault[2]) from None
        raise InputFormatError(
            f"cannot be read as {fmt}: {detail}", path=path, hint=f"check that the file is valid {fmt}"
        ) from None
    raise InputFormatError(f"unknown table format {fmt!r}", path=path, hint=f"use one of {', '.join(TABLE_FORMATS)}")


def read_table_qrels(path: str | Path, columns: Mapping[str, str], fmt: str | None = None) -> Qrels:
    """Qrels from a table file; ``columns`` maps ``query``, ``doc``, ``relevance`` to column names."""
    path = Path(path)
    fmt = fmt or table_format_of(path) or "csv"
    table = read_table(path, fmt, [columns["query"], columns["doc"]])
    with rows_located(path, fmt):
        _check_overflow(table, path, fmt, columns["relevance"], "relevance")
        return table_qrels(table, columns, path)


def read_table_run(path: str | Path, columns: Mapping[str, str], fmt: str | None = None, name: str | None = None) -> Run:
    """A run from a table file; ``columns`` maps ``query``, ``doc``, ``score`` to column names."""
    path = Path(path)
    fmt = fmt or table_format_of(path) or "csv"
    table = read_table(path, fmt, [columns["query"], columns["doc"], *([columns["sample"]] if columns.get("sample") else [])])
    with rows_located(path, fmt):
        _check_overflow(table, path, fmt, columns["score"], "score")
        return table_run(table, columns, path, name or table_run_name(path))


def table_run_name(path: Path) -> str:
    """A table run's name: its file name up to the first dot (``bm25.csv.gz`` -> ``bm25``)."""
    return path.stem.split(".")[0]


def stream_table_run(
    path: str | Path, columns: Mapping[str, str], fmt: str, rows_per_block: int = 1 << 20, value: str = "score"
) -> Iterator[pa.Table]:
    """A CSV, TSV or JSONL run's query, doc and score columns (named so) in blocks of about ``rows_per_block`` rows;
    ``value="relevance"``: a qrels table's, its relevance named ``score``.

    Never the whole file at once (the dask engine converts runs larger than memory to Parquet).
    Raises :class:`~harness.data.trec.NotStreamable` when a block does not check out cleanly
    (in JSONL, ids written as numbers too): :func:`read_table_run` (:func:`read_table_qrels`)
    then reads the file and reports what is wrong and where, or converts what it can.
    """

    path = Path(path)
    check_exists(path, "table", folder_ok=fmt == "parquet")
    wanted = [columns["query"], columns["doc"], columns[value]]
    try:
        with arrow_source(path) as source:
            if fmt == "jsonl":
                import pyarrow.json as pajson

                reader = pajson.open_json(
                    source,
                    read_options=pajson.ReadOptions(block_size=stream_block_size(rows_per_block)),
                    parse_options=pajson.ParseOptions(
                        explicit_schema=pa.schema(
                            [(wanted[0], pa.string()), (wanted[1], pa.string()), (wanted[2], pa.float64())]
                        ),
                        unexpected_field_behavior="ignore",
                    ),
                )
            else:
                import pyarrow.csv as pacsv

                reader = pacsv.open_csv(
                    source,
                    read_options=pacsv.ReadOptions(block_size=stream_block_size(rows_per_block)),
                    parse_options=pacsv.ParseOptions(delimiter=_delimiter(fmt)),
                    convert_options=pacsv.ConvertOptions(
                        column_types={wanted[0]: pa.string(), wanted[1]: pa.string()}, include_columns=wanted
                    ),
                )
            for table in regroup(reader, rows_per_block):
                yield _run_block(table, wanted)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowKeyError, OSError, KeyError):
        raise NotStreamable(str(path)) from None


def _run_block(table: pa.Table, wanted: list[str]) -> pa.Table:
    query, doc, score = (table[name] for name in wanted)
    numeric = pa.types.is_floating(score.type) or pa.types.is_integer(score.type)
    if query.null_count or doc.null_count or not numeric or control_character_row(query) or control_character_row(doc):
        raise NotStreamable("a block does not check out")
    values = pc.cast(score, pa.float64())
    if values.null_count or not np.isfinite(values.to_numpy()).all():
        raise NotStreamable("a block does not check out")
    return pa.table({"qid": query, "docid": doc, "score": values})


def read_table_columns(path: str | Path, key: str, value: str, fmt: str | None = None) -> dict[str, str]:
    """Two columns of a table as a mapping, e.g. query -> segment; a key listed twice is an error (which row would win?)."""
    path = Path(path)
    fmt = fmt or table_format_of(path) or "csv"
    table = read_table(path, fmt, [key, value])
    with rows_located(path, fmt):
        keys = table_ids(table_column(table, key, key, path), key, path).to_pylist()
        values = table_ids(table_column(table, value, value, path), value, path).to_pylist()
    mapping = dict(zip(keys, values, strict=True))
    if len(mapping) < len(keys):
        seen: dict[str, int] = {}
        for row, k in enumerate(keys):
            if k in seen:
                raise InputFormatError(
                    f"{key} {k!r} is listed twice (rows {seen[k] + 1} and {row + 1})",
                    path=path,
                    line=table_line(path, fmt, row),
                    hint=f"keep one row per {key}: each must map to one {value}",
                )
            seen[k] = row
    return mapping
