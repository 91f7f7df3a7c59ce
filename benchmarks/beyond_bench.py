"""Beyond-accuracy measures at recommender scale: what they add to the accuracy measures.

    python benchmarks/beyond_bench.py                      # 200,000 users x 100 items, 50,000 items, 32 features
    python benchmarks/beyond_bench.py --scenario tiny      # seconds; used by the smoke test
    python benchmarks/beyond_bench.py --fairness           # the fairness measures' whole-process comparison only

Generates (once, deterministically) the recsys qrels and run (benchmarks/generate.py), training
interactions (20 per user, drawn by a Zipf popularity) and a catalogue with 32 numeric features,
then:

1. as whole processes, the issue's yardstick: `harness eval` with the accuracy measures only, and
   with them plus every beyond-accuracy measure at k = 10 and 100 (reading the training data and
   the catalogue too), one after the other for --rounds rounds (default 5); prints the medians of
   both (wall, peak memory, user and system CPU), what the second adds and its ratio to the first,
   and the median and range of the rounds' own ratios (this VM's speed drifts by 2x over minutes);
2. in one process after loading, where the time goes: alignment, the accuracy measures, the item
   codes, and each family of beyond-accuracy measures at k = 10 and k = 100 (system measures once
   for the run, without the bootstrap over users; one similarity pass serves both cutoffs, so it
   is timed at the first).
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
from _process import measure_process  # benchmarks/, this script's folder

HERE = Path(__file__).resolve().parent
SCENARIO_ITEMS = {"recsys": 50_000, "tiny": 20_000}
ACCURACY = ["nDCG@10", "P@10", "R@100", "AP@100", "RR@10"]
FAMILIES = {
    "Coverage, RecItems, Entropy, Gini (system)": ["Coverage@{k}", "RecItems@{k}", "Entropy@{k}", "Gini@{k}"],
    "Novelty, ARP, TailShare, APLT, ACLT": ["Novelty@{k}", "ARP@{k}", "TailShare@{k}", "APLT@{k}", "ACLT@{k}"],
    "EFD, EPC": ["EFD@{k}", "EPC@{k}"],
    "ILD, Serendipity (features)": ["ILD(sim=features)@{k}", "Serendipity(sim=features)@{k}"],
    "ILD (co-occurrence)": ["ILD@{k}"],
    "Serendipity (co-occurrence)": ["Serendipity@{k}"],
}


def _prepare(scenario: str, data: Path) -> Path:
    folder = data / scenario
    if not (folder / "qrels.trec").exists():
        print(f"generating {scenario} data in {data} ...", flush=True)
        subprocess.run([sys.executable, str(HERE / "generate.py"), "--scenario", scenario, "--out", str(data)], check=True)
    n_items = SCENARIO_ITEMS[scenario]
    if not (folder / "train.csv").exists():
        rng = np.random.default_rng(11)
        users = pacsv.read_csv(
            folder / "qrels.trec",
            read_options=pacsv.ReadOptions(column_names=["q", "i", "d", "r"]),
            parse_options=pacsv.ParseOptions(delimiter=" "),
        )["q"].unique()
        n_users, per_user = len(users), 20
        weights = 1.0 / np.arange(1, n_items + 1) ** 0.8
        item = rng.choice(n_items, size=(n_users, per_user), p=weights / weights.sum())
        ids = np.char.add("D", item.reshape(-1).astype(str))
        pacsv.write_csv(
            pa.table({"user": np.repeat(users.to_numpy(zero_copy_only=False), per_user), "item": ids}), folder / "train.csv"
        )
        features = np.round(rng.random((n_items, 32)) * (rng.random((n_items, 32)) < 0.3), 3)
        columns = {"item": np.char.add("D", np.arange(n_items).astype(str))}
        columns.update({f"f{j}": features[:, j] for j in range(32)})
        pacsv.write_csv(pa.table(columns), folder / "items.csv")
    return folder


FAIRNESS = [
    "PSP@10",
    "PSnDCG@10",
    "PSP(norm=pyxclib)@10",
    "ExposureGini@10",
    "REO(group=provider)@10",
    "RSP(group=provider)@10",
    "PopREO@10",
    "PopRSP@10",
    "ItemMAD(group=provider)@10",
]


def _groups_file(folder: Path, n_items: int) -> Path:
    """The catalogue with one group column (5 providers, by item number): what the fairness measures group by."""
    path = folder / "items_groups.csv"
    if not path.exists():
        ids = np.char.add("D", np.arange(n_items).astype(str))
        pacsv.write_csv(pa.table({"item": ids, "provider": np.arange(n_items) % 5}), path)
    return path


def _fairness_processes(folder: Path, n_items: int, rounds: int) -> None:
    """Issue 26's yardstick: the fairness, exposure and propensity measures at k = 10 add at most half of the
    accuracy-only process."""
    base = [sys.executable, "-m", "harness", "eval"]
    files = [str(folder / "qrels.trec"), str(folder / "run.trec")]
    accuracy_only = [*base, "-m", ",".join(ACCURACY), *files]
    fairness = [
        *base,
        "-m",
        ",".join(ACCURACY + FAIRNESS),
        "--train",
        str(folder / "train.csv"),
        "--train-columns",
        "user=user,item=item",
        "--items",
        str(_groups_file(folder, n_items)),
        *files,
    ]
    _compare_processes(
        accuracy_only,
        fairness,
        f"+ {len(FAIRNESS)} fairness measures @10 (train, items read)",
        "the fairness measures",
        0.5,
        rounds,
    )


def _compare_processes(base: list[str], more: list[str], what: str, added_by: str, target: float, rounds: int) -> None:
    """``base`` and ``more`` as whole processes, one after the other ``rounds`` times (the VM's speed drifts by the
    minute: a pair run together shares its minute), then the medians and the median of the paired ratios."""
    runs: dict[str, list[tuple[float, float, float, float]]] = {"base": [], "more": []}
    for round_ in range(rounds):
        for name, command in (("base", base), ("more", more)):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            seconds, peak, _ = measure_process(command)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            runs[name].append((seconds, peak, after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime))
        (b, *_), (m, *_) = runs["base"][-1], runs["more"][-1]
        print(f"  round {round_ + 1}: {b:6.2f} s and {m:6.2f} s, added {(m - b) / b:5.2f}x", flush=True)

    def median(name: str, i: int) -> float:
        return statistics.median(r[i] for r in runs[name])

    for name, label in (("base", "accuracy measures only"), ("more", what)):
        print(
            f"  {f'harness eval, {label}':<58} {median(name, 0):7.2f} s   peak {median(name, 1):,.0f} MB   "
            f"cpu: user {median(name, 2):.2f} s, system {median(name, 3):.2f} s"
        )
    ratios = [(m[0] - b[0]) / b[0] for b, m in zip(runs["base"], runs["more"], strict=True)]
    added = median("more", 0) - median("base", 0)
    print(
        f"  {f'added by {added_by} (medians of {rounds})':<58} {added:7.2f} s   {added / median('base', 0):5.2f}x the "
        f"accuracy-only process; paired rounds: median {statistics.median(ratios):.2f}x, {min(ratios):.2f}x-"
        f"{max(ratios):.2f}x (target: at most {target:g}x)",
        flush=True,
    )


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _whole_processes(folder: Path, cutoffs: list[int], rounds: int) -> None:
    beyond = [n.format(k=k) for k in cutoffs for names in FAMILIES.values() for n in names]
    base = [sys.executable, "-m", "harness", "eval"]
    files = [str(folder / "qrels.trec"), str(folder / "run.trec")]
    accuracy_only = [*base, "-m", ",".join(ACCURACY), *files]
    everything = [
        *base,
        "-m",
        ",".join(ACCURACY + beyond),
        "--train",
        str(folder / "train.csv"),
        "--train-columns",
        "user=user,item=item",
        "--items",
        str(folder / "items.csv"),
        *files,
    ]
    _compare_processes(
        accuracy_only,
        everything,
        f"+ {len(beyond)} beyond-accuracy (train, items read)",
        "the beyond-accuracy measures",
        1.0,
        rounds,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenario", choices=sorted(SCENARIO_ITEMS), default="recsys")
    parser.add_argument("--data", type=Path, default=HERE / "data")
    parser.add_argument("--cutoffs", default="10,100")
    parser.add_argument("--skip", default="", help="comma-separated family names to leave out (substring match)")
    parser.add_argument("--no-processes", action="store_true", help="skip the whole-process comparison")
    parser.add_argument("--fairness", action="store_true", help="only the fairness measures' whole-process comparison")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of the whole-process comparisons (medians)")
    args = parser.parse_args(argv)
    folder = _prepare(args.scenario, args.data)
    if args.fairness:
        print(f"fairness, exposure and propensity, {args.scenario}, whole processes:", flush=True)
        _fairness_processes(folder, SCENARIO_ITEMS[args.scenario], args.rounds)
        return 0
    cutoffs = [int(c) for c in args.cutoffs.split(",")]
    if not args.no_processes:
        print(f"beyond accuracy, {args.scenario}, whole processes:", flush=True)
        _whole_processes(folder, cutoffs, args.rounds)

    from harness.data.items import read_items, read_train
    from harness.data.load import load_qrels, load_run
    from harness.evaluation.evaluator import Evaluator

    start = time.perf_counter()
    qrels, run = load_qrels(folder / "qrels.trec"), load_run(folder / "run.trec")
    train, items = read_train(folder / "train.csv"), read_items(folder / "items.csv")
    print(
        f"beyond accuracy, {args.scenario}: {len(run):,} run rows, {len(train):,} training rows, {len(items):,} items x 32 "
        f"features; read in {time.perf_counter() - start:.1f} s"
    )

    from harness.measures.parse import parse_measure
    from harness.measures.registry import REGISTRY

    everything = ACCURACY + [n.format(k=k) for k in cutoffs for names in FAMILIES.values() for n in names]
    began = time.perf_counter()
    evaluator = Evaluator(qrels, everything, train=train, items=items)
    prepared = time.perf_counter() - began
    began = time.perf_counter()
    aligned = evaluator.align(run)
    aligned_in = time.perf_counter() - began
    began = time.perf_counter()
    lists = evaluator.item_lists(aligned)
    coded = time.perf_counter() - began
    print(f"  {'prepare judgments, popularity, features':<58} {prepared:7.2f} s")
    print(f"  {'align the run':<58} {aligned_in:7.2f} s")
    print(f"  {'item codes and histories (beyond accuracy only)':<58} {coded:7.2f} s", flush=True)

    def timed(names: list[str]) -> float:
        began = time.perf_counter()
        for name in names:
            measure = parse_measure(name)
            definition = REGISTRY.definition(measure)
            if definition.is_system(measure):
                definition.compute_system(lists, measure, np.ones((1, lists.n_queries)))
            else:  # the item measures read the item lists (down to their deepest cutoff), the others the whole lists
                definition.compute(lists if definition.beyond_accuracy else aligned.lists, measure)
        return time.perf_counter() - began

    accuracy = timed(ACCURACY)
    print(f"  {'accuracy measures (' + ', '.join(ACCURACY) + ')':<58} {accuracy:7.2f} s")
    base = aligned_in + accuracy
    total = coded
    for k in cutoffs:
        for family, names in FAMILIES.items():
            if args.skip and any(s and s in family for s in args.skip.split(",")):
                print(f"  {family + f' @{k}':<58}  skipped")
                continue
            seconds = timed([n.format(k=k) for n in names])
            total += seconds
            print(f"  {family + f' @{k}':<58} {seconds:7.2f} s   {seconds / base:5.2f}x align + accuracy", flush=True)
    print(
        f"  {'every beyond-accuracy measure, both cutoffs, with item codes':<58} {total:7.2f} s   "
        f"{total / base:5.2f}x align + accuracy ({base:.1f} s); peak memory {_peak_mb():,.0f} MB"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
