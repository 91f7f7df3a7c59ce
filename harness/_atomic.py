"""Atomic file writes: a reader sees the old file or the whole new one, never half."""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path


def atomic_write(path: str | Path, data: str | bytes) -> Path:
    """Write ``data`` to ``path`` through a temp file in the same folder, fsync, rename."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give the file the usual permissions
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def sha256_file(path: str | Path) -> str:
    """The sha256 of a file's bytes, read in 1 MiB blocks."""

    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def sha256_path(path: str | Path) -> str:
    """A file's sha256, or a folder's: that of its files' names and sha256s, in name order (a table in parts)."""
    target = Path(path)
    if not target.is_dir():
        return sha256_file(target)

    digest = hashlib.sha256()
    for file in sorted(p for p in target.rglob("*") if p.is_file()):
        digest.update(f"{file.relative_to(target).as_posix()}\0{sha256_file(file)}\n".encode())
    return digest.hexdigest()


def size_of(path: str | Path) -> int:
    """A file's bytes, or those of a folder's files."""
    target = Path(path)
    return sum(p.stat().st_size for p in target.rglob("*") if p.is_file()) if target.is_dir() else target.stat().st_size


@contextlib.contextmanager
def exclusive(path: str, flags: int) -> Iterator[None]:
    """``flock`` on ``path`` for the block (POSIX; on Windows, which has none, the block runs unlocked: concurrent
    first runs or tracks there may still race). Released by the kernel if the process dies."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    descriptor = os.open(path, flags, 0o644)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)  # closing releases the lock
