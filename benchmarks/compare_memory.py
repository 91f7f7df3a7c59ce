"""The peak memory of a large comparison: 10 systems, every pair, 20 measures, 5 segments, 10,000 resamples.

    python benchmarks/compare_memory.py [--users 50] [--resamples 10000]

45 pairs x 20 measures x 5 segments (all users and 4 segments) are 4,500 comparison rows,
each tested by the t-test, Wilcoxon, randomisation and the bootstrap. The resampling tests
take the rows a block at a time, so the peak stays near one block's budget whatever the
rows. Runs `harness run` (without tracking or report: the comparison is what is measured)
as a whole process and prints its wall time and peak memory (resident set, from the
kernel's accounting of the child).
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

MEASURES = [f"{name}@{k}" for name in ("nDCG", "P", "R", "AP") for k in (1, 3, 5, 10, 20)]


def _write(folder: Path, users: int, systems: int, resamples: int, seed: int = 0) -> Path:
    rng = np.random.default_rng(seed)
    items = 200
    with (folder / "qrels.trec").open("w") as out:
        for u in range(users):
            for item in rng.choice(items, size=15, replace=False):
                out.write(f"u{u} 0 i{item} {int(rng.integers(1, 4))}\n")
    with (folder / "segments.csv").open("w") as out:
        out.write("query,segment\n")
        out.writelines(f"u{u},s{u % 4}\n" for u in range(users))
    names = []
    for s in range(systems):
        with (folder / f"system{s}.trec").open("w") as out:
            for u in range(users):
                for rank, item in enumerate(rng.choice(items, size=50, replace=False), start=1):
                    out.write(f"u{u} Q0 i{item} {rank} {100 - rank} system{s}\n")
        names.append(f"system{s}")
    systems_yaml = "".join(f"  - {{name: {name}, runs: {{grid: {name}.trec}}}}\n" for name in names)
    (folder / "config.yaml").write_text(
        "experiment: compare-memory\n"
        "datasets:\n  - {name: grid, qrels: qrels.trec, segments: segments.csv}\n"
        f"systems:\n{systems_yaml}"
        f"measures: [{', '.join(MEASURES)}]\n"
        f"stats: {{permutations: {resamples}, resamples: {resamples}, mode: all_pairs}}\n"
        "report: {enabled: false}\n"
        "output: {path: out, csv: true}\n"
    )
    return folder / "config.yaml"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--resamples", type=int, default=10_000)
    args = parser.parse_args(argv)
    harness = Path(sys.executable).with_name("harness")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        config = _write(folder, args.users, 10, args.resamples)
        command = [str(harness), "run", str(config), "--no-tracking", "--quiet"]
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True)
        seconds = time.perf_counter() - start
        if done.returncode != 0:
            print(done.stderr, file=sys.stderr)
            return done.returncode
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 2**20  # KiB -> GiB
        rows = sum(1 for _ in next((folder / "out").rglob("comparisons.csv")).open()) - 1
        print(f"harness run: {rows:,} comparison rows, {args.users} users, {args.resamples:,} resamples")
        print(f"  {seconds:6.1f} s   peak {peak:.2f} GiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
