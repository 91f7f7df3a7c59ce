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

from tests.repo import ROOT

RECIPES = re.findall(r"```yaml\n(.*?)```", (ROOT / "docs" / "ci.md").read_text(), re.S)


def _workspace(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A checkout as the job sees it: the repository's configs, harness on the PATH (``pip install .`` is the job's
    first step), a local MLflow store as the team's server."""
    shutil.copytree(ROOT / "configs", tmp_path / "configs")
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


def _github_commands() -> str:
    """The GitHub job's commands as printed, in order: every step's run."""
    job = yaml.safe_load(RECIPES[0])["jobs"]["gate"]
    return "\n".join(step["run"] for step in job["steps"] if "run" in step)


@pytest.mark.slow
def test_the_github_actions_step_exits_with_the_gate_and_posts_the_summary(tmp_path: Path) -> None:
    cwd, env = _workspace(tmp_path)
    assert _shell(_github_commands(), cwd, env) == 6  # the demo's gate: INCONCLUSIVE (150 TREC queries cannot tell RR@10)
    posted = (tmp_path / "step.md").read_text()
    folder = Path((cwd / "folder.txt").read_text().strip())
    assert posted == (folder / "summary.md").read_text() and "**Release gate: INCONCLUSIVE**" in posted
    assert folder.parent.parent == cwd / "reports"  # what the job uploads
    job = yaml.safe_load(RECIPES[0])["jobs"]["gate"]
    assert any(s.get("with", {}).get("path") == "reports/" for s in job["steps"])
    assert (tmp_path / "mlflow.db").exists()  # tracked where MLFLOW_TRACKING_URI says


@pytest.mark.slow
def test_the_gitlab_job_exits_with_the_gate_and_keeps_the_summary(tmp_path: Path) -> None:
    job = yaml.safe_load(RECIPES[1])["release-gate"]
    cwd, env = _workspace(tmp_path)
    assert _shell("\n".join(job["script"]), cwd, env) == 6
    assert "**Release gate: INCONCLUSIVE**" in (cwd / "summary.md").read_text()
    assert job["artifacts"]["when"] == "always" and "reports/" in job["artifacts"]["paths"]


def test_a_broken_config_exits_2_with_one_json_document(tmp_path: Path) -> None:
    """The first mistake a job meets: the step reads the JSON, exits 2, and shows the one line, no traceback."""
    cwd, env = _workspace(tmp_path)
    (cwd / "configs" / "demo.yaml").write_text("experiment: broken\ndatasets: []\n")
    done = subprocess.run(
        ["bash", "-c", _github_commands().replace('python -c "from pathlib', 'true || python -c "from pathlib')],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    outcome = __import__("json").loads((cwd / "outcome.json").read_text())
    assert outcome["exit_code"] == 2 and outcome["file"].endswith("demo.yaml") and outcome["error"] in done.stderr
    assert not (cwd / "folder.txt").exists()
