"""``harness plan RESULTS_DIR``: the sd of the per-user differences read from a saved folder, and the plan from it."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from harness.cli import main
from tests.decision.test_gate import GATES, _config, _per_query, _run


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp_path = tmp_path_factory.mktemp("plan")
    candidate, guard = GATES["fail"]
    code, outcome, err = _run(_config(tmp_path, guard, candidate=candidate))
    assert code == 3, err
    return Path(str(outcome["results_dir"]))


def test_plan_from_a_folder_uses_the_sd_of_the_per_user_differences(folder: Path) -> None:
    """The sd is that of candidate - production per user, as numpy computes it; the users needed, the smallest n at
    which the noncentral t gives the asked power (scipy's distribution, independently of harness's search)."""
    out, err = io.StringIO(), io.StringIO()
    code = main(["plan", str(folder), "--measure", "nDCG@5", "--margin", "0.05", "--format", "json"], out, err)
    assert code == 0, err.getvalue()
    plan = json.loads(out.getvalue())
    differences = _per_query(folder, "nDCG@5", "c") - _per_query(folder, "nDCG@5", "a")
    sd = float(np.std(differences, ddof=1))
    assert plan["sd"] == pytest.approx(sd, rel=1e-12) and plan["n_now"] == differences.size == 50

    def power(n: int) -> float:  # one-sided paired t-test at alpha 0.05 against a true distance of the margin
        critical = stats.t.ppf(0.95, n - 1)
        return float(stats.nct.sf(critical, n - 1, 0.05 / sd * np.sqrt(n)))

    n = plan["n_queries"]
    assert power(n) >= 0.8 > power(n - 1)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--measure", "nDCG@3", "--margin", "0.01"], "measure 'nDCG@3' was not computed in"),
        (["--measure", "nDCG@3", "--margin", "0.01"], "did you mean 'nDCG@5'"),
        (["--measure", "AP", "--margin", "0.01", "--dataset", "other"], "dataset 'other' is not in"),
        (["--measure", "AP", "--margin", "0.01", "--segment", "middle"], "no per-query values of 'a' for AP on 'd' in segment"),
    ],
)
def test_plan_mistakes_on_a_folder_name_the_fix(folder: Path, argv: list[str], message: str) -> None:
    out, err = io.StringIO(), io.StringIO()
    assert main(["plan", str(folder), *argv], out, err) == 2
    assert message in err.getvalue() and "Fix:" in err.getvalue()
