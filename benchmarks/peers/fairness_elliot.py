"""Elliot's own fairness and popularity-bias metrics on a recommender run, as its evaluator calls them.

    ELLIOT_SRC=~/src/elliot python benchmarks/peers/fairness_elliot.py TRAIN TEST CLUSTERING RUN --users USERS --metric REO

The metric modules are Elliot's, from a checkout of sisinflab/elliot (``ELLIOT_SRC``; Elliot is not on PyPI, and the
golden case's values were computed at its commit fc27efedaddf4a57294db14b4bcaa5553a0015d2). Its packages'
``__init__`` modules above the metrics import TensorFlow and every model; they are not run (the metrics need only
numpy, pandas and scipy): those packages are stood in for by empty ones over the checkout's folders. The evaluation
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
import os
import sys
import types
from pathlib import Path
from types import SimpleNamespace
from typing import Any


def _elliot_packages() -> None:
    """Elliot's packages above its metric modules as empty ones over ELLIOT_SRC's folders, so that importing a
    metric does not run the ``__init__`` modules that import the rest of Elliot."""
    source = Path(os.environ.get("ELLIOT_SRC", "")).expanduser()
    if not (source / "elliot" / "evaluation" / "metrics" / "fairness").is_dir():
        raise SystemExit(f"ELLIOT_SRC={source} is not a checkout of sisinflab/elliot: git clone it and set ELLIOT_SRC")
    for package in (
        "elliot",
        "elliot/evaluation",
        "elliot/evaluation/metrics",
        "elliot/evaluation/metrics/bias",
        "elliot/evaluation/metrics/bias/pop_reo",
        "elliot/evaluation/metrics/bias/pop_rsp",
        "elliot/evaluation/metrics/fairness/reo",
        "elliot/evaluation/metrics/fairness/rsp",
        "elliot/evaluation/relevance",
    ):
        module = types.ModuleType(package.replace("/", "."))
        module.__path__ = [str(source / package)]
        sys.modules[module.__name__] = module


_elliot_packages()

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import scipy.sparse as sp  # noqa: E402
from elliot.evaluation.metrics.bias.pop_reo.pop_reo import PopREO  # noqa: E402
from elliot.evaluation.metrics.bias.pop_rsp.pop_rsp import PopRSP  # noqa: E402
from elliot.evaluation.metrics.fairness.BiasDisparity import BiasDisparityBD, BiasDisparityBR  # noqa: E402
from elliot.evaluation.metrics.fairness.MAD import ItemMADranking, ItemMADrating, UserMADranking, UserMADrating  # noqa: E402
from elliot.evaluation.metrics.fairness.reo.reo import REO  # noqa: E402
from elliot.evaluation.metrics.fairness.rsp.rsp import RSP  # noqa: E402
from elliot.evaluation.popularity_utils import Popularity  # noqa: E402
from elliot.evaluation.relevance.relevance import Relevance  # noqa: E402

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
