"""The process: ``harness`` (the console script) and ``python -m harness``.

This module owns what belongs to the process rather than to a command: the exit code of an
internal error, and the two process settings kept for speed, each with its measured reason
below. Nothing here runs at import (the Dask engine's worker processes import this module
again); the library and :func:`harness.cli.main` never change process state.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import os
import sys
import threading
import traceback
from typing import NoReturn

from harness.cli import EXIT_INTERNAL, main


def main_entry() -> None:
    """Console-script entry point (and ``python -m harness``)."""
    # OpenBLAS's threads spin for about 0.1 s of a core after they start, at numpy's
    # import, whether or not BLAS is ever called: on 2 cores that is taken from Arrow's
    # parse (harness eval at 7M lines: 0.16 s less CPU, the medians of 10). With a short
    # spin they sleep at once, and matrix products still use every core. Read when
    # numpy loads, which is after this line; a value the user set wins.
    os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")
    # Imports (numba's above all) allocate hundreds of thousands of objects that live as
    # long as the process, and the default thresholds walk them again and again; the
    # kernels make no cyclic garbage. A larger first generation, as mypy sets it: 0.15 s
    # less CPU at 7M lines (the medians of 10).
    gc.set_threshold(100_000, 50, 100)
    try:
        code = main()
    except Exception:  # a bug, not a user's mistake: its traceback, and the exit code that says so
        traceback.print_exc()
        sys.stderr.write("harness: internal error: please report it with the traceback above\n")
        code = EXIT_INTERNAL
    leave(code)


def leave(code: int) -> NoReturn:
    """Exit with ``code``, skipping the interpreter's teardown when nothing is left to finish.

    Once numba is loaded, finalising the modules takes 0.27 s (its LLVM objects and the
    collector walking its objects), against 0.02 s for the kernel to free the memory:
    15% of ``harness eval`` at 7M lines. What a program expects at exit still happens:
    the atexit handlers run (temporary folders, logging, Dask's and MLflow's shutdown)
    and both streams are flushed. While a non-daemon thread runs, the normal exit waits
    for it.
    """
    if any(not thread.daemon for thread in threading.enumerate() if thread is not threading.main_thread()):
        sys.exit(code)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # the reader has gone (a closed pipe): nothing to deliver
            stream.flush()
    os._exit(code)


if __name__ == "__main__":  # the dask engine's worker processes import this module again: they must not run it
    main_entry()
