"""Elliot's own REO and RSP on a recommender run, as its evaluator calls them.

    python benchmarks/peers/fairness_elliot.py TRAIN TEST CLUSTERING RUN --metric REO --k 10

The metric modules are Elliot's, copied unchanged (benchmarks/peers/elliot, with its licence); the evaluation
objects are built as ``elliot/evaluation/evaluator.py`` builds them: ``cutoff`` = k, ``Relevance(test, 4)`` (a
rating of 4 or more is relevant), ``data.train_dict`` = {user: {item: 1}}, the recommendations {user: [(item,
score), ...]} in ranking order for the users with test rows, and the item clustering a TSV ``item<TAB>group``
(``clustering_file``), as the fairness golden case's values were computed (tests/fixtures/fairness/expected.json,
``peers.elliot``). Prints each value.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent / "elliot"))  # Elliot's metric modules, as a package

import pandas as pd
from elliot.evaluation.metrics.fairness.reo.reo import REO
from elliot.evaluation.metrics.fairness.rsp.rsp import RSP
from elliot.evaluation.relevance.relevance import Relevance

METRICS = {"REO": REO, "RSP": RSP}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name in ("train", "test", "clustering", "run"):
        parser.add_argument(name)
    parser.add_argument("--metric", choices=[*METRICS, "all"], required=True, help="all: each, in one process")
    parser.add_argument("--k", type=int, default=10)
    args = parser.parse_args()
    train = pd.read_csv(args.train, dtype=str)
    test = pd.read_csv(args.test, dtype={"user": str, "item": str})
    run = pd.read_csv(args.run, dtype={"user": str, "item": str})  # each user's lines by score, descending
    train_dict = {user: dict.fromkeys(items, 1) for user, items in train.groupby("user", sort=False)["item"]}
    test_dict = {user: dict(zip(g["item"], g["rating"], strict=True)) for user, g in test.groupby("user", sort=False)}
    tested = run[run["user"].isin(test_dict)]
    recommendations = {user: list(zip(g["item"], g["score"], strict=True)) for user, g in tested.groupby("user", sort=False)}
    objects = SimpleNamespace(cutoff=args.k, relevance=Relevance(test_dict, 4), data=SimpleNamespace(train_dict=train_dict))
    additional = {"clustering_file": args.clustering, "clustering_name": "groups"}
    for name in METRICS if args.metric == "all" else (args.metric,):
        values = {m.name(): m.eval() for m in METRICS[name](recommendations, None, None, objects, additional).get()}
        print(name, repr(float(values[f"{name}_items:groups"])))


if __name__ == "__main__":
    main()
