"""pytrec_eval on CSV tables read with the csv module: the script a recommender user writes first."""

import csv
import statistics
import sys

import pytrec_eval

MEASURES = {"ndcg_cut.10", "map", "recip_rank", "P.10", "recall.100", "ndcg"}
KEYS = ["ndcg_cut_10", "map", "recip_rank", "P_10", "recall_100", "ndcg"]

qrels: dict[str, dict[str, int]] = {}
run: dict[str, dict[str, float]] = {}
with open(sys.argv[1], newline="") as f:
    for row in csv.DictReader(f):
        qrels.setdefault(row["user"], {})[row["item"]] = int(row["rating"])
with open(sys.argv[2], newline="") as f:
    for row in csv.DictReader(f):
        run.setdefault(row["user"], {})[row["item"]] = float(row["score"])
results = pytrec_eval.RelevanceEvaluator(qrels, MEASURES).evaluate(run)
for key in KEYS:
    print(key, statistics.mean(r[key] for r in results.values()))
