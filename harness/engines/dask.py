"""The Dask engine: the same evaluation, spread over a cluster, to the same bits.

A run and the judgments are stacked (a ``kind`` column tells them apart, a ``line``
column keeps each row's place in its file) and shuffled by query id, so every query's
retrieved rows and all its judgments land in one partition. Each partition is then
evaluated by the single-machine :class:`~harness.evaluation.evaluator.Evaluator`: the query
universe, duplicates, R, the ideal ranking and the tie order stay that code's job, and
since a query's values depend on its own rows only (``tests/evaluation/test_partition.py``), the
per-query values are those of one process, bit for bit. Rows are put back in file order
inside each partition, so ``ties: input_order`` and ``duplicates: first`` keep their
meaning after the shuffle.

What comes back to the client is each partition's per-query values, alignment counts and
diagnostics sums, and (for system measures) its lists down to their cutoff: a few numbers a
query, never its rows. Everything after the evaluation (summaries, comparisons, the results
folder, tracking) is the local code path on those values; the cluster is for the rows.

Dask is an optional extra (``pip install 'harness[dask]'``), imported only here.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import math
import operator
import secrets
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import reduce
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from harness.config.extras import missing_dask
from harness.config.formats import table_format_of
from harness.config.schema import Engine
from harness.data._arrow import contiguous
from harness.data.align import AlignStats
from harness.data.items import ItemContext
from harness.data.load import QRELS_COLUMNS, RUN_COLUMNS, load_qrels, load_run, run_name
from harness.data.model import Intents, Qrels, Run
from harness.data.tables import stream_table_run
from harness.data.trec import NotStreamable, check_exists, stream_qrels, stream_run
from harness.engines._common import DatasetWork, FilesWork, run_columns, run_result
from harness.errors import HarnessError, InputFormatError
from harness.evaluation.diagnostics import DiagnosticSums, combine, per_query_parts
from harness.evaluation.evaluator import Evaluator
from harness.evaluation.results import EvaluatedRun, PerQuery, RunResult, aggregate, long_tail_cutoff
from harness.kernels._segments import RankedLists
from harness.kernels.beyond import stack_terms
from harness.kernels.relstring import relstrings
from harness.measures.conventions import Conventions, Queries
from harness.measures.registry import REGISTRY
from harness.measures.spec import deepest_cutoff

if TYPE_CHECKING:
    from harness.measures.spec import Measure

ROWS_PER_PARTITION = 200_000  # about what a 768 MiB worker evaluates comfortably
# the Parquet pieces written for a text run, each one input partition: 1M-row pieces killed 768 MiB workers while
# the shuffle stacked them (50M rows); 200,000 rows (~8 MB of text) keep a piece well inside
ROWS_PER_FILE = 200_000
QRELS, RUN = 0, 1


@dataclass(frozen=True)
class Evaluated:
    """One run evaluated on the cluster: its per-query values, alignment counts and diagnostics."""

    per_query: PerQuery
    stats: AlignStats
    diagnostics: dict[str, object]
    item_rows: dict[str, int] | None = None  # rows recommending items outside training, the catalogue, or both
    item_counts: np.ndarray | None = None  # the long tail: recommendations per recommended item, descending
    item_counts_cutoff: int | None = None
    lists: RankedLists | None = None  # down to the system measures' cutoff, with items: what system measures read
    relstrings: dict[int, list[str]] = dataclasses.field(default_factory=dict)  # length -> each query's, as per_query


@contextmanager
def client_for(engine: Engine, progress: Any = None) -> Iterator[Any]:
    """The Dask client: the scheduler named, else an active Client, else a LocalCluster made (and closed) here."""
    problem = missing_dask()
    if problem:
        raise InputFormatError(problem, hint="pip install 'harness[dask]'")
    from distributed import Client, LocalCluster, get_client

    owned: list[Any] = []
    if engine.scheduler not in (None, "local"):
        try:
            client = Client(engine.scheduler, timeout="20s")
        except OSError as error:
            raise InputFormatError(
                f"cannot reach the Dask scheduler at {engine.scheduler}: {error}",
                hint="check the address (tcp://host:8786) and that the scheduler runs",
            ) from None
        owned.append(client)
    else:
        try:
            client = get_client()
        except ValueError:  # no active client: a cluster of our own on this machine
            cluster = LocalCluster(
                n_workers=engine.n_workers,
                threads_per_worker=1,
                processes=True,
                memory_limit=engine.memory_limit or "auto",
                dashboard_address=":0",
            )
            client = Client(cluster)
            owned += [client, cluster]
    if progress is not None:
        progress(f"dask: {len(client.scheduler_info().get('workers', {}))} workers; dashboard {client.dashboard_link}")
    try:
        yield client
    finally:
        for thing in owned:
            thing.close()


def _table(
    query: Any,
    doc: Any,
    value: np.ndarray,
    kind: int,
    file_rows: np.ndarray | None = None,
    subtopic: pa.Array | None = None,
    sample: Any = None,
) -> pa.Table:
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


@dataclass(frozen=True)
class RunSource:
    """A run file for the cluster, not read whole here: TREC text, CSV, TSV and JSONL are converted to Parquet block by
    block (a block that does not check out, or JSONL ids written as numbers, send the file to harness's reader, which
    names the line at fault or reads it whole), Parquet files and folders are read by the workers as they are.
    ``columns``: query, doc, score -> column (tables)."""

    path: Path
    name: str
    columns: dict[str, str] | None = None


@dataclass(frozen=True)
class QrelsSource:
    """A judgments file for the cluster, not read whole here: as :class:`RunSource`. ``columns``: query, doc, relevance
    -> column (tables); ``fmt``: the format when the file name does not say it ("trec" for TREC text)."""

    path: Path
    columns: dict[str, str] | None = None
    fmt: str | None = None

    @property
    def source(self) -> str:
        return str(self.path)


def _frame(source: Run | RunSource | Qrels | Intents | QrelsSource, folder: Path, samples: bool = False) -> tuple[Any, int]:
    """(a Dask frame of a run's or the judgments' rows: query, doc, value, line, kind; its number of rows).

    ``samples``: a measure reads stochastic runs: a run is read whole here with its samples (a TREC run's second
    column), as is a table run that names a sample column; they go to the partitions with each row's sample."""
    import dask.dataframe as dd

    if isinstance(source, RunSource) and (samples or (source.columns or {}).get("sample")):
        return _frame(load_run(source.path, source.columns, name=source.name, samples=True), folder)

    if isinstance(source, Intents):  # read whole here (diversity judgments are small), sent in pieces with the subtopics
        table = _table(source.query_id, source.doc_id, source.judgment, QRELS, subtopic=source.subtopic)
        return dd.read_parquet(write_pieces(folder, [table])), len(source)
    if isinstance(source, (Run, Qrels)):
        kind, value = (RUN, source.score) if isinstance(source, Run) else (QRELS, source.relevance)
        sample = source.sample if isinstance(source, Run) else None
        table = _table(source.query_id, source.doc_id, value, kind, sample=sample)
        return dd.read_parquet(write_pieces(folder, [table])), len(source)
    path = Path(source.path)
    is_run = isinstance(source, RunSource)
    kind, role = (RUN, "score") if is_run else (QRELS, "relevance")
    fmt = "parquet" if path.is_dir() else (None if is_run else source.fmt) or table_format_of(path)  # type: ignore[union-attr]
    text = fmt in (None, "trec")
    names = {**(RUN_COLUMNS if is_run else QRELS_COLUMNS), **(source.columns or {})}
    if fmt == "parquet":
        return _parquet_frame(path, names, role, kind)
    if text or fmt in ("csv", "tsv", "jsonl"):  # text and CSV/TSV/JSONL tables: streamed, never whole in memory here
        if text:
            blocks = stream_run(path, ROWS_PER_FILE) if is_run else stream_qrels(path, ROWS_PER_FILE)
        else:
            blocks = stream_table_run(path, names, str(fmt), ROWS_PER_FILE, value=role)
        written = 0

        def numbered(block: pa.Table) -> pa.Table:  # each row keeps its place in the file
            nonlocal written
            rows = np.arange(written, written + len(block), dtype=np.int64)
            written += len(block)
            return _table(block["qid"], block["docid"], block[block.column_names[2]].to_numpy(), kind, rows)

        try:
            write_pieces(folder, map(numbered, blocks))
            if written:
                return dd.read_parquet(folder), written
        except NotStreamable:
            for stale in folder.glob("*.parquet"):
                stale.unlink()
    # harness's reader names the line at fault, or reads what streaming could not
    whole = (
        load_run(path, source.columns, name=source.name)
        if isinstance(source, RunSource)
        else load_qrels(path, source.columns, source.fmt)
    )
    return _frame(whole, folder)


def _parquet_frame(path: Path, names: dict[str, str], role: str, kind: int) -> tuple[Any, int]:
    """A Parquet run or judgments (file or folder) as the workers read them; ``line`` counts rows in Dask's order of the
    pieces."""
    import dask.dataframe as dd

    frame = dd.read_parquet(path, columns=[names["query"], names["doc"], names[role]])
    frame = frame.rename(columns={names["query"]: "query", names["doc"]: "doc", names[role]: "value"})
    lengths = frame.map_partitions(len).compute().tolist()
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64).tolist()

    def numbered(part: Any, start: int) -> Any:
        out = part.astype({"query": str, "doc": str, "value": "float64"})
        out["line"] = np.arange(start, start + len(part), dtype=np.int64)
        out["kind"] = np.int8(kind)
        return out[["query", "doc", "value", "line", "kind"]]

    from dask.delayed import delayed

    pieces = frame.to_delayed()
    meta = numbered(frame._meta, 0)  # the columns and types of a piece, from the empty frame
    numbered_parts = [delayed(numbered)(piece, start) for piece, start in zip(pieces, starts, strict=True)]
    return dd.from_delayed(numbered_parts, meta=meta), int(sum(lengths))


def write_pieces(folder: Path, tables: Iterable[pa.Table]) -> Path:
    """The rows as Parquet files of at most ROWS_PER_FILE rows in ``folder`` (each an input partition of the workers)."""
    folder.mkdir(parents=True, exist_ok=True)
    number = 0
    for table in tables:
        for start in range(0, max(len(table), 1), ROWS_PER_FILE):
            # a dictionary for the query ids only (each repeats along its list; document ids rarely do), lz4: half the
            # time of the defaults to write (0.9 against 1.85 s for 5M rows), and a third less to read, at the same size
            pq.write_table(
                table.slice(start, ROWS_PER_FILE),
                folder / f"part-{number:05d}.parquet",
                use_dictionary=["query"],
                compression="lz4",
            )
            number += 1
    return folder


def evaluate_runs(
    client: Any,
    qrels: Qrels | Intents | QrelsSource,
    runs: Sequence[Run | RunSource],
    measures: tuple[Measure, ...],
    conventions: Conventions,
    cutoffs: tuple[int, ...],
    context: ItemContext | None = None,
    partitions: int | None = None,
    progress: Any = None,
    system_measures: tuple[Measure, ...] = (),
    relstring_lengths: tuple[int, ...] = (),
    scratch: Path | None = None,
) -> list[Evaluated]:
    """Each run evaluated on the cluster; the per-query values of one process, bit for bit.

    ``scratch``: where the inputs' Parquet pieces go; they must outlive every future computed from them (a lost
    worker's values are recomputed from the pieces), so the engine gives a folder it removes when it closes. Without
    one, a temporary folder for this call.

    ``context``: the dataset's items (training data, catalogue), prepared once and sent to
    every worker once, for beyond-accuracy measures. ``relstring_lengths``: trec_eval's
    relstring of each query at each length comes back too (a few characters a query). With ``system_measures`` (all cut at
    some k), each run's lists down to the deepest k come back too (``Evaluated.lists``): one
    value per run needs every user's list, so these are gathered here.

    The inputs are written as Parquet pieces (in a temporary folder the workers read: on a
    remote cluster it must be on storage they share) and read back by Dask.
    """

    import dask.dataframe as dd
    from dask.delayed import delayed

    uncut = [m for m in system_measures if m.cutoff is None]
    if uncut:  # a config says so at its engine line, before anything is read
        raise HarnessError(
            f"{uncut[0]} counts every recommended item of every list: on the dask engine give it a cutoff",
            hint=f"write {uncut[0]}@10 (the lists down to the cutoff are gathered to compute it)",
        )

    # the p2p shuffle logs each shuffle's start and end as warnings: noise in a harness log
    logging.getLogger("distributed.shuffle").setLevel(logging.ERROR)
    with (
        contextlib.nullcontext(str(scratch))
        if scratch is not None
        else tempfile.TemporaryDirectory(prefix="harness-dask-") as folder
    ):
        scratch = Path(folder)
        if progress is not None and isinstance(qrels, QrelsSource):
            progress(f"dask: reading the judgments {qrels.path}")
        judged, _ = _frame(qrels, scratch / f"qrels-{secrets.token_hex(4)}")  # streamed to Parquet pieces, as the runs
        # sent once, not rebuilt per partition; a task's result, which Dask reruns if its worker is lost (scattered
        # data it cannot recover: its memory manager keeps one copy)
        shared = [client.submit(_same, context, pure=False) if context is not None else None]
        tail_cutoff = long_tail_cutoff(measures + system_measures)
        samples = REGISTRY.reads_samples(measures)  # expected exposure: stochastic runs
        list_depth = deepest_cutoff(system_measures) if context is not None else None
        # the partitions' evaluators know the system measures too: those that are sums over users compute each user's
        # terms there (from the judgments too); all of them set how deep the rows' items are read, and so the order
        # that numbers the cold items, as on one machine
        systems = list(system_measures) if context is not None else []
        out = []
        for number, run in enumerate(runs):
            rows, n_rows = _frame(run, scratch / f"run{number}-{secrets.token_hex(4)}", samples)
            n_parts = partitions or max(1, math.ceil(n_rows / ROWS_PER_PARTITION))
            both = dd.concat([judged, rows])
            shuffled = both.shuffle(on="query", npartitions=n_parts)
            source = run.source if isinstance(run, Run) else str(run.path)
            work = [
                delayed(_evaluate_piece)(
                    part,
                    [str(m) for m in (*measures, *systems)],
                    conventions,
                    cutoffs,
                    run.name,
                    qrels.source,
                    source,
                    shared[0],
                    tail_cutoff,
                    list_depth,
                    relstring_lengths,
                )
                for part in shuffled.to_delayed()
            ]
            futures = client.compute(work)
            _wait(futures, progress, f"dask: {run.name}, {n_parts} partitions")
            done = client.gather(futures)  # the values and counts, and the lists system measures read
            evaluated = _assemble(run.name, measures, done, cutoffs, tail_cutoff, relstring_lengths)
            if list_depth is not None and context is not None:
                ids = evaluated.per_query.query_ids
                evaluated = dataclasses.replace(evaluated, lists=_system_lists(done, ids, context))
            del futures, done  # the pieces' lists and counts are here now; the workers let them go
            if evaluated.stats.run_rows and evaluated.stats.run_queries_unjudged == evaluated.stats.run_queries:
                raise InputFormatError(
                    f"no query of the run is judged in {qrels.source}",
                    path=source,
                    hint="check that the run and the qrels use the same query ids (and the column mapping for tables)",
                )
            out.append(evaluated)
        return out


def _wait(futures: list[Any], progress: Any, what: str) -> None:
    from distributed import as_completed, wait

    if progress is None:
        wait(futures)
        return
    with progress.task(what, len(futures)) as advance:
        for _ in as_completed(futures):
            advance()


@dataclass
class _Piece:
    """What one partition sends back: never its documents, except the items of the lists that system measures read."""

    per_query: PerQuery | None  # None when the partition has no query
    stats: AlignStats
    sums: DiagnosticSums  # the diagnostics' sums over its queries
    relstrings: dict[int, list[str]] = dataclasses.field(default_factory=dict)  # length -> each query's
    known_counts: np.ndarray | None = None  # recommendations per known item code within the long-tail cutoff
    cold_counts: dict[str, int] | None = None  # the same per cold item id
    item_rows: dict[str, int] | None = None  # rows recommending items outside each universe (the diagnostics')
    listed: pa.Table | None = None  # query, pos, item of the rows above the system measures' cutoff
    cold_first: pa.Table | None = None  # each cold item's first (query, pos) here, for the run's cold numbering
    user_parts: dict[Any, Any] | None = None  # the system measures' per-user terms of its queries, in their order


def _evaluate_piece(
    frame: Any,
    measures: list[str],
    conventions: Conventions,
    cutoffs: tuple[int, ...],
    name: str,
    qrels_source: str,
    run_source: str,
    item_context: Any,
    cutoff: int | None,
    list_depth: int | None,
    relstring_lengths: tuple[int, ...] = (),
) -> _Piece:
    """One partition: its queries' judgments and rows, back in file order, through the single-machine evaluator."""

    frame = frame.sort_values(["kind", "line"], kind="stable")
    kind = frame["kind"].to_numpy()
    judged, ranked = frame[kind == QRELS], frame[kind == RUN]
    if not len(judged) and (conventions.queries is not Queries.RUN or not len(ranked)):
        # no judged query here: under queries=qrels/intersection nothing to evaluate; the rows still count
        n_queries = int(ranked["query"].nunique())
        return _Piece(None, AlignStats(len(ranked), n_queries, n_queries, 0, 0, 0), DiagnosticSums.empty(cutoffs))

    def strings(column: Any) -> pa.Array:  # Arrow-backed columns as they are, not through Python strings
        array = pa.array(column)
        return array if array.type == pa.string() else array.cast(pa.string())

    qrels: Qrels | Intents
    if "subtopic" in judged.columns:  # subtopic judgments: the intent-aware measures read them, as on one machine
        qrels = Intents(
            strings(judged["query"]),
            strings(judged["subtopic"]),
            strings(judged["doc"]),
            judged["value"].to_numpy(dtype=np.float64),
            qrels_source,
        )
    else:
        qrels = Qrels(
            strings(judged["query"]),
            strings(judged["doc"]),
            judged["value"].to_numpy(),
            qrels_source,
            file_rows=judged["line"].to_numpy(),
        )
    stochastic = "sample" in ranked.columns and len(ranked) and ranked["sample"].notna().all()
    run = Run(
        strings(ranked["query"]),
        strings(ranked["doc"]),
        ranked["value"].to_numpy(),
        name,
        run_source,
        file_rows=ranked["line"].to_numpy(),
        sample=strings(ranked["sample"]) if stochastic else None,
    )
    evaluator = Evaluator(qrels, measures, conventions, item_context=item_context)
    aligned = evaluator.align(run)
    lists = evaluator.item_lists(aligned)
    per_query = evaluator.evaluate_aligned(name, aligned, lists)
    parts = per_query_parts(aligned, cutoffs)  # summed here: only their sums go back
    piece = _Piece(
        per_query,
        aligned.stats,
        DiagnosticSums.of(per_query.in_run, parts, cutoffs),
        {length: relstrings(aligned.lists, length) for length in relstring_lengths},
    )
    if lists.items is not None:  # the long tail's counts: by code for known items (the same codes everywhere), by id for cold
        data = lists.items
        codes = data.code if cutoff is None else data.code[lists.pos < cutoff]
        counts = np.bincount(codes, minlength=data.n_codes)
        cold_ids = [] if data.cold_ids is None else data.cold_ids.to_pylist()
        piece.known_counts = counts[: data.n_known]
        piece.cold_counts = dict(zip(cold_ids, counts[data.n_known :].tolist(), strict=True))
        piece.item_rows = data.rows_outside()  # every row, as the diagnostics count
        piece.user_parts = data.user_parts
        if list_depth is not None:
            query = np.repeat(per_query.query_ids, lists.n_ret)
            shown = np.flatnonzero(lists.pos < list_depth)
            item = aligned.item_array(evaluator.item_rows(aligned))
            piece.listed = pa.table(
                {
                    "query": pa.array(query[shown], pa.string()),
                    "pos": pa.array(lists.pos[shown]),
                    "item": item.take(pa.array(shown)),
                }
            )
            cold = np.flatnonzero(data.code >= data.n_known)
            first = cold[np.unique(data.code[cold], return_index=True)[1]] if cold.size else cold
            piece.cold_first = pa.table(
                {
                    "query": pa.array(query[first], pa.string()),
                    "pos": pa.array(lists.pos[first]),
                    "item": item.take(pa.array(first)),
                }
            )
    return piece


def _assemble(
    name: str,
    measures: tuple[Measure, ...],
    done: list[_Piece],
    cutoffs: tuple[int, ...],
    cutoff: int | None,
    relstring_lengths: tuple[int, ...] = (),
) -> Evaluated:
    """The partitions' counts summed, and their values in the universe's query order (strcmp order, as on one machine:
    Python's str order is code point order, which is UTF-8 byte order)."""
    item_counts: np.ndarray | None = None
    item_rows: dict[str, int] | None = None
    counted = [p for p in done if p.known_counts is not None]
    if counted:  # integer counts: summed exactly, whatever the partitioning
        known = np.sum([p.known_counts for p in counted if p.known_counts is not None], axis=0)
        cold: dict[str, int] = {}
        item_rows = {
            key: sum((p.item_rows or {}).get(key, 0) for p in counted)
            for key in ("cold_recommendations", "recommendations_outside_train", "recommendations_outside_catalogue")
        }
        for p in counted:
            for item, count in (p.cold_counts or {}).items():
                cold[item] = cold.get(item, 0) + count
        every = np.concatenate([known, np.array(list(cold.values()), dtype=known.dtype)])
        item_counts = np.sort(every[every > 0])[::-1].astype(np.float64)
    total = AlignStats(*(sum(getattr(p.stats, f.name) for p in done) for f in dataclasses.fields(AlignStats)))
    diagnostics = combine(total, reduce(operator.add, (p.sums for p in done), DiagnosticSums.empty(cutoffs)), cutoffs)
    tables = [p.per_query for p in done if p.per_query is not None]
    ids = np.concatenate([t.query_ids.astype(object, copy=False) for t in tables]) if tables else np.zeros(0, dtype=object)
    order = np.argsort(ids, kind="stable")
    values = np.concatenate([t.values for t in tables]) if tables else np.zeros((0, len(measures)))
    in_run = np.concatenate([t.in_run for t in tables]) if tables else np.zeros(0, dtype=bool)
    strings = {k: [s for p in done if p.per_query is not None for s in p.relstrings[k]] for k in relstring_lengths}
    per_query = PerQuery(name, ids[order], tuple(measures), values[order], in_run[order])
    return Evaluated(
        per_query,
        total,
        diagnostics,
        item_rows,
        item_counts,
        cutoff,
        relstrings={k: [v[i] for i in order.tolist()] for k, v in strings.items()},
    )


def _system_lists(done: list[_Piece], query_ids: np.ndarray, context: ItemContext) -> RankedLists:
    """The run's lists down to the system measures' cutoff, in the universe's order, with the item codes one process
    gives them: known items by the dataset's codes, cold items numbered by first appearance over the whole run."""
    import pyarrow.compute as pc

    def ordered(tables: list[pa.Table]) -> pa.Table:
        table = (
            pa.concat_tables(tables)
            if tables
            else pa.table(
                {"query": pa.array([], pa.string()), "pos": pa.array([], pa.int64()), "item": pa.array([], pa.string())}
            )
        )
        return table.take(pc.sort_indices(table, sort_keys=[("query", "ascending"), ("pos", "ascending")]))

    listed = ordered([p.listed for p in done if p.listed is not None])
    cold_order = contiguous(pc.unique(ordered([p.cold_first for p in done if p.cold_first is not None])["item"]))
    where = pc.index_in(listed["query"], value_set=pa.array(query_ids.tolist(), pa.string()))
    counts = np.bincount(where.to_numpy(zero_copy_only=False).astype(np.int64), minlength=len(query_ids))
    offsets = np.zeros(len(query_ids) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    items = context.for_run(listed["item"].combine_chunks(), query_ids, cold_order=cold_order)
    items = dataclasses.replace(items, user_parts=_gathered_parts(done, query_ids))
    n = int(offsets[-1])
    return RankedLists(offsets, np.zeros(n), np.zeros(len(query_ids) + 1, dtype=np.int64), np.zeros(0), items=items)


def _gathered_parts(done: list[_Piece], query_ids: np.ndarray) -> dict[Any, Any] | None:
    """The partitions' per-user terms of the system measures, as rows in the universe's query order (a query no
    partition evaluated has none: zeros)."""
    pieces = [(p.user_parts, p.per_query.query_ids) for p in done if p.user_parts and p.per_query is not None]
    if not pieces:
        return None
    import pyarrow.compute as pc

    # each piece's queries found among the universe's, as _system_lists finds the listed rows' (Arrow, not a dict)
    universe = pa.array(query_ids, pa.string())
    found = [pc.index_in(pa.array(queries, pa.string()), value_set=universe) for _, queries in pieces]
    rows = np.concatenate([f.to_numpy(zero_copy_only=False) for f in found]).astype(np.int64)
    # each universe query's row among the stacked ones; a query of no partition: the zero row after them
    source = np.full(len(query_ids), rows.size, dtype=np.int64)
    source[rows] = np.arange(rows.size)
    return {measure: stack_terms([parts[measure] for parts, _ in pieces], zero_rows=1)[source] for measure in pieces[0][0]}


def _same(value: Any) -> Any:
    return value


class DaskEngine:
    """Per-query values computed on a Dask cluster from the rows it reads, and brought here: everything after the
    evaluation is the local engine's path (the same bits; ``tests/engines/test_contract.py``)."""

    reads_judgments = False  # the workers read them (streamed to Parquet first), unless the items' context needs them

    def __init__(self, client: Any, spec: Engine, scratch: Path) -> None:
        self.client, self.spec = client, spec
        self.scratch = scratch  # the inputs' Parquet pieces: kept while the engine is open (lost values are recomputed)

    def evaluate(self, work: DatasetWork) -> list[RunResult]:
        """The dataset's runs evaluated on the cluster, in ``work``'s order; with system measures, each run's lists
        down to their cutoff come here too, to resample users."""

        dataset, evaluator = work.dataset, work.evaluator
        runs: list[RunSource | Run] = []
        for system in work.systems:  # read by the workers (TREC text streamed to Parquet first), never whole here
            path = system.run_for(dataset.name)
            assert path is not None
            runs.append(RunSource(path, system.name, run_columns(dataset.run_columns)))
        q = dataset.qrels_columns
        judgments = QrelsSource(dataset.qrels, {"query": q.query, "doc": q.doc, "relevance": q.value}, dataset.qrels_format)
        done = evaluate_runs(
            self.client,
            judgments,
            runs,
            evaluator.query_measures,
            evaluator.prepared.conventions,
            work.experiment.cutoffs,
            evaluator.items,
            self.spec.partitions,
            work.progress,
            evaluator.system_measures,
            scratch=self.scratch,
        )
        out = []
        for system, evaluated in zip(work.systems, done, strict=True):
            kept = evaluated.lists
            out.append(
                run_result(
                    dataset,
                    system,
                    evaluated.per_query,
                    dict(evaluated.diagnostics),
                    work.segments,
                    work.skipped,
                    None if evaluator.items is None else evaluated.item_rows,
                    kept,
                    evaluator.system_measures if kept is not None else (),
                    evaluated.item_counts,
                    evaluated.item_counts_cutoff,
                )
            )
            work.advance()
        return out

    def evaluate_files(self, work: FilesWork) -> list[EvaluatedRun]:
        """Every run of ``work`` evaluated on the cluster, in order."""

        evaluator = work.evaluator
        judgments: Qrels | Intents | QrelsSource = (
            work.qrels if work.qrels is not None else QrelsSource(work.qrels_path, dict(work.qrels_columns))
        )
        for _, _, path in work.runs:
            check_exists(path, "run", folder_ok=True)  # a folder of Parquet pieces is a run for the workers
        sources = [RunSource(path, run_name(path), dict(work.run_columns)) for _, _, path in work.runs]
        done = evaluate_runs(
            self.client,
            judgments,
            sources,
            evaluator.query_measures,
            evaluator.conventions,
            (10,),
            evaluator.items,
            self.spec.partitions,
            work.progress,
            evaluator.system_measures,
            work.relstring_lengths,
            scratch=self.scratch,
        )
        out = []
        for source, (label, given, _), evaluated in zip(sources, work.runs, done, strict=True):
            system = (
                {} if evaluated.lists is None else {m: float(v[0]) for m, v in evaluator.system_values(evaluated.lists).items()}
            )
            out.append(
                EvaluatedRun(
                    label,
                    given,
                    source.name,
                    evaluated.stats.judged_queries_missing,
                    evaluated.per_query,
                    dict(aggregate(evaluated.per_query)) | system,
                    tuple(system),
                    evaluated.relstrings,
                )
            )
        return out
