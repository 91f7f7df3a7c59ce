"""Input files that would exhaust memory end in exit 2, with the file, the line and the limit (issue 49).

Before the limits: a 10 MB gzip of 10 GiB of NULs exited 70 at 6.7-8 GB (one unbounded line), a 2 GiB line exited 70,
a gzip of 10 GiB of valid lines printed "internal error" and hung. Each case runs as a real `harness eval` process;
its peak memory is read from the kernel after it ends."""

from __future__ import annotations

import gzip
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from harness.data.limits import DEFAULT_LINE_BYTES, LEAST_DECOMPRESSED, bounded_lines, decompressed_limit
from harness.errors import InputFormatError

_MEASURE_PEAK = """
import resource, subprocess, sys
done = subprocess.run(sys.argv[1:], capture_output=True, text=True)
sys.stderr.write(done.stderr)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)  # KiB, Linux
sys.exit(done.returncode)
"""


def _eval(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, float]:
    """(exit code, stderr, peak resident memory in GB) of `harness eval ARGS`."""
    import os

    done = subprocess.run(
        [sys.executable, "-c", _MEASURE_PEAK, sys.executable, "-m", "harness", "eval", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=os.environ | (env or {}),
    )
    return done.returncode, done.stderr, int(done.stdout.strip() or 0) / 2**20


def _gzip_members(path: Path, member: bytes, times: int) -> None:
    """``times`` copies of ``member`` as one gzip file of concatenated members (as gzip -c a b > c makes): a file of
    a few MB that decompresses to gigabytes, written in milliseconds."""
    packed = gzip.compress(member, compresslevel=9)
    with path.open("wb") as out:
        for _ in range(times):
            out.write(packed)


@pytest.fixture
def qrels(tmp_path: Path) -> Path:
    path = tmp_path / "qrels.txt"
    path.write_text("q1 0 d1 1\nq2 0 d2 1\n")
    return path


def test_a_gzip_of_ten_gib_of_nuls_stops_at_the_line_limit(tmp_path: Path, qrels: Path) -> None:
    bomb = tmp_path / "run.gz"
    _gzip_members(bomb, b"\0" * 2**20, 10 * 2**10)  # 10 GiB once decompressed, 10 MB on disk
    assert bomb.stat().st_size < 12 * 2**20
    code, err, peak = _eval(str(qrels), str(bomb))
    assert code == 2, err
    assert f"{bomb}: line 1: line longer than {DEFAULT_LINE_BYTES} bytes" in err and "HARNESS_MAX_LINE_BYTES" in err
    assert peak < 1.0, peak


def test_a_gzip_of_valid_lines_stops_at_the_expansion_limit(tmp_path: Path, qrels: Path) -> None:
    """Valid lines, so no line limit applies: the file stops at the most a compressed file of its size may expand to
    (at least 256 MiB here), not after gigabytes."""
    bomb = tmp_path / "run.gz"
    lines = b"q1 Q0 d1 1 1.0 t\n" * 2**16
    _gzip_members(bomb, lines, 600)  # about 650 MiB once decompressed
    assert 50 * bomb.stat().st_size < LEAST_DECOMPRESSED < 600 * len(lines)
    code, err, peak = _eval(str(qrels), str(bomb))
    assert code == 2, err
    assert f"decompresses to more than {LEAST_DECOMPRESSED} bytes" in err and "HARNESS_MAX_DECOMPRESSED_BYTES" in err
    assert peak < 2.0, peak


def test_the_expansion_limit_is_the_users_to_set(tmp_path: Path, qrels: Path) -> None:
    run = tmp_path / "run.gz"
    run.write_bytes(gzip.compress(b"".join(b"q1 Q0 d%d %d 1.0 t\n" % (i, i) for i in range(20_000))))
    assert _eval(str(qrels), str(run))[0] == 0
    code, err, _ = _eval(str(qrels), str(run), env={"HARNESS_MAX_DECOMPRESSED_BYTES": "100000"})
    assert code == 2 and "decompresses to more than 100000 bytes" in err, err


def test_a_two_gib_line_in_a_plain_file_stops_at_the_line_limit(tmp_path: Path, qrels: Path) -> None:
    run = tmp_path / "run.txt"
    with run.open("wb") as out:
        out.write(b"q1 Q0 d1 1 1.0 t\nq1 Q0 ")
        out.truncate(2 * 2**30)  # sparse: 2 GiB of NULs after the first line, no line break
    code, err, peak = _eval(str(qrels), str(run))
    assert code == 2, err
    assert f"{run}: line 2: line longer than {DEFAULT_LINE_BYTES} bytes" in err
    assert peak < 1.0, peak


def test_bounded_lines_keeps_lines_at_the_limit(tmp_path: Path) -> None:
    import io

    limit = 8
    text = b"12345678\n" + b"1234567\n" + b"123456789\n"
    lines = bounded_lines(io.BytesIO(text), tmp_path / "f")
    env = {"HARNESS_MAX_LINE_BYTES": str(limit)}
    import os

    saved = os.environ.copy()
    os.environ.update(env)
    try:
        assert next(lines) == b"12345678\n" and next(lines) == b"1234567\n"
        with pytest.raises(InputFormatError) as error:
            next(lines)
        assert error.value.line == 3
    finally:
        os.environ.clear()
        os.environ.update(saved)


def test_the_decompressed_limit_scales_with_the_file() -> None:
    assert decompressed_limit(0, {}) == LEAST_DECOMPRESSED
    assert decompressed_limit(2**30, {}) == 50 * 2**30
    with pytest.raises(InputFormatError):
        decompressed_limit(10, {"HARNESS_MAX_DECOMPRESSED_BYTES": "lots"})


def test_peak_memory_is_read_from_the_kernel() -> None:
    """The peak the tests above compare is the children's, in KiB (Linux's unit), not this process's."""
    assert resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss >= 0
