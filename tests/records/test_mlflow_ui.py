"""The MLflow UI opens on harness's runs: a real `mlflow server` on 127.0.0.1 and Debian's chromium (issue 28)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from harness.cli import main
from tests.decision.test_gate import GATES, _config
from tests.mlflow_server import mlflow_server
from tests.report.test_report import _browser

pytestmark = [
    pytest.mark.server,
    pytest.mark.browser,
    pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::PendingDeprecationWarning", "ignore::FutureWarning"),
]


def test_the_printed_address_shows_the_runs_table_with_the_verdict(tmp_path: Path) -> None:
    """The experiment is marked as model development, and the address harness run prints opens its runs table through
    the release view harness shares on the experiment: the parent run's name carries the verdict, and the verdict and
    the guard's difference and bound are columns, nothing added by hand. A screenshot is kept beside the test's files."""
    from mlflow import MlflowClient

    candidate, guard = GATES["fail"]
    with mlflow_server(tmp_path) as url:
        config = _config(tmp_path, guard, tracking=f"{{uri: '{url}'}}", candidate=candidate)
        out, err = io.StringIO(), io.StringIO()
        assert main(["run", str(config), "--json", "--quiet"], out, err) == 3, err.getvalue()
        outcome = json.loads(out.getvalue())
        client = MlflowClient(url)
        run = client.get_run(outcome["mlflow_run_id"])
        experiment = client.get_experiment(run.info.experiment_id)
        assert experiment.tags["mlflow.experimentKind"] == "custom_model_development"
        assert run.info.run_name.startswith(f"FAIL {candidate} vs a · gated ")  # first: the column is cut short
        assert outcome["mlflow_runs_url"] == (
            f"{url}/#/experiments/{run.info.experiment_id}/runs?workflowType=machine_learning&viewStateShareKey=harness-release"
        )
        view = json.loads(experiment.tags["mlflow.sharedViewState.harness-release"])
        guard_columns = [c.split("`")[1] for c in view["selectedColumns"] if c.startswith("metrics.")]
        assert guard_columns and all(key in run.data.metrics for key in guard_columns)
        difference = next(key for key in guard_columns if key.endswith(".difference"))
        manager, browser = _browser()
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.goto(outcome["mlflow_runs_url"], wait_until="domcontentloaded")  # the UI polls: never idle
            page.get_by_text(run.info.run_name).first.wait_for(timeout=60_000)  # the runs table, with the verdict
            header = page.get_by_text(difference).first
            header.wait_for(timeout=30_000)  # the guard's delta: a column of the view, on screen beside the run's name
            box, name_box = header.bounding_box(), page.get_by_text(run.info.run_name).first.bounding_box()
            assert box is not None and name_box is not None and name_box["x"] < box["x"] < 1000, (box, name_box)
            page.screenshot(path=str(tmp_path / "mlflow-runs.png"), full_page=True)
        finally:
            browser.close()
            manager.stop()
    assert (tmp_path / "mlflow-runs.png").stat().st_size > 10_000
