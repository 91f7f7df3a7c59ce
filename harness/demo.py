"""``make demo``: generate the bundled data deterministically, then run configs/demo.yaml.

The recommender scenario: a few thousand users with held-out ratings 1-5 (the
judgments), their earlier interactions (train.csv) and the item catalogue with item
features (items.csv), a production model and two candidate versions (their top-100 items
per user; candidate-v2 more accurate but pushing popular items), and a segment file marking
new and returning users. The IR scenario: graded
TREC judgments and three run files (bm25, dense, hybrid) for configs/trec.yaml, and a model judge's labels of the
same documents with people's labels of a random sample of the queries (``harness agree``).
Each system is also trained with three seeds (``seeds/<name>-seed<k>``, the first the run
above): configs/demo.yaml compares the versions over them.
Both are drawn from a latent-factor model with a fixed seed: same bytes every time.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from harness._atomic import atomic_write
from harness.cli import main as cli_main

ROOT = Path(__file__).resolve().parents[1]
SEED = 20261121
SEEDS = 3  # each system's training runs in runs/*/seeds/


def _write_csv(path: Path, header: str, rows: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, header + "\n" + "\n".join(rows) + "\n")


def _top(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k best per row, best first."""
    part = np.argpartition(-scores, k, axis=1)[:, :k]
    order = np.argsort(-np.take_along_axis(scores, part, axis=1), axis=1, kind="stable")
    return np.take_along_axis(part, order, axis=1)


def recsys(out: Path, n_users: int = 3000, n_items: int = 1500, dim: int = 8) -> None:
    rng = np.random.default_rng(SEED)
    users = rng.normal(size=(n_users, dim))
    items = rng.normal(size=(n_items, dim))
    popularity = rng.normal(scale=0.7, size=n_items)
    affinity = users @ items.T / np.sqrt(dim) + popularity
    new_user = rng.random(n_users) < 0.3
    # held-out feedback: ~20 items per user, preferring what the user likes
    held = _top(affinity + rng.gumbel(size=affinity.shape) * 0.6, 20)
    held_aff = np.take_along_axis(affinity, held, axis=1)
    z = (held_aff - held_aff.mean()) / held_aff.std()
    ratings = np.clip(np.round(3.2 + 1.3 * z + rng.normal(scale=0.6, size=z.shape)), 1, 5).astype(int)
    rows = [f"u{u:05d},i{held[u, j]:05d},{ratings[u, j]}" for u in range(n_users) for j in range(held.shape[1])]
    _write_csv(out / "ratings.csv", "user,item,rating", rows)
    _write_csv(
        out / "segments.csv", "user,segment", [f"u{u:05d},{'new' if new_user[u] else 'returning'}" for u in range(n_users)]
    )
    # training interactions: ~10-40 earlier items per user (outside the held-out ones), popular items more often
    train_rng = np.random.default_rng([SEED, 3])
    seen = affinity + popularity + train_rng.gumbel(size=affinity.shape) * 1.2
    seen[np.arange(n_users)[:, None], held] = -np.inf
    history = _top(seen, 40)
    lengths = np.where(new_user, train_rng.integers(2, 8, n_users), train_rng.integers(10, 41, n_users))
    rows = [f"u{u:05d},i{history[u, j]:05d}" for u in range(n_users) for j in range(lengths[u])]
    _write_csv(out / "train.csv", "user,item", rows)
    # the catalogue: every item with 8 numeric features (its latent factors, as a content model would give them)
    feature_names = ",".join(f"f{d}" for d in range(dim))
    rows = [f"i{i:05d}," + ",".join(f"{v:.3f}" for v in items[i]) for i in range(n_items)]
    _write_csv(out / "items.csv", f"item,{feature_names}", rows)
    systems = {
        # name: (noise for returning users, noise for new users, popularity boost)
        "production": (0.60, 0.80, 0.0),
        "candidate-v2": (0.50, 0.70, 0.3),  # more accurate, but pushes popular items: less diverse, less novel
        "candidate-v3": (0.45, 0.95, 0.0),  # better for returning users, worse for new ones
    }
    for name, (noise_old, noise_new, boost) in systems.items():
        for seed in range(1, SEEDS + 1):  # a training seed: its own noise, and its own small taste for some items
            sys_rng = np.random.default_rng([SEED, len(name)] if seed == 1 else [SEED, len(name), seed])
            noise = np.where(new_user[:, None], noise_new, noise_old) * sys_rng.normal(size=affinity.shape)
            taste = 0.0 if seed == 1 else sys_rng.normal(scale=0.1, size=n_items)
            scores = affinity + noise + boost * popularity + taste
            top = _top(scores, 100)
            top_scores = np.round(np.take_along_axis(scores, top, axis=1), 4)
            lines = [f"u{u:05d},i{top[u, j]:05d},{top_scores[u, j]}" for u in range(n_users) for j in range(top.shape[1])]
            for path in [out / "seeds" / f"{name}-seed{seed}.csv", *([out / f"{name}.csv"] if seed == 1 else [])]:
                _write_csv(path, "user,item,score", lines)


def trec(out: Path, n_queries: int = 150, pool: int = 400, sample: int = 40) -> None:
    rng = np.random.default_rng(SEED + 1)
    relevance = rng.normal(size=(n_queries, pool)) + rng.normal(size=(n_queries, 1)) * 0.5
    grades = np.digitize(relevance, [0.9, 1.6, 2.2])  # 0..3, few highly relevant
    judged = _top(relevance + rng.normal(scale=1.0, size=relevance.shape), 80)  # a pooled, partial judgment set
    qrels = [f"{100 + q} 0 doc{q:03d}-{d:04d} {grades[q, d]}" for q in range(n_queries) for d in sorted(judged[q])]

    atomic_write(out / "qrels.txt", "\n".join(qrels) + "\n")
    dense_scores = None
    for name, noise in (("bm25", 1.1), ("dense", 0.9), ("hybrid", 0.75)):
        for seed in range(1, SEEDS + 1):  # bm25's "seeds": its parameters tuned on three random splits
            sys_rng = np.random.default_rng([SEED, len(name), 7] if seed == 1 else [SEED, len(name), 7, seed])
            scores = relevance + sys_rng.normal(scale=noise, size=relevance.shape)
            if name == "dense" and seed == 1:
                dense_scores = scores
            top = _top(scores, 100)
            lines = []
            for q in range(n_queries):
                if name == "dense" and q % 50 == 49:
                    continue  # dense failed on a few queries: judged queries missing from its run
                for rank, d in enumerate(top[q]):
                    lines.append(f"{100 + q} Q0 doc{q:03d}-{d:04d} {rank + 1} {scores[q, d]:.4f} {name}")
            for path in [out / "seeds" / f"{name}-seed{seed}.run", *([out / f"{name}.run"] if seed == 1 else [])]:
                path.parent.mkdir(parents=True, exist_ok=True)
                atomic_write(path, "\n".join(lines) + "\n")

    assert dense_scores is not None
    judge(out, relevance, judged, dense_scores, sample)


def judge(out: Path, relevance: np.ndarray, judged: np.ndarray, favoured: np.ndarray, sample: int = 40) -> None:
    """A model judge's labels of every pooled document (``judge.txt``) and people's labels of a random ``sample`` of
    the queries (``people-sample.txt``, the same grades as qrels.txt): what ``harness agree`` audits. The judge is noisy,
    labels more documents relevant than people do, and favours what one system (``favoured``'s scores: dense) ranks in
    its top 10, as a judge gamed by a system built to please it does: a known bias for the audit to find."""
    rng = np.random.default_rng([SEED, 11])  # its own stream: the other files' bytes do not move
    n_queries = relevance.shape[0]
    promoted = np.zeros(relevance.shape, dtype=bool)
    np.put_along_axis(promoted, _top(favoured, 10), True, axis=1)
    seen = relevance + 0.3 + np.where(promoted, 0.8, 0.0) + rng.normal(scale=0.5, size=relevance.shape)
    grades = np.digitize(seen, [0.9, 1.6, 2.2])
    labels = [f"{100 + q} 0 doc{q:03d}-{d:04d} {grades[q, d]}" for q in range(n_queries) for d in sorted(judged[q])]
    atomic_write(out / "judge.txt", "\n".join(labels) + "\n")
    people = np.digitize(relevance, [0.9, 1.6, 2.2])
    chosen = sorted(rng.choice(n_queries, size=sample, replace=False))  # a simple random sample of the queries
    rows = [f"{100 + q} 0 doc{q:03d}-{d:04d} {people[q, d]}" for q in chosen for d in sorted(judged[q])]
    atomic_write(out / "people-sample.txt", "\n".join(rows) + "\n")


def generate(root: Path = ROOT) -> None:
    recsys(root / "runs" / "demo")
    trec(root / "runs" / "trec-demo")


def main() -> int:
    generate()
    print(f"demo data written to {ROOT / 'runs'}", file=sys.stderr)
    # a process of its own, as `harness run` is: MLflow's client imported in a child beside the work
    code = cli_main(["run", str(ROOT / "configs" / "demo.yaml")], tracking_process="child")  # it says how to open the UI
    return 0 if code in (0, 3, 6) else code  # PASS, FAIL, INCONCLUSIVE: the gate decided; the demo showed what it is for


if __name__ == "__main__":
    raise SystemExit(main())
