"""Adversarial generated judgments and runs for cross-checks (deterministic by seed)."""

from __future__ import annotations

import numpy as np

from harness import Qrels, Run


def adversarial(seed: int, n_queries: int = 40) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """Qrels and run dicts with score ties (also at cutoffs), graded labels 0-4, negative labels,
    unjudged retrieved documents, judged queries missing from the run and run queries absent
    from the qrels."""
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(n_queries):
        qid = f"q{q:03d}"
        n_docs = int(rng.integers(1, 60))
        docs = [f"doc{int(d)}" for d in rng.choice(200, size=n_docs, replace=False)]
        labels = rng.choice([-2, -1, 0, 0, 0, 1, 1, 2, 3, 4], size=n_docs)
        if q % 9 != 8:  # some run queries have no judgments
            judged = rng.random(n_docs) < 0.7
            qrels[qid] = {d: int(r) for d, r, j in zip(docs, labels, judged, strict=True) if j}
            if q % 5 == 0:
                qrels[qid] = {d: 0 for d in qrels[qid]}  # only non-relevant judgments
            if not qrels[qid]:
                qrels[qid] = {"lonely": 1}
        if q % 7 != 3:  # some judged queries are missing from the run
            n_ret = int(rng.integers(1, n_docs + 1))
            retrieved = list(rng.choice(docs, size=n_ret, replace=False)) + [f"unj{i}" for i in range(int(rng.integers(0, 5)))]
            # coarse scores make many ties, including across cutoffs
            scores = np.round(rng.random(len(retrieved)) * 4) / 2
            run[qid] = {str(d): float(s) for d, s in zip(retrieved, scores, strict=True)}
    return qrels, run


def to_harness(qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]]) -> tuple[Qrels, Run]:
    return (
        Qrels.from_records([(q, d, r) for q, docs in qrels.items() for d, r in docs.items()]),
        Run.from_records([(q, d, s) for q, docs in run.items() for d, s in docs.items()]),
    )
