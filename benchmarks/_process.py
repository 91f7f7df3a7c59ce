"""One whole process timed, as every benchmark here measures tools: wall time and peak resident memory."""

from __future__ import annotations

import compileall
import functools
import importlib.util
import os
import subprocess
import time


@functools.cache
def compile_harness() -> None:
    """Byte-compile harness's modules, as installing it from a wheel does, once before anything is timed.

    harness is installed editable here, and where PYTHONDONTWRITEBYTECODE is set (this
    sandbox and its CI set it) every process would compile harness's modules from source
    again: 0.15 s of CPU a process at 7M lines (medians of 10), which the peers, installed
    from wheels with their bytecode, never pay. A module edited later is still compiled
    from source, as Python checks each file's time stamp.
    """
    spec = importlib.util.find_spec("harness")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        compileall.compile_dir(folder, quiet=1)


def measure_process(command: list[str]) -> tuple[float, float, str]:
    """(seconds, peak resident MB, stdout) of one process; exits naming the command when it fails."""
    compile_harness()
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    out = process.stdout.read() if process.stdout else ""
    err = process.stderr.read() if process.stderr else ""
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"{command[1:3]} failed ({process.returncode}):\n{err}")
    return elapsed, usage.ru_maxrss / 1024, out
