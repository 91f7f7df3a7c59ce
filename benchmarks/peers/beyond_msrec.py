"""Microsoft Recommenders' own beyond-accuracy functions on a recommender run, as its users call them.

    python benchmarks/peers/beyond_msrec.py TRAIN RUN --measure diversity --k 10

``recommenders.evaluation.python_evaluation`` (installed by ``make bench`` with ``pip install --no-deps
recommenders==1.2.0``: its functions need only pandas, numpy and scikit-learn, which are here) is called with
``train_df`` = the training interactions and ``reco_df`` = each user's first k recommendations, as the golden
case's values were computed (tests/fixtures/beyond_accuracy/expected.json, ``peers.msrec.how_run``). Prints each
value; ``benchmarks/beyond_peers.py`` times this process against ``harness eval`` and compares the values.
"""

from __future__ import annotations

import argparse

import pandas as pd
from recommenders.evaluation import python_evaluation as msrec

FUNCTIONS = {
    "catalog_coverage": msrec.catalog_coverage,
    "distributional_coverage": msrec.distributional_coverage,
    "novelty": msrec.novelty,
    "diversity": msrec.diversity,
    "serendipity": msrec.serendipity,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("train")
    parser.add_argument("run")
    parser.add_argument("--measure", choices=[*FUNCTIONS, "all"], required=True, help="all: each, in one process")
    parser.add_argument("--k", type=int, default=10)
    args = parser.parse_args()
    train = pd.read_csv(args.train, dtype={"user": str, "item": str})[["user", "item"]]
    run = pd.read_csv(args.run, dtype={"user": str, "item": str})  # each user's lines by score, descending
    top = run.groupby("user", sort=False).head(args.k)[["user", "item"]]
    for name in FUNCTIONS if args.measure == "all" else (args.measure,):
        print(name, repr(float(FUNCTIONS[name](train, top, col_user="user", col_item="item"))))


if __name__ == "__main__":
    main()
