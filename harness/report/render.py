"""ReportModel -> one self-contained HTML file, and a Markdown summary for pull requests."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from harness._atomic import atomic_write
from harness._text import for_markdown
from harness.errors import ReportError
from harness.records.store import SavedResults
from harness.report.format import as_ascii
from harness.report.model import ReportModel, Table, build_model

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
        if v.production_evidence:
            lines += [f"Production's values ({_md(v.production)}) were reused from {_md(v.production_evidence)}.", ""]
        if v.promotion:
            lines += [f"**Promotion:** {_md(v.promotion)}", ""]
        marks = {"PASS": "✅", "FAIL": "❌", "INCONCLUSIVE": "❔", "DESCRIPTIVE": "ℹ️"}
        lines += [f"- {marks[g.verdict]} {g.verdict} {_md(g.guard)}: {_md(g.reason)}" for g in v.guards]
        lines.append("")
        if v.warnings:
            what, basis = v.warning_heading
            lines += [f"**Warning: {_md(what)}** ({_md(basis)})", ""]
            lines += [f"- ⚠️ {_md(g.guard)}: {_md(g.reason)}" for g in v.warnings] + [""]
    if model.verdict is None:
        lines += ["No release gate is configured.", ""]
    for section in model.datasets:  # a judged dataset's judge: what the corrected numbers had to correct
        if section.labels is not None and section.labels.warnings:
            lines += [f"**Warning: the judge on {_md(section.name)}**", ""]
            lines += [f"- ⚠️ {_md(w)}" for w in section.labels.warnings] + [""]
    if model.release_changes is not None and model.verdict is not None:
        lines += _release_sections(model.release_changes, model.verdict.candidate, model.verdict.production)
        if model.changes:
            lines += ["**Every system against the baseline, and data warnings**", ""]
            lines += [f"- {_md(line)}" for line in model.changes] + [""]
    elif model.changes:
        lines += ["**What changed**", ""] + [f"- {_md(line)}" for line in model.changes] + [""]
    for section in model.datasets:
        lines += [f"**{_md(section.name)}**" + (f" (baseline: {_md(section.baseline)})" if section.baseline else ""), ""]
        for table in (section.main_table, section.beyond_table, section.against_baseline):
            if table is None:
                continue
            lines.append("| " + " | ".join(_md(as_ascii(label)) for label, _ in table.columns) + " |")
            lines.append("|" + "---|" * len(table.columns))
            for row in table.rows:
                lines.append("| " + " | ".join(_md(as_ascii(cell.text)) for cell in row) + " |")
            lines.append("")
    lines.append(f"{_md(model.markdown_legend)} Full report: `{report_name}`.")
    return "\n".join(lines) + "\n"


SHOWN_ROWS = 40  # of the significant losses, and of the gains, in a pull-request comment; the report has them all


def _release_sections(release: Table, candidate: str, production: str) -> list[str]:
    """The release's significant losses, then its significant gains (each a table, largest first), then one line for
    the comparisons with no detectable change (how many, and the largest difference they could have missed) and one
    for those undefined there."""
    kinds = release.kinds
    pair = f"{_md(candidate)} against {_md(production)}"
    out = []
    for kind, heading in (("loss", "Significant losses"), ("gain", "Significant gains")):
        rows = [row for row, k in zip(release.rows, kinds, strict=True) if k == kind]
        out += [f"**{heading}: {pair}** ({len(rows)})", ""]
        if not rows:
            out += ["None.", ""]
            continue
        out.append("| " + " | ".join(_md(as_ascii(label)) for label, _ in release.columns[:7]) + " |")
        out.append("|" + "---|" * 7)
        for row in rows[:SHOWN_ROWS]:
            out.append(
                "| "
                + " | ".join(_md(as_ascii(cell.text) + (f" {as_ascii(cell.note)}" if cell.note else "")) for cell in row[:7])
                + " |"
            )
        if len(rows) > SHOWN_ROWS:
            out.append(f"\nand {len(rows) - SHOWN_ROWS} more in the report.")
        out.append("")
    unchanged = [row for row, k in zip(release.rows, kinds, strict=True) if k == "none"]
    if unchanged:
        detectable = [(float(row[7].sort), row) for row in unchanged if row[7].sort]
        line = f"**No detectable change** in {len(unchanged)} comparison(s)"
        if detectable:
            _, row = max(detectable, key=lambda pair: pair[0])
            line += (
                f"; the largest true difference they could miss (their minimum detectable effect at 80% power) is "
                f"{_md(as_ascii(row[7].text))}, on {_md(row[2].text)} ({_md(row[0].text)} / {_md(row[1].text)}). "
                "Not evidence of no change."
            )
        else:
            line += ". Not evidence of no change."
        out += [line, ""]
    undefined = sum(1 for k in kinds if k == "undefined")
    if undefined:
        out += [f"**Undefined here** in {undefined} comparison(s) (the measure has no value on those users): not tested.", ""]
    return out


@dataclass(frozen=True)
class RenderedReport:
    """A results folder's report.html and summary.md, rendered and not yet written."""

    model: ReportModel
    html: str
    markdown: str


def render_report(results: SavedResults) -> RenderedReport:
    """The report of ``results``, rendered in memory; a fault of the renderer (a bug) raises
    :class:`~harness.errors.ReportError` with its traceback chained."""
    try:
        model = build_model(results)
        return RenderedReport(model, render_html(model), render_markdown(model))
    except OSError as exc:
        raise _unwritable(exc, results.folder) from exc
    except Exception as exc:  # a fault of the renderer (a bug): the results and the verdict stand without it
        raise ReportError(
            f"the report could not be rendered ({type(exc).__name__}: {exc})",
            path=results.folder,
            hint="please report it (harness report RESULTS_DIR tries again)",
        ) from exc


def write_rendered(folder: Path, rendered: RenderedReport) -> Path:
    """Write a rendered report into its results folder (each file atomically); the path of report.html."""
    try:
        html_path = atomic_write(folder / "report.html", rendered.html)
        atomic_write(folder / "summary.md", rendered.markdown)
    except OSError as exc:
        raise _unwritable(exc, folder) from exc
    return html_path


def _unwritable(exc: OSError, folder: Path) -> ReportError:
    return ReportError(
        f"cannot write the report: {exc.strerror or exc}",
        path=exc.filename or folder,
        hint="free space or make the folder writable, then: harness report RESULTS_DIR",
    )


def write_report(results: SavedResults) -> tuple[Path, ReportModel]:
    """Render report.html and summary.md into the results folder (each written atomically).

    Raises :class:`~harness.errors.ReportError` for whatever stops it: a folder it cannot write
    (with the path and the fix), or a fault of the renderer itself (its traceback chained), so
    the stages before it (the results and the verdict, already saved) are never lost to it.
    """
    rendered = render_report(results)
    return write_rendered(results.folder, rendered), rendered.model
