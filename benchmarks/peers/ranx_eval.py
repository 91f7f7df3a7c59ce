"""ranx on TREC files. ranx 0.3.21 rejects pandas 3's string dtype, so ids are read as object."""

import sys

import pandas as pd
from ranx import Qrels, Run, evaluate

qrels_df = pd.read_csv(sys.argv[1], sep=r"\s+", header=None, names=["q_id", "it", "doc_id", "score"], dtype=object)
qrels_df["score"] = qrels_df["score"].astype(int)
run_df = pd.read_csv(sys.argv[2], sep=r"\s+", header=None, names=["q_id", "q0", "doc_id", "rank", "score", "tag"], dtype=object)
run_df["score"] = run_df["score"].astype(float)
qrels = Qrels.from_df(qrels_df[["q_id", "doc_id", "score"]])
run = Run.from_df(run_df[["q_id", "doc_id", "score"]])
print(evaluate(qrels, run, ["ndcg@10", "map", "mrr", "precision@10", "recall@100"]))
