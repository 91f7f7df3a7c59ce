"""The betting bound's width against t's, by users, for the bets' cap (the truncation ``c``), on the shapes a guard's
excess drop takes: how the cap in ``harness.stats.bounds`` was chosen, and the price of exactness docs/release.md states.

    python benchmarks/betting_width.py [--trials 20] [--caps 0.5 0.75 0.9]

Each cell is the mean over ``--trials`` samples of (the one-sided 95% upper bound - the mean), for values on the
excess's range [-1, 1], and that width over the one-sided t interval's.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

import numpy as np
from scipy import stats

from harness.stats import bounds

Shape = Callable[[np.random.Generator, int], np.ndarray]
SHAPES: dict[str, Shape] = {
    # each user's drop beyond the margin (positive: worse)
    "every user moves, sd 0.05": lambda rng, n: np.clip(rng.normal(0, 0.05, n), -1, 1),
    "10% of users move by 0.2": lambda rng, n: np.where(rng.random(n) < 0.1, rng.choice([-0.2, 0.2], n), 0.0),
    "P@10: 10% move by one hit": lambda rng, n: np.where(rng.random(n) < 0.1, rng.choice([-0.1, 0.1], n), 0.0),
    "1% gain 0.4, the rest drop 0.004": lambda rng, n: np.where(rng.random(n) < 0.01, -0.4, 0.004),
    "2% drop 0.9 (near the range's top), the rest gain 0.02": lambda rng, n: np.where(rng.random(n) < 0.02, 0.9, -0.02),
}


def width(values: np.ndarray, cap: float, alpha: float) -> float:
    """The betting bound's reach above the mean with the bets capped at ``cap`` (the module's constant, set for the call)."""
    kept = bounds._TRUNCATION
    bounds._TRUNCATION = cap
    try:
        return bounds.betting_bound(values, -1.0, 1.0, alpha).high - float(values.mean())
    finally:
        bounds._TRUNCATION = kept


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--caps", type=float, nargs="+", default=[0.5, 0.75, 0.9])
    parser.add_argument("--alpha", type=float, default=0.05)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(1)
    print(f"betting bound's width / t's (one-sided {1 - args.alpha:.0%}), mean of {args.trials} samples; caps {args.caps}")
    for name, shape in SHAPES.items():
        print(name)
        for n in (100, 300, 1_000, 3_000, 10_000):
            widths: dict[float, list[float]] = {cap: [] for cap in args.caps}
            t_widths = []
            for _ in range(args.trials):
                values = shape(rng, n)
                for cap in args.caps:
                    widths[cap].append(width(values, cap, args.alpha))
                t_widths.append(float(stats.t.ppf(1 - args.alpha, n - 1)) * values.std(ddof=1) / math.sqrt(n))
            t = float(np.mean(t_widths))
            cells = " ".join(f"c={cap:g}: {np.mean(w):.4f} ({np.mean(w) / t:.1f}x)" for cap, w in widths.items())
            print(f"  {n:>6,} users  t {t:.4f}  {cells}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
