"""The demo's report read in Debian's chromium at 1400 px, as a release manager reads it (issue 47): every chart's
axis reads as a scale (distinct ticks, evenly stepped) and no number is broken across lines."""

from __future__ import annotations

import io
import itertools
import json
import math
import shutil
from pathlib import Path

import pytest

from harness.cli import main
from harness.demo import generate
from tests.repo import ROOT
from tests.report.test_report import SCREENSHOTS, _browser

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def demo_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp_path = tmp_path_factory.mktemp("demo")
    generate(tmp_path)
    (tmp_path / "configs").mkdir()
    shutil.copy(ROOT / "configs" / "demo.yaml", tmp_path / "configs" / "demo.yaml")
    out, err = io.StringIO(), io.StringIO()
    for _ in range(2):  # two folders: the run-after-run charts are drawn from the second
        main(["run", str(tmp_path / "configs" / "demo.yaml"), "--json", "--quiet", "--no-tracking"], out, err)
        folder = Path(json.loads(out.getvalue().splitlines()[-1])["results_dir"])
    return folder / "report.html"


def test_every_chart_axis_reads_as_a_scale_and_no_number_wraps(demo_report: Path) -> None:
    manager, browser = _browser()
    try:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(demo_report.as_uri())
        page.wait_for_load_state("load")
        page.evaluate("document.querySelectorAll('.hidden').forEach(e => e.classList.remove('hidden'))")  # every chart
        axes = page.evaluate(
            """() => Array.from(document.querySelectorAll('svg.chart')).filter(s => s.querySelector('text.y-tick'))
                 .map(s => ({title: s.querySelector('.chart-title').textContent,
                             ticks: Array.from(s.querySelectorAll('text.y-tick')).map(t => t.textContent)}))"""
        )
        assert len(axes) >= 10
        assert any("run after run" in axis["title"] for axis in axes)
        for axis in axes:
            ticks = axis["ticks"]
            values = [float(t) for t in ticks]
            steps = {round(b - a, 12) for a, b in itertools.pairwise(values)}
            assert len(set(ticks)) == len(ticks) >= 3, axis  # distinct labels
            assert len(steps) == 1, axis  # evenly stepped
            step = steps.pop()
            mantissa = step / 10 ** math.floor(math.log10(step))
            assert round(mantissa, 6) in (1.0, 2.0, 5.0), axis  # a 1-2-5 step
        wrapped = page.evaluate(
            """() => Array.from(document.querySelectorAll('td.num')).filter(td => {
                 const text = td.firstChild; if (!text || text.nodeType !== 3 || !text.textContent.trim()) return false;
                 const range = document.createRange(); range.selectNodeContents(text);
                 const tops = new Set(Array.from(range.getClientRects()).map(r => Math.round(r.top)));
                 return tops.size > 1; }).map(td => td.textContent)"""
        )
        assert page.locator("td.num").count() > 200
        assert wrapped == [], wrapped[:5]
        SCREENSHOTS.mkdir(exist_ok=True)
        page.goto(demo_report.as_uri())
        page.wait_for_load_state("load")
        # the first screen has no box that scrolls on its own (a row cut in half inside it)
        inner = page.evaluate(
            """() => Array.from(document.querySelectorAll('body *')).filter(e => {
                 const style = getComputedStyle(e), box = e.getBoundingClientRect();
                 return /(auto|scroll)/.test(style.overflowY + style.overflowX) && box.top < window.innerHeight
                        && (e.scrollHeight > e.clientHeight + 1 || e.scrollWidth > e.clientWidth + 1); })
                 .map(e => e.tagName + '.' + e.className)"""
        )
        assert inner == [], inner
        page.screenshot(path=str(SCREENSHOTS / "demo-report.png"), full_page=False)
    finally:
        browser.close()
        manager.stop()
