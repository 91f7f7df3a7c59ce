"""pytrec_eval on TREC files: parse, evaluate, average (what a user's script does)."""

import statistics
import sys

import pytrec_eval

MEASURES = {"ndcg_cut.10", "map", "recip_rank", "P.10", "recall.100"}
KEYS = ["ndcg_cut_10", "map", "recip_rank", "P_10", "recall_100"]

with open(sys.argv[1]) as f:
    qrels = pytrec_eval.parse_qrel(f)
with open(sys.argv[2]) as f:
    run = pytrec_eval.parse_run(f)
results = pytrec_eval.RelevanceEvaluator(qrels, MEASURES).evaluate(run)
for key in KEYS:
    print(key, statistics.mean(r[key] for r in results.values()))
