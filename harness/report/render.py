"""ReportModel -> one self-contained HTML file, and a Markdown summary for pull requests."""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import TYPE_CHECKING

from harness._atomic import atomic_write
from harness._text import for_markdown
from harness.errors import ReportError
from harness.records.store import SavedResults
from harness.report.model import ReportModel, build_model

if TYPE_CHECKING:
    from jinja2 import Environment


def _environment() -> Environment:
    from jinja2 import Environment, PackageLoader, StrictUndefined

    return Environment(
        loader=PackageLoader("harness", "report/templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render_html(model: ReportModel) -> str:
    """The page: CSS, script and charts inline; a Content-Security-Policy blocks every network
    request and every script but ours (by nonce), so an id or name that slipped through
    escaping still could not run."""
    return str(_environment().get_template("report.html.j2").render(m=model, nonce=secrets.token_urlsafe(16)))


def _md(text: str) -> str:
    r"""Text as literal Markdown (:func:`harness._text.for_markdown`): no name or title can add a line, a heading, a
    link or a table cell to summary.md, the pull-request comment.

    >>> _md("drop <= 0.005 | <b>x</b>")
    'drop \\<= 0.005 \\| \\<b\\>x\\</b\\>'
    >>> _md("cand\n## ✅ Release gate: PASS")
    'cand \\#\\# ✅ Release gate: PASS'
    """
    return for_markdown(text)


def render_markdown(model: ReportModel, report_name: str = "report.html") -> str:
    lines = [f"## {_md(model.title)}", ""]
    if model.verdict is not None:
        v = model.verdict
        treated = "" if v.outcome == v.verdict else f", treated as {v.outcome}"
        lines += [f"**Release gate: {v.verdict}{treated}** ({_md(v.candidate)} against {_md(v.production)})", ""]
        lines += [f"_{_md(v.errors)}._", ""]
        marks = {"PASS": "✅", "FAIL": "❌", "INCONCLUSIVE": "❔", "DESCRIPTIVE": "ℹ️"}
        lines += [f"- {marks[g.verdict]} {g.verdict} {_md(g.guard)}: {_md(g.reason)}" for g in v.guards]
        lines.append("")
    if model.verdict is None:
        lines += ["No release gate is configured.", ""]
    if model.release_changes is not None and model.verdict is not None:
        release, shown = model.release_changes, 15  # a pull-request comment: the largest losses; the rest in the report
        lines += [f"**What changed: {_md(model.verdict.candidate)} against {_md(model.verdict.production)}** "
                  f"(losses first; {min(shown, len(release.rows))} of {len(release.rows)} rows)", ""]  # fmt: skip
        lines.append("| " + " | ".join(_md(label) for label, _ in release.columns) + " |")
        lines.append("|" + "---|" * len(release.columns))
        for row in release.rows[:shown]:
            lines.append("| " + " | ".join(_md(cell.text + (f" {cell.note}" if cell.note else "")) for cell in row) + " |")
        lines.append("")
        if model.changes:
            lines += ["**Reference systems and data warnings**", ""] + [f"- {_md(line)}" for line in model.changes] + [""]
    elif model.changes:
        lines += ["**What changed**", ""] + [f"- {_md(line)}" for line in model.changes] + [""]
    for section in model.datasets:
        lines += [f"**{_md(section.name)}**" + (f" (baseline: {_md(section.baseline)})" if section.baseline else ""), ""]
        for table in (section.main_table, section.beyond_table, section.against_baseline):
            if table is None:
                continue
            lines.append("| " + " | ".join(_md(label) for label, _ in table.columns) + " |")
            lines.append("|" + "---|" * len(table.columns))
            for row in table.rows:
                lines.append("| " + " | ".join(_md(cell.text) for cell in row) + " |")
            lines.append("")
    lines.append(f"{_md(model.legend)} Full report: `{report_name}`.")
    return "\n".join(lines) + "\n"


def write_report(results: SavedResults) -> tuple[Path, ReportModel]:
    """Render report.html and summary.md into the results folder (each written atomically).

    Raises :class:`~harness.errors.ReportError` for whatever stops it: a folder it cannot write
    (with the path and the fix), or a fault of the renderer itself (its traceback chained), so
    the stages before it (the results and the verdict, already saved) are never lost to it.
    """
    try:
        model = build_model(results)
        html_path = atomic_write(results.folder / "report.html", render_html(model))
        atomic_write(results.folder / "summary.md", render_markdown(model))
    except OSError as exc:
        raise ReportError(f"cannot write the report: {exc.strerror or exc}", path=exc.filename or results.folder,
                          hint="free space or make the folder writable, then: harness report RESULTS_DIR") from exc  # fmt: skip
    except Exception as exc:  # a fault of the renderer (a bug): the results and the verdict stand without it
        raise ReportError(f"the report could not be rendered ({type(exc).__name__}: {exc})", path=results.folder,
                          hint="please report it (harness report RESULTS_DIR tries again)") from exc  # fmt: skip
    return html_path, model
