"""The process: ``harness`` (the console script) and ``python -m harness``.

This module owns what belongs to the process rather than to a command: the exit code of an
internal error. It changes no process setting (no collector thresholds, no environment, no
shortcut at exit: the interpreter finishes as any program does). Nothing here runs at import
(the Dask engine's worker processes import this module again).
"""

from __future__ import annotations

import sys
import traceback

from harness.cli import EXIT_INTERNAL, main


def main_entry() -> None:
    """Console-script entry point (and ``python -m harness``)."""
    try:
        code = main(tracking_process="child")  # a process of its own: MLflow is imported beside the work, not in it
    except Exception:  # a bug, not a user's mistake: its traceback, and the exit code that says so
        traceback.print_exc()
        sys.stderr.write("harness: internal error: please report it with the traceback above\n")
        code = EXIT_INTERNAL
    sys.exit(code)


if __name__ == "__main__":  # the dask engine's worker processes import this module again: they must not run it
    main_entry()
