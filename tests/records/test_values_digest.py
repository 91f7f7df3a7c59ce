"""A system's values digest (``harness.per_query_sha256``'s companion, :meth:`SavedResults.values_digest`): the sha256
of its rows' keys in sorted order and of their values, written out here with hashlib, whatever the rows' order."""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
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
        zip(*(rows[k].astype(str).fillna("nan").tolist() for k in keys), rows["value"].tolist(), strict=True),
        key=lambda r: r[:-1],
    )
    digest = hashlib.sha256()
    for i in range(len(keys)):
        digest.update("\0".join(r[i] for r in records).encode() + b"\1")
    digest.update(np.array([r[-1] for r in records], dtype=np.float64).tobytes())
    return digest.hexdigest()


def test_the_digest_is_its_definition_whatever_the_rows_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _folder(tmp_path)
    table = pd.read_parquet(folder / "per_query.parquet")

    def refused(*args: object, **kwargs: object) -> None:
        raise AssertionError("sorted")

    saved = read_results(folder)
    with monkeypatch.context() as patched:  # as harness writes them, a system's rows line up: their order, not a sort
        patched.setattr(np, "lexsort", refused)
        for system in ("a", "b"):
            assert saved.values_digest(system) == _by_hand(table[table["system"] == system])
    shuffled = table.sample(frac=1.0, random_state=3).reset_index(drop=True)
    shuffled.to_parquet(folder / "per_query.parquet", index=False)
    assert read_results(folder).values_digest("a") == _by_hand(table[table["system"] == "a"])
    changed = table.copy()
    changed.loc[(changed["system"] == "a") & (changed["query_id"] == "é1") & (changed["measure"] == "AP"), "value"] += 1e-12
    changed.to_parquet(folder / "per_query.parquet", index=False)
    assert read_results(folder).values_digest("a") != _by_hand(table[table["system"] == "a"])


@pytest.mark.parametrize(
    "shape", ["two datasets", "a measure on one dataset only", "seeds", "unsorted ids", "-0.0 and NaN", "odd keys"]
)
def test_the_digest_of_hand_made_tables_is_its_definition(shape: str) -> None:
    """Several datasets (each with its own measures), seeds, ids out of order, values whose bits differ, and keys whose
    order by rank must be their texts' (an empty id, ids that are prefixes of others, letters beyond ASCII, a missing
    segment): the order found from the table's groups, or by the sort, is the definition's."""
    from harness.records.store import SavedResults

    ids = ["Z", "q1", "q10", "q2", "é1"]
    rows = [
        (d, s, q, "new" if i % 2 else "old", m, float(i + 2 * j) / 7)
        for d in ("web", "news")
        for s in ("a", "b")
        for j, m in enumerate(("nDCG@10", "AP", "RR"))
        for i, q in enumerate(ids)
    ]
    frame = pd.DataFrame(rows, columns=["dataset", "system", "query_id", "segment", "measure", "value"])
    if shape == "a measure on one dataset only":
        frame = frame[(frame["dataset"] == "web") | (frame["measure"] != "AP")]
    elif shape == "seeds":
        frame = pd.concat([frame.assign(seed="1"), frame.assign(seed="2", value=frame["value"] / 3)], ignore_index=True)
    elif shape == "unsorted ids":
        frame = frame.iloc[np.random.default_rng(5).permutation(len(frame))]
    elif shape == "-0.0 and NaN":
        frame.loc[frame.index[3], "value"], frame.loc[frame.index[4], "value"] = -0.0, np.nan
    elif shape == "odd keys":
        odd = {"Z": "", "q1": "q", "q2": "ﬁ", "é1": "éé"}
        frame = frame.assign(query_id=frame["query_id"].map(lambda q: odd.get(q, q)), segment=frame["segment"].astype(object))
        frame.loc[frame["query_id"] == "q", "segment"] = None
        frame = frame.iloc[np.random.default_rng(7).permutation(len(frame))]
    frame = frame.reset_index(drop=True)
    results = SavedResults(Path("."), {}, {}, frame, pd.DataFrame(), pd.DataFrame())
    for system in ("a", "b"):
        assert results.values_digest(system) == _by_hand(frame[frame["system"] == system])


def test_results_sent_to_the_logging_process_keep_their_digests_and_leave_the_key_texts(tmp_path: Path) -> None:
    """What pickling sends to the child that logs: the digests found, the key codes the wide tables read, and not the
    key columns' texts and ranks (found again where asked for)."""
    import pickle

    saved = read_results(_folder(tmp_path))
    saved.find_values_digests()
    wide = saved.wide_per_query("d", "system", "AP")
    back = pickle.loads(pickle.dumps(saved, protocol=pickle.HIGHEST_PROTOCOL))
    assert "_texts" in saved.__dict__ and "_texts" not in back.__dict__
    assert back._digests == saved._digests and set(back._digests) == {"a", "b"}
    pd.testing.assert_frame_equal(back.wide_per_query("d", "system", "AP"), wide)
    back._digests.clear()
    table = back.per_query
    assert back.values_digest("b") == saved.values_digest("b") == _by_hand(table[table["system"] == "b"])
