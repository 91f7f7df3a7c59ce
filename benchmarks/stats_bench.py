"""Time the paired tests on the issue's grid: 10 pairs x 10 measures, 7,000 queries, 10,000 permutations.

    python benchmarks/stats_bench.py [--queries 7000] [--permutations 10000] [--ranx] [--save tests.npz]

Prints the wall time of each test over all 100 comparisons at once, and (with --ranx,
when installed) ranx's Fisher randomisation test on ONE pair and measure for scale.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from harness.stats import keyed, paired


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=7000)
    parser.add_argument("--permutations", type=int, default=10_000)
    parser.add_argument("--ranx", action="store_true")
    parser.add_argument("--save", type=Path, help="write the differences and the t and Wilcoxon p-values (.npz)")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    a = rng.random((100, args.queries))
    b = np.clip(a + rng.normal(0.005, 0.1, size=a.shape), 0, 1)
    diffs = b - a  # 10 pairs x 10 measures over the same queries: one block, as compare() tests them
    keys = keyed.numbered_keys(0, args.queries)  # each query's key: its draws (compiled on first use, here)
    tests = {
        "t-test": lambda: paired.paired_t(diffs),
        "wilcoxon": lambda: paired.wilcoxon(diffs),
        "randomization": lambda: paired.randomization(diffs, keys, args.permutations),
        "bootstrap": lambda: paired.bootstrap(diffs, keys, args.permutations),
    }
    timings, results = {}, {}
    for name, test in tests.items():
        start = time.perf_counter()
        results[name] = test()
        timings[name] = time.perf_counter() - start
    if args.save is not None:  # what was timed, for checking against a reference (the smoke test: scipy)
        np.savez(args.save, diffs=diffs, p_t=results["t-test"].p, p_wilcoxon=results["wilcoxon"])
    print(f"100 comparisons (10 pairs x 10 measures), {args.queries:,} queries, {args.permutations:,} permutations/resamples")
    for name, seconds in timings.items():
        print(f"  {name:<14} {seconds:7.2f} s")
    print(f"  {'all four':<14} {sum(timings.values()):7.2f} s")
    start = time.perf_counter()
    paired.run_tests(diffs, keys, paired.TESTS, args.permutations, args.permutations)
    print(f"  {'in one call':<14} {time.perf_counter() - start:7.2f} s   (as harness compares: one scan and one pass of sums)")
    if args.ranx:
        from ranx.statistical_tests import fisher_randomization_test

        start = time.perf_counter()
        fisher_randomization_test(a[0], b[0], n_permutations=args.permutations, max_p=0.05, random_seed=42)
        print(f"ranx fisher_randomization_test, ONE comparison: {time.perf_counter() - start:.2f} s (includes numba compilation)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
