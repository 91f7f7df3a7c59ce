"""`harness explain --match` against `harness eval` of the same run, as whole processes.

    python benchmarks/explain_bench.py [--measure nDCG@10] [--target 0.35] [--rounds 2]

On the demo's ratings and production run (3,000 users, 300,000 lines: `make demo` writes them
under runs/demo; without them, the same bytes are generated under benchmarks/data/demo). Prints
each process's wall time, alternating the two, and their ratio.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COLUMNS = ["--qrels-columns", "query=user,doc=item,relevance=rating", "--run-columns", "query=user,doc=item,score=score"]


def _timed(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--measure", default="nDCG@10")
    parser.add_argument("--target", type=float, default=0.35)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args(argv)
    folder = ROOT / "runs/demo"
    if not (folder / "ratings.csv").exists():  # make demo's data, else the same bytes generated here
        from harness.demo import recsys

        folder = ROOT / "benchmarks/data/demo"
        if not (folder / "ratings.csv").exists():
            print(f"generating the demo's ratings and runs in {folder} ...", flush=True)
            recsys(folder)
    qrels, run = folder / "ratings.csv", folder / "production.csv"
    harness = str(Path(sys.executable).with_name("harness"))
    evaluate = [harness, "eval", *COLUMNS, str(qrels), str(run), "-m", args.measure]
    explain = [harness, "explain", *COLUMNS, str(qrels), str(run), "-m", args.measure, "--match", str(args.target), "--quiet"]
    times: dict[str, list[float]] = {"eval": [], "explain --match": []}
    for _ in range(args.rounds):
        times["eval"].append(_timed(evaluate))
        times["explain --match"].append(_timed(explain))
    medians = {name: statistics.median(values) for name, values in times.items()}
    print(f"{args.measure} on the demo's 3,000 users, medians of {args.rounds} rounds:")
    for name, seconds in medians.items():
        print(f"  harness {name:<16} {seconds:7.2f} s")
    print(f"  ratio {medians['explain --match'] / medians['eval']:.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
