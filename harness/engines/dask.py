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
import logging
import math
import secrets
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from harness.config.extras import missing_dask
from harness.config.schema import Engine
from harness.data.items import ItemContext
from harness.data.load import run_name
from harness.data.model import Intents, Qrels, Run
from harness.data.pieces import QRELS, RUN, QrelsSource, RunSource, Source, to_pieces
from harness.data.trec import check_exists
from harness.engines._common import DatasetWork, FilesWork, qrels_columns, run_columns, run_result
from harness.errors import HarnessError, InputFormatError
from harness.evaluation.partial import Combined, Part, combine, evaluate_part
from harness.evaluation.results import EvaluatedRun, RunResult, aggregate, long_tail_cutoff
from harness.measures.conventions import Conventions
from harness.measures.registry import REGISTRY
from harness.measures.spec import deepest_cutoff

if TYPE_CHECKING:
    from harness.measures.spec import Measure

ROWS_PER_PARTITION = 200_000  # about what a 768 MiB worker evaluates comfortably


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


def _frame(source: Source, folder: Path, samples: bool = False) -> tuple[Any, int]:
    """(a Dask frame of a run's or the judgments' rows: query, doc, value, line, kind; its number of rows)."""
    import dask.dataframe as dd

    pieces = to_pieces(source, folder, samples)
    if pieces.parquet is None:
        return dd.read_parquet(list(map(str, pieces.paths))), pieces.rows
    # the user's own Parquet, read by the workers as it is; ``line`` counts rows in Dask's order of the pieces
    query, doc, value = pieces.columns
    frame = dd.read_parquet(pieces.parquet, columns=[query, doc, value])
    frame = frame.rename(columns={query: "query", doc: "doc", value: "value"})
    lengths = frame.map_partitions(len).compute().tolist()
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64).tolist()

    def numbered(part: Any, start: int) -> Any:
        out = part.astype({"query": str, "doc": str, "value": "float64"})
        out["line"] = np.arange(start, start + len(part), dtype=np.int64)
        out["kind"] = np.int8(pieces.kind)
        return out[["query", "doc", "value", "line", "kind"]]

    from dask.delayed import delayed

    meta = numbered(frame._meta, 0)  # the columns and types of a piece, from the empty frame
    numbered_parts = [delayed(numbered)(piece, start) for piece, start in zip(frame.to_delayed(), starts, strict=True)]
    return dd.from_delayed(numbered_parts, meta=meta), int(sum(lengths))


@contextlib.contextmanager
def _quiet_shuffle() -> Iterator[None]:
    """The p2p shuffle logs each shuffle's start and end as warnings, noise in a harness log: quiet while harness
    evaluates, and the process's own level again after (the caller's logging is the caller's)."""
    logger = logging.getLogger("distributed.shuffle")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


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
) -> list[Combined]:
    """Each run evaluated on the cluster; the per-query values of one process, bit for bit.

    ``scratch``: where the inputs' Parquet pieces go; they must outlive every future computed from them (a lost
    worker's values are recomputed from the pieces), so the engine gives a folder it removes when it closes. Without
    one, a temporary folder for this call.

    ``context``: the dataset's items (training data, catalogue), prepared once and sent to
    every worker once, for beyond-accuracy measures. ``relstring_lengths``: trec_eval's
    relstring of each query at each length comes back too (a few characters a query). With ``system_measures`` (all cut at
    some k), each run's lists down to the deepest k come back too (``Combined.lists``): one
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

    with (
        _quiet_shuffle(),
        contextlib.nullcontext(str(scratch))
        if scratch is not None
        else tempfile.TemporaryDirectory(prefix="harness-dask-") as folder,
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
            lists_of = context if list_depth is not None else None
            evaluated = combine(run.name, measures, done, cutoffs, tail_cutoff, relstring_lengths, lists_of)
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


def _evaluate_piece(
    frame: Any,
    measures: list[str],
    conventions: Conventions,
    cutoffs: tuple[int, ...],
    name: str,
    qrels_source: str,
    run_source: str,
    item_context: Any,
    tail_cutoff: int | None,
    list_depth: int | None,
    relstring_lengths: tuple[int, ...] = (),
) -> Part:
    """One partition: its queries' judgments and rows, back in file order, evaluated as one part of the run."""

    frame = frame.sort_values(["kind", "line"], kind="stable")
    kind = frame["kind"].to_numpy()
    judged, ranked = frame[kind == QRELS], frame[kind == RUN]

    def strings(column: Any) -> pa.Array:  # Arrow-backed columns as they are, not through Python strings
        array = pa.array(column)
        return array if array.type == pa.string() else array.cast(pa.string())

    qrels: Qrels | Intents
    query, doc, value = strings(judged["query"]), strings(judged["doc"]), judged["value"].to_numpy(dtype=np.float64)
    if "subtopic" in judged.columns:  # subtopic judgments: the intent-aware measures read them, as on one machine
        qrels = Intents(query, strings(judged["subtopic"]), doc, value, qrels_source)
    else:
        qrels = Qrels(query, doc, judged["value"].to_numpy(), qrels_source, file_rows=judged["line"].to_numpy())
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
    return evaluate_part(qrels, run, measures, conventions, cutoffs, item_context, tail_cutoff, list_depth, relstring_lengths)


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
        judgments = QrelsSource(dataset.qrels, qrels_columns(dataset.qrels_columns), dataset.qrels_format)
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
