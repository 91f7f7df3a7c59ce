"""Input files read within bounds: a line, and what a compressed file expands to.

A TREC or table line is well under a kilobyte (a document id a few hundred bytes); a gzip file expands a few times.
A file that breaks either (a 2 GiB line, a 10 MB gzip of 10 GiB of zeros) would otherwise exhaust memory before any
error could name it. Both limits are far above real data, stated in the error, and raised by an environment
variable where a user needs more:

- ``HARNESS_MAX_LINE_BYTES`` (default 16 MiB): the longest line read;
- ``HARNESS_MAX_DECOMPRESSED_BYTES`` (default: 50 times the compressed file, and at least 256 MiB): what a
  compressed file may expand to.

>>> decompressed_limit(1_000_000, {}) == 256 * 2**20
True
>>> decompressed_limit(10 * 2**30, {}) == 500 * 2**30
True
>>> decompressed_limit(10, {"HARNESS_MAX_DECOMPRESSED_BYTES": "1000"})
1000
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import BinaryIO

from harness.errors import InputFormatError

LINE_VARIABLE, DECOMPRESSED_VARIABLE = "HARNESS_MAX_LINE_BYTES", "HARNESS_MAX_DECOMPRESSED_BYTES"
DEFAULT_LINE_BYTES = 16 * 2**20
EXPANSION, LEAST_DECOMPRESSED = 50, 256 * 2**20


def _setting(name: str, default: int, environ: Mapping[str, str]) -> int:
    text = environ.get(name)
    if text is None:
        return default
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value <= 0:
        raise InputFormatError(f"{name}={text[:40]!r} is not a positive number of bytes", hint=f"unset it or write {name}=N")
    return value


def line_limit(environ: Mapping[str, str] = os.environ) -> int:
    return _setting(LINE_VARIABLE, DEFAULT_LINE_BYTES, environ)


def decompressed_limit(compressed_bytes: int, environ: Mapping[str, str] = os.environ) -> int:
    return _setting(DECOMPRESSED_VARIABLE, max(LEAST_DECOMPRESSED, EXPANSION * compressed_bytes), environ)


class _Bounded(io.RawIOBase):
    """A decompressing stream that stops with an InputFormatError once it has given ``limit`` bytes."""

    def __init__(self, raw: BinaryIO, path: Path, limit: int) -> None:
        self._raw, self._path, self._limit, self._given = raw, path, limit, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        data = self._raw.read(len(buffer))
        self._given += len(data)
        if self._given > self._limit:
            raise InputFormatError(
                f"decompresses to more than {self._limit} bytes (the limit for a compressed file of its size)",
                path=self._path,
                hint=f"if the file is genuine, decompress it first or raise the limit: {DECOMPRESSED_VARIABLE}=N",
            )
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self._raw.close()
        super().close()


COMPRESSED = (".gz", ".bz2", ".zst", ".lz4")  # what Arrow's input_stream(compression="detect") decompresses


def open_binary(path: Path) -> BinaryIO:
    """``path`` opened for reading bytes; a compressed file (by its extension, as Arrow detects it) decompressed,
    within :func:`decompressed_limit`."""
    if path.suffix not in COMPRESSED:
        return open(path, "rb")
    import pyarrow as pa

    limit = decompressed_limit(path.stat().st_size)
    raw = pa.input_stream(str(path), compression="detect")
    return io.BufferedReader(_Bounded(raw, path, limit), buffer_size=1 << 20)  # type: ignore[arg-type,return-value]


def arrow_source(path: Path) -> object:
    """What Arrow's readers read ``path`` from: the path itself for a plain file (Arrow's own fast I/O), else the
    bounded decompressing stream of :func:`open_binary`."""
    if path.suffix not in COMPRESSED:
        return str(path)
    import pyarrow as pa

    return pa.PythonFile(open_binary(path), mode="r")


def bounded_lines(handle: BinaryIO, path: Path) -> Iterator[bytes]:
    """The lines of ``handle`` (with their line breaks), an InputFormatError naming the first longer than
    :func:`line_limit`; a line is never held beyond the limit."""
    limit = line_limit()
    number = 0
    while True:
        line = handle.readline(limit + 1)
        if not line:
            return
        number += 1
        if len(line) > limit and not line.endswith(b"\n"):
            raise InputFormatError(f"line longer than {limit} bytes", path=path, line=number,
                                   hint=f"check the file (a line is one record); to allow it: {LINE_VARIABLE}=N")  # fmt: skip
        yield line
