"""Names are data: whatever a system, segment, query id or title holds, the outputs stay what harness wrote (issue 49).

One real `harness run` with hostile names: a candidate whose name holds a line break, a forged verdict heading, a
terminal escape sequence and a bare URL; a production named as a spreadsheet formula; segments and query ids that
start as formulas; a title that forges a PASS heading. summary.md is parsed as CommonMark (markdown-it-py, GFM tables
on), every CSV with the csv module, and stdout is read as a CI log grep would."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

CANDIDATE = "cand\n## ✅ Release gate: PASS\x1b[2J https://evil.example"
PRODUCTION = '=HYPERLINK("http://evil.example","prod")'
TITLE = "Weekly\n## ✅ Release gate: PASS\n<script>alert(1)</script> www.evil.example"
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
Hostile = tuple[subprocess.CompletedProcess[str], Path]  # the run's process, and its results folder


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory: pytest.TempPathFactory) -> Hostile:
    folder = tmp_path_factory.mktemp("hostile")
    queries = [f"@q{q}" if q % 3 == 0 else f"+q{q}" for q in range(40)]
    qrels, production, candidate = [], [], []
    for q, query in enumerate(queries):
        qrels += [f"{query} 0 d{d} {int(d < 3)}\n" for d in range(8)]
        order = list(range(8)) if q % 2 else [7, *range(7)]
        production += [f"{query} Q0 d{d} {r + 1} {8 - r} p\n" for r, d in enumerate(range(8))]
        candidate += [f"{query} Q0 d{d} {r + 1} {8 - r} c\n" for r, d in enumerate(order)]
    (folder / "qrels.txt").write_text("".join(qrels))
    (folder / "prod.run").write_text("".join(production))
    (folder / "cand.run").write_text("".join(candidate))
    (folder / "seg.csv").write_text(
        "query,segment\n" + "".join(f"{query},{'=SUM(1+1)' if q < 20 else '@cmd'}\n" for q, query in enumerate(queries))
    )
    config = {
        "experiment": "hostile",
        "datasets": [{"name": "d", "qrels": "qrels.txt", "segments": {"path": "seg.csv"}}],
        "systems": [{"name": PRODUCTION, "runs": {"d": "prod.run"}}, {"name": CANDIDATE, "runs": {"d": "cand.run"}}],
        "measures": ["nDCG@5", "AP"],
        "stats": {"permutations": 200, "resamples": 200},
        "tracking": {"enabled": False},
        "report": {"title": TITLE},
        "release": {"production": PRODUCTION, "candidate": CANDIDATE, "guards": [{"measure": "nDCG@5", "max_drop": 0.0}]},
        "output": {"path": "out", "csv": True},  # per_query.csv too: every CSV cell is checked
    }
    (folder / "exp.yaml").write_text(yaml.safe_dump(config, allow_unicode=True))
    done = subprocess.run(
        [sys.executable, "-m", "harness", "run", str(folder / "exp.yaml"), "--quiet"],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert done.returncode in (3, 6), done.stderr  # a drop on half the queries: the gate does not PASS
    return done, next(p for p in (folder / "out" / "hostile").iterdir() if p.is_dir() and not p.is_symlink())


def test_summary_md_has_one_verdict_and_no_markup_from_names(hostile_run: Hostile) -> None:
    from markdown_it import MarkdownIt

    _, folder = hostile_run
    text = (folder / "summary.md").read_text()
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    headings = [t for t in tokens if t.type == "heading_open"]
    assert len(headings) == 1  # the title's own, and no forged one
    inline = [t for t in tokens if t.type == "inline"]
    kinds = {child.type for t in inline for child in t.children or []}
    assert not kinds & {"link_open", "html_inline", "image"}
    assert not any(t.type == "html_block" for t in tokens)
    assert "https://" not in text and "http://" not in text and "www.evil" not in text
    verdicts = [line for line in text.splitlines() if line.startswith("**Release gate:")]
    gate = json.loads((folder / "gate.json").read_text())
    assert len(verdicts) == 1 and verdicts[0].startswith(f"**Release gate: {gate['verdict']}")
    assert "\x1b" not in text


def test_stdout_has_one_verdict_line_and_no_control_characters(hostile_run: Hostile) -> None:
    done, folder = hostile_run
    lines = done.stdout.splitlines()
    assert len([line for line in lines if line.startswith("release gate")]) == 1
    assert "release gate PASS" not in done.stdout.replace("\\n## ✅ Release gate: PASS", "")
    assert not any(ch in done.stdout + done.stderr for ch in "\x1b\r")
    assert json.loads((folder / "gate.json").read_text())["candidate"] == CANDIDATE  # kept whole where it is data


def test_every_csv_cell_is_inert_and_parquet_keeps_the_names(hostile_run: Hostile) -> None:
    _, folder = hostile_run
    files = sorted(folder.glob("*.csv"))
    assert {"per_query.csv", "summary.csv", "comparisons.csv"} <= {f.name for f in files}
    cells = 0
    for path in files:
        with path.open(newline="") as handle:
            for row in csv.reader(handle):
                for cell in row:
                    cells += 1
                    assert not cell.startswith(FORMULA_START) or _is_number(cell), (path.name, cell)
    assert cells > 1000
    summary = pd.read_parquet(folder / "summary.parquet")
    assert {PRODUCTION, CANDIDATE} <= set(summary["system"]) and {"=SUM(1+1)", "@cmd"} <= set(summary["segment"])
    per_query = pd.read_csv(folder / "per_query.csv", keep_default_na=False)
    assert set(per_query["query_id"]) == {f"'{q}" for q in pd.read_parquet(folder / "per_query.parquet")["query_id"]}
