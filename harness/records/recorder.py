"""MLflow's client in a process of its own, started as ``harness run`` starts: MLflow's import (about 2 s of CPU) and a
new local store's migrations (1.2 s) run on another core while the run compares, decides and writes, instead
of after it, and never take the interpreter's lock from the run's own work.

The results are handed over once they are written, and the child logs them with the same
:func:`~harness.records.track.track_results` that ``harness track`` runs: exactly once, under the same locks, with the
same errors. What it would show is shown by the run's progress. The protocol is pickled messages on the child's own
stdin and a private copy of its stdout (the child's file descriptor 1 is pointed at stderr, so nothing MLflow prints
can corrupt it); its stderr is the run's.

* The child is in a session of its own: Ctrl-C at the terminal reaches the run alone, which passes it on while the
  child is working for it (the logging stops as it would in the run's own process: its runs marked FAILED, replaced by
  the next ``harness track``) and otherwise ends it. One passed on while the child is still importing is kept, and
  stops the logging before it starts.
* A run killed outright leaves the child reading the end of its input: it finishes what it was given (the records
  stay whole) and exits.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import os
import pickle
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any, Literal

from harness.errors import TrackingError
from harness.progress import SILENT, Progress
from harness.records.connection import mlflow_defaults
from harness.records.mlflow_store import Destination, store_lock
from harness.records.store import SavedResults
from harness.records.track import Tracked, log_rendered, track_results

_STOPPED = 10.0  # seconds a child is given to finish once told to stop, before it is killed


TrackingProcess = Literal["this", "child"]
"""Where ``harness run`` runs MLflow's client: this process, or a child started with the run."""


class Recorder:
    """A child process that logs results to MLflow when handed them.

    >>> recorder = Recorder.start()
    >>> recorder.close()  # never given results: ended at once
    >>> recorder.process.returncode is not None
    True
    """

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        self.asked = False  # given results to log: then closing waits for it

    @classmethod
    def start(cls) -> Recorder:
        """Start the child: it imports what it needs of harness and waits; at the run's first word (:meth:`open`, once
        the inputs are read: the evaluation takes every core) it imports MLflow's client and its SQL store."""
        serve = _serving(Path(__file__).resolve().parents[2])
        # the child is born with Ctrl-C held back (the mask is inherited through exec) until it can keep one for the
        # request it was meant to stop: before that, Python's start would die of it or drop it
        held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            process = subprocess.Popen(
                [sys.executable, "-P", "-c", serve],  # -P: the working folder is not on its path (as for the script)
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                start_new_session=True,  # the terminal's Ctrl-C is the run's to pass on
            )
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
        _widen(process.stdin)
        return cls(process)

    def open(self, to: Destination) -> None:
        """Make the store at ``to`` ready (a new local store's tables) while the run goes on; no answer is awaited,
        and a failure here (the child gone) is met again, and said, when the results are logged."""
        with contextlib.suppress(TrackingError):
            self._send(("open", to))

    def track(
        self,
        results: SavedResults,
        to: Destination,
        progress: Progress = SILENT,
        on_parent: Callable[[dict[str, str]], None] | None = None,
    ) -> Tracked:
        """:func:`~harness.records.track.track_results` in the child; ``on_parent`` runs here, with the parent run's
        ids, while the child goes on logging (the child's progress is shown once it returns, at the times it happened)."""
        answer: Tracked = self._ask(("track", results, to), progress, on_parent, results.folder)
        return answer

    def log_report(self, results: SavedResults) -> None:
        """:func:`~harness.records.track.log_report` in the child."""
        self._ask(("report", results.folder, results.tracking), SILENT, None, results.folder)

    def close(self) -> None:
        """End the child: at the end of its input once it has been given results (it finishes what it was doing,
        killed if it does not in time), killed at once if it never was (it holds nothing: a run that failed on its
        input is not held up while MLflow is imported)."""
        with contextlib.suppress(OSError):
            self._input.close()
        if not self.asked:
            self.process.kill()
        try:
            self.process.wait(timeout=_STOPPED)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        with contextlib.suppress(OSError):
            self._output.close()

    @property
    def _input(self) -> IO[bytes]:
        assert self.process.stdin is not None
        return self.process.stdin

    @property
    def _output(self) -> IO[bytes]:
        assert self.process.stdout is not None
        return self.process.stdout

    def _send(self, message: tuple[Any, ...], folder: Path | None = None) -> None:
        try:
            pickle.dump(message, self._input, protocol=pickle.HIGHEST_PROTOCOL)
            self._input.flush()
        except OSError:  # a broken pipe: the child is gone
            self._gone(folder)

    def _gone(self, folder: Path | None) -> None:
        code = self.process.poll()
        raise TrackingError(
            f"the process logging to MLflow ended unexpectedly (exit code {code})",
            hint=f"its error, if any, is printed above; log the results with: harness track {folder or 'RESULTS_DIR'}",
        )

    def _ask(
        self,
        request: tuple[Any, ...],
        progress: Progress,
        on_parent: Callable[[dict[str, str]], None] | None,
        folder: Path,
    ) -> Any:
        self.asked = True
        relay = _Relay(progress)
        self._send(request, folder)
        interrupted = False
        while True:
            try:
                message = pickle.load(self._output)
                if message[0] == "progress":
                    relay.play(message[1:])
                    continue
                if message[0] == "parent":
                    if on_parent is not None and not interrupted:
                        on_parent(message[1])
                    continue
            except (EOFError, pickle.UnpicklingError):  # the child is gone (or, after a Ctrl-C, a message was cut)
                relay.close()
                if interrupted:
                    self.process.kill()
                    raise KeyboardInterrupt from None
                self._gone(folder)
            except KeyboardInterrupt:
                if interrupted:  # a second Ctrl-C: stop waiting for the child's clean-up
                    self.process.kill()
                    raise
                interrupted = True
                self.process.send_signal(signal.SIGINT)  # the logging stops as it would in this process
                continue
            relay.close()
            if message[0] == "done" and not interrupted:
                return message[1]
            if message[0] == "error" and not interrupted:
                raise message[1]
            raise KeyboardInterrupt


class _Relay:
    """The child's progress, played on the run's :class:`~harness.progress.Progress` at the times the child stamped
    (the machine's monotonic clock, which the two processes share): its lines may be read late, after the report the
    run renders meanwhile, and would otherwise all say when they were read, and its steps that they took no time. A
    stamp is kept between the request and the reading, and never before the one before it."""

    def __init__(self, progress: Progress) -> None:
        self.clock = progress.clock
        self.now = self.clock()  # the request is sent now: nothing the child does for it is earlier
        self.progress = progress.timed_by(lambda: self.now)
        self.tasks: list[tuple[contextlib.AbstractContextManager[Callable[[], None]], Callable[[], None]]] = []

    def play(self, stamped: tuple[Any, ...]) -> None:
        *event, stamp = stamped
        self.now = min(max(float(stamp), self.now), max(self.clock(), self.now))
        what = event[0]
        if what == "say":
            self.progress(event[1])
        elif what == "task":
            task = self.progress.task(event[1], event[2])
            self.tasks.append((task, task.__enter__()))
        elif what == "advance" and self.tasks:
            self.tasks[-1][1]()
        elif what == "end" and self.tasks:
            self.tasks.pop()[0].__exit__(None, None, None)

    def close(self) -> None:
        while self.tasks:
            self.tasks.pop()[0].__exit__(None, None, None)


class _Relayed(Progress):
    """The child's progress: each line and step sent to the run to show."""

    def __init__(self, send: Callable[[tuple[Any, ...]], None]) -> None:
        super().__init__(None)
        self.send = send

    def __call__(self, message: str) -> None:
        self.send(("progress", "say", message, time.perf_counter()))

    @contextlib.contextmanager
    def task(self, name: str, total: int) -> Iterator[Callable[[], None]]:
        self.send(("progress", "task", name, total, time.perf_counter()))
        try:
            yield lambda: self.send(("progress", "advance", time.perf_counter()))
        finally:
            self.send(("progress", "end", time.perf_counter()))


def _serve() -> None:
    """The child: wait for the run's first word, import MLflow, then do what the run asks until its input ends."""
    passed_on = threading.Event()  # a Ctrl-C the run passed on while this was busy importing or making the store

    def keep(signum: int, frame: object) -> None:
        passed_on.set()

    signal.signal(signal.SIGINT, keep)  # between requests: kept for the request it was meant to stop
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # one passed on while harness was imported, now kept
    channel = os.fdopen(os.dup(1), "wb")  # the protocol's; fd 1 goes to stderr, where MLflow's prints belong
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    requests = sys.stdin.buffer

    def send(message: tuple[Any, ...]) -> None:
        pickle.dump(message, channel, protocol=pickle.HIGHEST_PROTOCOL)
        channel.flush()

    mlflow_defaults()  # before MLflow is imported, which reads them
    notes: list[str] = []
    imported = False
    while True:
        try:
            request = pickle.load(requests)
        except Exception:  # the end of the input (the run is over), or a message cut short by its end
            # this process is harness's own and ends now: its heap (MLflow's modules, the results) is left out of the
            # interpreter's last collection, which the run would wait 0.5 s for; exit handlers and finalizers still run
            gc.freeze()
            return
        kind = request[0]
        if not imported:  # once the run has read its inputs: not beside its evaluation, which takes every core
            for module in _client_modules(request[1] if kind == "open" else request[2]):
                with contextlib.suppress(Exception):  # one that fails here fails again where it is needed, and says so
                    importlib.import_module(module)
            imported = True
        if kind == "open":
            with contextlib.suppress(Exception), store_lock(request[1].uri, request[1].output_root) as made:
                notes.extend(made)  # a half-made store set aside: the user is told with the records
            continue
        signal.signal(signal.SIGINT, signal.default_int_handler)  # first, so that no Ctrl-C falls between the two
        try:
            if passed_on.is_set():  # passed on before this request began: it stops before it starts
                raise KeyboardInterrupt
            if kind == "track":
                tracked = track_results(
                    request[1], request[2], progress=_Relayed(send), on_parent=lambda ids: send(("parent", ids))
                )
                answer: tuple[Any, ...] = ("done", _with_notes(tracked, notes))
                notes = []
            else:
                log_rendered(request[1], request[2])
                answer = ("done", None)
        except KeyboardInterrupt:
            answer = ("interrupted",)
        except Exception as exc:  # the run's own to raise, as it would have in its process
            answer = ("error", exc if _picklable(exc) else TrackingError(f"MLflow tracking failed: {exc}"))
        finally:
            signal.signal(signal.SIGINT, keep)
            passed_on.clear()
        send(answer)


def _client_modules(to: Any) -> tuple[str, ...]:
    """What logging to ``to`` (a :class:`Destination`; anything else: the client alone) imports: MLflow's client,
    and its SQL store for a database (a local store), which a tracking server's client never loads (0.65 s of CPU).

    >>> _client_modules(Destination("http://127.0.0.1:5000", "config", Path("out")))
    ('mlflow.tracking',)
    >>> _client_modules(Destination("sqlite:///out/mlflow.db", "local store", Path("out")))[-1]
    'mlflow.store.tracking.sqlalchemy_store'
    """
    scheme = str(getattr(to, "uri", "")).split(":", 1)[0].split("+", 1)[0].lower()
    database = scheme in ("sqlite", "postgresql", "mysql", "mssql")
    return ("mlflow.tracking", *(("mlflow.store.tracking.sqlalchemy_store",) if database else ()))


def _serving(root: Path) -> str:
    """The child's program: this very harness (the package in the folder ``root``) imported as ``harness``, and its
    :func:`_serve` run. Found on the child's path instead, a folder named harness in the working folder (a project's
    own), or another version of harness on PYTHONPATH or installed, was imported and run in its place: the run's
    records then failed, or were logged by code that was not the run's. Only ``harness`` is looked for in ``root``,
    which may hold other packages (site-packages): none of them comes before the standard library.

    >>> program = _serving(Path("/opt/lib"))
    >>> "PathFinder.find_spec(name, ['/opt/lib'])" in program and program.endswith("_serve()")
    True
    """
    return (
        "import importlib.machinery, sys\n"
        "class ThisHarness:\n"
        "    @staticmethod\n"
        "    def find_spec(name, path=None, target=None):\n"
        f"        return importlib.machinery.PathFinder.find_spec(name, [{str(root)!r}]) if name == 'harness' else None\n"
        "sys.meta_path.insert(0, ThisHarness)\n"
        "from harness.records.recorder import _serve; _serve()"
    )


_PIPE_BYTES = 1 << 20  # the largest pipe an unprivileged process may ask Linux for by default (/proc/sys/fs/pipe-max-size)


def _widen(pipe: IO[bytes] | None) -> None:
    """Let the pipe to the child hold 1 MiB where it held 64 KiB: the results (200 MB at 200,000 users) then cross it in
    0.15 s instead of 0.3-0.45 s of the two processes taking turns at 64 KiB. Where the system has no such setting
    (not Linux) or refuses it (a lower limit), the pipe stays as it was: only slower."""
    try:
        import fcntl
    except ImportError:  # Windows
        return
    setting = getattr(fcntl, "F_SETPIPE_SZ", None)
    if pipe is None or setting is None:
        return
    with contextlib.suppress(OSError):
        fcntl.fcntl(pipe.fileno(), setting, _PIPE_BYTES)


def _with_notes(tracked: Tracked, notes: list[str]) -> Tracked:
    import dataclasses

    return dataclasses.replace(tracked, notes=(*notes, *tracked.notes)) if notes else tracked


def _picklable(exc: BaseException) -> bool:
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        return False
    return True
