"""The later stages again, on a results folder already written: ``harness track`` and ``harness report``.

A folder holds everything the record and report stages read, so they run on it exactly as
they ran at the end of ``harness run``.
"""

from __future__ import annotations

from pathlib import Path

from harness._text import clipped
from harness.decision.verdict import Decision
from harness.errors import HarnessError
from harness.records.store import read_results, write_tracking
from harness.records.track import Tracked, destination, track_results
from harness.report.render import write_report


def track_folder(folder: str | Path, uri: str | None = None, experiment: str | None = None) -> Tracked:
    """Log a results folder to MLflow and note where: ``uri``, else ``MLFLOW_TRACKING_URI``, else the local store of
    the experiment the folder sits in (``<output>/mlflow.db``, two folders up).

    The folder's own record of where it was meant to go (its config's ``tracking.uri``) is never followed: a folder
    can come from anywhere, and following it would send the user's credentials where the folder says. Where it names
    another destination than the one chosen, nothing is sent and the error says how to choose it.
    """
    results = read_results(folder)
    to = destination(uri, None, results.folder.parent.parent)
    recorded = (results.config.get("tracking") or {}).get("uri")
    if to.is_default and recorded and recorded != to.uri:
        raise HarnessError(
            f"the folder was meant to be logged at {clipped(recorded)}, which harness does not take from a results folder",
            path=results.folder,
            hint=f"if you trust that address, name it: harness track {folder} --uri <URI> (or set MLFLOW_TRACKING_URI); "
            f"to log to the local store, --uri {to.uri}",
        )
    tracked = track_results(results, to, experiment)
    write_tracking(results, tracked.as_dict())
    return tracked


def report_folder(folder: str | Path) -> tuple[Path, Decision | None]:
    """Render a results folder's report again: (the report's path, the release decision it shows, if any)."""
    path, model = write_report(read_results(folder))
    return path, model.verdict


__all__ = ["report_folder", "track_folder"]
