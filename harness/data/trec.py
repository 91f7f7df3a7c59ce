"""TREC qrels (``qid iter docid rel``) and run (``qid Q0 docid rank score tag``) files.

Plain or gzip. A plain file (printable ASCII fields separated by spaces or tabs,
no comments, plain decimal numbers) is read in one compiled pass on every core
(:mod:`harness.data._reader`); another well-formed file (one separator) goes through
Arrow's multithreaded CSV reader; anything else, and every error, goes through a
careful line-by-line reader that names the file, the line and the fix. As in
trec_eval, the rank column is ignored and lines starting with ``#`` are comments; a
line with a field too many or too few is refused (trec_eval would misread it).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from harness.data._arrow import drain_floats, drain_strings, to_numpy
from harness.data._reader import read_plain
from harness.data.limits import arrow_source, bounded_lines, open_binary
from harness.data.model import (
    Intents,
    Qrels,
    QueryBlocks,
    Run,
    control_character_message,
    control_character_row,
    first_control_character,
    largest_magnitude,
)
from harness.errors import InputFormatError, NotStreamable

QRELS_COLUMNS = ("qid", "iter", "docid", "rel")
RUN_COLUMNS = ("qid", "Q0", "docid", "rank", "score", "tag")


def _text_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, text) of every line, bounded (:mod:`harness.data.limits`); UnicodeDecodeError as ``str.decode``."""
    with open_binary(path) as handle:
        for number, raw in enumerate(bounded_lines(handle, path), start=1):
            yield number, raw.decode("utf-8")


def check_exists(path: Path, what: str, folder_ok: bool = False) -> None:
    """An InputFormatError naming ``path`` when the ``what`` file is not there, is a folder (unless ``folder_ok``), or is
    not a regular file: a FIFO would block the read forever, a device (``/dev/zero``) never end it."""
    if not path.exists():
        raise InputFormatError(
            f"{what} file not found", path=path, hint="check the path; relative paths start at the current folder"
        )
    if path.is_dir():
        if not folder_ok:
            raise InputFormatError(f"{what} path is a folder, not a file", path=path, hint=f"name the {what} file itself")
        return
    if not path.is_file():
        raise InputFormatError(
            f"{what} path is not a regular file (a pipe, socket or device)",
            path=path,
            hint=f"write the {what} to a file and name that file",
        )


def _first_data_line(path: Path) -> str | None:
    for _, line in _text_lines(path):
        if line.strip():
            return line
    return None


def _fast_options(path: Path, columns: tuple[str, ...], types: dict[str, pa.DataType]) -> tuple[Any, Any, Any, str] | None:
    """Arrow's read, parse and convert options for a file with a single-character separator; None when it does not fit."""
    try:
        first = _first_data_line(path)
    except (UnicodeDecodeError, OSError, InputFormatError):  # the line-by-line read names what is wrong, and where
        return None
    if first is None or first.lstrip().startswith("#"):
        return None
    delimiter = "\t" if "\t" in first else " "
    if delimiter == " " and ("  " in first.strip() or first.startswith(" ")):
        return None
    return (
        pacsv.ReadOptions(column_names=list(columns), block_size=1 << 22),  # small blocks: lower peak memory
        pacsv.ParseOptions(delimiter=delimiter, quote_char=False),
        pacsv.ConvertOptions(
            column_types=types, include_columns=list(types), quoted_strings_can_be_null=False, strings_can_be_null=False
        ),
        delimiter,
    )


def _fits(table: pa.Table, types: dict[str, pa.DataType], delimiter: str) -> bool:
    for name, kind in types.items():
        if table[name].null_count:
            return False
        # With tab separators a field could still hold spaces, which trec_eval splits on.
        if delimiter == "\t" and kind == pa.string() and pc.any(pc.match_substring(table[name], " ")).as_py():
            return False
    return True


def _fast_read(path: Path, columns: tuple[str, ...], types: dict[str, pa.DataType]) -> pa.Table | None:
    """Arrow's reader for files with a single-character separator; None when it does not fit."""
    options = _fast_options(path, columns, types)
    if options is None:
        return None
    read, parse, convert, delimiter = options
    try:
        with arrow_source(path) as source:
            table = pacsv.read_csv(source, read_options=read, parse_options=parse, convert_options=convert)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OSError):
        return None
    return table if _fits(table, types, delimiter) else None


def stream_block_size(rows_per_block: int) -> int:
    """Arrow's read block (bytes) for blocks of about ``rows_per_block`` rows: a line is at least ~16 bytes."""
    return int(min(1 << 22, max(1 << 16, rows_per_block * 16)))


def regroup(batches: Iterable[pa.RecordBatch], rows_per_block: int) -> Iterator[pa.Table]:
    """Arrow's record batches gathered into tables of at least ``rows_per_block`` rows (the last one may be short)."""
    pending: list[pa.RecordBatch] = []
    size = 0
    for batch in batches:
        pending.append(batch)
        size += batch.num_rows
        if size >= rows_per_block:
            yield pa.Table.from_batches(pending)
            pending, size = [], 0
    if pending:
        yield pa.Table.from_batches(pending)


def stream_run(path: str | Path, rows_per_block: int = 1 << 20) -> Iterator[pa.Table]:
    """A TREC run's (qid, docid, score) in blocks of about ``rows_per_block`` rows, never the whole file at once.

    For runs larger than memory (the dask engine converts them to Parquet piece by piece).
    Raises :class:`NotStreamable` (possibly after some blocks) when a block does not parse
    cleanly: :func:`read_run` then reads the file and reports the line at fault.
    """
    return _stream(Path(path), "run", RUN_COLUMNS, "score", rows_per_block)


def stream_qrels(path: str | Path, rows_per_block: int = 1 << 20) -> Iterator[pa.Table]:
    """A TREC qrels file's (qid, docid, rel) in blocks, as :func:`stream_run`; :func:`read_qrels` reports errors."""
    return _stream(Path(path), "qrels", QRELS_COLUMNS, "rel", rows_per_block)


def _stream(path: Path, what: str, columns: tuple[str, ...], value: str, rows_per_block: int) -> Iterator[pa.Table]:
    check_exists(path, what)
    types = {"qid": pa.string(), "docid": pa.string(), value: pa.float64()}
    options = _fast_options(path, columns, types)
    if options is None:
        raise NotStreamable(str(path))
    read, parse, convert, delimiter = options
    read.block_size = stream_block_size(rows_per_block)
    try:
        with arrow_source(path) as source:
            reader = pacsv.open_csv(source, read_options=read, parse_options=parse, convert_options=convert)
            for table in regroup(reader, rows_per_block):
                if (
                    not _fits(table, types, delimiter)
                    or not np.isfinite(to_numpy(table[value])).all()
                    or control_character_row(table["qid"])
                    or control_character_row(table["docid"])
                ):
                    raise NotStreamable("a block does not parse cleanly")
                yield table
    except (pa.ArrowInvalid, pa.ArrowTypeError, OSError):
        raise NotStreamable(str(path)) from None


def _data_lines(path: Path) -> Iterator[tuple[int, list[str]]]:
    try:
        for number, line in _text_lines(path):
            fields = line.split()
            if not fields or fields[0].startswith("#"):
                continue
            yield number, fields
    except UnicodeDecodeError:
        raise not_utf8(path) from None
    except (OSError, EOFError) as exc:
        raise InputFormatError(
            f"cannot be read: {exc}", path=path, hint="check that the file is complete and not corrupted"
        ) from None


def not_utf8(path: Path) -> InputFormatError:
    """The error for a text file that is not UTF-8, naming the first line that is not and the byte in it."""
    with open_binary(path) as handle:
        for number, raw in enumerate(bounded_lines(handle, path), start=1):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                return InputFormatError(
                    f"not UTF-8 text ({exc.reason} at byte {exc.start + 1} of the line)",
                    path=path,
                    line=number,
                    hint="save the file as UTF-8",
                )
    return InputFormatError("not UTF-8 text", path=path, hint="save the file as UTF-8")


def check_ids(ids: pa.Array, path: Path, role: str) -> pa.Array:
    """``ids`` unless one holds a control character (see :func:`~harness.data.model.control_character_row`): the
    error names its line."""
    control = control_character_row(ids)
    if control is None:
        return ids
    message, hint = control_character_message(control[1], role)
    raise InputFormatError(message, path=path, line=line_of_row(path, control[0]), hint=hint)


def line_of_row(path: str | Path, row: int) -> int | None:
    """The line number of data row ``row`` (0-based), counting comments and blank lines."""
    for index, (number, _) in enumerate(_data_lines(Path(path))):
        if index == row:
            return number
    return None


def _plain_ids(fields: list[str], path: Path, line: int) -> None:
    for field, role in ((fields[0], "query"), (fields[2], "document")):
        control = first_control_character(field)
        if control is not None:
            message, hint = control_character_message(control, role)
            raise InputFormatError(message, path=path, line=line, hint=hint)


def _number(text: str, path: Path, line: int, what: str, hint: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise InputFormatError(f"{what} {text!r} is not a number", path=path, line=line, hint=hint) from None
    if value != value:  # NaN sorts nowhere: refuse it rather than rank it arbitrarily
        raise InputFormatError(f"{what} is NaN", path=path, line=line, hint=hint)
    if math.isinf(value) and text.strip().lstrip("+-").lower() not in ("inf", "infinity"):
        raise InputFormatError(
            f"{what} {text} overflows a double (it would be read as {value})",
            path=path,
            line=line,
            hint=f"write a finite {what}, or 'inf' where infinity is meant (it ranks first)",
        )
    if what == "relevance" and not abs(value) < 2**53:  # a label must be a number a double holds exactly
        raise InputFormatError(
            f"relevance {text} is out of range", path=path, line=line, hint="relevance labels are small numbers (0, 1, 2, ...)"
        )
    return value


def run_tag(path: str | Path) -> str:
    """A TREC run's name: the tag (6th field) of its first line, else the file's stem; from that line alone.

    >>> run_tag("no/such/bm25.run")
    'bm25'
    """
    path = Path(path)
    try:
        first = (_first_data_line(path) or "").split()
    except (UnicodeDecodeError, OSError):  # reading the file says what is wrong with it
        first = []
    return first[5] if len(first) >= 6 else path.stem


def read_qrels(path: str | Path) -> Qrels:
    """Read a TREC qrels file: ``qid iter docid rel`` per line.

    The label may be negative (see the ``negative_labels`` convention) or fractional.
    """
    path = Path(path)
    check_exists(path, "qrels")
    plain = read_plain(path, len(QRELS_COLUMNS), (0, 2), 3, blocks=True)
    # a label a double cannot hold exactly: the line-by-line read below names the line
    if plain is not None and largest_magnitude(plain[2]) < 2.0**53:
        query_blocks, judged_docs, labels = plain
        assert isinstance(query_blocks, QueryBlocks)
        return Qrels.from_blocks(query_blocks, judged_docs, labels, str(path))
    table = _fast_read(path, QRELS_COLUMNS, {"qid": pa.string(), "docid": pa.string(), "rel": pa.float64()})
    # NaN or a label a double cannot hold exactly: the line-by-line read below names the line (no Python scalar is
    # passed to Arrow here: that imports pandas, 0.45 s)
    if (
        table is not None
        and not pc.any(pc.is_nan(table["rel"])).as_py()
        and (pc.max(pc.abs(table["rel"])).as_py() or 0.0) < 2.0**53
    ):
        qid, docid, rel = (table[c].chunks for c in ("qid", "docid", "rel"))  # as read_run: each chunk freed once copied
        del table
        return Qrels(
            check_ids(drain_strings(qid), path, "query"),
            check_ids(drain_strings(docid), path, "document"),
            drain_floats(rel),
            str(path),
        )
    qids: list[str] = []
    docs: list[str] = []
    rels: list[float] = []
    hint = "each qrels line is 'query_id iteration doc_id relevance', e.g. '301 0 FT911-1 1'"
    for number, fields in _data_lines(path):
        if len(fields) != 4:
            raise InputFormatError(
                f"expected 4 columns (qid iter docid rel), got {len(fields)}", path=path, line=number, hint=hint
            )
        _plain_ids(fields, path, number)
        qids.append(fields[0])
        docs.append(fields[2])
        rels.append(_number(fields[3], path, number, "relevance", hint))
    if not qids:
        raise InputFormatError("no judgments in the file", path=path, hint=hint)
    return Qrels(pa.array(qids, pa.string()), pa.array(docs, pa.string()), np.asarray(rels, dtype=np.float64), str(path))


def read_subtopic_qrels(path: str | Path) -> Intents:
    """Read subtopic judgments in ndeval's format, ``qid subtopic docno judgment`` per line (the TREC Web track's
    diversity qrels); a judgment of 1 or more is relevant to that subtopic.

    Parameters
    ----------
    path : str or Path
        The file.

    Returns
    -------
    Intents
        The judgments, for the intent-aware measures (alpha-nDCG, ERR-IA, ...).

    Raises
    ------
    InputFormatError
        The file, the line and what is wrong there.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "subtopics.txt"
    >>> _ = path.write_text("q1 1 d1 1\\nq1 2 d2 1\\n")
    >>> read_subtopic_qrels(path).subtopic.to_pylist()
    ['1', '2']
    """
    path = Path(path)
    check_exists(path, "subtopic qrels")
    qids: list[str] = []
    subtopics: list[str] = []
    docs: list[str] = []
    judgments: list[float] = []
    hint = "each subtopic qrels line is 'query_id subtopic doc_id judgment', e.g. '51 2 clueweb09-en0001-23-45 1'"
    for number, fields in _data_lines(path):
        if len(fields) != 4:
            raise InputFormatError(
                f"expected 4 columns (qid subtopic docid judgment), got {len(fields)}", path=path, line=number, hint=hint
            )
        _plain_ids(fields, path, number)
        control = first_control_character(fields[1])
        if control is not None:
            message, control_hint = control_character_message(control, "subtopic")
            raise InputFormatError(message, path=path, line=number, hint=control_hint)
        qids.append(fields[0])
        subtopics.append(fields[1])
        docs.append(fields[2])
        judgments.append(_number(fields[3], path, number, "relevance", hint))
    if not qids:
        raise InputFormatError("no judgments in the file", path=path, hint=hint)
    return Intents(
        pa.array(qids, pa.string()),
        pa.array(subtopics, pa.string()),
        pa.array(docs, pa.string()),
        np.asarray(judgments, dtype=np.float64),
        str(path),
    )


def read_stochastic_run(path: str | Path) -> dict[str, dict[str, list[str]]]:
    """A stochastic run, expeval's ``qid sample docno rank score runid`` lines: {query: {sample: documents by rank}}.

    Each sample is one ranking of the query; the rank column orders it (the score is not read). A rank given twice
    in one sample is an error.
    """
    path = Path(path)
    check_exists(path, "run")
    hint = "each line is 'query_id sample_id doc_id rank score run_id', one ranking per (query, sample)"
    ranked: dict[str, dict[str, dict[int, tuple[str, int]]]] = {}
    for number, fields in _data_lines(path):
        if len(fields) < 5:
            raise InputFormatError(
                f"expected 6 columns (qid sample docid rank score tag), got {len(fields)}", path=path, line=number, hint=hint
            )
        _plain_ids(fields, path, number)
        rank = _number(fields[3], path, number, "rank", hint)
        if rank != int(rank):
            raise InputFormatError(f"rank {fields[3]!r} is not a whole number", path=path, line=number, hint=hint)
        sample = ranked.setdefault(fields[0], {}).setdefault(fields[1], {})
        if int(rank) in sample:
            raise InputFormatError(
                f"rank {int(rank)} is given twice in sample {fields[1]!r} of query {fields[0]!r}",
                path=path,
                line=number,
                hint=f"the first is on line {sample[int(rank)][1]}",
            )
        sample[int(rank)] = (fields[2], number)
    if not ranked:
        raise InputFormatError("no rankings in the file", path=path, hint=hint)
    return {q: {s: [doc for _, (doc, _) in sorted(rows.items())] for s, rows in samples.items()} for q, samples in ranked.items()}


def read_group_qrels(
    path: str | Path, complete: bool = False
) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, list[str]]]]:
    """expeval's judgments, ``qid groups docno rel`` lines (groups ``g1|g2``): ({query: {doc: rel}}, {query: {doc:
    groups}}). Only relevant lines (rel > 0) are kept unless ``complete`` (expeval's -C)."""
    path = Path(path)
    check_exists(path, "qrels")
    hint = "each line is 'query_id groups doc_id relevance', groups separated by '|', e.g. 'q1 0|2 d7 1'"
    judged: dict[str, dict[str, float]] = {}
    groups: dict[str, dict[str, list[str]]] = {}
    for number, fields in _data_lines(path):
        if len(fields) != 4:
            raise InputFormatError(
                f"expected 4 columns (qid groups docid rel), got {len(fields)}", path=path, line=number, hint=hint
            )
        _plain_ids(fields, path, number)
        rel = _number(fields[3], path, number, "relevance", hint)
        if rel > 0 or complete:
            judged.setdefault(fields[0], {})[fields[2]] = rel
            names = groups.setdefault(fields[0], {}).setdefault(fields[2], [])
            names.extend(g for g in fields[1].split("|") if g not in names)
    if not judged:
        raise InputFormatError("no relevant judgments in the file", path=path, hint=hint)
    return judged, groups


def read_run(path: str | Path, name: str | None = None, samples: bool = False) -> Run:
    """Read a TREC run file: ``qid Q0 docid rank score tag`` per line.

    The rank column is ignored (as trec_eval does); the run's name is the tag of its
    first line unless ``name`` is given. ``samples``: the second column says which sampled
    ranking of its query a line is in (a stochastic run, expeval's ``qid sample docid rank score tag``).
    """
    path = Path(path)
    check_exists(path, "run")
    plain = None if samples else read_plain(path, len(RUN_COLUMNS), (0, 2), 4, blocks=True)
    if plain is not None:
        query_blocks, ranked_docs, ranked_scores = plain
        assert isinstance(query_blocks, QueryBlocks)
        return Run.from_blocks(query_blocks, ranked_docs, ranked_scores, name if name is not None else run_tag(path), str(path))
    types = {"qid": pa.string(), "docid": pa.string(), "score": pa.float64()}
    table = _fast_read(path, RUN_COLUMNS, {**types, "Q0": pa.string()} if samples else types)
    if table is not None and len(table) and pc.all(pc.is_finite(table["score"])).as_py():  # else the line-by-line read
        first_tag = name if name is not None else run_tag(path)
        # Contiguous columns (alignment reads one buffer), each chunk freed as soon as it is copied
        sample = check_ids(drain_strings(table["Q0"].chunks), path, "sample") if samples else None
        qid, docid, score = (table[c].chunks for c in ("qid", "docid", "score"))
        del table
        return Run(
            check_ids(drain_strings(qid), path, "query"),
            check_ids(drain_strings(docid), path, "document"),
            drain_floats(score),
            first_tag,
            str(path),
            sample=sample,
        )
    qids: list[str] = []
    sample_ids: list[str] = []
    docs: list[str] = []
    scores: list[float] = []
    tag: str | None = name
    hint = "each run line is 'query_id Q0 doc_id rank score tag', e.g. '301 Q0 FT911-1 1 12.5 bm25'"
    for number, fields in _data_lines(path):
        if len(fields) != 6:  # a 7th field would shift nothing trec_eval-like: refuse rather than guess
            raise InputFormatError(
                f"expected 6 columns (qid Q0 docid rank score tag), got {len(fields)}", path=path, line=number, hint=hint
            )
        _plain_ids(fields, path, number)
        qids.append(fields[0])
        sample_ids.append(fields[1])
        docs.append(fields[2])
        scores.append(_number(fields[4], path, number, "score", hint))
        if tag is None:
            tag = fields[5]
    if not qids:
        raise InputFormatError("the run is empty: no ranked documents", path=path, hint=hint)
    return Run(
        pa.array(qids, pa.string()),
        pa.array(docs, pa.string()),
        np.asarray(scores, dtype=np.float64),
        tag or path.stem,
        str(path),
        sample=pa.array(sample_ids, pa.string()) if samples else None,
    )
