"""``harness plan RESULTS_DIR``: the sd of the per-user differences read from a saved folder, and the plan from it."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from harness.cli import main
from harness.stats import bounds
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


def _plan_json(*argv: str) -> dict[str, object]:
    out, err = io.StringIO(), io.StringIO()
    assert main(["plan", *argv, "--format", "json"], out, err) == 0, err.getvalue()
    return dict(json.loads(out.getvalue()))


def test_a_guards_plan_is_the_bound_auto_decides_by_at_that_many_users(folder: Path) -> None:
    """On a measure with a known range the plan also gives the users bound: auto needs: t's, raised to the users it
    decides from (the folder's gate's min_affected 0.2: the least n with 0.8^n <= 0.005, 24), or the betting
    bound's where that is fewer; with min_affected 0, the betting bound's alone."""
    plan = _plan_json(str(folder), "--measure", "nDCG@5", "--margin", "0.05")
    assert plan["min_affected"] == 0.2 and plan["t_from"] == 24 == int(np.ceil(np.log(0.005) / np.log(0.8)))
    width = 1.0  # nDCG's range [0, 1]: the drop beyond a 0.05 margin lies in [-1.05, 0.95]
    betting = bounds.betting_sample_size(0.05, float(plan["sd"]), -width - 0.05, width - 0.05, 0.05, stats.norm.ppf(0.8))
    t_side = max(int(plan["n_queries"]), 24)
    assert plan["n_auto"] == min(t_side, betting) and plan["auto_by"] == ("t" if t_side < betting else "betting")
    never = _plan_json(str(folder), "--measure", "nDCG@5", "--margin", "0.05", "--min-affected", "0")
    assert (never["n_auto"], never["auto_by"], never["t_from"]) == (betting, "betting", None)


def test_a_plan_from_an_sd_names_the_bound_when_the_measure_is_named() -> None:
    out, err = io.StringIO(), io.StringIO()
    assert main(["plan", "--sd", "0.05", "--margin", "0.01", "--measure", "AP"], out, err) == 0, err.getvalue()
    assert "156 users: a one-sided paired t-test" in out.getvalue()
    assert "Under bound: auto t decides from 528 users on (release.min_affected 0.01)" in out.getvalue()
    assert "the gate's plan is 528 users, by t" in out.getvalue()
    plain = _plan_json("--sd", "0.05", "--margin", "0.01")
    assert plain["n_auto"] is None and plain["auto_by"] == ""
