"""RecBole's own beyond-accuracy metric classes on a recommender run, as RecBole's evaluator calls them.

    .venv/peers-recbole/bin/python benchmarks/peers/beyond_recbole.py TRAIN TEST ITEMS RUN --metric GiniIndex --k 10

The classes are RecBole 1.2.1's, from its package on PyPI (``make bench`` installs it with ``--no-deps`` into
.venv/peers-recbole): ``recbole/evaluator/metrics.py`` with its base classes. Its package's ``__init__`` modules
import torch and all of RecBole's models, which these metrics never call; they are not run: ``recbole.utils`` is
stood in for by its ``enum_type`` module (the one name the metrics take from it), and benchmarks/peers/torch_stub
by torch, which ``base_metric`` imports.

RecBole numbers the items 1.. by first appearance in the training, test and catalogue files (0 is its ``[PAD]``;
``num_items`` counts it), ranks each user's items into a users x k matrix of those ids, and counts the training
interactions per item (``data.count_items``); the metric object is built with ``{topk: [k], metric_decimal_place:
17, tail_ratio: 0.1}`` and its ``calculate_metric`` called, as for the golden case
(tests/fixtures/beyond_accuracy/expected.json, ``peers.recbole``). Prints each value.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys
import types
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd

METRICS = ("ItemCoverage", "AveragePopularity", "ShannonEntropy", "GiniIndex", "TailPercentage")


class _Matrix:
    """What RecBole's metrics read of a tensor: ``.numpy()``."""

    def __init__(self, array: np.ndarray) -> None:
        self.array = array

    def numpy(self) -> np.ndarray:
        return self.array


def recbole_metrics() -> types.ModuleType:
    """``recbole.evaluator.metrics`` from RecBole's installed package, without its packages' ``__init__`` modules."""
    sys.path.insert(0, str(Path(__file__).resolve().parent / "torch_stub"))
    spec = importlib.util.find_spec("recbole")
    if spec is None or spec.origin is None:
        raise SystemExit("RecBole is not installed here: make bench installs it into .venv/peers-recbole")
    root = Path(spec.origin).parent
    for name, folder in (("recbole", root), ("recbole.evaluator", root / "evaluator")):
        package = types.ModuleType(name)
        package.__path__ = [str(folder)]
        sys.modules[name] = package
    enum_type = importlib.util.spec_from_file_location("recbole.utils.enum_type", root / "utils" / "enum_type.py")
    assert enum_type is not None and enum_type.loader is not None
    utils = importlib.util.module_from_spec(enum_type)
    enum_type.loader.exec_module(utils)
    sys.modules["recbole.utils"] = utils  # the metrics import EvaluatorType from it
    return importlib.import_module("recbole.evaluator.metrics")


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
    metrics = recbole_metrics()
    for name in METRICS if args.metric == "all" else (args.metric,):
        values = getattr(metrics, name)(config).calculate_metric(dataobject)
        print(name, repr(float(next(iter(values.values())))))


if __name__ == "__main__":
    main()
