"""Deterministic benchmark data: TREC qrels and runs at MS MARCO and recommender scale.

python benchmarks/generate.py --scenario msmarco      # 7,000 queries x 1,000 documents
python benchmarks/generate.py --scenario recsys       # 200,000 users x 100 items
python benchmarks/generate.py --scenario tiny         # seconds; used by the smoke test
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

SCENARIOS = {
    # name: (queries, documents per query, document pool, judged per query)
    "msmarco": (7_000, 1_000, 8_800_000, 40),
    "recsys": (200_000, 100, 50_000, 20),
    "ml100k": (943, 100, 1_682, 20),  # MovieLens-100k's users and items, top-100 lists
    "tiny": (300, 50, 20_000, 10),
}


def _write(path: Path, columns: dict[str, pa.Array]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    pacsv.write_csv(
        pa.table(columns),
        tmp,
        write_options=pacsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none"),
    )
    tmp.replace(path)


def generate(scenario: str, out: Path, seed: int = 20261121, rank_ordered: bool = False) -> tuple[Path, Path]:
    """Write ``<out>/<scenario>[-ranked]/{qrels,run}.trec``; ``rank_ordered`` writes each query's
    lines best first with distinct scores (as most systems write runs), else in shuffled order."""
    n_q, depth, pool, judged = SCENARIOS[scenario]
    folder = f"{scenario}-ranked" if rank_ordered else scenario
    rng = np.random.default_rng(seed)
    qids = np.char.add("q", np.arange(n_q).astype(str))
    # run: each query ranks `depth` distinct documents; scores with 3 decimals leave some ties
    docs = rng.integers(0, pool, size=(n_q, depth))
    docs = np.sort(docs, axis=1)
    docs[:, 1:] += np.cumsum(docs[:, 1:] == docs[:, :-1], axis=1)  # make ids distinct within a query
    scores = np.round(np.sort(rng.gamma(2.0, 2.0, size=(n_q, depth)), axis=1)[:, ::-1], 3)
    if rank_ordered:  # distinct scores, best first: the layout most systems write
        scores = np.round(scores - np.arange(depth) * 1e-6, 6)
        order = np.tile(np.arange(depth), (n_q, 1))
    else:
        order = rng.permuted(np.tile(np.arange(depth), (n_q, 1)), axis=1)  # file order is not rank order
    docs = np.take_along_axis(docs, order, axis=1)
    scores = np.take_along_axis(scores, order, axis=1)
    doc_ids = np.char.add("D", docs.reshape(-1).astype(str))
    q_col = np.repeat(qids, depth)
    _write(
        out / folder / "run.trec",
        {
            "qid": pa.array(q_col),
            "q0": pa.array(np.full(q_col.size, "Q0")),
            "doc": pa.array(doc_ids),
            "rank": pa.array(np.tile(np.arange(1, depth + 1), n_q)),
            "score": pa.array(scores.reshape(-1)),
            "tag": pa.array(np.full(q_col.size, "bench")),
        },
    )
    # qrels: half of the judged documents come from the run, half from elsewhere in the pool
    from_run = rng.integers(0, depth, size=(n_q, judged // 2))
    from_run = np.sort(from_run, axis=1)
    keep = np.ones_like(from_run, dtype=bool)
    keep[:, 1:] = from_run[:, 1:] != from_run[:, :-1]
    judged_run = np.take_along_axis(docs, from_run, axis=1)[keep]
    q_run = np.repeat(np.arange(n_q), judged // 2)[keep.reshape(-1)]
    elsewhere = pool + rng.integers(0, pool, size=(n_q, judged - judged // 2))
    elsewhere = np.sort(elsewhere, axis=1)
    keep2 = np.ones_like(elsewhere, dtype=bool)
    keep2[:, 1:] = elsewhere[:, 1:] != elsewhere[:, :-1]
    judged_docs = np.concatenate([judged_run, elsewhere[keep2]])
    judged_q = np.concatenate([q_run, np.repeat(np.arange(n_q), judged - judged // 2)[keep2.reshape(-1)]])
    labels = rng.choice([0, 0, 1, 1, 2, 3], size=judged_docs.size)
    _write(
        out / folder / "qrels.trec",
        {
            "qid": pa.array(qids[judged_q]),
            "iter": pa.array(np.zeros(judged_q.size, dtype=np.int64)),
            "doc": pa.array(np.char.add("D", judged_docs.astype(str))),
            "rel": pa.array(labels),
        },
    )
    return out / folder / "qrels.trec", out / folder / "run.trec"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenario", choices=sorted(SCENARIOS), default="msmarco")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "data")
    parser.add_argument("--rank-ordered", action="store_true", help="write each query's lines best first")
    args = parser.parse_args()
    qrels, run = generate(args.scenario, args.out, rank_ordered=args.rank_ordered)
    print(qrels, run)


if __name__ == "__main__":
    main()
