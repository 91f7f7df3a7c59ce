"""The time to write the record beside the time to compute it: `harness run` as a whole process, stage by stage.

    python benchmarks/record_bench.py                 # the demo, and a MovieLens-1M-size recommender run
    python benchmarks/record_bench.py --only demo     # the demo alone (seconds; used by the smoke test)

Each case runs `harness run` twice into a fresh output folder (the first run also creates the local MLflow store;
the second logs into it, as a team's daily run does) and reads the stages from its progress lines on stderr:
compute (load, evaluate, compare, gate), write (the results folder), record (MLflow: store, parent and child runs,
artifacts) and report; then once more with --no-tracking, for what tracking adds to the whole run. The
MovieLens-1M-size case: 6,040 users, 3,706 items, 3 systems, 20 measures (accuracy and beyond-accuracy), 5 activity
segments, 10,000 permutations, a two-guard gate. Targets (issue 44): the record of the demo in at most 2 s, of the
MovieLens-1M-size run in at most 5 s.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
STAMP = re.compile(r"^\[\s*([0-9.]+)s\] (.*)$")
MEASURES = (
    "nDCG@5, nDCG@10, nDCG@20, P@5, P@10, P@20, R@10, R@20, R@50, AP@100, RR@10, Success@10, Coverage@10, "
    "Gini@10, Entropy@10, Novelty@10, ARP@10, APLT@10, Serendipity@10, nDCG@100"
)


def movielens_1m_like(folder: Path, seed: int = 1) -> Path:
    """A config over MovieLens-1M's shape (users, items, ratings per user) in ``folder``: the data generated once, the
    config written every time (so that it is always in the config format of the harness it runs)."""
    config = folder / "ml1m.yaml"
    if not (folder / "popular.csv").exists():
        _movielens_1m_data(folder, seed)
    config.write_text(
        "experiment: ml1m-record\n"
        "datasets:\n  - name: ratings\n    qrels: test.csv\n    columns: {query: user, doc: item, relevance: rating}\n"
        "    run_columns: {query: user, doc: item, score: score}\n    relevance_level: 4\n"
        "    segments: {path: segments.csv, query: user, segment: segment}\n"
        "    train: {path: train.csv, columns: {query: user, doc: item}}\n    items: {path: items.csv, id: item}\n"
        "systems:\n"
        + "".join(f"  - {{name: {n}, runs: {{ratings: {n}.csv}}}}\n" for n in ("production", "candidate", "popular"))
        + f"measures: [{MEASURES}]\nbaseline: production\nstats: {{permutations: 10000, seed: 42}}\n"
        "release:\n  production: production\n  candidate: candidate\n"
        "  guards: [{measure: nDCG@10, max_drop: 0.005}, {measure: R@20, segment: a0, max_drop: 0.01}]\n"
    )
    return config


def _movielens_1m_data(folder: Path, seed: int) -> None:
    """Training data, test ratings, segments, a catalogue and three 100-item runs for 6,040 users over 3,706 items."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    users, items = 6040, 3706
    popularity = rng.zipf(1.3, size=items).astype(float)
    popularity /= popularity.sum()
    activity = rng.lognormal(4.5, 0.9, size=users).astype(int) + 20
    train, test, segments = ["user,item\n"], ["user,item,rating\n"], ["user,segment\n"]
    quintiles = np.quantile(activity, [0.2, 0.4, 0.6, 0.8])
    for u in range(users):
        seen = rng.choice(items, size=min(int(activity[u]), 600), replace=False, p=popularity)
        held = seen[: max(5, len(seen) // 10)]
        train.extend(f"u{u},i{i}\n" for i in seen[len(held) :])
        test.extend(f"u{u},i{i},{int(rng.integers(1, 6))}\n" for i in held)
        segments.append(f"u{u},a{int(np.searchsorted(quintiles, activity[u]))}\n")
    (folder / "train.csv").write_text("".join(train))
    (folder / "test.csv").write_text("".join(test))
    (folder / "segments.csv").write_text("".join(segments))
    (folder / "items.csv").write_text("item,year\n" + "".join(f"i{i},{1950 + i % 50}\n" for i in range(items)))
    for s, name in enumerate(("production", "candidate", "popular")):
        lines = ["user,item,score\n"]
        for u in range(users):
            ranked = rng.choice(items, size=100, replace=False, p=popularity if s == 2 else None)
            lines.extend(f"u{u},i{i},{100 - r}\n" for r, i in enumerate(ranked))
        (folder / f"{name}.csv").write_text("".join(lines))


def stages(stderr: str, total: float) -> dict[str, float]:
    """compute / write / record / report seconds, from the progress lines' time stamps (the process's own clock).
    When a child process logs, the report is rendered while it does: the record then ends at its runs' last line
    (the report rendered beside it), and the report's share is writing it and what follows."""
    marks: dict[str, float] = {}
    starts = {
        "write": "writing results",
        "record": "logging to MLflow",
        "logged": "logging to MLflow (runs): done",
        "report": "rendering the report",
    }
    for line in stderr.splitlines():
        found = STAMP.match(line)
        if found:
            text = found.group(2)
            for name, start in starts.items():
                exact = name == "report"  # not "rendering the report while the runs are logged"
                if (text == start if exact else text.startswith(start)) and name not in marks:
                    marks[name] = float(found.group(1))
    end = marks.get("report", marks.get("logged", total))
    return {
        "compute": marks["write"],
        "write": marks["record"] - marks["write"],
        "record": end - marks["record"],
        "report": total - end,
    }


def run(config: Path, output: Path, *extra: str) -> tuple[float, dict[str, float]]:
    command = [sys.executable, "-m", "harness", "run", str(config), "--output", str(output), *extra]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False, cwd=ROOT)
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 3, 6):
        raise SystemExit(f"harness run {config.name} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return elapsed, stages(done.stderr, elapsed) if not extra else {}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", choices=("demo", "ml1m"))
    parser.add_argument("--data", type=Path, default=HERE / "data" / "ml1m-like")
    args = parser.parse_args(argv)
    cases = {"demo": (ROOT / "configs" / "demo.yaml", 2.0), "ml1m": (None, 5.0)}
    if (ROOT / "runs" / "demo" / "ratings.csv").exists() is False:
        subprocess.run([sys.executable, "-c", "from harness.demo import generate; generate()"], check=True, cwd=ROOT)
    print(f"{'case':<6} {'run':<12} {'total':>7} {'compute':>8} {'write':>7} {'record':>7} {'report':>7}  record target")
    for name, (config, target) in cases.items():
        if args.only not in (None, name):
            continue
        config = config or movielens_1m_like(args.data)
        with tempfile.TemporaryDirectory() as scratch:
            totals = {}
            for label in ("new store", "store exists"):
                totals[label], parts = run(config, Path(scratch))
                verdict = "met" if parts["record"] <= target else "MISSED"
                print(
                    f"{name:<6} {label:<12} {totals[label]:6.1f}s {parts['compute']:7.1f}s {parts['write']:6.1f}s "
                    f"{parts['record']:6.1f}s {parts['report']:6.1f}s  <= {target:.0f} s: {verdict}",
                    flush=True,
                )
            bare, _ = run(config, Path(scratch) / "bare", "--no-tracking")
            added = totals["store exists"] - bare
            print(
                f"{name:<6} {'no tracking':<12} {bare:6.1f}s; tracking adds {added:.1f} s into an existing store, "
                f"{added / bare:.2f}x the run without it (aim: at most 0.3x)",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
