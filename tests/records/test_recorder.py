"""MLflow's client in a child process (issue 64): ``harness run`` in a fresh process logs through
:class:`~harness.records.recorder.Recorder`, and records exactly what a run that logs in its own process records; the
report it renders while the runs are logged is the report rendered after them."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from harness.errors import TrackingError
from harness.records.mlflow_store import Destination
from harness.records.recorder import Recorder
from harness.records.store import read_results
from tests.records.test_track import _check_logged, _config, _run

pytestmark = pytest.mark.filterwarnings(
    "ignore::DeprecationWarning", "ignore::PendingDeprecationWarning", "ignore::FutureWarning"
)


def _records(uri: str, run_id: str) -> dict[str, object]:
    """What MLflow holds of a parent run and its children, without what names one run rather than another."""
    from mlflow import MlflowClient

    client = MlflowClient(uri)
    parent = client.get_run(run_id)
    children = client.search_runs([parent.info.experiment_id], filter_string=f"tags.mlflow.parentRunId = '{run_id}'")
    own = ("mlflow.", "harness.results_dir", "harness.results_id", "harness.config_hash")  # the output folder differs

    def held(run: object) -> dict[str, object]:
        data, info = run.data, run.info  # type: ignore[attr-defined]
        return {
            "params": data.params,
            "metrics": data.metrics,
            "tags": {k: v for k, v in data.tags.items() if not k.startswith(own)},
            "artifacts": sorted(a.path for a in client.list_artifacts(info.run_id)),
            "status": info.status,
        }

    return {
        "parent": held(parent),
        "children": sorted((held(c) for c in children), key=lambda h: json.dumps(h["tags"], sort_keys=True)),
    }


def _without_nonces(text: str) -> str:
    return re.sub(r"nonce(-|=\")[A-Za-z0-9+/=_-]+", "nonce", text)


@pytest.mark.slow
def test_a_run_logged_by_its_child_process_records_what_one_logged_in_process(tmp_path: Path) -> None:
    config = _config(tmp_path)
    config.write_text(config.read_text().replace("report: {enabled: false}", "report: {enabled: true}"))
    done = subprocess.run(  # a fresh process: MLflow is not imported, so a child logs
        [sys.executable, "-m", "harness", "run", str(config), "--json", "--output", str(tmp_path / "by_child")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "rendering the report while the runs are logged" in done.stderr  # the child's path, shown as it went
    assert "logging to MLflow (runs): done" in done.stderr  # and its progress, relayed
    stamps = [float(m.group(1)) for m in re.finditer(r"^\[\s*([0-9.]+)s\] logging to MLflow \(runs\)", done.stderr, re.M)]
    assert len(stamps) >= 2 and stamps == sorted(stamps)  # at the child's times, in order
    by_child = json.loads(done.stdout)

    import mlflow.tracking  # noqa: F401  (imported here: this process logs for itself)

    code, by_here, err = _run(config, "--output", str(tmp_path / "here"))
    assert code == 0, err
    folder = Path(str(by_child["results_dir"]))
    _check_logged(str(by_child["tracking_uri"]), folder, str(by_child["mlflow_run_id"]))
    logged = _records(str(by_child["tracking_uri"]), str(by_child["mlflow_run_id"]))
    here = _records(str(by_here["tracking_uri"]), str(by_here["mlflow_run_id"]))
    assert logged == here
    assert {"report.html", "summary.md"} <= set(logged["parent"]["artifacts"])  # type: ignore[index]
    # the report rendered while the runs were logged links the run, and is the one rendered after them
    early = (folder / "report.html").read_text(encoding="utf-8"), (folder / "summary.md").read_text(encoding="utf-8")
    assert str(by_child["mlflow_run_id"]) in early[0]
    again = subprocess.run([sys.executable, "-m", "harness", "report", str(folder)], capture_output=True, text=True, check=False)
    assert again.returncode == 0, again.stderr
    assert _without_nonces(early[0]) == _without_nonces((folder / "report.html").read_text(encoding="utf-8"))
    assert early[1] == (folder / "summary.md").read_text(encoding="utf-8")


def test_the_child_logs_a_folder_and_its_report_then_ends_with_its_input(tmp_path: Path) -> None:
    config = _config(tmp_path)
    code, outcome, err = _run(config, "--no-tracking")
    assert code == 0, err
    saved = read_results(Path(str(outcome["results_dir"])))
    to = Destination(f"sqlite:///{tmp_path / 'store' / 'mlflow.db'}", "local store", tmp_path / "store")
    recorder = Recorder.start()
    try:
        recorder.open(to)
        seen: list[dict[str, str]] = []
        tracked = recorder.track(saved, to, on_parent=seen.append)
        (saved.folder / "summary.md").write_text("a summary\n", encoding="utf-8")
        from harness.records.store import write_tracking

        recorder.log_report(write_tracking(saved, tracked.as_dict()))
    finally:
        recorder.close()
    assert recorder.process.returncode == 0  # it ended at the end of its input, not killed
    assert seen == [{"tracking_uri": to.uri, "experiment_id": tracked.experiment_id, "run_id": tracked.run_id}]
    _check_logged(to.uri, saved.folder, tracked.run_id)
    from mlflow import MlflowClient

    assert "summary.md" in {a.path for a in MlflowClient(to.uri).list_artifacts(tracked.run_id)}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pipe sizes are a Linux setting")
def test_the_pipe_to_the_child_holds_a_mebibyte_and_a_refused_size_leaves_it_as_it_was(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The results cross a 1 MiB pipe (at 200,000 users, 200 MB took 0.3-0.45 s through 64 KiB, 0.15 s through 1 MiB); a
    size the system refuses (above /proc/sys/fs/pipe-max-size without privilege: EPERM) leaves the pipe at its own."""
    import fcntl

    def size_of(process: subprocess.Popen[bytes]) -> int:
        assert process.stdin is not None
        return int(fcntl.fcntl(process.stdin.fileno(), fcntl.F_GETPIPE_SZ))

    recorder = Recorder.start()
    try:
        assert size_of(recorder.process) == 1 << 20
    finally:
        recorder.close()
    plain = subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    own = size_of(plain)
    plain.communicate()
    assert own < 1 << 20

    setting = fcntl.fcntl

    def refused(fd: int, command: int, arg: int = 0) -> int:
        if command == fcntl.F_SETPIPE_SZ:
            raise PermissionError(1, "Operation not permitted")
        return int(setting(fd, command, arg))

    monkeypatch.setattr(fcntl, "fcntl", refused)
    recorder = Recorder.start()
    try:
        assert size_of(recorder.process) == own
    finally:
        recorder.close()


def test_the_childs_progress_is_shown_at_the_times_it_happened() -> None:
    """Read late (after the report the run renders meanwhile), the child's lines keep the times it stamped them with,
    so its steps say how long they took; a stamp before the request, or after the reading, is kept between the two,
    and never before the one shown before it."""
    import io

    from harness.progress import Progress
    from harness.records.recorder import _Relay

    log, now = io.StringIO(), [100.0]
    progress = Progress(log, every=0.0, clock=lambda: now[0])
    now[0] = 105.0
    relay = _Relay(progress)  # the request is sent at 105 s
    now[0] = 107.0  # and its progress read at 107 s
    for event in (("task", "logging (runs)", 2, 105.5), ("advance", 105.7), ("advance", 105.9), ("end", 106.0)):
        relay.play(event)
    relay.play(("say", "stamped before the request", 50.0))
    relay.play(("say", "stamped after the reading", 1e9))
    relay.play(("say", "stamped before the line before it", 106.5))
    assert log.getvalue().splitlines() == [
        "[   5.5s] logging (runs): 0/2",
        "[   5.7s] logging (runs): 1/2 (50%)",
        "[   5.9s] logging (runs): 2/2 (100%)",
        "[   6.0s] logging (runs): done in 0.5 s",
        "[   6.0s] stamped before the request",
        "[   7.0s] stamped after the reading",
        "[   7.0s] stamped before the line before it",
    ]


def test_the_child_runs_this_harness_whatever_its_working_folder_and_path_hold(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A project's own folder named harness in the working folder, or another harness first on PYTHONPATH, is neither
    imported nor run by the child: it logs with the run's own code (before, it ran the working folder's)."""
    code, outcome, err = _run(_config(tmp_path), "--no-tracking")
    assert code == 0, err
    saved = read_results(Path(str(outcome["results_dir"])))
    for folder in (tmp_path / "project", tmp_path / "elsewhere"):
        (folder / "harness").mkdir(parents=True)
        (folder / "harness" / "__init__.py").write_text(f"raise SystemExit('imported the harness in {folder.name}')\n")
    monkeypatch.chdir(tmp_path / "project")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "elsewhere"))
    to = Destination(f"sqlite:///{tmp_path / 'store' / 'mlflow.db'}", "local store", tmp_path / "store")
    recorder = Recorder.start()
    try:
        recorder.open(to)
        tracked = recorder.track(saved, to)
    finally:
        recorder.close()
    assert recorder.process.returncode == 0
    _check_logged(to.uri, saved.folder, tracked.run_id)


def test_a_child_that_died_is_a_tracking_error(tmp_path: Path) -> None:
    code, outcome, err = _run(_config(tmp_path), "--no-tracking")
    assert code == 0, err
    recorder = Recorder.start()
    recorder.process.kill()
    recorder.process.wait()
    to = Destination(f"sqlite:///{tmp_path / 'mlflow.db'}", "local store", tmp_path)
    recorder.open(to)  # nothing awaited: met again, and said, when the results are logged
    with pytest.raises(TrackingError, match="the process logging to MLflow ended unexpectedly"):
        recorder.track(read_results(Path(str(outcome["results_dir"]))), to)
    recorder.close()


def test_a_run_whose_child_died_keeps_its_results_and_says_how_to_log_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness import run_experiment

    started = Recorder.start

    def dead() -> Recorder:
        recorder = started()
        recorder.process.kill()
        recorder.process.wait()
        return recorder

    monkeypatch.setattr(Recorder, "start", dead)
    outcome = run_experiment(_config(tmp_path), tracking_process="child")
    assert outcome.results_dir is not None and (outcome.results_dir / "per_query.parquet").is_file()
    assert outcome.mlflow_run_id is None and outcome.tracking_error is not None
    assert "ended unexpectedly" in outcome.tracking_error and f"harness track {outcome.results_dir}" in outcome.tracking_error


def test_where_no_child_can_be_started_the_run_logs_in_its_own_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from harness import run_experiment

    def no_process() -> Recorder:
        raise BlockingIOError(11, "Resource temporarily unavailable")  # fork's EAGAIN

    monkeypatch.setattr(Recorder, "start", no_process)
    outcome = run_experiment(_config(tmp_path), tracking_process="child")
    assert outcome.tracking_error is None and outcome.mlflow_run_id is not None
    _check_logged(str(outcome.tracking_uri), Path(str(outcome.results_dir)), outcome.mlflow_run_id)


def test_a_run_that_fails_on_its_input_makes_no_store(tmp_path: Path) -> None:
    """The store is made ready only once the inputs are read: a run refused for a bad run file leaves no store (and
    its child is ended at once)."""
    config = _config(tmp_path)
    (tmp_path / "b.run").write_text("q1 Q0 d2 1 2.0 b\nq1 Q0 d1 2 high b\n")
    done = subprocess.run(
        [sys.executable, "-m", "harness", "run", str(config)], capture_output=True, text=True, cwd=tmp_path, check=False
    )
    assert done.returncode == 2 and "b.run" in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert not (tmp_path / "out" / "mlflow.db").exists()


def test_the_api_logs_through_a_child_when_asked(tmp_path: Path) -> None:
    """``harness.run_experiment(..., tracking_process="child")`` as ``harness run`` does in a process of its own; an
    unknown place is refused as the other choices are."""
    from harness import run_experiment
    from harness.errors import HarnessError

    config = _config(tmp_path)
    with pytest.raises(HarnessError, match="unknown tracking_process 'elsewhere'"):
        run_experiment(config, tracking_process="elsewhere")  # type: ignore[arg-type]
    outcome = run_experiment(config, tracking_process="child")
    assert outcome.tracking_error is None and outcome.mlflow_run_id is not None
    _check_logged(str(outcome.tracking_uri), Path(str(outcome.results_dir)), outcome.mlflow_run_id)


def test_a_ctrl_c_passed_on_before_the_child_is_ready_stops_the_logging_before_it_starts(tmp_path: Path) -> None:
    """The run passes Ctrl-C on while its request is under way; the child may still be importing harness or MLflow
    then. The signal is kept for the request, not dropped (which left the logging to go on, 40 s against a server that
    never answers) nor fatal (a traceback): the request is answered as interrupted, nothing is logged, and the child
    still ends cleanly at the end of its input."""
    import signal

    code, outcome, err = _run(_config(tmp_path), "--no-tracking")
    assert code == 0, err
    to = Destination(f"sqlite:///{tmp_path / 'store' / 'mlflow.db'}", "local store", tmp_path / "store")
    recorder = Recorder.start()
    try:
        recorder.process.send_signal(signal.SIGINT)  # at once: before the child has imported anything
        with pytest.raises(KeyboardInterrupt):
            recorder.track(read_results(Path(str(outcome["results_dir"]))), to)
    finally:
        recorder.close()
    assert recorder.process.returncode == 0
    assert not (tmp_path / "store" / "mlflow.db").exists()  # the request stopped before it made the store
