"""Splitting compiled work over threads: the kernels release the GIL, so threads use every core.

Each task writes only its own slice of the outputs, so the result never depends on how
the work was split (nor on how many cores there are).

>>> split(np.array([5.0, 1.0, 1.0, 5.0]), 2)   # two ranges of about equal weight
[(0, 2), (2, 4)]
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import numpy as np

from harness.errors import InputFormatError

T = TypeVar("T")


THREADS_VARIABLE = "HARNESS_THREADS"


def threads() -> int:
    """How many threads compiled kernels split their work over: ``HARNESS_THREADS`` when set (a positive integer),
    else the cores, at most 8. No result depends on it.

    >>> import os; os.environ["HARNESS_THREADS"] = "3"
    >>> threads()
    3
    >>> del os.environ["HARNESS_THREADS"]
    """
    text = os.environ.get(THREADS_VARIABLE)
    if text is None:
        return max(1, min(os.cpu_count() or 1, 8))
    if not text.strip().isdigit() or int(text) < 1:
        raise InputFormatError(
            f"{THREADS_VARIABLE}={text[:40]!r} is not a positive number of threads",
            hint=f"unset it or write {THREADS_VARIABLE}=N",
        )
    return int(text)


def split(weight: np.ndarray, parts: int) -> list[tuple[int, int]]:
    """Consecutive ranges of indices with about equal total weight (at most ``parts``, none empty)."""
    ends = np.cumsum(weight, dtype=np.float64)
    total = float(ends[-1]) if ends.size else 0.0
    cuts = np.searchsorted(ends, total * np.arange(1, parts) / parts, side="left") + 1
    bounds = np.unique(np.concatenate([[0], np.minimum(cuts, weight.size), [weight.size]]))
    return [(int(a), int(b)) for a, b in itertools.pairwise(bounds) if b > a]


def even_split(n: int, parts: int) -> list[tuple[int, int]]:
    """``range(n)`` in at most ``parts`` consecutive ranges of about equal length (none empty): ``split`` of n equal
    weights, without building them.

    >>> even_split(5, 2), even_split(1, 4), even_split(0, 2)
    ([(0, 3), (3, 5)], [(0, 1)], [])
    """
    bounds = sorted({n * i // parts + (n * i % parts > 0) for i in range(parts)} | {n})
    return [(a, b) for a, b in itertools.pairwise(bounds) if b > a]


def run_split(task: Callable[[int, int], object], ranges: list[tuple[int, int]]) -> None:
    """``task(lo, hi)`` for every range, on a thread each (in this thread when there is one)."""
    if len(ranges) <= 1:
        for lo, hi in ranges:
            task(lo, hi)
        return
    with ThreadPoolExecutor(len(ranges)) as pool:
        for future in [pool.submit(task, lo, hi) for lo, hi in ranges]:
            future.result()


def over_rows(rows: int, task: Callable[[int, int], object]) -> None:
    """``task(lo, hi)`` over ``range(rows)``, one range of about equal length per core (:func:`even_split`), each
    on its thread (:func:`run_split`): for a task that writes only its own rows.

    >>> done = []
    >>> over_rows(5, lambda lo, hi: done.extend(range(lo, hi)))
    >>> sorted(done)
    [0, 1, 2, 3, 4]
    """
    run_split(task, even_split(rows, threads()))


def concurrently(*calls: Callable[[], T]) -> list[T]:
    """Each call's result, in order, the calls run side by side on up to :func:`threads` threads: independent passes
    of kernels that release the GIL (Arrow's hashing of three id columns: 0.25 s one after the other, 0.17 s so).

    >>> concurrently(lambda: 1 + 1, lambda: "two")
    [2, 'two']
    """
    workers = min(threads(), len(calls))
    if workers <= 1:
        return [call() for call in calls]
    with ThreadPoolExecutor(workers) as pool:
        return [future.result() for future in [pool.submit(call) for call in calls]]
