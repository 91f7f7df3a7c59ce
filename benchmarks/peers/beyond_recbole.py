"""RecBole's own beyond-accuracy metric classes (benchmarks/peers/recbole_metrics.py) on a recommender run, as
RecBole's evaluator calls them.

    python benchmarks/peers/beyond_recbole.py TRAIN TEST ITEMS RUN --metric GiniIndex --k 10

RecBole numbers the items 1.. by first appearance in the training, test and catalogue files (0 is its ``[PAD]``;
``num_items`` counts it), ranks each user's items into a users x k matrix of those ids, and counts the training
interactions per item (``data.count_items``); the metric object is built with ``{topk: [k], metric_decimal_place:
17, tail_ratio: 0.1}`` and its ``calculate_metric`` called, as for the golden case
(tests/fixtures/beyond_accuracy/expected.json, ``peers.recbole``). Prints each value.
"""

from __future__ import annotations

import argparse
from collections import Counter

import numpy as np
import pandas as pd
import recbole_metrics  # benchmarks/peers/, this script's folder

METRICS = ("ItemCoverage", "AveragePopularity", "ShannonEntropy", "GiniIndex", "TailPercentage")


class _Matrix:
    """What RecBole's metrics read of a tensor: ``.numpy()``."""

    def __init__(self, array: np.ndarray) -> None:
        self.array = array

    def numpy(self) -> np.ndarray:
        return self.array


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name in ("train", "test", "items", "run"):
        parser.add_argument(name)
    parser.add_argument("--metric", choices=[*METRICS, "all"], required=True, help="all: each, in one process")
    parser.add_argument("--k", type=int, default=10)
    args = parser.parse_args()
    train = pd.read_csv(args.train, dtype=str)
    test = pd.read_csv(args.test, dtype={"user": str, "item": str})
    items = pd.read_csv(args.items, dtype={"item": str})
    run = pd.read_csv(args.run, dtype={"user": str, "item": str})  # each user's lines by score, descending
    order = pd.unique(pd.concat([train["item"], test["item"], items["item"]], ignore_index=True))
    ids = {item: number for number, item in enumerate(order, start=1)}
    top = run.groupby("user", sort=False).head(args.k)
    matrix = top["item"].map(ids).to_numpy(dtype=np.int64).reshape(-1, args.k)  # k recommendations a user
    data = {
        "rec.items": _Matrix(matrix),
        "data.num_items": len(ids) + 1,
        "data.count_items": Counter(train["item"].map(ids).tolist()),
    }
    config = {"topk": [args.k], "metric_decimal_place": 17, "tail_ratio": 0.1}
    dataobject = type("DataStruct", (), {"get": staticmethod(data.__getitem__)})()
    for name in METRICS if args.metric == "all" else (args.metric,):
        values = getattr(recbole_metrics, name)(config).calculate_metric(dataobject)
        print(name, repr(float(next(iter(values.values())))))


if __name__ == "__main__":
    main()
