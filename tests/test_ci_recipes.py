"""The CI recipes of docs/ci.md, run as a CI runner would run them: their shell, on the demo's data, with a real
MLflow store. The job exits with the gate's code and leaves the summary where reviewers read it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from harness.demo import generate
from tests.repo import ROOT

RECIPES = re.findall(r"```yaml\n(.*?)```", (ROOT / "docs" / "ci.md").read_text(), re.S)


def _workspace(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A checkout as the job sees it: the demo's data, its config as configs/release.yaml, harness on the PATH."""
    generate(tmp_path)
    (tmp_path / "configs").mkdir()
    shutil.copy(ROOT / "configs" / "demo.yaml", tmp_path / "configs" / "release.yaml")
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "MLFLOW_TRACKING_URI": f"sqlite:///{tmp_path / 'mlflow.db'}",
        "GITHUB_STEP_SUMMARY": str(tmp_path / "step.md"),
    }
    return tmp_path, env


def _shell(lines: str, cwd: Path, env: dict[str, str]) -> int:
    # the package is installed already (pip install . is the job's first step)
    script = "\n".join(line for line in lines.splitlines() if not line.strip().startswith("pip install"))
    return subprocess.run(["bash", "-c", script], cwd=cwd, env=env, timeout=600).returncode


@pytest.mark.slow
def test_the_github_actions_step_exits_with_the_gate_and_posts_the_summary(tmp_path: Path) -> None:
    job = yaml.safe_load(RECIPES[0])["jobs"]["gate"]
    step = next(s for s in job["steps"] if s.get("name") == "release gate")
    cwd, env = _workspace(tmp_path)
    assert _shell(step["run"], cwd, env) == 6  # the demo's gate: INCONCLUSIVE (150 TREC queries cannot tell RR@10)
    posted = (tmp_path / "step.md").read_text()
    folder = Path((cwd / "folder.txt").read_text().strip())
    assert posted == (folder / "summary.md").read_text() and "**Release gate: INCONCLUSIVE**" in posted
    assert (tmp_path / "mlflow.db").exists()  # tracked where MLFLOW_TRACKING_URI says


@pytest.mark.slow
def test_the_gitlab_job_exits_with_the_gate_and_keeps_the_summary(tmp_path: Path) -> None:
    job = yaml.safe_load(RECIPES[1])["release-gate"]
    cwd, env = _workspace(tmp_path)
    assert _shell("\n".join(job["script"]), cwd, env) == 6
    assert "**Release gate: INCONCLUSIVE**" in (cwd / "summary.md").read_text()
    assert job["artifacts"]["when"] == "always"  # the folder is kept when the gate fails the job
