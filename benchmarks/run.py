"""Time harness against its peers on the same files, as whole processes, alternating.

    make bench                                   # both scales (msmarco, then recsys), 3 rounds each
    make bench BENCH_ARGS="--scenario recsys"
    python benchmarks/run.py --scenario tiny --rounds 1

Each round runs every tool once, in turn, each round starting one tool later, so that
drift on the machine and the memory a tool leaves behind hit all of them alike; the
table shows the median wall time and peak memory (max RSS of the process), each
tool's ratio to harness, and harness's ratio to the parse floor in each round. Peers not installed are skipped
(``pip install -e '.[bench]'``).
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _process import measure_process  # noqa: E402
from generate import SCENARIOS  # noqa: E402

HARNESS_MEASURES = ["-m", "ndcg_cut.10", "-m", "map", "-m", "recip_rank", "-m", "P.10", "-m", "recall.100"]


def _tools(qrels: Path, run: Path) -> dict[str, list[str]]:
    tools = {
        "harness": [sys.executable, "-m", "harness", "eval", *HARNESS_MEASURES, str(qrels), str(run)],
        "floor": [sys.executable, str(HERE / "peers" / "floor.py"), str(qrels), str(run)],  # Arrow parsing only
    }
    for name, module in (("pytrec_eval", "pytrec_eval"), ("ranx", "ranx"), ("ir_measures", "ir_measures")):
        if importlib.util.find_spec(module) is not None:
            tools[name] = [sys.executable, str(HERE / "peers" / f"{module}_eval.py"), str(qrels), str(run)]
    return tools


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenario", nargs="+", choices=sorted(SCENARIOS), default=["msmarco", "recsys"])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--data", type=Path, default=HERE / "data")
    parser.add_argument("--only", nargs="*", help="tools to run (default: every installed one)")
    parser.add_argument(
        "--rank-ordered", action="store_true", help="runs written best first (the usual layout) instead of shuffled"
    )
    args = parser.parse_args(argv)
    for scenario in args.scenario:
        _bench(scenario, args)
    return 0


def _bench(scenario: str, args: argparse.Namespace) -> None:
    """One scale: every tool, ``args.rounds`` times in turn, then the table."""
    folder = args.data / (f"{scenario}-ranked" if args.rank_ordered else scenario)
    qrels, run = folder / "qrels.trec", folder / "run.trec"
    if not (qrels.exists() and run.exists()):
        print(f"generating {scenario} data in {args.data} ...", flush=True)
        # In a process of its own: a child forked from a parent that holds the generated
        # arrays would start with the parent's resident pages and inflate its peak memory.
        generator = [sys.executable, str(HERE / "generate.py"), "--scenario", scenario, "--out", str(args.data)]
        generator += ["--rank-ordered"] if args.rank_ordered else []
        subprocess.run(generator, check=True, stdout=subprocess.DEVNULL)
    with open(run, "rb") as handle:
        n_lines = sum(1 for _ in handle)
    tools = _tools(qrels, run)
    if args.only:
        tools = {k: v for k, v in tools.items() if k in args.only}
    times: dict[str, list[float]] = {name: [] for name in tools}
    memory: dict[str, list[float]] = {name: [] for name in tools}
    names = list(tools)
    for round_ in range(args.rounds):
        # each round starts one tool later: no tool always follows the same one (the process after ranx's 8 GB
        # pays for the memory it leaves to be cleared, up to 2x on this VM), and harness meets the floor side by side
        for name in names[round_ % len(names) :] + names[: round_ % len(names)]:
            seconds, mb, _ = measure_process(tools[name])
            times[name].append(seconds)
            memory[name].append(mb)
            print(f"round {round_ + 1}: {name:<12} {seconds:7.2f} s {mb:8.0f} MB", flush=True)
    base_t = statistics.median(times["harness"]) if "harness" in times else None
    base_m = statistics.median(memory["harness"]) if "harness" in memory else None
    layout = "rank-ordered" if args.rank_ordered else "shuffled within queries"
    print(f"\n{scenario} ({layout}): {n_lines:,} run lines, 5 measures, median of {args.rounds} round(s)")
    print(f"{'tool':<12} {'seconds':>8} {'peak MB':>8} {'time / harness':>15} {'memory / harness':>17}")
    for name in tools:
        t, m = statistics.median(times[name]), statistics.median(memory[name])
        rt = f"{t / base_t:.2f}x" if base_t else "-"
        rm = f"{m / base_m:.2f}x" if base_m else "-"
        print(f"{name:<12} {t:8.2f} {m:8.0f} {rt:>15} {rm:>17}")
    if "harness" in times and "floor" in times:  # the floor target is a ratio: each round's own, as well as the medians'
        ratios = sorted(h / f for h, f in zip(times["harness"], times["floor"], strict=True))
        print(f"harness / floor, each round: median {statistics.median(ratios):.2f}x ({ratios[0]:.2f}x-{ratios[-1]:.2f}x)")
    print(flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
