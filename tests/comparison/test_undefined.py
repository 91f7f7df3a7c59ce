"""An undefined value is never significant (issue 47): UserMAD (the mean absolute difference between the user groups,
which are the dataset's segments) inside one segment compares a single group with itself; both systems' values are
NaN there. Before: comparisons.csv marked those rows significant at the 1/201 floor, summary.md listed
"+nan [95% CI +nan, +nan], p = 0.010" among the wins, and a guard there FAILed with "too few to resample"."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

import pandas as pd

from harness.cli import main
from tests.decision.test_gate import _config


def _user_mad_run(tmp_path: Path, guard: str) -> tuple[int, dict[str, object], str]:
    config = _config(tmp_path, guard, candidate="c", report="on")
    config.write_text(config.read_text().replace("measures: [nDCG@5, AP, P@5]", "measures: [nDCG@5, UserMAD@5]"))
    out, err = io.StringIO(), io.StringIO()
    code = main(["run", str(config), "--json", "--quiet"], out, err)
    return code, json.loads(out.getvalue()), err.getvalue()


def test_a_comparison_undefined_in_a_segment_is_not_tested_and_not_listed_as_a_change(tmp_path: Path) -> None:
    code, outcome, err = _user_mad_run(tmp_path, "{measure: nDCG@5, max_drop: 0.5}")
    assert code in (0, 3, 6), err
    folder = Path(str(outcome["results_dir"]))
    comparisons = pd.read_parquet(folder / "comparisons.parquet")
    mad = comparisons[comparisons["measure"] == "UserMAD@5"]
    inside = mad[mad["segment"] != "all"]
    assert len(inside) > 0 and inside["mean_a"].isna().all()  # one group: no difference between groups
    assert not inside["significant"].any() and inside["p_adj"].isna().all() and inside["delta"].isna().all()
    overall = mad[mad["segment"] == "all"]
    assert overall["delta"].map(math.isfinite).all()  # both groups there: compared as before
    summary = (folder / "summary.md").read_text()
    assert "nan" not in summary.lower().replace("nanosecond", "")
    html = (folder / "report.html").read_text()
    assert "undefined here" in html


def test_a_guard_where_its_measure_is_undefined_is_refused_before_any_work(tmp_path: Path) -> None:
    """UserMAD compares the user groups, which are the segments: a guard on it inside one segment is refused by
    harness validate and harness run (exit 2, the config's line, the fix), nothing computed."""
    from tests.decision.test_gate import GUARD_LINE

    config = _config(tmp_path, "{measure: UserMAD@5, max_drop: 0.05, segment: head}", candidate="c")
    config.write_text(config.read_text().replace("measures: [nDCG@5, AP, P@5]", "measures: [nDCG@5, UserMAD@5]"))
    for command in ("validate", "run"):
        out, err = io.StringIO(), io.StringIO()
        assert main([command, str(config), "--quiet"], out, err) == 2, err.getvalue()
        assert f"line {GUARD_LINE}: UserMAD@5 is a measure between the user groups" in err.getvalue()
        assert "remove segment:" in err.getvalue()
    assert not (tmp_path / "out").exists()


def test_an_undefined_guard_value_is_named_as_undefined() -> None:
    """Where the value is undefined for a reason the config cannot show, the guard says so, not "too few users"."""
    import numpy as np

    from harness.config.schema import Guard
    from harness.decision.guard import ResampledValues, _test_resampled
    from harness.measures.parse import parse_measure

    nan = float("nan")
    guard = Guard(parse_measure("UserMAD@5"), "max_drop", 0.05)
    said = _test_resampled(guard, ResampledValues(nan, nan, np.full(200, nan), np.full(200, nan), 154), 0.05, 0.8)
    assert isinstance(said, str) and said.startswith("undefined here: UserMAD@5 has no value on these 154 users")
