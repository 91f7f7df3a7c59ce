"""The benchmarks stay runnable (tiny scale; no timing is asserted: speed is measured by `make bench`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_benchmark_runs_end_to_end_and_agrees_with_pytrec_eval(tmp_path: Path) -> None:
    command = [sys.executable, str(ROOT / "benchmarks" / "run.py"), "--scenario", "tiny", "--rounds", "1",
               "--only", "harness", "pytrec_eval", "--data", str(tmp_path)]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert "tiny (shuffled within queries): 15,000 run lines" in done.stdout
    assert "pytrec_eval" in done.stdout.strip().splitlines()[-1]
    # the two tools, fed the same files, print the same means
    qrels, run = tmp_path / "tiny" / "qrels.trec", tmp_path / "tiny" / "run.trec"
    ours = subprocess.run([sys.executable, "-m", "harness", "eval", "-m", "map", "-m", "P.10", str(qrels), str(run)],
                          capture_output=True, text=True, check=True).stdout  # fmt: skip
    peer = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "peers" / "pytrec_eval_eval.py"), str(qrels), str(run)],
                          capture_output=True, text=True, check=True).stdout  # fmt: skip
    ours_values = {line.split()[0]: float(line.split()[2]) for line in ours.splitlines()}
    peer_values = {line.split()[0]: float(line.split()[1]) for line in peer.splitlines()}
    assert abs(ours_values["map"] - peer_values["map"]) < 5e-5
    assert abs(ours_values["P_10"] - peer_values["P_10"]) < 5e-5


def test_statistics_benchmark_runs() -> None:
    command = [sys.executable, str(ROOT / "benchmarks" / "stats_bench.py"), "--queries", "200", "--permutations", "200"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert "randomization" in done.stdout and "all four" in done.stdout


@pytest.mark.parametrize("engine", ["local", "dask"])
def test_pipeline_benchmark_runs(tmp_path: Path, engine: str) -> None:
    command = [sys.executable, str(ROOT / "benchmarks" / "pipeline_bench.py"), "--scenario", "tiny", "--data", str(tmp_path),
               "--permutations", "200", "--engine", engine]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    for stage in ("load + evaluate", "compare", "gate", "write results", "track (local MLflow)", "report", "total"):
        assert f"  {stage}" in done.stdout, stage
    assert "report.html" in done.stdout and "release gate" in done.stdout


def test_beyond_accuracy_benchmark_runs(tmp_path: Path) -> None:
    command = [sys.executable, str(ROOT / "benchmarks" / "beyond_bench.py"), "--scenario", "tiny", "--data", str(tmp_path)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    for family in ("Coverage, RecItems, Entropy, Gini (system) @100", "ILD (co-occurrence) @10", "EFD, EPC @100"):
        assert f"  {family}" in done.stdout, family
    assert "every beyond-accuracy measure" in done.stdout and "peak memory" in done.stdout


def test_dask_benchmark_runs(tmp_path: Path) -> None:
    command = [sys.executable, str(ROOT / "benchmarks" / "dask_bench.py"), "--rows", "20000", "--data", str(tmp_path)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert "worker restarts: 0" in done.stdout and "same aggregates (4 decimals, as printed): True" in done.stdout
