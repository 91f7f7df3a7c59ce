"""One entry point per input kind: a path (and, for tables, a column mapping) -> Qrels or Run.

The format follows the file name (``.csv``, ``.tsv``, ``.parquet``, ``.jsonl``, with an
optional ``.gz``), or ``fmt`` when given; anything else is TREC text.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from pathlib import Path

from harness.config.formats import table_format_of
from harness.data.model import Intents, Qrels, Run
from harness.data.tables import read_table_qrels, read_table_run, table_run_name
from harness.data.trec import read_qrels as read_trec_qrels
from harness.data.trec import read_run as read_trec_run
from harness.data.trec import read_subtopic_qrels, run_tag
from harness.errors import InputFormatError

QRELS_COLUMNS = {"query": "query", "doc": "doc", "relevance": "relevance"}
RUN_COLUMNS = {"query": "query", "doc": "doc", "score": "score"}


def load_qrels(path: str | Path, columns: Mapping[str, str] | None = None, fmt: str | None = None) -> Qrels | Intents:
    """Relevance judgments from TREC text or a table (``harness.read_qrels``).

    Parameters
    ----------
    path : str or Path
        The file: TREC qrels (``query iteration doc label``), or a CSV, TSV, Parquet or JSONL table (by its name),
        optionally compressed.
    columns : mapping, optional
        A table's column names for ``query``, ``doc`` and ``relevance`` (default: those names).
    fmt : {"trec", "csv", "tsv", "parquet", "jsonl", "ndeval"}, optional
        The format, over the file's name; ``ndeval``: subtopic judgments (``query subtopic doc judgment``), for
        the intent-aware measures.

    Returns
    -------
    Qrels or Intents
        The judgments (Intents for ``fmt="ndeval"``).

    Raises
    ------
    InputFormatError
        The file, the line and what is wrong there.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "ratings.csv"
    >>> _ = path.write_text("user,item,rating\\nu1,i1,5\\nu1,i2,1\\n")
    >>> qrels = load_qrels(path, {"query": "user", "doc": "item", "relevance": "rating"})
    >>> qrels.query_id.to_pylist(), qrels.relevance.tolist()
    (['u1', 'u1'], [5.0, 1.0])
    """
    fmt = fmt or table_format_of(Path(path)) or "trec"
    if fmt == "trec":
        return read_trec_qrels(path)
    if fmt == "ndeval":
        return read_subtopic_qrels(path)
    return read_table_qrels(path, {**QRELS_COLUMNS, **(columns or {})}, fmt)


def load_run(path: str | Path, columns: Mapping[str, str] | None = None, name: str | None = None, samples: bool = False) -> Run:
    """A run from TREC text or a table (``harness.read_run``).

    Parameters
    ----------
    path : str or Path
        The file: a TREC run (``query Q0 doc rank score tag``), or a CSV, TSV, Parquet or JSONL table (by its
        name), optionally compressed.
    columns : mapping, optional
        A table's column names for ``query``, ``doc``, ``score`` (and a stochastic run's ``sample``).
    name : str, optional
        The run's name (default: a TREC run's tag, a table's file name).
    samples : bool
        A TREC run's second column is each line's sample (expeval's stochastic runs).

    Returns
    -------
    Run
        The ranked lists, in file order.

    Raises
    ------
    InputFormatError
        The file, the line and what is wrong there.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "bm25.run"
    >>> _ = path.write_text("q1 Q0 d1 1 2.5 bm25\\nq1 Q0 d2 2 1.5 bm25\\n")
    >>> run = load_run(path)
    >>> run.name, run.doc_id.to_pylist(), run.score.tolist()
    ('bm25', ['d1', 'd2'], [2.5, 1.5])
    """
    fmt = table_format_of(Path(path))
    if fmt is None:
        return read_trec_run(path, name=name, samples=samples)
    return read_table_run(path, {**RUN_COLUMNS, **(columns or {})}, fmt, name=name)


def run_name(path: str | Path) -> str:
    """The name :func:`load_run` gives a run, without reading it: a TREC run's first tag, a table's file name."""
    path = Path(path)
    return run_tag(path) if table_format_of(path) is None and not path.is_dir() else table_run_name(path)


def judged_query_ids(run: Run, judged: AbstractSet[str], qrels_source: str) -> set[str]:
    """The run's query ids; an InputFormatError when none of them is judged (the run would score 0 everywhere)."""
    import pyarrow.compute as pc

    blocks = run.query_blocks
    run_ids = set(pc.unique(run.query_id if blocks is None else blocks.ids).to_pylist())
    if not run_ids & judged:
        example = sorted(run_ids)[:1]
        raise InputFormatError(
            f"no query of the run is judged in {qrels_source} (run query ids look like {example[0]!r}, "
            f"judged ones like {sorted(judged)[0]!r})"
            if example and judged
            else f"no query of the run is judged in {qrels_source}",
            path=run.source,
            hint="check that the run and the qrels use the same query ids (and the column mapping for tables)",
        )
    return run_ids


def check_shares_judged(run: Run, judged: AbstractSet[str], qrels_source: str) -> None:
    """:func:`judged_query_ids`' check alone: the first row's query usually settles it without reading every id."""
    if len(run) and run.first_query_id() in judged:
        return
    judged_query_ids(run, judged, qrels_source)


# The public names (harness.read_qrels / harness.read_run): TREC text or a table, by the file's name.
read_qrels = load_qrels
read_run = load_run
