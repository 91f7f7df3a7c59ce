"""Tables (CSV, TSV, Parquet, JSONL) with a column mapping, read as qrels or runs.

A recommender's ``user,item,rating`` table loads as qrels with
``columns={"query": "user", "doc": "item", "relevance": "rating"}``, and
``user,item,score`` as a run with ``{"query": "user", "doc": "item", "score": "score"}``.
Ids are read as strings whatever they look like (``007`` stays ``007``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from harness.config.formats import TABLE_FORMATS, table_format_of
from harness.data.model import Qrels, Run, table_column, table_ids, table_qrels, table_run
from harness.data.trec import NotStreamable, check_exists, regroup, stream_block_size
from harness.errors import InputFormatError


def read_table(path: Path, fmt: str, string_columns: list[str]) -> pa.Table:
    check_exists(path, "table", folder_ok=fmt == "parquet")  # a Parquet dataset may be a folder of pieces
    try:
        if fmt in ("csv", "tsv"):
            import pyarrow.csv as pacsv

            return pacsv.read_csv(
                path,
                parse_options=pacsv.ParseOptions(delimiter="," if fmt == "csv" else "\t"),
                convert_options=pacsv.ConvertOptions(column_types={c: pa.string() for c in string_columns}),
            )
        if fmt == "parquet":
            import pyarrow.parquet as pq

            return pq.read_table(path)
        if fmt == "jsonl":
            import pyarrow.json as pajson

            return pajson.read_json(path)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OSError) as exc:
        detail = str(exc).splitlines()[0]
        raise InputFormatError(
            f"cannot be read as {fmt}: {detail}", path=path, hint=f"check that the file is valid {fmt}"
        ) from None
    raise InputFormatError(f"unknown table format {fmt!r}", path=path, hint=f"use one of {', '.join(TABLE_FORMATS)}")


def read_table_qrels(path: str | Path, columns: Mapping[str, str], fmt: str | None = None) -> Qrels:
    """Qrels from a table file; ``columns`` maps ``query``, ``doc``, ``relevance`` to column names."""
    path = Path(path)
    fmt = fmt or table_format_of(path) or "csv"
    return table_qrels(read_table(path, fmt, [columns["query"], columns["doc"]]), columns, path)


def read_table_run(path: str | Path, columns: Mapping[str, str], fmt: str | None = None, name: str | None = None) -> Run:
    """A run from a table file; ``columns`` maps ``query``, ``doc``, ``score`` to column names."""
    path = Path(path)
    fmt = fmt or table_format_of(path) or "csv"
    return table_run(read_table(path, fmt, [columns["query"], columns["doc"]]), columns, path, name or table_run_name(path))


def table_run_name(path: Path) -> str:
    """A table run's name: its file name up to the first dot (``bm25.csv.gz`` -> ``bm25``)."""
    return path.stem.split(".")[0]


def stream_table_run(path: str | Path, columns: Mapping[str, str], fmt: str, rows_per_block: int = 1 << 20,
                     value: str = "score") -> Iterator[pa.Table]:  # fmt: skip
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
    source = pa.input_stream(str(path), compression="detect")
    try:
        if fmt == "jsonl":
            import pyarrow.json as pajson

            reader = pajson.open_json(
                source,
                read_options=pajson.ReadOptions(block_size=stream_block_size(rows_per_block)),
                parse_options=pajson.ParseOptions(
                    explicit_schema=pa.schema([(wanted[0], pa.string()), (wanted[1], pa.string()), (wanted[2], pa.float64())]),
                    unexpected_field_behavior="ignore",
                ),
            )
        else:
            import pyarrow.csv as pacsv

            reader = pacsv.open_csv(
                source,
                read_options=pacsv.ReadOptions(block_size=stream_block_size(rows_per_block)),
                parse_options=pacsv.ParseOptions(delimiter="," if fmt == "csv" else "\t"),
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
    if query.null_count or doc.null_count or not numeric:
        raise NotStreamable("a block does not check out")
    values = pc.cast(score, pa.float64())
    if values.null_count or np.isnan(values.to_numpy()).any():
        raise NotStreamable("a block does not check out")
    return pa.table({"qid": query, "docid": doc, "score": values})


def read_table_columns(path: str | Path, key: str, value: str, fmt: str | None = None) -> dict[str, str]:
    """Two columns of a table as a mapping, e.g. query -> segment; a key listed twice is an error (which row would win?)."""
    path = Path(path)
    fmt = fmt or table_format_of(path) or "csv"
    table = read_table(path, fmt, [key, value])
    keys = table_ids(table_column(table, key, key, path), key, path).to_pylist()
    values = table_ids(table_column(table, value, value, path), value, path).to_pylist()
    mapping = dict(zip(keys, values, strict=True))
    if len(mapping) < len(keys):
        seen: dict[str, int] = {}
        for row, k in enumerate(keys):
            if k in seen:
                header = 1 if fmt in ("csv", "tsv") else 0  # the data row's line in a delimited file
                raise InputFormatError(
                    f"{key} {k!r} is listed twice (rows {seen[k] + 1} and {row + 1})",
                    path=path, line=row + 1 + header if header else None,
                    hint=f"keep one row per {key}: each must map to one {value}",
                )  # fmt: skip
            seen[k] = row
    return mapping
