"""`harness explain --match` against `harness eval` of the same run, as whole processes.

    python benchmarks/explain_bench.py [--measure nDCG@10] [--target 0.35] [--rounds 2] [--only demo]

On the demo's ratings and production run (3,000 users, 300,000 lines: `make demo` writes them
under runs/demo; without them, the same bytes are generated under benchmarks/data/demo), then on
a MovieLens-1M-size one (6,040 users x 100 items, 604,000 lines, generated once by
record_bench.py's generator). Prints each process's wall time, alternating the two, and their
ratio.
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


def _demo() -> tuple[Path, Path]:
    folder = ROOT / "runs/demo"
    if not (folder / "ratings.csv").exists():  # make demo's data, else the same bytes generated here
        from harness.demo import recsys

        folder = ROOT / "benchmarks/data/demo"
        if not (folder / "ratings.csv").exists():
            print(f"generating the demo's ratings and runs in {folder} ...", flush=True)
            recsys(folder)
    return folder / "ratings.csv", folder / "production.csv"


def _movielens() -> tuple[Path, Path]:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from record_bench import movielens_1m_like

    folder = ROOT / "benchmarks/data/ml1m-like"
    folder.mkdir(parents=True, exist_ok=True)
    movielens_1m_like(folder)
    return folder / "test.csv", folder / "production.csv"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--measure", default="nDCG@10")
    parser.add_argument("--target", type=float, default=0.35)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--only", choices=("demo", "movielens-1m"), help="one of the two cases")
    args = parser.parse_args(argv)
    cases = {"demo": _demo, "MovieLens-1M size": _movielens}
    for name, data in cases.items():
        if args.only and args.only != name.split()[0].lower():
            continue
        qrels, run = data()
        harness = str(Path(sys.executable).with_name("harness"))
        evaluate = [harness, "eval", *COLUMNS, str(qrels), str(run), "-m", args.measure]
        explain = [harness, "explain", *evaluate[2:], "--match", str(args.target), "--quiet"]
        times: dict[str, list[float]] = {"eval": [], "explain --match": []}
        for _ in range(args.rounds):
            times["eval"].append(_timed(evaluate))
            times["explain --match"].append(_timed(explain))
        medians = {test: statistics.median(values) for test, values in times.items()}
        print(f"{args.measure} on the {name} data ({run.name}), medians of {args.rounds} rounds:")
        for test, seconds in medians.items():
            print(f"  harness {test:<16} {seconds:7.2f} s")
        print(f"  ratio {medians['explain --match'] / medians['eval']:.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
