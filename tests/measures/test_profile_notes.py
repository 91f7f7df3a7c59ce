"""A run under a tool's profile says which measures the tool computes under conventions of their own (its per-measure
ones, harness.measures.peers), since one run shares its conventions across every measure: Elliot reads every test
user's list for RSP, and its accuracy metrics only the users with a relevant item."""

from __future__ import annotations

import io
import json
import textwrap
from pathlib import Path

from harness.cli import main
from harness.config.load import load_config
from tests.repo import ROOT

GOLDEN = ROOT / "tests" / "fixtures" / "fairness"
EXPECTED = {v["id"]: v["value"] for v in json.loads((GOLDEN / "expected.json").read_text())["values"]}


def _eval(*extra: str) -> tuple[float, str]:
    out, err = io.StringIO(), io.StringIO()
    command = [
        "eval",
        str(GOLDEN / "test.csv"),
        str(GOLDEN / "run.csv"),
        "--qrels-columns",
        "query=user,doc=item,relevance=rating",
        "--run-columns",
        "query=user,doc=item,score=score",
        "--train",
        str(GOLDEN / "train.csv"),
        "--train-columns",
        "query=user,doc=item",
        "--items",
        str(GOLDEN / "items.csv"),
        "--items-groups",
        "provider,popgroup",
        "-l",
        "4",
        "--profile",
        "elliot",
        "-m",
        "RSP(group=provider)@10",
        "--format",
        "json",
        "--quiet",
        *extra,
    ]
    assert main(command, out, err) == 0, err.getvalue()
    return float(json.loads(out.getvalue())["results"][0]["value"]), err.getvalue()


def test_eval_under_a_profile_names_a_measure_the_tool_computes_over_other_users() -> None:
    value, err = _eval()
    assert "note: Elliot computes RSP(group='provider')@10 with queries: qrels; this run uses queries: relevant" in err
    assert "evaluate it apart with --queries qrels" in err
    # the golden case has users without a rating of 4 or more: the run's value is not Elliot's, and says so
    assert value != EXPECTED["elliot.RSP.provider@10"]
    value, err = _eval("--queries", "qrels")  # as the note says: Elliot's value, and nothing to note
    assert err == "" and abs(value - EXPECTED["elliot.RSP.provider@10"]) < 1e-12


def test_a_config_under_a_profile_notes_it_once(tmp_path: Path) -> None:
    config = tmp_path / "exp.yaml"
    config.write_text(
        textwrap.dedent(
            f"""\
            experiment: fair
            profile: elliot
            datasets:
              - name: d
                qrels: {GOLDEN / "test.csv"}
                columns: {{query: user, doc: item, relevance: rating}}
                run_columns: {{query: user, doc: item, score: score}}
                relevance_level: 4
                train: {{path: {GOLDEN / "train.csv"}, columns: {{query: user, doc: item}}}}
                items: {{path: {GOLDEN / "items.csv"}, id: item, groups: [provider]}}
            systems:
              - {{name: a, runs: {{d: {GOLDEN / "run.csv"}}}}}
            measures: ["RSP(group=provider)@10", P@10]
            """
        )
    )
    notes = load_config(config).notes
    assert len(notes) == 1 and notes[0].startswith(f"{config}: Elliot computes RSP(group='provider')@10 with queries: qrels")
