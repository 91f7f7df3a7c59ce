"""A run on a model judge's labels corrected by people's, against the same run on the judge's labels alone.

    python benchmarks/judge_bench.py                     # 5,000 queries, people's sample 500
    python benchmarks/judge_bench.py --queries 300       # seconds

Generates the TREC-style demo data at --queries queries (harness.demo.trec: a judge that favours dense, people's
labels of a random sample), then times, as whole processes alternating for --rounds rounds (default 5), `harness
run` of hybrid against dense (5 measures, a release gate, the report; tracking off: its cost is the same for both)
with `judge:` (every run evaluated under both labellings, its means and differences corrected, the judge audited)
and without (the judge's labels as the dataset's qrels). Prints the medians (wall, peak memory) and the ratio; the
issue's target is at most 1.3x.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

import yaml
from _process import measure_process  # benchmarks/, this script's folder

HERE = Path(__file__).resolve().parent


def _config(folder: Path, judged: bool) -> Path:
    dataset = {"name": "trec", "qrels": str(folder / ("people-sample.txt" if judged else "judge.txt"))}
    if judged:
        dataset["judge"] = {"qrels": str(folder / "judge.txt"), "name": "bench-judge"}
    config = {
        "experiment": "judged" if judged else "judge-alone",
        "datasets": [dataset],
        "systems": [{"name": s, "runs": str(folder / f"{s}.run")} for s in ("hybrid", "dense")],
        "measures": ["nDCG@10", "P@10", "AP", "RR@10", "R@100"],
        "baseline": "hybrid",
        "release": {"production": "hybrid", "candidate": "dense", "guards": [{"measure": "nDCG@10", "max_drop": 0.02}]},
        "tracking": {"enabled": False},
        "output": str(folder / "out"),
    }
    path = folder / f"{config['experiment']}.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=5_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(HERE.parent))
    from harness.demo import trec

    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        print(f"generating {args.queries:,} queries (people's sample {args.queries // 10:,}) ...", flush=True)
        trec(folder, n_queries=args.queries, sample=max(2, args.queries // 10))
        configs = {"with a judge": _config(folder, True), "the judge alone": _config(folder, False)}
        found: dict[str, list[tuple[float, float]]] = {name: [] for name in configs}
        for _ in range(args.rounds):
            for name, config in configs.items():
                seconds, peak, _ = measure_process([sys.executable, "-m", "harness", "run", str(config), "--quiet"], ok=(0, 3, 6))
                found[name].append((seconds, peak))
    print(f"harness run, {args.queries:,} queries, 2 systems, 5 measures, a gate, the report ({args.rounds} rounds):")
    medians = {}
    for name, rows in found.items():
        medians[name] = statistics.median(s for s, _ in rows)
        print(f"  {name:16s} {medians[name]:6.2f} s  peak {statistics.median(p for _, p in rows):6.0f} MB")
    ratios = [a[0] / b[0] for a, b in zip(found["with a judge"], found["the judge alone"], strict=True)]
    print(
        f"  with a judge / alone: {medians['with a judge'] / medians['the judge alone']:.2f}x (rounds "
        f"{min(ratios):.2f}-{max(ratios):.2f}x; target <= 1.3x)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
