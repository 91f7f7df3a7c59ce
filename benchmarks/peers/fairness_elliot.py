"""Elliot's own fairness and popularity-bias metrics on a recommender run, as its evaluator calls them.

    python benchmarks/peers/fairness_elliot.py TRAIN TEST CLUSTERING RUN --users USERS --metric REO --k 10

The metric modules are Elliot's, copied unchanged (benchmarks/peers/elliot, with its licence); the evaluation
objects are built as ``elliot/evaluation/evaluator.py`` builds them: ``cutoff`` = k, ``Relevance(test, 4)`` (a
rating of 4 or more is relevant), ``data`` with the training dictionary, matrix, item ids (in id order) and
transactions, ``Popularity(data)`` (its short head: 80 % of the training rows), the recommendations {user: [(item,
score), ...]} in ranking order for the users with test rows, and the clusterings as TSV files ``id<TAB>group``: the
items' (CLUSTERING) and the users' (``--users``, groups numbered from 0), as the fairness golden case's values were
computed (tests/fixtures/fairness/expected.json, ``peers.elliot``). Prints each value; BiasDisparityBR and BD one
line per (user group, item category) cell, user groups first.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent / "elliot"))  # Elliot's metric modules, as a package

import numpy as np
import pandas as pd
import scipy.sparse as sp
from elliot.evaluation.metrics.bias.pop_reo.pop_reo import PopREO
from elliot.evaluation.metrics.bias.pop_rsp.pop_rsp import PopRSP
from elliot.evaluation.metrics.fairness.BiasDisparity import BiasDisparityBD, BiasDisparityBR
from elliot.evaluation.metrics.fairness.MAD import ItemMADranking, ItemMADrating, UserMADranking, UserMADrating
from elliot.evaluation.metrics.fairness.reo.reo import REO
from elliot.evaluation.metrics.fairness.rsp.rsp import RSP
from elliot.evaluation.popularity_utils import Popularity
from elliot.evaluation.relevance.relevance import Relevance

ITEM_GROUPS = {"REO": REO, "RSP": RSP, "ItemMADranking": ItemMADranking, "ItemMADrating": ItemMADrating}
USER_GROUPS = {"UserMADranking": UserMADranking, "UserMADrating": UserMADrating}
CELLS = {"BiasDisparityBR": BiasDisparityBR, "BiasDisparityBD": BiasDisparityBD}
POPULARITY = {"PopREO": PopREO, "PopRSP": PopRSP}
METRICS = [*ITEM_GROUPS, *POPULARITY, *USER_GROUPS, *CELLS]


def values(name: str, recommendations: dict[str, Any], objects: Any, items: str, users: str) -> list[float]:
    """The metric's value (each cell's, for bias disparity), as Elliot's evaluator reads it off the metric objects."""
    if name in POPULARITY:
        return [float(POPULARITY[name](recommendations, None, None, objects).eval())]
    if name in CELLS:
        both = {"item_clustering_file": items, "item_clustering_name": "g", "user_clustering_file": users}
        metric = CELLS[name](recommendations, None, None, objects, {**both, "user_clustering_name": "u"})
        return [float(m.eval()) for m in metric.get()]  # user group, then item category
    clustering = users if name in USER_GROUPS else items
    metric = {**ITEM_GROUPS, **USER_GROUPS}[name](
        recommendations, None, None, objects, {"clustering_file": clustering, "clustering_name": "g"}
    )
    # REO's and RSP's objects hold each group's probability too; the value is the one named for the clustering
    return [float(m.eval()) for m in metric.get() if m.name() in (f"{name}_items:g", metric.name())]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name in ("train", "test", "clustering", "run"):
        parser.add_argument(name)
    parser.add_argument("--users", help="the users' clustering (UserMAD, BiasDisparity): user<TAB>group from 0")
    parser.add_argument("--metric", choices=[*METRICS, "all"], required=True, help="all: each, in one process")
    parser.add_argument("--k", type=int, default=10)
    args = parser.parse_args()
    train = pd.read_csv(args.train, dtype=str).drop_duplicates()
    test = pd.read_csv(args.test, dtype={"user": str, "item": str})
    run = pd.read_csv(args.run, dtype={"user": str, "item": str})  # each user's lines by score, descending
    train_dict = {user: dict.fromkeys(items, 1) for user, items in train.groupby("user", sort=False)["item"]}
    test_dict = {user: dict(zip(g["item"], g["rating"], strict=True)) for user, g in test.groupby("user", sort=False)}
    tested = run[run["user"].isin(test_dict)]
    recommendations = {user: list(zip(g["item"], g["score"], strict=True)) for user, g in tested.groupby("user", sort=False)}
    # Elliot's dataset: users and items numbered (items in id order), the training matrix and its transactions
    users, items = pd.Index(pd.unique(train["user"])), pd.Index(sorted(pd.unique(train["item"])))
    matrix = sp.csr_matrix(
        (np.ones(len(train)), (users.get_indexer(train["user"]), items.get_indexer(train["item"]))),
        shape=(len(users), len(items)),
    )
    data = SimpleNamespace(
        train_dict=train_dict, sp_i_train=matrix, private_items=dict(enumerate(items)), transactions=len(train)
    )
    objects = SimpleNamespace(cutoff=args.k, relevance=Relevance(test_dict, 4), data=data, pop=Popularity(data))
    for name in METRICS if args.metric == "all" else (args.metric,):
        for value in values(name, recommendations, objects, args.clustering, args.users):
            print(name, repr(value))


if __name__ == "__main__":
    main()
