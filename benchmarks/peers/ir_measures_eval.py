"""ir_measures on TREC files (its default provider chain)."""

import sys

import ir_measures
from ir_measures import AP, RR, P, R, nDCG

qrels = ir_measures.read_trec_qrels(sys.argv[1])
run = ir_measures.read_trec_run(sys.argv[2])
print(ir_measures.calc_aggregate([nDCG @ 10, AP, RR, P @ 10, R @ 100], qrels, run))
