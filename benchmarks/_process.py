"""One whole process timed, as every benchmark here measures tools: wall time and peak resident memory."""

from __future__ import annotations

import os
import subprocess
import time


def measure_process(command: list[str]) -> tuple[float, float, str]:
    """(seconds, peak resident MB, stdout) of one process; exits naming the command when it fails."""
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
