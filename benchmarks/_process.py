"""One whole process timed, as every benchmark here measures tools: wall time and peak resident memory."""

from __future__ import annotations

import compileall
import functools
import importlib.util
import subprocess
import sys
import tempfile
from pathlib import Path


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


# Started first, small, it starts the command and reports the command's own time and peak. Linux's peak resident
# size (ru_maxrss) takes in, at exec, the high-water mark of the memory the process was started from: with vfork (what
# subprocess and posix_spawn use) that is the starting process's own, so a command started straight from a benchmark
# that had held 800 MB reported 790 MB for `python -c pass`. Started from this launcher, it starts from ~10 MB.
_LAUNCHER = """
import os, sys, time
start = time.perf_counter()
pid = os.posix_spawnp(sys.argv[2], sys.argv[2:], os.environ)
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as report:
    report.write(f"{time.perf_counter() - start} {usage.ru_maxrss} {os.waitstatus_to_exitcode(status)}")
"""


def measure_process(command: list[str], ok: tuple[int, ...] = (0,)) -> tuple[float, float, str]:
    """(seconds, peak resident MB, stdout) of one process; exits naming the command when it fails (an exit code not
    in ``ok``: ``harness run``'s gate exits 3 on FAIL and 6 on INCONCLUSIVE, which are results).

    Its output goes to files, not pipes: a pipe left unread while the process runs blocks one whose output outgrows
    the pipe's buffer (64 KB).

    >>> import sys
    >>> seconds, peak_mb, out = measure_process([sys.executable, "-c", "print('hi')"])
    >>> out, 0 < seconds < 60, 1 < peak_mb < 200
    ('hi\\n', True, True)
    """
    compile_harness()
    with tempfile.TemporaryDirectory() as folder:
        paths = [Path(folder) / name for name in ("stdout", "stderr", "report")]
        with paths[0].open("w") as stdout, paths[1].open("w") as stderr:
            subprocess.run(
                [sys.executable, "-S", "-c", _LAUNCHER, str(paths[2]), *command], stdout=stdout, stderr=stderr, check=False
            )
        out, err, report = (path.read_text() if path.exists() else "" for path in paths)
    if not report:
        raise SystemExit(f"{command[1:3]}: the launcher failed:\n{err}")
    seconds, peak_kb, code = report.split()
    if int(code) not in ok:
        raise SystemExit(f"{command[1:3]} failed ({code}):\n{err}")
    return float(seconds), int(peak_kb) / 1024, out
