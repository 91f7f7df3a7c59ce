"""A gate planned for several looks (``release.looks``): ``harness run`` counts the earlier looks of the same gate in
the experiment's results folders, tests each look at its share of alpha, and refuses a look beyond the plan."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from harness.cli import main
from tests.records.test_previous import _many_queries

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning")


def _run(config: Path) -> tuple[int, dict[str, object], str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["run", str(config), "--json"], out, err)
    return code, json.loads(out.getvalue()) if out.getvalue() else {}, err.getvalue()


def test_each_look_is_tested_at_its_share_and_a_look_beyond_the_plan_is_refused(tmp_path: Path) -> None:
    config = _many_queries(tmp_path, "{measure: nDCG@5, max_drop: 0.05}")
    config.write_text(config.read_text().replace("release: {", "release: {looks: 3, "))
    levels = []
    for look in (1, 2, 3):
        code, outcome, err = _run(config)
        assert code in (0, 3, 6), err
        gate = json.loads((Path(str(outcome["results_dir"])) / "gate.json").read_text())
        assert (gate["look"], gate["looks"]) == (look, 3)
        # alpha (k/3)^3 less what the earlier looks spent: 0.05/27, 0.05 * 7/27, 0.05 * 19/27
        assert gate["level"] == pytest.approx({1: 0.05 / 27, 2: 0.05 * 7 / 27, 3: 0.05 * 19 / 27}[look], rel=1e-12)
        if gate["verdict"] == "INCONCLUSIVE":  # the sentence says which look this was, and what is left
            said = f"This was look {look} of the 3 planned" if look < 3 else "This was the last of the 3 planned looks"
            assert said in gate["errors"], gate["errors"]
        else:
            assert f"look {look} at {gate['level']:.3g}" in gate["line"], gate["line"]
        levels.append(gate["level"])
    assert sum(levels) == pytest.approx(0.05, rel=1e-12)
    # the report's guards table names the level the last look tested at, and the rate over the looks
    assert main(["report", str(outcome["results_dir"]), "--quiet"], io.StringIO(), io.StringIO()) == 0
    html = (Path(str(outcome["results_dir"])) / "report.html").read_text()
    assert f"bound ({(1 - levels[-1]) * 100:.3g}%, one-sided)" in html
    assert "planned looks; this is look 3" in html and "3 planned looks" in html
    # a fourth look has nothing left to spend: refused before any work, the folders untouched
    before = sorted((tmp_path / "out" / "ni").iterdir())
    code, _, err = _run(config)
    assert code == 2 and "the gate's alpha (0.05) is spent: 3 earlier look(s) of it" in err, err
    assert sorted((tmp_path / "out" / "ni").iterdir()) == before
    # other guards are another gate: its first look
    config.write_text(config.read_text().replace("max_drop: 0.05", "max_drop: 0.04"))
    code, outcome, err = _run(config)
    assert json.loads((Path(str(outcome["results_dir"])) / "gate.json").read_text())["look"] == 1


def test_a_one_look_gate_decided_before_says_so(tmp_path: Path) -> None:
    config = _many_queries(tmp_path, "{measure: nDCG@5, max_drop: 0.05}")
    _run(config)
    *_, err = _run(config)
    assert "this gate was decided 1 time(s) before" in err and "release.looks plans them" in err, err
