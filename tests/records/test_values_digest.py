"""A system's values digest (``harness.per_query_sha256``'s companion, :meth:`SavedResults.values_digest`): the sha256
of its rows' keys in sorted order and of their values, written out here with hashlib, whatever the rows' order."""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from harness.cli import main
from harness.records.store import read_results


def _folder(tmp_path: Path) -> Path:
    ids = ["q10", "q2", "é1", "Z", "q1"]
    (tmp_path / "qrels").write_text("".join(f"{q} 0 d{k} {k % 2}\n" for q in ids for k in range(4)))
    for name, shift in (("a", 0), ("b", 1)):
        lines = [f"{q} Q0 d{(k + shift + i) % 4} {k + 1} {9 - k} {name}\n" for i, q in enumerate(ids) for k in range(4)]
        (tmp_path / f"{name}.run").write_text("".join(lines))
    (tmp_path / "segments.csv").write_text(
        "query,segment\n" + "".join(f"{q},{'new' if i % 2 else 'old'}\n" for i, q in enumerate(ids))
    )
    config = {
        "experiment": "digest",
        "datasets": [{"name": "d", "qrels": "qrels", "segments": "segments.csv"}],
        "systems": [{"name": "a", "runs": "a.run"}, {"name": "b", "runs": "b.run"}],
        "measures": ["AP", "P@2", "RR"],
        "stats": {"enabled": False},
        "tracking": {"enabled": False},
        "report": {"enabled": False},
    }
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    out, err = io.StringIO(), io.StringIO()
    assert main(["run", str(tmp_path / "config.yaml"), "--quiet", "--output", str(tmp_path / "out")], out, err) == 0, (
        err.getvalue()
    )
    return next(p for p in (tmp_path / "out").rglob("per_query.parquet")).parent


def _by_hand(rows: pd.DataFrame) -> str:
    keys = [c for c in ("dataset", "seed", "query_id", "segment", "measure") if c in rows.columns]
    records = sorted(
        zip(*(rows[k].astype(str).tolist() for k in keys), rows["value"].tolist(), strict=True), key=lambda r: r[:-1]
    )
    digest = hashlib.sha256()
    for i in range(len(keys)):
        digest.update("\0".join(r[i] for r in records).encode() + b"\1")
    digest.update(np.array([r[-1] for r in records], dtype=np.float64).tobytes())
    return digest.hexdigest()


def test_the_digest_is_its_definition_whatever_the_rows_order(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    table = pd.read_parquet(folder / "per_query.parquet")
    for system in ("a", "b"):
        assert read_results(folder).values_digest(system) == _by_hand(table[table["system"] == system])
    shuffled = table.sample(frac=1.0, random_state=3).reset_index(drop=True)
    shuffled.to_parquet(folder / "per_query.parquet", index=False)
    assert read_results(folder).values_digest("a") == _by_hand(table[table["system"] == "a"])
    changed = table.copy()
    changed.loc[(changed["system"] == "a") & (changed["query_id"] == "é1") & (changed["measure"] == "AP"), "value"] += 1e-12
    changed.to_parquet(folder / "per_query.parquet", index=False)
    assert read_results(folder).values_digest("a") != _by_hand(table[table["system"] == "a"])
