"""pyxclib's own psprecision and psndcg on a recommender run, as the fairness golden case's values were computed.

    .venv/peers-pyxclib/bin/python benchmarks/peers/propensity_pyxclib.py ITEMS TRAIN TEST RUN --metric psprecision

pyxclib's evaluation code is its own, built from a checkout (``make bench PYXCLIB_SRC=DIR``). As the
golden case's runner called it (tests/fixtures/fairness/expected.json, ``peers.pyxclib``): the labels are the
catalogue's items and the instances the users with test rows; ``Y[u, i] = 1`` for a rating of ``--level`` or more;
``inv_psp = compute_inv_propesity(the training matrix of every training user, A, B)``; the predictions a dict of
``indices`` and ``scores`` with ``sorted=True``, each user's items by score, descending, ties in file order, a short
list padded with pyxclib's pad index (the number of labels). Prints each metric's value at k.
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
import scipy.sparse as sp
from xclib.evaluation import xc_metrics

METRICS = {"psprecision": xc_metrics.psprecision, "psndcg": xc_metrics.psndcg}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name in ("items", "train", "test", "run"):
        parser.add_argument(name)
    parser.add_argument("--metric", choices=[*METRICS, "all"], required=True, help="all: each, in one process")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--level", type=float, default=4, help="the rating a relevant item has at least")
    parser.add_argument("--A", type=float, default=0.55)
    parser.add_argument("--B", type=float, default=1.5)
    args = parser.parse_args()
    items = pd.read_csv(args.items, dtype={"item": str})["item"]
    label = pd.Series(np.arange(len(items)), index=items)
    train = pd.read_csv(args.train, dtype=str)
    train = train[train["item"].isin(label.index)]
    users_trained = pd.Index(pd.unique(train["user"]))
    trained = sp.csr_matrix(
        (np.ones(len(train)), (users_trained.get_indexer(train["user"]), label[train["item"]].to_numpy())),
        shape=(len(users_trained), len(items)),
    )
    trained.data[:] = 1.0  # an item trained twice by a user counts once
    inv_psp = xc_metrics.compute_inv_propesity(trained, args.A, args.B)

    test = pd.read_csv(args.test, dtype={"user": str, "item": str})
    users = pd.Index(pd.unique(test["user"]))
    relevant = test[(test["rating"] >= args.level) & test["item"].isin(label.index)]
    truth = sp.csr_matrix(
        (np.ones(len(relevant)), (users.get_indexer(relevant["user"]), label[relevant["item"]].to_numpy())),
        shape=(len(users), len(items)),
    )
    run = pd.read_csv(args.run, dtype={"user": str, "item": str})
    run = run[run["user"].isin(users) & run["item"].isin(label.index)]
    run = run.assign(row=users.get_indexer(run["user"])).sort_values(["row", "score"], ascending=[True, False], kind="stable")
    rank = run.groupby("row", sort=False).cumcount().to_numpy()
    top = rank < args.k
    indices = np.full((len(users), args.k), len(items), dtype=np.int64)  # pyxclib's pad index: no label
    scores = np.full((len(users), args.k), -np.inf)
    indices[run["row"].to_numpy()[top], rank[top]] = label[run["item"]].to_numpy()[top]
    scores[run["row"].to_numpy()[top], rank[top]] = run["score"].to_numpy()[top]
    predictions = {"indices": indices, "scores": scores}
    for name in METRICS if args.metric == "all" else (args.metric,):
        print(name, repr(float(METRICS[name](predictions, truth, inv_psp, k=args.k, sorted=True)[args.k - 1])))


if __name__ == "__main__":
    main()
