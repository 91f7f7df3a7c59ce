"""LensKit's own ExposureGini and ListGini on a recommender run, as its RunAnalysis calls them.

    python benchmarks/peers/fairness_lenskit.py ITEMS RUN --metric ExposureGini --k 10

lenskit 2025.8.1 is installed by ``make bench`` in .venv/peers-lenskit with ``--no-deps`` (it requires torch, which
these metrics never call: benchmarks/peers/torch_stub stands in for it) and the rest of its requirements. Each
user's list is an ``ItemList(ids, ordered=True)``; ``compute_list_data`` per list, then ``global_aggregate``, with
``items`` = the catalogue's size, as the golden case's values were computed (tests/fixtures/fairness/expected.json,
``peers.lenskit``). Prints each value.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "torch_stub"))  # before lenskit imports torch

import pandas as pd
from lenskit.data import ItemList
from lenskit.metrics import ExposureGini, ListGini

METRICS = {"ExposureGini": ExposureGini, "ListGini": ListGini}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("items")
    parser.add_argument("run")
    parser.add_argument("--metric", choices=[*METRICS, "all"], required=True, help="all: each, in one process")
    parser.add_argument("--k", type=int, default=10)
    args = parser.parse_args()
    n_items = len(pd.read_csv(args.items, dtype={"item": str}))
    run = pd.read_csv(args.run, dtype={"user": str, "item": str})  # each user's lines by score, descending
    lists = [ItemList(group["item"].to_numpy(), ordered=True) for _, group in run.groupby("user", sort=False)]
    for name in METRICS if args.metric == "all" else (args.metric,):
        metric = METRICS[name](args.k, items=n_items)
        print(name, repr(float(metric.global_aggregate([metric.compute_list_data(items, None) for items in lists]))))


if __name__ == "__main__":
    main()
