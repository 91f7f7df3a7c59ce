"""A baseline from a previous results folder or MLflow run (issue 9): values reused, comparability checked."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
import pytest

from harness.cli import main

pytestmark = pytest.mark.filterwarnings(
    "ignore::DeprecationWarning", "ignore::PendingDeprecationWarning", "ignore::FutureWarning"
)


def _many_queries(tmp_path: Path, guard: str, extra_system: bool = False, train: bool = False) -> Path:
    """50 queries; b is a slightly changed copy of a (query q swaps its top two documents when q % 7 == 0); with
    ``train`` the dataset names training interactions (train.csv: 3 per query). The gate's min_affected 0.2 lets auto's
    t decide from 24 queries on, as t decided these gates before that rule (tested in test_min_affected.py)."""
    rng = __import__("numpy").random.default_rng(5)
    qrels, run_a, run_b, run_c = [], [], [], []
    for q in range(50):
        labels = rng.integers(0, 3, size=10)
        labels[0] = 1
        for i, rel in enumerate(labels):
            qrels.append(f"q{q:02d} 0 d{i} {rel}\n")
        order = list(rng.permutation(10))
        swapped = [order[1], order[0], *order[2:]] if q % 7 == 0 else order
        worse = order[::-1]
        for rank, (da, db, dc) in enumerate(zip(order, swapped, worse, strict=True)):
            run_a.append(f"q{q:02d} Q0 d{da} {rank + 1} {10 - rank} a\n")
            run_b.append(f"q{q:02d} Q0 d{db} {rank + 1} {10 - rank} b\n")
            run_c.append(f"q{q:02d} Q0 d{dc} {rank + 1} {10 - rank} c\n")
    interactions = ["user,item\n"] + [f"q{q:02d},d{(q + i) % 10}\n" for q in range(50) for i in range(3)]
    for name, lines in (("qrels.txt", qrels), ("a.run", run_a), ("b.run", run_b), ("c.run", run_c), ("train.csv", interactions)):
        (tmp_path / name).write_text("".join(lines))
    third = "\n  - {name: c, runs: {d: c.run}}" if extra_system else ""
    path = tmp_path / "exp.yaml"
    path.write_text(
        f"experiment: ni\ndatasets: [{{name: d, qrels: qrels.txt{', train: {path: train.csv}' if train else ''}}}]\n"
        "systems:\n  - {name: a, runs: {d: a.run}}\n"
        f"  - {{name: b, runs: {{d: b.run}}}}{third}\nmeasures: [nDCG@5, AP, P@5]\nbaseline: a\n"
        "stats: {permutations: 500, resamples: 500}\ntracking: {enabled: false}\nreport:\n  enabled: false\n"
        f"release: {{production: a, candidate: b, min_affected: 0.2, guards: [{guard}]}}\noutput: out\n"
    )
    return path


def _run(config: Path, *extra: str) -> tuple[int, dict[str, object], str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["run", str(config), "--json", "--quiet", *extra], out, err)
    return code, json.loads(out.getvalue()) if out.getvalue() else {}, err.getvalue()


def _first_release(tmp_path: Path, tracking: str = "{enabled: false}", train: bool = False) -> tuple[Path, dict[str, object]]:
    config = _many_queries(tmp_path, "{measure: nDCG@5, max_drop: 0.05}", train=train)
    config.write_text(config.read_text().replace("tracking: {enabled: false}", f"tracking: {tracking}"))
    code, outcome, err = _run(config)
    assert code in (0, 3, 6), err
    return config, outcome


def _reuse(config: Path, previous: str) -> None:
    """System a now comes from the earlier evaluation instead of its run file."""
    config.write_text(config.read_text().replace("  - {name: a, runs: {d: a.run}}", f"  - {{name: a, previous: {previous}}}"))


def _values(folder: Path) -> pd.DataFrame:
    table = pd.read_parquet(folder / "per_query.parquet")
    return table.sort_values(["system", "measure", "query_id"]).reset_index(drop=True)


def test_a_previous_results_folder_gives_the_same_values_and_comparisons(tmp_path: Path) -> None:
    config, first = _first_release(tmp_path)
    before = Path(str(first["results_dir"]))
    _reuse(config, f"{{results: {before}}}")
    (tmp_path / "a.run").unlink()  # not needed any more: nothing is recomputed for a
    out = io.StringIO()
    assert main(["validate", str(config), "--quiet"], out, io.StringIO()) == 0
    assert f"a: 50 queries reused from results {before}" in out.getvalue()
    code, second, err = _run(config)
    assert code == first["exit_code"], err
    after = Path(str(second["results_dir"]))
    pd.testing.assert_frame_equal(_values(before), _values(after))
    keys = ["measure", "system_a", "system_b", "delta", "p_t", "p_randomization", "p_bootstrap", "p_adj", "significant"]
    pd.testing.assert_frame_equal(
        pd.read_parquet(before / "comparisons.parquet")[keys], pd.read_parquet(after / "comparisons.parquet")[keys]
    )
    provenance = json.loads((after / "provenance.json").read_text())
    assert any(i["role"] == "previous:a" for i in provenance["inputs"])


def test_reused_values_from_an_mlflow_run(tmp_path: Path) -> None:
    config, first = _first_release(tmp_path, "{enabled: true}")
    _reuse(config, f"{{mlflow_run: {first['mlflow_run_id']}, uri: '{first['tracking_uri']}'}}")
    code, second, err = _run(config, "--no-tracking")
    assert code == first["exit_code"], err
    pd.testing.assert_frame_equal(_values(Path(str(first["results_dir"]))), _values(Path(str(second["results_dir"]))))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda tmp: (tmp / "qrels.txt").write_text((tmp / "qrels.txt").read_text().replace("q00 0 d0 1", "q00 0 d0 2")),
            r"system 'a' reuses results .*: its judgments for dataset 'd' differ from .*qrels\.txt "
            r"\(sha256 [0-9a-f]{12}\.\.\. there",
        ),
        (
            lambda tmp: (tmp / "exp.yaml").write_text((tmp / "exp.yaml").read_text() + "conventions: {queries: intersection}\n"),
            r"it was evaluated under other conventions: queries\. Fix: use the same conventions",
        ),
        (
            lambda tmp: (tmp / "exp.yaml").write_text((tmp / "exp.yaml").read_text().replace("P@5]", "P@5, RR]")),
            r"it has no values for RR\. Fix: keep to the measures the earlier run computed",
        ),
        (
            lambda tmp: (tmp / "train.csv").write_text("".join((tmp / "train.csv").read_text().splitlines(True)[:101])),
            r"its training interactions for dataset 'd' differ from .*train\.csv \(sha256 .*Fix: evaluate the system from its "
            r"run file on these inputs",
        ),
        (
            lambda tmp: (tmp / "exp.yaml").write_text((tmp / "exp.yaml").read_text().replace(", train: {path: train.csv}", "")),
            r"it was evaluated with training interactions for dataset 'd', and this config gives none",
        ),
        (
            lambda tmp: (
                (tmp / "seg.csv").write_text("query,segment\nq00,x\n"),
                (tmp / "exp.yaml").write_text(
                    (tmp / "exp.yaml")
                    .read_text()
                    .replace("train: {path: train.csv}", "train: {path: train.csv}, segments: {path: seg.csv}")
                ),
            ),
            r"computed without segments \(none recorded there\), and this config gives segments",
        ),
    ],
    ids=["other-qrels", "other-conventions", "missing-measure", "training-lost-a-third", "training-dropped", "segments-added"],
)
def test_incomparable_previous_values_are_refused(tmp_path: Path, change, message: str) -> None:  # type: ignore[no-untyped-def]
    import re

    config, first = _first_release(tmp_path, train=True)
    _reuse(config, f"{{results: {first['results_dir']}}}")
    change(tmp_path)
    runs_before = sorted((tmp_path / "out" / "ni").iterdir())
    for command in ("validate", "run"):
        out, err = io.StringIO(), io.StringIO()
        assert main([command, str(config), "--quiet"], out, err) == 2
        assert re.search(message, err.getvalue()), err.getvalue()
        assert "exp.yaml: line 4: " in err.getvalue() and err.getvalue().count("\n") == 1
    assert sorted((tmp_path / "out" / "ni").iterdir()) == runs_before  # nothing written


def test_an_mlflow_run_without_harness_results_is_a_user_error(tmp_path: Path) -> None:
    from mlflow import MlflowClient

    config, first = _first_release(tmp_path, "{enabled: true}")
    client = MlflowClient(str(first["tracking_uri"]))
    stranger = client.create_run(client.get_run(str(first["mlflow_run_id"])).info.experiment_id).info.run_id
    _reuse(config, f"{{mlflow_run: {stranger}, uri: '{first['tracking_uri']}'}}")
    code, _, err = _run(config, "--no-tracking")
    assert code == 2 and f"MLflow run {stranger}" in err and "holds no harness results" in err, err
