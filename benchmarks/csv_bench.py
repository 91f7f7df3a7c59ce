"""`harness eval` of CSV tables against the script a recommender user writes: the csv module and pytrec_eval.

    python benchmarks/csv_bench.py [--scenario ml100k] [--rounds 5]

At MovieLens-100k's size (943 users x 100 items: 94,300 run rows, 18,860 judgments) the data of
`generate.py` is written as two CSV tables with a header (user,item,rating and user,item,score),
and the two tools compute the same six measures (nDCG@10, AP, RR, P@10, R@100, nDCG) as whole
processes, alternating. Prints each round, the medians and their ratio, after checking that the
two print the same means.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _process import measure_process  # noqa: E402

MEASURES = {"nDCG@10": "ndcg_cut_10", "AP": "map", "RR": "recip_rank", "P@10": "P_10", "R@100": "recall_100", "nDCG": "ndcg"}
COLUMNS = ["--qrels-columns", "query=user,doc=item,relevance=rating", "--run-columns", "query=user,doc=item,score=score"]


def _as_table(trec: Path, names: list[str], keep: list[str], out: Path) -> None:
    """The TREC file's columns ``keep`` as a CSV table with a header (text kept as written)."""
    table = pacsv.read_csv(
        trec,
        read_options=pacsv.ReadOptions(column_names=names),
        parse_options=pacsv.ParseOptions(delimiter=" "),
        convert_options=pacsv.ConvertOptions(column_types=dict.fromkeys(names, pa.string())),
    )
    renamed = {"query": "user", "doc": "item"}
    pacsv.write_csv(
        pa.table({renamed.get(name, name): table[name] for name in keep}),
        out,
        write_options=pacsv.WriteOptions(quoting_style="none"),
    )


def tables(scenario: str, data: Path) -> tuple[Path, Path]:
    """qrels.csv and run.csv of the scenario, generated once."""
    folder = data / scenario
    qrels, run = folder / "qrels.csv", folder / "run.csv"
    if not (qrels.exists() and run.exists()):
        if not (folder / "run.trec").exists():
            print(f"generating {scenario} data in {data} ...", flush=True)
            generator = [sys.executable, str(HERE / "generate.py"), "--scenario", scenario, "--out", str(data)]
            subprocess.run(generator, check=True, stdout=subprocess.DEVNULL)
        _as_table(folder / "qrels.trec", ["query", "iter", "doc", "rating"], ["query", "doc", "rating"], qrels)
        _as_table(folder / "run.trec", ["query", "q0", "doc", "rank", "score", "tag"], ["query", "doc", "score"], run)
    return qrels, run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenario", choices=("ml100k", "tiny"), default="ml100k")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--data", type=Path, default=HERE / "data")
    args = parser.parse_args(argv)
    qrels, run = tables(args.scenario, args.data)
    measures = [flag for name in MEASURES for flag in ("-m", name)]
    harness = [sys.executable, "-m", "harness", "eval", "--quiet", *COLUMNS, *measures, str(qrels), str(run)]
    script = [sys.executable, str(HERE / "peers" / "pytrec_eval_csv.py"), str(qrels), str(run)]

    ours = json.loads(subprocess.run([*harness, "--json"], capture_output=True, text=True, check=True).stdout)
    peer = subprocess.run(script, capture_output=True, text=True, check=True).stdout.split()
    peer_means = dict(zip(peer[::2], map(float, peer[1::2]), strict=True))
    for row in ours["results"]:
        if abs(row["value"] - peer_means[MEASURES[row["measure"]]]) > 1e-9:
            raise SystemExit(f"{row['measure']}: harness {row['value']!r}, pytrec_eval {peer_means[MEASURES[row['measure']]]!r}")

    times: dict[str, list[float]] = {"harness eval": [], "csv + pytrec_eval": []}
    memory: dict[str, list[float]] = {name: [] for name in times}
    commands = dict(zip(times, (harness, script), strict=True))
    for round_ in range(args.rounds):
        for name in list(commands)[round_ % 2 :] + list(commands)[: round_ % 2]:  # each round starts with the other
            seconds, mb, _ = measure_process(commands[name])
            times[name].append(seconds)
            memory[name].append(mb)
            print(f"round {round_ + 1}: {name:<18} {seconds:6.2f} s {mb:6.0f} MB", flush=True)
    with open(run, "rb") as handle:
        rows = sum(1 for _ in handle) - 1
    print(f"\n{args.scenario} as CSV tables: {rows:,} run rows, {len(MEASURES)} measures, the same means (to 1e-9)")
    medians = {name: statistics.median(values) for name, values in times.items()}
    for name, seconds in medians.items():
        print(f"  {name:<18} {seconds:6.2f} s {statistics.median(memory[name]):6.0f} MB")
    ratios = sorted(h / s for h, s in zip(times["harness eval"], times["csv + pytrec_eval"], strict=True))
    print(f"  harness / script, each round: median {statistics.median(ratios):.2f}x ({ratios[0]:.2f}x-{ratios[-1]:.2f}x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
