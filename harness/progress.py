"""Progress of long work on stderr, wherever it runs.

On a terminal, stage lines and a tqdm bar for counted work; elsewhere (CI logs, a pipe),
the same stage lines and, for counted work, a heartbeat line at most every ``every``
seconds, so a log never goes silent for long. ``Progress(None)`` is silent (``--quiet``).

>>> import io
>>> log = io.StringIO()
>>> progress = Progress(log, every=0.0, clock=iter(range(100)).__next__)
>>> progress("reading runs")
>>> with progress.task("comparing", total=2) as advance:
...     advance()
...     advance()
>>> print(log.getvalue(), end="")
[   1.0s] reading runs
[   2.0s] comparing: 0/2
[   3.0s] comparing: 1/2 (50%)
[   4.0s] comparing: 2/2 (100%)
[   5.0s] comparing: done in 3.0 s
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

from harness._text import for_terminal


class Progress:
    """Callable with a message for a stage line; ``task(name, total)`` for counted work."""

    def __init__(
        self,
        stream: TextIO | None,
        *,
        every: float = 10.0,
        bars: bool | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.stream = stream
        self.every = every
        self.clock = clock
        self.start = clock()
        self.bars = bars if bars is not None else bool(stream is not None and stream.isatty())

    def _line(self, message: str, now: float | None = None) -> None:
        if self.stream is None:
            return
        text = f"[{(self.clock() if now is None else now) - self.start:6.1f}s] {for_terminal(message)}"  # names inside
        if self.bars:
            from tqdm import tqdm

            tqdm.write(text, file=self.stream)
        else:
            self.stream.write(text + "\n")
            self.stream.flush()

    def __call__(self, message: str) -> None:
        self._line(message)

    def timed_by(self, clock: Callable[[], float]) -> Progress:
        """The same progress (its stream, start and settings), its times read from ``clock``: for events that happened
        elsewhere (another process's, on this machine's clock) and are shown later, at the times they happened.

        >>> import io
        >>> log = io.StringIO()
        >>> progress = Progress(log, every=0.0, clock=lambda: 10.0)
        >>> with progress.timed_by(lambda: 12.5).task("logging", total=1) as advance:
        ...     advance()
        >>> print(log.getvalue(), end="")
        [   2.5s] logging: 0/1
        [   2.5s] logging: 1/1 (100%)
        [   2.5s] logging: done in 0.0 s
        """
        timed = Progress(self.stream, every=self.every, bars=self.bars, clock=clock)
        timed.start = self.start
        return timed

    @contextmanager
    def task(self, name: str, total: int) -> Iterator[Callable[[], None]]:
        """Yield ``advance()``, to call once per unit of work."""
        if self.stream is None:
            yield lambda: None
            return
        if self.bars:
            from tqdm import tqdm

            with tqdm(total=total, desc=name, file=self.stream, leave=False, unit="step") as bar:
                guard = threading.Lock()

                def step() -> None:
                    with guard:
                        bar.update()

                yield step
            return
        began = self.clock()
        last = began
        done = 0
        lock = threading.Lock()  # runs may be evaluated in threads
        self._line(f"{name}: 0/{total}", began)

        def advance() -> None:
            nonlocal done, last
            with lock:
                done += 1
                now = self.clock()
                if now - last >= self.every or done == total:
                    last = now
                    self._line(f"{name}: {done}/{total} ({100 * done // max(total, 1)}%)", now)

        yield advance
        end = self.clock()
        self._line(f"{name}: done in {end - began:.1f} s", end)


SILENT = Progress(None)
