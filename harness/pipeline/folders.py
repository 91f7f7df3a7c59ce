"""The later stages again, on a results folder already written: ``harness track`` and ``harness report``.

A folder holds everything the record and report stages read, so they run on it exactly as
they ran at the end of ``harness run``.
"""

from __future__ import annotations

from pathlib import Path

from harness.decision.release import Decision
from harness.records.store import read_results, write_tracking
from harness.records.track import Tracked, track_results
from harness.report.render import write_report


def track_folder(folder: str | Path, uri: str | None = None, experiment: str | None = None) -> Tracked:
    """Log a results folder to MLflow (``uri``: the store, else the one the folder's config names) and note where."""
    results = read_results(folder)
    tracked = track_results(results, uri, experiment)
    write_tracking(results, tracked.as_dict())
    return tracked


def report_folder(folder: str | Path) -> tuple[Path, Decision | None]:
    """Render a results folder's report again: (the report's path, the release decision it shows, if any)."""
    path, model = write_report(read_results(folder))
    return path, model.verdict


__all__ = ["report_folder", "track_folder"]
