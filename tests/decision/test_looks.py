"""A gate planned for several looks (``release.looks``): ``harness run`` counts the earlier looks of the same gate in
the experiment's results folders, tests each look at its share of alpha, and refuses a look beyond the plan."""

from __future__ import annotations

import io
import json
import shutil
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
    assert "this gate was decided before" in err and "release.looks plans them" in err, err
    *_, err = _run(config)
    assert "this gate was decided before" not in err, err  # said once, not on every run after


def _looks(config: Path) -> None:
    config.write_text(config.read_text().replace("release: {", "release: {looks: 3, "))


def _gate(outcome: dict[str, object]) -> dict[str, object]:
    return json.loads((Path(str(outcome["results_dir"])) / "gate.json").read_text())  # type: ignore[no-any-return]


def test_deleted_folders_do_not_start_the_count_again(tmp_path: Path) -> None:
    config = _many_queries(tmp_path, "{measure: nDCG@5, max_drop: 0.05}")
    _looks(config)
    code, first, err = _run(config)
    assert code in (0, 3, 6), err
    shutil.rmtree(Path(str(first["results_dir"])))  # a trimmed output folder: the ledger still holds the look
    code, second, err = _run(config)
    gate = _gate(second)
    assert (gate["look"], gate["level"]) == (2, pytest.approx(0.05 * 7 / 27, rel=1e-12)), err
    ledger = [json.loads(line) for line in (tmp_path / "out" / "ni" / ".looks.jsonl").read_text().splitlines()]
    assert [e["look"] for e in ledger] == [1, 2] and ledger[1]["id"] == gate["look_id"]


def test_a_look_whose_folder_could_not_be_written_is_counted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.errors import ResultsNotWritten
    from harness.pipeline import experiment as pipeline

    config = _many_queries(tmp_path, "{measure: nDCG@5, max_drop: 0.05}")
    _looks(config)

    def full(*args: object, **kwargs: object) -> None:
        raise ResultsNotWritten("no space left on device")

    with monkeypatch.context() as disk:
        disk.setattr(pipeline, "save_results", full)
        code, outcome, err = _run(config)
    assert code == 7 and outcome["gate_verdict"] in ("PASS", "FAIL", "INCONCLUSIVE"), err  # the verdict was shown
    code, outcome, err = _run(config)
    assert _gate(outcome)["look"] == 2, err


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        ("gate.json level", "was tested at level 0.9, outside (0, 0.05]"),
        ("ledger level", "the records of the gate's look"),
        ("ledger line", ".looks.jsonl line 1 is not a look harness recorded"),
    ],
)
def test_edited_records_are_refused_by_name(tmp_path: Path, edit: str, message: str) -> None:
    config = _many_queries(tmp_path, "{measure: nDCG@5, max_drop: 0.05}")
    _looks(config)
    code, first, err = _run(config)
    folder, ledger = Path(str(first["results_dir"])), tmp_path / "out" / "ni" / ".looks.jsonl"
    if edit == "gate.json level":
        gate = _gate(first)
        (folder / "gate.json").write_text(json.dumps({**gate, "level": 0.9}))
    elif edit == "ledger level":
        entry = json.loads(ledger.read_text())
        ledger.write_text(json.dumps({**entry, "level": entry["level"] / 2}) + "\n")
    else:
        ledger.write_text("{not json}\n" + ledger.read_text())
    code, _, err = _run(config)
    assert code == 2 and message in err and err.count("\n") == 1, err
    assert str(folder / "gate.json") in err or str(ledger) in err, err


def test_no_verdict_is_shown_before_its_look_is_recorded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import errno
    import os

    from harness.records import looks

    config = _many_queries(tmp_path, "{measure: nDCG@5, max_drop: 0.05}")
    _looks(config)

    def full(descriptor: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    with monkeypatch.context() as disk:
        disk.setattr(looks.os, "fsync", full)
        code, outcome, err = _run(config)
    assert code == 2 and "gate" not in outcome and "the gate's look could not be recorded" in str(outcome["error"]), err
    last = err.strip().splitlines()[-1]
    assert "No space left on device" in last and "the verdict is not shown" in last and "release gate" not in err, err
    assert [p.name for p in (tmp_path / "out" / "ni").iterdir()] == [".looks.jsonl"]  # no results folder
    assert os.fsync is not full


@pytest.mark.slow
@pytest.mark.server
def test_a_fresh_workspace_counts_the_looks_mlflow_holds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """CI in a new clone: no results folder and no ledger, the looks logged to a tracking server."""
    from tests.mlflow_server import mlflow_server

    config = _many_queries(tmp_path, "{measure: nDCG@5, max_drop: 0.05}")
    _looks(config)
    config.write_text(config.read_text().replace("tracking: {enabled: false}", "tracking: {enabled: true}"))
    with mlflow_server(tmp_path) as url:
        monkeypatch.setenv("MLFLOW_TRACKING_URI", url)
        for look in (1, 2):
            code, outcome, err = _run(config)
            assert code in (0, 3, 6) and _gate(outcome)["look"] == look, err
            shutil.rmtree(tmp_path / "out")  # make distclean, or the next CI job's workspace
        code, outcome, err = _run(config)
        assert _gate(outcome)["look"] == 3 and _gate(outcome)["level"] == pytest.approx(0.05 * 19 / 27, rel=1e-12), err
        shutil.rmtree(tmp_path / "out")
        code, _, err = _run(config)
        assert code == 2 and "3 earlier look(s) of it" in err and "and its MLflow experiment" in err, err


def test_a_descriptive_guard_added_between_looks_is_the_same_gate(tmp_path: Path) -> None:
    """A descriptive guard decides nothing: adding one between looks leaves the gate's key, and its spending, as they
    were (it had started the count again)."""
    config = _many_queries(tmp_path, "{measure: nDCG@5, max_drop: 0.05}")
    _looks(config)
    code, first, err = _run(config)
    assert code in (0, 3, 6), err
    config.write_text(
        config.read_text().replace("max_drop: 0.05}", "max_drop: 0.05}, {measure: P@5, max_drop: 0.0, descriptive: true}")
    )
    code, second, err = _run(config)
    assert code in (0, 3, 6), err
    assert (_gate(second)["key"], _gate(second)["look"]) == (_gate(first)["key"], 2)
    assert _gate(second)["level"] == pytest.approx(0.05 * 7 / 27, rel=1e-12)


def test_looks_recorded_under_the_key_that_held_descriptive_guards_still_count(tmp_path: Path) -> None:
    """A gate with a descriptive guard was keyed with it in (harness before the key left such guards out): the looks
    recorded under that key are this gate's, and are counted."""
    from harness.config.load import load_config
    from harness.decision.release import gate_keys

    config = _many_queries(tmp_path, "{measure: nDCG@5, max_drop: 0.05}, {measure: P@5, max_drop: 0.0, descriptive: true}")
    _looks(config)
    release = load_config(config).release
    assert release is not None
    key, before = gate_keys(release)
    root = tmp_path / "out" / "ni"
    root.mkdir(parents=True)
    earlier = {"id": "look-recorded-before", "key": before, "look": 1, "looks": 3, "level": 0.05 / 27}
    (root / ".looks.jsonl").write_text(json.dumps(earlier) + "\n")
    code, outcome, err = _run(config)
    assert code in (0, 3, 6), err
    gate = _gate(outcome)
    assert (gate["key"], gate["look"], gate["level"]) == (key, 2, pytest.approx(0.05 * 7 / 27, rel=1e-12))


def _api_tables() -> dict[str, object]:
    import harness

    qrels = harness.Qrels.from_dict({f"q{i}": {"a": 1, "b": 0} for i in range(60)})
    prod = harness.evaluate(qrels, harness.Run.from_dict({f"q{i}": {"a": 2.0, "b": 1.0} for i in range(60)}, name="p"), ["RR"])
    scores = {f"q{i}": {"a": 1.0 + (i % 9 != 0), "b": 1.5} for i in range(60)}
    return {"p": prod, "c": harness.evaluate(qrels, harness.Run.from_dict(scores, name="c"), ["RR"])}


def test_the_api_counts_a_gate_s_looks_in_its_ledger_and_refuses_a_repeated_one(tmp_path: Path) -> None:
    """harness.decide with looks= records each look in the ledger folder it is given and counts them from there, as
    harness run does: look k is tested at alpha (k/3)^3 less what the recorded looks spent; a look given again by its
    number, or a look beyond the plan, is refused; without a ledger a planned gate is refused."""
    import harness
    from harness.errors import HarnessError

    tables, guards = _api_tables(), [{"measure": "RR", "max_drop": 0.05}]
    with pytest.raises(HarnessError, match="needs the record of its earlier looks"):
        harness.decide(tables, "p", "c", guards, looks=3, look=1)
    levels = []
    for look in (1, 2):
        decision = harness.decide(tables, "p", "c", guards, looks=3, ledger=tmp_path)
        assert (decision.look, decision.looks) == (look, 3) and decision.look_id
        levels.append(decision.tested_at)
    assert levels == [pytest.approx(0.05 / 27, rel=1e-12), pytest.approx(0.05 * 7 / 27, rel=1e-12)]
    ledger = [json.loads(line) for line in (tmp_path / ".looks.jsonl").read_text().splitlines()]
    assert [(e["look"], e["level"]) for e in ledger] == [(1, levels[0]), (2, levels[1])]
    with pytest.raises(HarnessError, match=r"this is look 3 of the gate by its record .* not look 2"):
        harness.decide(tables, "p", "c", guards, looks=3, look=2, ledger=tmp_path)
    last = harness.decide(tables, "p", "c", guards, looks=3, look=3, ledger=tmp_path)
    assert last.tested_at == pytest.approx(0.05 * 19 / 27, rel=1e-12)
    with pytest.raises(HarnessError, match="all recorded"):
        harness.decide(tables, "p", "c", guards, looks=3, ledger=tmp_path)
    # another gate (other guards) in the same ledger starts its own count
    other = harness.decide(tables, "p", "c", [{"measure": "RR", "max_drop": 0.04}], looks=3, ledger=tmp_path)
    assert other.look == 1
