"""The benchmarks stay runnable (tiny scale; no timing is asserted: speed is measured by `make bench`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_benchmark_runs_end_to_end_and_agrees_with_pytrec_eval(tmp_path: Path) -> None:
    command = [
        sys.executable,
        str(ROOT / "benchmarks" / "run.py"),
        "--scenario",
        "tiny",
        "--rounds",
        "1",
        "--only",
        "harness",
        "pytrec_eval",
        "--data",
        str(tmp_path),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert "tiny (shuffled within queries): 15,000 run lines" in done.stdout
    assert "pytrec_eval" in done.stdout.strip().splitlines()[-1]
    # the two tools, fed the same files, print the same means
    qrels, run = tmp_path / "tiny" / "qrels.trec", tmp_path / "tiny" / "run.trec"
    ours = subprocess.run(
        [sys.executable, "-m", "harness", "eval", "-m", "map", "-m", "P.10", str(qrels), str(run)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    peer = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "peers" / "pytrec_eval_eval.py"), str(qrels), str(run)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    ours_values = {line.split()[0]: float(line.split()[2]) for line in ours.splitlines()}
    peer_values = {line.split()[0]: float(line.split()[1]) for line in peer.splitlines()}
    assert abs(ours_values["map"] - peer_values["map"]) < 5e-5
    assert abs(ours_values["P_10"] - peer_values["P_10"]) < 5e-5


def test_statistics_benchmark_times_the_tests_scipy_computes(tmp_path: Path) -> None:
    """What the benchmark times gives scipy's p-values: the t-test and Wilcoxon's normal approximation (200 queries)."""
    from scipy import stats

    saved = tmp_path / "tests.npz"
    command = [
        sys.executable,
        str(ROOT / "benchmarks" / "stats_bench.py"),
        "--queries",
        "200",
        "--permutations",
        "200",
        "--save",
        str(saved),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    timed = np.load(saved)
    diffs = timed["diffs"]
    assert diffs.shape == (100, 200)
    np.testing.assert_allclose(timed["p_t"], stats.ttest_1samp(diffs, 0.0, axis=1).pvalue, rtol=1e-10)
    scipy_wilcoxon = [stats.wilcoxon(row, zero_method="wilcox", correction=False, method="approx").pvalue for row in diffs]
    np.testing.assert_allclose(timed["p_wilcoxon"], scipy_wilcoxon, rtol=1e-9)


def test_the_memory_benchmark_runs_the_4500_row_comparison() -> None:
    """45 pairs x 20 measures x 5 segments (all users and 4) are the 4,500 rows it says it measures."""
    command = [sys.executable, str(ROOT / "benchmarks" / "compare_memory.py"), "--users", "20", "--resamples", "200"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert "harness run: 4,500 comparison rows, 20 users, 200 resamples" in done.stdout, done.stdout
    assert "peak" in done.stdout


@pytest.mark.parametrize("engine", ["local", "dask"])
def test_pipeline_benchmark_computes_pytrec_evals_values(tmp_path: Path, engine: str) -> None:
    """Every stage runs, and the results folder it times holds pytrec_eval's nDCG@10 of both runs, and the guard's drop."""
    import pandas as pd
    import pytrec_eval

    output = tmp_path / "out"
    command = [
        sys.executable,
        str(ROOT / "benchmarks" / "pipeline_bench.py"),
        "--scenario",
        "tiny",
        "--data",
        str(tmp_path),
        "--permutations",
        "200",
        "--engine",
        engine,
        "--output",
        str(output),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert "  total" in done.stdout
    (folder,) = [f for f in (output / "pipeline-bench").iterdir() if not f.is_symlink()]
    summary = pd.read_parquet(folder / "summary.parquet")
    qrels = _trec_dict(tmp_path / "tiny" / "qrels.trec", int)
    means = {}
    for system, file in (("production", "run.trec"), ("candidate", "candidate.trec")):
        run = _trec_dict(tmp_path / "tiny" / file, float)
        scores = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut_10"}).evaluate(run)
        means[system] = sum(scores[q]["ndcg_cut_10"] if q in scores else 0.0 for q in qrels) / len(qrels)  # -c
        row = summary[(summary["system"] == system) & (summary["measure"] == "nDCG@10") & (summary["segment"] == "all")]
        assert float(row["value"].iloc[0]) == pytest.approx(means[system], abs=1e-12), system
    guard = json.loads((folder / "gate.json").read_text())["guards"][0]
    drop = means["production"] - means["candidate"]
    assert guard["guard"].startswith("nDCG@10") and guard["drop"] == pytest.approx(drop, abs=1e-12)


@pytest.mark.slow
def test_pipeline_benchmark_times_whole_processes_against_the_floor_of_their_cpu(tmp_path: Path) -> None:
    """--whole prints each ratio and its floor: the process's CPU (its children's too) over the cores, against eval's
    wall time; with one round the medians are the round's, so the floor is the printed CPU over the cores over eval."""
    import os
    import re

    command = [
        sys.executable,
        str(ROOT / "benchmarks" / "pipeline_bench.py"),
        *("--scenario", "tiny", "--data", str(tmp_path), "--permutations", "200", "--whole", "--rounds", "1"),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    pattern = (
        r"harness (run|run --no-tracking) ([\d.]+) s, harness eval ([\d.]+) s, .* / eval ([\d.]+)x .*; "
        r"its CPU ([\d.]+) s over (\d+) cores puts its floor at ([\d.]+)x"
    )
    lines = [re.search(pattern, line) for line in done.stdout.splitlines() if "whole processes" in line]
    assert [m.group(1) for m in lines if m] == ["run", "run --no-tracking"], done.stdout
    for m in lines:
        assert m is not None
        run, evaluate, ratio, cpu, cores, floor = (float(m.group(i)) for i in range(2, 8))
        assert cores == (os.cpu_count() or 1)
        assert ratio == pytest.approx(run / evaluate, abs=0.06 + 0.01 * ratio)  # each printed rounded
        assert floor == pytest.approx(cpu / cores / evaluate, abs=0.06 + 0.05 * floor)
        assert cpu > 0


def test_beyond_accuracy_benchmark_reads_what_it_generated(tmp_path: Path) -> None:
    """Every family is timed, over the rows the generated files hold (counted here from the files themselves)."""
    command = [
        sys.executable,
        str(ROOT / "benchmarks" / "beyond_bench.py"),
        "--scenario",
        "tiny",
        "--data",
        str(tmp_path),
        "--rounds",
        "2",
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("  round ") == 2 and "paired rounds: median" in done.stdout, done.stdout
    for family in ("Coverage, RecItems, Entropy, Gini (system) @100", "ILD (co-occurrence) @10", "EFD, EPC @100"):
        assert f"  {family}" in done.stdout, family
    folder = tmp_path / "tiny"
    lines = {name: len((folder / name).read_text().splitlines()) for name in ("run.trec", "train.csv", "items.csv")}
    header = f"{lines['run.trec']:,} run rows, {lines['train.csv'] - 1:,} training rows, {lines['items.csv'] - 1:,} items"
    assert header in done.stdout, done.stdout


def test_dask_benchmark_runs(tmp_path: Path) -> None:
    command = [sys.executable, str(ROOT / "benchmarks" / "dask_bench.py"), "--rows", "20000", "--data", str(tmp_path)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert "worker restarts: 0" in done.stdout and "same aggregates (4 decimals, as printed): True" in done.stdout


def _trec_dict(path: Path, kind: type) -> dict[str, dict[str, Any]]:
    """A TREC qrels (4 columns) or run (6 columns) file as pytrec_eval's dict of dicts."""
    out: dict[str, dict[str, Any]] = {}
    for line in path.read_text().splitlines():
        fields = line.split()
        query, doc, value = (fields[0], fields[2], fields[3]) if len(fields) == 4 else (fields[0], fields[2], fields[4])
        out.setdefault(query, {})[doc] = kind(value)
    return out


def test_record_benchmark_reads_the_stages_from_the_progress_lines() -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from record_bench import stages
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    stderr = (
        "[   0.0s] evaluating: 0/6\n[   3.1s] writing results\n[   3.5s] logging to MLflow\n"
        "[   4.6s] logging to MLflow (runs): 0/7\n[   5.2s] rendering the report\n"
    )
    parts = stages(stderr, 7.0)
    assert parts == pytest.approx({"compute": 3.1, "write": 0.4, "record": 1.7, "report": 1.8})
    overlapped = (  # a child logs while the report is rendered: the record ends at its runs' last line
        "[   0.0s] evaluating: 0/6\n[   3.1s] writing results\n[   3.5s] logging to MLflow\n"
        "[   4.0s] rendering the report while the runs are logged\n[   5.0s] logging to MLflow (runs): 0/7\n"
        "[   5.9s] logging to MLflow (runs): done in 0.9 s\n"
    )
    assert stages(overlapped, 6.5) == pytest.approx({"compute": 3.1, "write": 0.4, "record": 2.4, "report": 0.6})


def test_the_csv_benchmark_gives_both_tools_the_trec_files_rows(tmp_path: Path) -> None:
    """The tables it writes hold the generated TREC files' rows, and the two tools it times agree on them (it exits
    naming the measure when they do not)."""
    import csv

    command = [sys.executable, str(ROOT / "benchmarks" / "csv_bench.py"), "--scenario", "tiny", "--rounds", "1"]
    done = subprocess.run([*command, "--data", str(tmp_path)], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert "tiny as CSV tables: 15,000 run rows, 6 measures, the same means (to 1e-9)" in done.stdout, done.stdout
    assert "harness / script, each round" in done.stdout.splitlines()[-1]
    folder = tmp_path / "tiny"
    for table, trec, fields in (("qrels.csv", "qrels.trec", (0, 2, 3)), ("run.csv", "run.trec", (0, 2, 4))):
        with open(folder / table, newline="") as handle:
            rows = list(csv.reader(handle))
        expected = [[line.split()[i] for i in fields] for line in (folder / trec).read_text().splitlines()]
        assert rows[1:] == expected and len(expected) > 1000


@pytest.mark.slow
def test_record_benchmark_runs_the_demo(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "record_bench.py"), "--only", "demo"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    rows = [line.split() for line in done.stdout.splitlines()[1:]]
    assert [row[0] for row in rows] == ["demo", "demo", "demo"]
    assert all(row[-1] in ("met", "MISSED") for row in rows[:2]) and "tracking adds" in done.stdout.splitlines()[-1]


def test_harness_as_the_peers_benchmark_runs_it_gives_recbole_s_golden_values() -> None:
    """The harness eval that benchmarks/beyond_peers.py times against RecBole's metric classes gives the values RecBole
    computed on the beyond-accuracy golden case (tests/fixtures/beyond_accuracy/expected.json); the benchmark runs
    RecBole itself, from its package (make bench)."""
    import io

    from harness.cli import main

    golden = ROOT / "tests" / "fixtures" / "beyond_accuracy"
    ids = {
        "ItemCoverage": "recbole.itemcoverage.native@10",
        "AveragePopularity": "recbole.averagepopularity@10",
        "ShannonEntropy": "recbole.shannonentropy@10",
        "GiniIndex": "recbole.giniindex.native@10",
        "TailPercentage": "recbole.tailpercentage.ratio0.1@10",
    }
    values = json.loads((golden / "expected.json").read_text())["values"]
    expected = {v["id"]: v["value"] for v in values if v["peer"] == "recbole" and v["ties"] == "input_order"}

    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from beyond_peers import CASES, harness_command
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    assert CASES["recbole"] == list(ids)
    command = harness_command("recbole", CASES["recbole"], golden, golden / "run.csv")
    out = io.StringIO()
    assert main(command[3:], out, io.StringIO()) == 0  # after "python -m harness"
    ours = [float(r["value"]) for r in json.loads(out.getvalue())["results"]]
    assert ours == pytest.approx([expected[ids[name]] for name in CASES["recbole"]], rel=1e-12)


def test_harness_as_the_peers_benchmark_runs_it_gives_elliot_s_golden_values() -> None:
    """The one harness eval under --profile elliot that benchmarks/beyond_peers.py times against Elliot's fairness and
    popularity-bias modules gives the values Elliot computed on the fairness golden case, every bias disparity cell
    included; the benchmark runs Elliot itself, from a checkout (ELLIOT_SRC)."""
    import io

    from harness.cli import main

    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from beyond_peers import CASES, harness_command
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    golden = ROOT / "tests" / "fixtures" / "fairness"
    golden_values = json.loads((golden / "expected.json").read_text())["values"]
    entries = {v["id"]: v for v in golden_values if v["peer"] == "elliot" and v["ties"] == "input_order"}
    expected = []
    for name in CASES["elliot"]:
        group = "" if name.startswith("Pop") else ".activity" if name.startswith("UserMAD") else ".provider"
        entry = entries[f"elliot.{name}{'.activity' if name.startswith('Bias') else ''}{group}@10"]
        cells = entry["per_group"] if name.startswith("Bias") else {"": entry["value"]}
        expected += [value for _, value in sorted(cells.items())]  # user group, then category
    assert len(expected) == 20

    command = harness_command("elliot", CASES["elliot"], golden, golden / "run.csv", users=golden / "users.csv")
    out = io.StringIO()
    assert main(command[3:], out, io.StringIO()) == 0  # after "python -m harness"
    ours = [float(r["value"]) for r in json.loads(out.getvalue())["results"]]
    assert ours == pytest.approx(expected, rel=1e-12)
