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

import contextlib
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
    """A decompressing stream that stops once it has given ``limit`` bytes: with an InputFormatError, or (``soft``)
    by ending there, ``exceeded`` set, for a reader on another thread (:func:`arrow_source`)."""

    def __init__(self, raw: BinaryIO, path: Path, limit: int, soft: bool = False) -> None:
        self._raw, self._path, self._limit, self._given, self._soft = raw, path, limit, 0, soft
        self.exceeded = False

    def readable(self) -> bool:
        return True

    def error(self) -> InputFormatError:
        return InputFormatError(
            f"decompresses to more than {self._limit} bytes (the limit for a compressed file of its size)",
            path=self._path,
            hint=f"if the file is genuine, decompress it first or raise the limit: {DECOMPRESSED_VARIABLE}=N",
        )

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        if self.exceeded:
            return 0
        data = self._raw.read(len(buffer))
        self._given += len(data)
        if self._given > self._limit:
            if not self._soft:
                raise self.error()
            self.exceeded = True
            return 0
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self._raw.close()
        super().close()


COMPRESSED = (".gz", ".bz2", ".zst", ".lz4")  # what Arrow's input_stream(compression="detect") decompresses


def _bounded(path: Path, soft: bool) -> _Bounded:
    import pyarrow as pa

    raw = pa.input_stream(str(path), compression="detect")
    return _Bounded(raw, path, decompressed_limit(path.stat().st_size), soft)  # type: ignore[arg-type]


def open_binary(path: Path) -> BinaryIO:
    """``path`` opened for reading bytes; a compressed file (by its extension, as Arrow detects it) decompressed,
    within :func:`decompressed_limit`."""
    if path.suffix not in COMPRESSED:
        return open(path, "rb")
    return io.BufferedReader(_bounded(path, soft=False), buffer_size=1 << 20)  # type: ignore[return-value]


@contextlib.contextmanager
def arrow_source(path: Path) -> Iterator[object]:
    """What Arrow's readers read ``path`` from, within the ``with``: the path itself for a plain file (Arrow's own
    fast I/O), else a bounded decompressing stream.

    Arrow reads such a stream on its own threads. An error raised there could leave one of them still reading while the
    process exits (an abort, or a hang, one run in fifteen on a busy machine), so at the limit the stream just ends,
    and the limit's error is raised here on the way out, in the caller's thread, whatever Arrow made of the
    shortened input."""
    if path.suffix not in COMPRESSED:
        yield str(path)
        return
    import pyarrow as pa

    bounded = _bounded(path, soft=True)
    try:
        with pa.PythonFile(io.BufferedReader(bounded, buffer_size=1 << 20), mode="r") as source:  # type: ignore[arg-type]
            yield source
    finally:
        if bounded.exceeded:
            raise bounded.error() from None


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
            raise InputFormatError(
                f"line longer than {limit} bytes",
                path=path,
                line=number,
                hint=f"check the file (a line is one record); to allow it: {LINE_VARIABLE}=N",
            )
        yield line
