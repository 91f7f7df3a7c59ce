"""The dask engine on a run larger than its workers' memory, beside one process.

    python benchmarks/dask_bench.py                          # 100M run rows, 30M judgments, 2 workers x 768 MiB
    python benchmarks/dask_bench.py --rows 2000000 --no-single   # a quick look

Generates (once, deterministically) a TREC run of --rows lines (100 per query, shuffled within
each query) and 30 judgments per query, then times:

1. harness's dask engine on a LocalCluster of --workers worker processes with --memory-limit
   each: the run streamed to Parquet, shuffled with the judgments by query, every partition
   evaluated, the per-query values brought to the client; prints the data size, the sum of the
   limits, each worker's peak memory, what the workers spilled to disk, restarts, the wall time
   and the client's peak memory;
2. `harness eval -q` as one process on a subset: the first 50,000 queries' lines of both files
   (the generator writes each query's lines together), whose per-query values must equal the
   cluster's for those queries, bit for bit (a query's value depends on its own rows only);
3. `harness eval` on the whole files as one process (not with --no-single): wall time, peak
   memory, and the aggregates as printed against the cluster's.
"""

from __future__ import annotations

import argparse
import itertools
import math
import multiprocessing
import os
import resource
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
from _process import measure_process  # benchmarks/, this script's folder

HERE = Path(__file__).resolve().parent
MEASURES = ["nDCG@10", "AP", "P@10", "RR", "R@100"]
PER_QUERY, JUDGED = 100, 30
SUBSET_QUERIES = 50_000  # the generator's first block


def _ids(prefix: str, numbers: np.ndarray) -> pa.Array:
    return pc.binary_join_element_wise(prefix, pa.array(numbers).cast(pa.string()), "")


def _generate(folder: Path, rows: int) -> tuple[Path, Path]:
    run, qrels = folder / "run.trec", folder / "qrels.trec"
    if run.exists() and qrels.exists():
        return run, qrels
    folder.mkdir(parents=True, exist_ok=True)
    print(f"generating {rows:,} run rows in {folder} ...", flush=True)
    rng = np.random.default_rng(13)
    n_queries = rows // PER_QUERY
    options = pacsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    run_schema, qrels_schema = (pa.schema([(n, pa.string()) for n in names]) for names in ("qQdrst", "qidr"))
    with (
        pacsv.CSVWriter(str(run) + ".tmp", run_schema, write_options=options) as out,
        pacsv.CSVWriter(str(qrels) + ".tmp", qrels_schema, write_options=options) as judged,
    ):
        for start in range(0, n_queries, 50_000):
            queries = np.arange(start, min(start + 50_000, n_queries))
            query = np.repeat(queries, PER_QUERY)
            doc = rng.integers(0, 10_000_000, query.size)
            rank = np.tile(np.arange(1, PER_QUERY + 1), queries.size)
            score = np.round(100.0 - rank + rng.random(query.size), 3)
            order = np.argsort(query * 1.0 + rng.random(query.size), kind="stable")  # shuffled within each query
            out.write_table(
                pa.table(
                    {
                        "q": _ids("q", query[order]),
                        "Q": pa.array(np.full(query.size, "Q0")),
                        "d": _ids("D", doc[order]),
                        "r": pa.array(rank[order]).cast(pa.string()),
                        "s": pa.array(score[order]).cast(pa.string()),
                        "t": pa.array(np.full(query.size, "bench")),
                    }
                )
            )
            j_query = np.repeat(queries, JUDGED)
            hits = doc.reshape(-1, PER_QUERY)[:, : JUDGED // 2].reshape(-1)  # half the judged documents are retrieved
            unretrieved = rng.integers(10_000_000, 20_000_000, (queries.size, JUDGED - JUDGED // 2))
            j_doc = np.concatenate([hits.reshape(-1, JUDGED // 2), unretrieved], axis=1).reshape(-1)
            label = pa.array(rng.integers(0, 3, j_query.size)).cast(pa.string())
            judged.write_table(
                pa.table({"q": _ids("q", j_query), "i": pa.array(np.full(j_query.size, "0")), "d": _ids("D", j_doc), "r": label})
            )
    os.replace(str(run) + ".tmp", run)
    os.replace(str(qrels) + ".tmp", qrels)
    return run, qrels


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=100_000_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--memory-limit", default="768MiB")
    parser.add_argument("--data", type=Path, default=HERE / "data")
    parser.add_argument("--no-single", action="store_true", help="skip the one-process comparison")
    args = parser.parse_args(argv)
    # generated in a process of its own: the cluster's workers start as copies of this process, and count its pages
    # as their own (ru_maxrss), so generating here showed its 1 GB as every worker's peak
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        run, qrels = pool.submit(_generate, args.data / f"dask-{args.rows}", args.rows).result()

    from dask.utils import format_bytes, parse_bytes
    from distributed import Client, LocalCluster

    from harness.data.pieces import QrelsSource, RunSource
    from harness.engines.dask import evaluate_runs
    from harness.evaluation.results import aggregate
    from harness.measures.conventions import Conventions
    from harness.measures.parse import parse_measure
    from harness.progress import Progress

    size = run.stat().st_size + qrels.stat().st_size
    limit = parse_bytes(args.memory_limit)
    print(
        f"dask engine: {args.rows:,} run rows + {args.rows // PER_QUERY * JUDGED:,} judgments ({format_bytes(size)} of text); "
        f"{args.workers} workers x {args.memory_limit} = {format_bytes(limit * args.workers)}",
        flush=True,
    )
    measures = tuple(parse_measure(m) for m in MEASURES)
    conventions = Conventions.from_mapping({"duplicates": "first"})
    with (
        LocalCluster(
            n_workers=args.workers, threads_per_worker=1, memory_limit=args.memory_limit, dashboard_address=":0"
        ) as cluster,
        Client(cluster) as client,
    ):
        before = set(client.scheduler_info()["workers"])
        start = time.perf_counter()
        judgments = QrelsSource(qrels)  # streamed to Parquet pieces, as the run: neither is read whole here
        (evaluated,) = evaluate_runs(
            client, judgments, [RunSource(run, "bench")], measures, conventions, (10,), progress=Progress(sys.stderr)
        )
        per_query = evaluated.per_query  # the per-query values came here
        values = {str(m): v for m, v in aggregate(per_query).items()}
        wall = time.perf_counter() - start
        peaks = client.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)

        def spilled(dask_worker):  # type: ignore[no-untyped-def]
            total = getattr(dask_worker.data, "spilled_total", None)
            return int(getattr(total, "disk", 0) or 0)

        spills = client.run(spilled)
        restarts = len(before - set(client.scheduler_info()["workers"]))
    for address, peak in sorted(peaks.items()):
        print(
            f"  worker {address}: peak {format_bytes(peak)} ({peak / limit:.0%} of its limit), "
            f"spilled {format_bytes(spills.get(address, 0))}"
        )
    client_peak = format_bytes(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
    print(f"  dask wall time {wall:.1f} s (client peak {client_peak}); worker restarts: {restarts}")
    _same_on_a_subset(run, qrels, per_query, args.data / f"dask-{args.rows}")
    if not args.no_single:
        seconds, peak_mb, out = measure_process(
            [sys.executable, "-m", "harness", "eval", "--duplicates", "first", "-m", ",".join(MEASURES), str(qrels), str(run)]
        )
        print(f"  one process (harness eval): {seconds:.1f} s, peak {peak_mb:,.0f} MB")
        printed = {line.split()[0]: float(line.split()[-1]) for line in out.splitlines() if line.strip()}
        same = all(round(values[m], 4) == printed.get(m) for m in MEASURES)
        print(f"  same aggregates (4 decimals, as printed): {same}")
    print("  " + ", ".join(f"{m} {v:.4f}" for m, v in values.items()))
    return 0


def _same_on_a_subset(run: Path, qrels: Path, per_query: Any, folder: Path) -> None:
    """One process's per-query values (``harness eval -q``, as JSON) on the first SUBSET_QUERIES queries' lines,
    against the cluster's for the same queries: every value, bit for bit."""
    import json

    queries = min(SUBSET_QUERIES, len(per_query.query_ids))
    subset = {}
    for path, lines in ((run, queries * PER_QUERY), (qrels, queries * JUDGED)):
        subset[path] = folder / f"subset-{queries}-{path.name}"
        if not subset[path].exists():
            with path.open("rb") as source, subset[path].open("wb") as out:
                out.writelines(itertools.islice(source, lines))
    seconds, peak_mb, out = measure_process(
        [
            sys.executable,
            "-m",
            "harness",
            "eval",
            "-q",
            "--format",
            "json",
            "--duplicates",
            "first",
            "-m",
            ",".join(MEASURES),
            str(subset[qrels]),
            str(subset[run]),
        ]
    )
    one = {(r["query_id"], r["measure"]): r["value"] for r in json.loads(out)["results"] if r["query_id"] != "all"}
    row = {q: i for i, q in enumerate(per_query.query_ids.tolist())}
    column = {str(m): j for j, m in enumerate(per_query.measures)}
    cluster = {(q, m): float(per_query.values[row[q], column[m]]) for q, m in one}
    same = len(one) == queries * len(MEASURES) and all(
        value == cluster[key] or (math.isnan(value) and math.isnan(cluster[key])) for key, value in one.items()
    )
    print(
        f"  one process on the first {queries:,} queries ({seconds:.1f} s, peak {peak_mb:,.0f} MB): "
        f"{len(one):,} per-query values, the cluster's bit for bit: {same}"
    )


if __name__ == "__main__":
    raise SystemExit(main())
