"""The HTML report in a real headless Chromium (Debian's), and the release gate per guard kind (issue 6).

The data are built so that every difference is known: 40 queries with 100 relevant
documents each; ``prod`` ranks all relevant documents first (AP = 1).
  tiny_drop:    swaps ranks 100 and 101 on every query: AP drops by 1/10100 on every
                query, a tiny but perfectly consistent (significant) drop;
  tail_drop:    puts 20 non-relevant documents on top for the 20 "tail" queries only;
  big_drop:     does so on every query.
"""

from __future__ import annotations

import io
import json
import shutil
import textwrap
from pathlib import Path

import pandas as pd
import pytest
from scipy import stats

from harness.cli import main
from harness.report.format import format_p
from tests.tiers import require

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / ".test-output"
HOSTILE_SYSTEM = "<script>alert(1)</script>"
QIDS = [f"q{i:02d}" for i in range(39)] + ["q\"39'<i>x</i>"]


def _ranking(kind: str, q: int) -> list[str]:
    docs = [f"d{i:03d}" for i in range(200)]
    if kind == "tiny_drop":
        docs[99], docs[100] = docs[100], docs[99]
    if kind == "big_drop" or (kind == "tail_drop" and q >= 20):
        docs = docs[100:120] + docs[:100] + docs[120:]
    return docs


def _write_run(path: Path, kind: str, tag: str) -> None:
    lines = []
    for q, qid in enumerate(QIDS):
        for rank, doc in enumerate(_ranking(kind, q)):
            lines.append(f"{qid} Q0 {doc} {rank + 1} {200 - rank} {tag}\n")
    path.write_text("".join(lines))


def _experiment(tmp_path: Path, guards: str, candidate: str, extra: str = "") -> Path:
    (tmp_path / "qrels.txt").write_text("".join(f"{qid} 0 d{i:03d} {1 if i < 100 else 0}\n" for qid in QIDS for i in range(150)))
    (tmp_path / "segments.csv").write_text(
        "query,segment\n"
        + "".join(f'"{q.replace(chr(34), chr(34) * 2)}",{"head" if i < 20 else "tail"}\n' for i, q in enumerate(QIDS))
    )
    for kind in ("prod", "tiny_drop", "tail_drop", "big_drop"):
        _write_run(tmp_path / f"{kind}.run", kind, kind)
    config = tmp_path / "exp.yaml"
    config.write_text(
        textwrap.dedent(
            f"""\
            experiment: gate
            datasets:
              - {{name: main, qrels: qrels.txt, segments: {{path: segments.csv}}}}
              - {{name: copy, qrels: qrels.txt}}
            systems:
              - {{name: prod, runs: {{main: prod.run, copy: prod.run}}}}
              - {{name: tiny_drop, runs: {{main: tiny_drop.run, copy: tiny_drop.run}}}}
              - {{name: tail_drop, runs: {{main: tail_drop.run, copy: prod.run}}}}
              - {{name: big_drop, runs: {{main: big_drop.run, copy: big_drop.run}}}}
              - {{name: "{HOSTILE_SYSTEM}", runs: {{main: prod.run, copy: prod.run}}}}
            measures: [{{measure: AP, cutoffs: []}}, P@10, nDCG@10, nDCG@20, RR]
            baseline: prod
            stats: {{permutations: 2000, resamples: 2000, seed: 3}}
            tracking: {{enabled: false}}
            report:
              title: Gate check
            release:
              production: prod
              candidate: {candidate}
              guards: [{guards}]
            output: out
            {extra}
            """
        )
    )
    return config


def _run(config: Path) -> tuple[int, str, dict[str, object]]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["run", str(config), "--quiet", "--verbose"], out, err)  # each guard's reasoning too
    assert code in (0, 3, 6), err.getvalue()
    folder = next(line.split(None, 1)[1] for line in out.getvalue().splitlines() if line.startswith("results:"))
    return code, out.getvalue(), {"folder": Path(folder), "err": err.getvalue()}


GATES = [
    # (guard yaml, candidate, expected exit code, text expected in the verdict line). tiny_drop loses the same 0.0001 of
    # AP on every query: a difference without spread, which no guard decides (issue 41): the betting bound's reach with
    # no spread is the capped bet's 2 log(20) / (n * 0.75 / 0.505) = 0.1009 at 40 users (0.0999 for the 0.00005 margin),
    # far wider than either margin. Identical values (copy, head) are "0 of n users changed", likewise undecided.
    ("{measure: AP, max_drop: 0.01}", "tiny_drop", 6, "(40 of 40 users changed); neither one-sided 95% bound (drop >= "),
    ("{measure: AP, max_drop: 0.00005}", "tiny_drop", 6, "40 users detect a distance of 0.0999 from it"),
    ("{measure: AP, max_drop: 0.05}", "big_drop", 3, "AP on main: 1.0000 -> "),
    ("{measure: AP, dataset: copy, max_drop: 0.01}", "tail_drop", 6, "(0 of 40 users changed)"),
    ("{measure: AP, dataset: copy, max_drop: 0.0}", "tail_drop", 6, "AP on copy: 1.0000 -> 1.0000, drop +0.0000"),
    ("{measure: AP, dataset: main, max_drop: 0.0}", "tail_drop", 3, "AP on main: 1.0000 -> "),
    ("{measure: P@10, segment: head, max_drop: 0.01}", "tail_drop", 6, "20 users detect a distance of 0.2017 from it"),
    ("{measure: AP, dataset: main, max_drop: 0.9}", "tail_drop", 0, "release gate PASS"),  # a drop of 0.18 with spread
    ("{measure: P@10, segment: tail, max_drop: 0.0}", "tail_drop", 3, "P@10 on main / tail: 1.0000 -> "),
]


@pytest.mark.parametrize(("guards", "candidate", "code", "line"), GATES, ids=[f"{g[1]}-{i}" for i, g in enumerate(GATES)])
def test_release_gate(tmp_path: Path, guards: str, candidate: str, code: int, line: str) -> None:
    got, out, info = _run(_experiment(tmp_path, guards, candidate))
    assert got == code
    assert line in out
    folder = info["folder"]
    assert isinstance(folder, Path)
    html = (folder / "report.html").read_text()
    verdict = {0: "PASS", 3: "FAIL", 6: "INCONCLUSIVE"}[code]
    assert f'<span class="label">{verdict}</span>' in html
    assert f"**Release gate: {verdict}**" in (folder / "summary.md").read_text()
    if candidate == "tail_drop":  # "what changed" leads with the regression, in the report and the PR comment
        summary = (folder / "summary.md").read_text()
        assert "- tail_drop is significantly worse than prod on main / tail in" in summary
        assert "tail_drop is significantly worse than prod on main / head" not in summary
        assert '<section id="what-changed">' in html and "tail_drop is significantly worse than prod on main / tail" in html
        changes = html[html.index('<section id="what-changed">') :]
        first = changes[changes.index('<table class="sortable" id="release-changes">') :]
        first_row = first[first.index("<tbody>") : first.index("</tr>", first.index("<tbody>"))]
        assert "sig-down" in first_row  # the release's table leads with a significant loss
    out_json = io.StringIO()
    assert main(["run", str(folder.parents[2] / "exp.yaml"), "--quiet", "--json"], out_json, io.StringIO()) == code
    assert json.loads(out_json.getvalue())["gate"] == verdict


def test_p_values_print_for_people() -> None:
    assert format_p(0.0000001) == "< 0.001" and format_p(0.0004999) == "< 0.001"
    assert format_p(0.001) == "0.001" and format_p(0.04567) == "0.046"


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp_path = tmp_path_factory.mktemp("report")
    guards = "{measure: nDCG@10, max_drop: 0.005}, {measure: P@10, segment: tail, max_drop: 0.0}"
    _, _, info = _run(_experiment(tmp_path, guards, "tail_drop"))
    folder = info["folder"]
    assert isinstance(folder, Path)
    return folder / "report.html"


def _browser():  # type: ignore[no-untyped-def]
    require("browser", "chromium")
    chromium = shutil.which("chromium")
    if chromium is None:
        pytest.fail("Debian's chromium is not installed: run `make test` (it installs it) or `apt-get install chromium`")
    from playwright.sync_api import sync_playwright

    manager = sync_playwright().start()
    browser = manager.chromium.launch(
        executable_path=chromium,
        args=[
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
        ],
    )
    return manager, browser


@pytest.mark.browser
def test_report_in_chromium(report: Path) -> None:
    manager, browser = _browser()
    try:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        console, requests, dialogs = [], [], []
        page.on("console", lambda msg: console.append(msg.text) if msg.type in ("error", "warning") else None)
        page.on("pageerror", lambda exc: console.append(str(exc)))
        page.on("request", lambda request: requests.append(request.url))
        page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
        page.goto(report.as_uri())
        page.wait_for_load_state("load")
        assert console == [], console
        assert requests == [report.as_uri()], f"the page must make no request of its own: {requests}"
        assert dialogs == []
        # the verdict and the main tables are there and visible
        assert page.locator("#verdict").is_visible()
        assert "FAIL" in page.locator("#verdict .label").inner_text()
        main_table = page.locator("section#ds-main table.sortable").first
        assert main_table.is_visible()
        # nothing is wider than the page at 1400 px: no horizontal scrolling anywhere
        too_wide = page.evaluate(
            """() => Array.from(document.querySelectorAll('body *'))
                 .filter(e => e.getClientRects().length && e.getBoundingClientRect().right > window.innerWidth + 0.5)
                 .map(e => e.tagName + '.' + e.className)"""
        )
        assert too_wide == [] and page.evaluate("document.documentElement.scrollWidth") <= 1400, too_wide
        # "what changed" leads; one compact comparison table, no mirrored matrices
        assert page.locator("#what-changed li", has_text="big_drop is significantly worse than prod on main in").count() == 1
        comparisons = page.locator("#ds-main-comparisons")
        assert comparisons.is_visible() and comparisons.locator("tbody tr").count() == 4 * 5 * 3  # pairs x measures x segments
        heads = comparisons.locator("thead th").all_inner_texts()
        assert (
            heads[:10]
            == ["segment", "measure", "b vs a", "mean a", "mean b", "b − a", "95% CI", "p (corrected)", "d_z", "W / T / L"]
            and heads[10] == "Tukey HSD p"
        )
        assert page.locator("table.pairwise").count() == 0
        # every visible chart is rendered with a size, with axis titles
        charts = page.locator("svg.chart:visible")
        assert charts.count() >= 6
        for i in range(charts.count()):
            chart = charts.nth(i)
            chart.scroll_into_view_if_needed()
            box = chart.bounding_box()
            assert box is not None and box["width"] > 100 and box["height"] > 100, i
        assert page.locator("svg.chart:visible text.axis-title").count() >= 2 * 6
        # per-query charts for every measure, one measure at a time
        select = page.locator('select.measure-select[data-section="ds-main"]')
        assert select.locator("option").all_inner_texts() == ["AP", "P@10", "nDCG@10", "nDCG@20", "RR"]
        first = page.locator('div.measure-charts[data-section="ds-main"][data-index="0"]')
        third = page.locator('div.measure-charts[data-section="ds-main"][data-index="2"]')
        assert first.is_visible() and not third.is_visible()
        select.select_option("2")
        assert third.is_visible() and not first.is_visible()
        assert "nDCG@10: big_drop − prod, per query" in third.inner_text()
        # sorting a column of the main table (measures as rows): ascending on first click, descending on the second
        header = main_table.locator("thead th").nth(1)

        def column() -> list[float]:
            values = main_table.locator("tbody tr td:nth-child(2)").evaluate_all(
                "cells => cells.map(c => c.getAttribute('data-sort'))"
            )
            return [float(v) for v in values]

        header.click()
        assert column() == sorted(column()) and len(column()) == 5
        header.click()
        assert column() == sorted(column(), reverse=True)
        # filtering the comparison table
        page.locator('input.filter[data-table="ds-main-comparisons"]').fill("P@10")
        visible = comparisons.locator("tbody tr:visible")
        assert visible.count() == 4 * 3 and set(visible.locator("td:nth-child(2)").all_inner_texts()) == {"P@10"}
        page.locator('input.filter[data-table="ds-main-comparisons"]').fill("")
        # the conventions name the tools that share each value (harness/measures/peers.py USED_BY)
        conventions = page.locator("section#ds-main dl.kv").last.inner_text()
        assert "ap_denominator" in conventions and "(as in trec_eval, ranx, ir_measures)" in conventions
        # the per-query part is bounded: the queries that changed most, per measure and system
        top = page.locator("#ds-main-top-changes tbody tr")
        assert 0 < top.count() <= 10 * 5 * 4
        SCREENSHOTS.mkdir(exist_ok=True)
        page.evaluate("window.scrollTo(0, 0)")
        page.screenshot(path=str(SCREENSHOTS / "report.png"), full_page=False)
        assert (SCREENSHOTS / "report.png").stat().st_size > 10_000
    finally:
        browser.close()
        manager.stop()


@pytest.mark.browser
def test_hostile_names_are_text(report: Path) -> None:
    manager, browser = _browser()
    try:
        page = browser.new_page()
        dialogs: list[str] = []
        page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
        page.goto(report.as_uri())
        page.wait_for_load_state("load")
        assert dialogs == []
        assert page.locator("script").count() == 1  # ours, and only ours
        assert page.locator("td", has_text=HOSTILE_SYSTEM).count() >= 1  # shown as text
        assert page.locator("td", has_text="q\"39'<i>x</i>").count() >= 1  # it sorts first among the queries that changed most
        assert page.locator("td i").count() == 0  # the query id's <i> did not become an element
        svg_text = page.locator("svg.chart text", has_text="<script>").count()
        assert svg_text >= 1  # chart labels escaped too
    finally:
        browser.close()
        manager.stop()


def test_intervals_are_shown_within_the_values_a_measure_takes(tmp_path: Path) -> None:
    """RR 1, 1, 1, 1, 0.5: its t interval 0.9 +- 2.776 x 0.1 reaches 1.178, which no mean of RR can; the report shows
    it ending at 1, the summary table keeps it as computed."""
    (tmp_path / "qrels").write_text("".join(f"q{i} 0 d0 1\n" for i in range(5)))
    for name, second in (("a", {4}), ("b", {3, 4})):
        lines = [
            f"q{i} Q0 {d} {r} {2 - r} {name}\n"
            for i in range(5)
            for r, d in enumerate(("d1", "d0") if i in second else ("d0", "d1"), start=1)
        ]
        (tmp_path / f"{name}.run").write_text("".join(lines))
    (tmp_path / "exp.yaml").write_text(
        "experiment: edge\ndatasets: [{name: d, qrels: qrels}]\n"
        "systems: [{name: a, runs: {d: a.run}}, {name: b, runs: {d: b.run}}]\n"
        "measures: [RR]\nbaseline: a\nstats: {permutations: 100, resamples: 100}\ntracking: {enabled: false}\noutput: out\n"
    )
    out = io.StringIO()
    assert main(["run", str(tmp_path / "exp.yaml"), "--json", "--quiet"], out, io.StringIO()) == 0
    folder = Path(json.loads(out.getvalue())["results_dir"])
    summary = pd.read_parquet(folder / "summary.parquet").set_index("system")
    assert summary.loc["a", "ci_high"] == pytest.approx(0.9 + stats.t.ppf(0.975, 4) * 0.1, abs=1e-12)  # as computed
    html = (folder / "report.html").read_text()
    assert "[0.6224, 1.0000]" in html and "1.1776" not in html


def test_the_verdict_is_a_headline_then_the_guards_table(tmp_path: Path) -> None:
    """A terminal or CI log shows the verdict in one short line, each guard's numbers under it, and the reasoning
    only with --verbose (it is always in gate.json and the report)."""
    config = _experiment(tmp_path, "{measure: AP, max_drop: 0.01}, {measure: AP, max_drop: 0.05}", "tiny_drop")
    out, err = io.StringIO(), io.StringIO()
    assert main(["run", str(config), "--quiet"], out, err) == 6, err.getvalue()
    lines = out.getvalue().splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("release gate"))
    gate = json.loads((Path(lines[0].split(None, 1)[1]) / "gate.json").read_text())
    undecided = [g for g in gate["guards"] if g["verdict"] != "PASS" and not g["descriptive"]]
    names = ", ".join(dict.fromkeys(g["guard"].split(":")[0] for g in undecided))
    needed = gate["n_needed_gate"] or max(g["n_needed"] for g in undecided)
    planned = gate["gate_planned_for"] if gate["n_needed_gate"] else undecided[0]["planned_for"]
    assert lines[head] == (
        f"release gate INCONCLUSIVE: tiny_drop against prod: {len(undecided)} of {len(gate['guards'])} guards undecided "
        f"({names}); about {needed:,} users would decide it ({planned})"
    )
    assert len(lines[head]) < 240 < len(gate["line"])
    assert lines[head + 1].split() == [
        "guard",
        "verdict",
        "production",
        "->",
        "candidate",
        "drop",
        "bound",
        "allowed",
        "users",
        "needed",
    ]
    rows = lines[head + 2 : head + 2 + len(gate["guards"])]
    assert [row.strip().split("  ")[0] for row in rows] == [g["guard"] for g in gate["guards"]]
    assert gate["guards"][0]["reason"] not in out.getvalue() and "--verbose" in lines[head + 2 + len(rows)]
    verbose = io.StringIO()
    assert main(["run", str(config), "--quiet", "--verbose"], verbose, io.StringIO()) == 6
    assert gate["guards"][0]["reason"] in verbose.getvalue() and gate["errors"] in verbose.getvalue()
