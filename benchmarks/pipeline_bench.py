"""The whole of `harness run` at recommender scale, stage by stage: evaluate, compare, gate, write, track, report.

    python benchmarks/pipeline_bench.py                      # 200,000 users x 100 items, 2 systems, 5 measures
    python benchmarks/pipeline_bench.py --scenario ml100k    # MovieLens-100k's size: 943 users x 100 items
    python benchmarks/pipeline_bench.py --scenario tiny      # seconds; used by the smoke test
    python benchmarks/pipeline_bench.py --engine dask        # on a LocalCluster of 2 workers (paired tests on it)
    python benchmarks/pipeline_bench.py --output DIR         # keep the results folder (default: a temporary one)

Generates (once, deterministically) the recsys qrels and a production run, derives a
candidate run by perturbing the scores, writes a config with a release gate and a
new/returning segment file, then times each stage of the pipeline in this process
and prints the size of the report and of the results folder.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

HERE = Path(__file__).resolve().parent


def _candidate(run: Path, out: Path, seed: int = 7) -> None:
    """The production run with its scores perturbed: a plausible next model version."""
    names = ["qid", "q0", "doc", "rank", "score", "tag"]
    table = pacsv.read_csv(
        run, read_options=pacsv.ReadOptions(column_names=names), parse_options=pacsv.ParseOptions(delimiter=" ")
    )
    rng = np.random.default_rng(seed)
    score = table["score"].to_numpy() * rng.lognormal(0.0, 0.3, size=len(table))
    table = table.set_column(names.index("score"), "score", pa.array(np.round(score, 4)))
    table = table.set_column(names.index("tag"), "tag", pa.array(np.full(len(table), "candidate")))
    pacsv.write_csv(table, out, write_options=pacsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none"))


def _prepare(scenario: str, data: Path) -> Path:
    folder = data / scenario
    if not (folder / "qrels.trec").exists():
        print(f"generating {scenario} data in {data} ...", flush=True)
        subprocess.run([sys.executable, str(HERE / "generate.py"), "--scenario", scenario, "--out", str(data)], check=True)
    if not (folder / "candidate.trec").exists():
        _candidate(folder / "run.trec", folder / "candidate.trec")
    if not (folder / "segments.csv").exists():
        qrels = pacsv.read_csv(
            folder / "qrels.trec",
            read_options=pacsv.ReadOptions(column_names=["q", "i", "d", "r"]),
            parse_options=pacsv.ParseOptions(delimiter=" "),
        )
        users = qrels["q"].unique().to_numpy(zero_copy_only=False)
        segment = np.where(np.random.default_rng(3).random(len(users)) < 0.3, "new", "returning")
        pacsv.write_csv(pa.table({"query": users, "segment": segment}), folder / "segments.csv")
    return folder


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenario", choices=("recsys", "ml100k", "tiny"), default="recsys")
    parser.add_argument("--data", type=Path, default=HERE / "data")
    parser.add_argument("--permutations", type=int, default=10_000)
    parser.add_argument(
        "--beyond",
        action="store_true",
        help="add training data, the catalogue and beyond-accuracy "
        "measures (system measures are resampled over users: stats.system_resamples, 200)",
    )
    parser.add_argument(
        "--engine",
        choices=("local", "dask"),
        default="local",
        help="dask: a LocalCluster of 2 workers x 1.5 GiB evaluates the runs and computes the paired tests",
    )
    parser.add_argument("--output", type=Path, help="where the results folder goes (default: a temporary folder)")
    parser.add_argument("--whole", action="store_true", help="then time harness run and harness eval as whole processes")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of --whole (default 3)")
    args = parser.parse_args(argv)
    folder = _prepare(args.scenario, args.data)

    from harness.config.load import load_config
    from harness.pipeline.experiment import (
        _evaluated,
        comparison_tables,
        decide_gate,
        hash_inputs,
        save_results,
        tracking_destination,
    )
    from harness.pipeline.experiment import _frames as frames_of
    from harness.progress import SILENT
    from harness.records.recorder import Recorder
    from harness.records.store import write_tracking
    from harness.report.render import write_report

    beyond_inputs, beyond_measures = "", ""
    if args.beyond:
        from beyond_bench import _prepare as prepare_beyond  # writes train.csv and items.csv once

        prepare_beyond(args.scenario, args.data)
        beyond_inputs = (
            f", train: {{path: {folder / 'train.csv'}, columns: {{user: user, item: item}}}}, "
            f"items: {{path: {folder / 'items.csv'}, id: item}}"
        )
        beyond_measures = ", Coverage@10, Entropy@10, Gini@10, Coverage@100, Novelty@10, ILD@10, APLT@10"
    with tempfile.TemporaryDirectory() as scratch:
        config = Path(scratch) / "bench.yaml"
        config.write_text(
            f"experiment: pipeline-bench\n"
            f"datasets: [{{name: recsys, qrels: {folder / 'qrels.trec'}, segments: {{path: {folder / 'segments.csv'}}}"
            f"{beyond_inputs}}}]\n"
            f"systems:\n  - {{name: production, runs: {{recsys: {folder / 'run.trec'}}}}}\n"
            f"  - {{name: candidate, runs: {{recsys: {folder / 'candidate.trec'}}}}}\n"
            f"measures: [nDCG@10, P@10, R@100, AP, RR@10{beyond_measures}]\nbaseline: production\n"
            f"stats: {{permutations: {args.permutations}, resamples: {args.permutations}}}\n"
            f"release:\n  production: production\n  candidate: candidate\n"
            f"  guards: [{{measure: nDCG@10, max_drop: 0.005}}, {{measure: R@100, segment: new, max_drop: 0.01}}]\n"
            f"output: {args.output or Path(scratch) / 'out'}\n"
            + ("engine: {name: dask, n_workers: 2, memory_limit: 1.5GiB}\n" if args.engine == "dask" else "")
        )
        experiment = load_config(config)
        timings: dict[str, float] = {}

        def stage(name: str, work):  # type: ignore[no-untyped-def]
            start = time.perf_counter()
            value = work()
            timings[name] = time.perf_counter() - start
            print(f"  {name:<22} {timings[name]:7.2f} s", flush=True)
            return value

        print(
            f"pipeline, {args.scenario}: 2 systems x 5 measures, segments new/returning, {args.permutations:,} permutations"
            f" ({args.engine})"
        )
        start = time.perf_counter()
        # as harness run does: MLflow's client imported in a child process, the inputs hashed on a thread, while the
        # evaluation runs; the store made ready while the comparisons run
        recorder, (hashing, digests) = Recorder.start(), hash_inputs(experiment)
        results = _evaluated(experiment, SILENT)
        recorder.open(tracking_destination(experiment))
        timings["load + evaluate"] = time.perf_counter() - start
        print(f"  {'load + evaluate':<22} {timings['load + evaluate']:7.2f} s", flush=True)
        tables = stage("compare", lambda: comparison_tables(experiment, results))
        frames = stage("tables", lambda: frames_of(results))
        verdict = stage("gate", lambda: decide_gate(experiment, results, tables))
        hashing.join()
        saved = stage(
            "write results",
            lambda: save_results(experiment, results, tables, datetime.now(UTC), ["bench"], verdict, frames, digests),
        )
        stage("values digests", saved.find_values_digests)  # as harness run finds them, before handing them over
        tracked = stage("track (local MLflow)", lambda: recorder.track(saved, tracking_destination(experiment)))
        saved = write_tracking(saved, tracked.as_dict())
        stage("report", lambda: write_report(saved))
        stage("log the report", lambda: recorder.log_report(saved))
        recorder.close()
        total = sum(timings.values())
        report = saved.folder / "report.html"
        size = sum(p.stat().st_size for p in saved.folder.rglob("*") if p.is_file())
        print(f"  {'total':<22} {total:7.2f} s")
        print(
            "  shares: "
            + ", ".join(f"{name} {100 * seconds / total:.0f}%" for name, seconds in timings.items() if seconds >= 0.005 * total)
        )
        print(
            f"report.html {report.stat().st_size / 1e6:.2f} MB; results folder {size / 1e6:.1f} MB; "
            f"report / evaluation time {timings['report'] / timings['load + evaluate']:.2f}"
        )
        print(verdict.line() if verdict is not None else "no gate")
        if args.whole and args.engine == "local":
            _whole_processes(config, folder, Path(scratch) / "whole", args.rounds)
    return 0


def _whole_processes(config: Path, folder: Path, output: Path, rounds: int) -> None:
    """``harness run`` of the config, with tracking and without, against ``harness eval`` of the same files and
    measures, as whole processes alternating; each round's ratio and the medians printed, and the floor the machine's
    cores put under each ratio: the process's CPU (user and system, its children's too) spread over every core, against
    ``harness eval``'s wall time. A ratio at its floor cannot fall without less work."""
    harness = [sys.executable, "-m", "harness"]
    run = [*harness, "run", str(config), "--quiet", "--output", str(output)]
    evaluate = [
        *harness,
        "eval",
        "--quiet",
        *(f"-m{m}" for m in ("nDCG@10", "P@10", "R@100", "AP", "RR@10")),
        str(folder / "qrels.trec"),
        str(folder / "run.trec"),
        str(folder / "candidate.trec"),
    ]
    commands = {"eval": evaluate, "run": run, "run --no-tracking": [*run, "--no-tracking"]}
    times: dict[str, list[float]] = {name: [] for name in commands}
    cpu: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(rounds):
        for name, command in commands.items():
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            times[name].append(time.perf_counter() - start)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu[name].append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
            if done.returncode not in (0, 3, 6):  # a verdict of FAIL or INCONCLUSIVE is still a whole run
                raise SystemExit(f"{name} failed ({done.returncode}): {done.stderr[-2000:]}")
    cores = os.cpu_count() or 1
    for name in ("run", "run --no-tracking"):
        ratios = [r / e for r, e in zip(times[name], times["eval"], strict=True)]
        floors = [c / cores / e for c, e in zip(cpu[name], times["eval"], strict=True)]
        print(
            f"whole processes, {rounds} rounds: harness {name} {np.median(times[name]):.2f} s, harness eval "
            f"{np.median(times['eval']):.2f} s, {name} / eval {np.median(ratios):.1f}x "
            f"(rounds {min(ratios):.1f}x-{max(ratios):.1f}x); its CPU {np.median(cpu[name]):.1f} s over {cores} cores "
            f"puts its floor at {np.median(floors):.1f}x (rounds {min(floors):.1f}x-{max(floors):.1f}x)"
        )


if __name__ == "__main__":
    raise SystemExit(main())
