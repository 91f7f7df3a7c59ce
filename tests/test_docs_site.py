"""The documentation site, built as make docs builds it (strict): the API reference shows its examples as code."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.repo import ROOT


@pytest.mark.slow
def test_the_api_reference_shows_examples_as_highlighted_code(tmp_path: Path) -> None:
    mkdocs = Path(sys.executable).parent / "mkdocs"
    subprocess.run(
        [str(mkdocs), "build", "--strict", "--quiet", "--site-dir", str(tmp_path)],
        cwd=ROOT,
        check=True,
        timeout=600,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    page = (tmp_path / "api.html").read_text()  # pages, not folders: the site is read from disk
    assert "<blockquote>" not in page  # a >>> line read as Markdown is three nested quotes
    # every example a highlighted console session: its prompts marked as such (Pygments' "gp"), its code as Python
    sessions = [b for b in re.findall(r'<div class="highlight"><pre>(.*?)</pre>', page, re.S) if 'class="gp"' in b]
    assert len(sessions) >= 10 and any("evaluate" in re.sub(r"<[^>]+>", "", s) for s in sessions)
    prompts = page.count("&gt;&gt;&gt;")
    assert prompts == sum(s.count("&gt;&gt;&gt;") for s in sessions)  # none left outside a code block
    # opened from disk, as the README says: every link between pages names a file, never a folder
    home = (tmp_path / "index.html").read_text()
    links = set(re.findall(r'href="([^"#:]+)"', home))
    pages = [link for link in links if not link.startswith(("assets/", "search/")) and "." not in link.rsplit("/", 1)[-1]]
    assert "cli.html" in links and not pages, pages
