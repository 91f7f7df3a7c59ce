"""Records nothing can wedge, folders nobody can weaponise (issue 49): where tracking sends results is the user's
choice, never a results folder's; a folder is checked before it is read; a local store is made atomically and a
half-made one is set aside."""

from __future__ import annotations

import http.server
import io
import json
import os
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml

from harness.cli import main
from tests.records.test_track import _config, _run

pytestmark = pytest.mark.filterwarnings(
    "ignore::DeprecationWarning", "ignore::PendingDeprecationWarning", "ignore::FutureWarning"
)


@contextmanager
def _capture_server() -> Iterator[tuple[str, list[tuple[str, str, dict[str, str]]]]]:
    """A real HTTP server on 127.0.0.1 that records every request it receives (method, path, headers)."""
    received: list[tuple[str, str, dict[str, str]]] = []

    class Recorder(http.server.BaseHTTPRequestHandler):
        def _record(self) -> None:
            received.append((self.command, self.path, dict(self.headers)))
            self.send_response(500)
            self.end_headers()

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _record

        def log_message(self, *args: object) -> None:  # quiet
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", received
    finally:
        server.shutdown()
        server.server_close()


def _untracked_folder(tmp_path: Path) -> Path:
    code, outcome, err = _run(_config(tmp_path), "--no-tracking")
    assert code == 0, err
    return Path(str(outcome["results_dir"]))


def _track(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_")}
    return subprocess.run(
        [sys.executable, "-m", "harness", "track", *args],
        capture_output=True,
        text=True,
        check=False,
        env=clean | (env or {}),
        timeout=300,
    )


def _rewrite_config(folder: Path, **changes: object) -> None:
    path = folder / "config.resolved.yaml"
    config = yaml.safe_load(path.read_text())
    config.update(changes)
    path.write_text(yaml.safe_dump(config, sort_keys=False))


def test_a_folder_naming_a_server_sends_nothing_there_nor_the_token(tmp_path: Path) -> None:
    """A crafted folder records a tracking.uri pointing at a capture server: harness track refuses (exit 2, the fix
    named), and the server receives nothing, in particular not MLFLOW_TRACKING_TOKEN."""
    folder = _untracked_folder(tmp_path)
    with _capture_server() as (url, received):
        _rewrite_config(folder, tracking={"uri": url})
        done = _track(str(folder), env={"MLFLOW_TRACKING_TOKEN": "secret-token-123"})
        assert done.returncode == 2, done.stderr
        assert "does not take from a results folder" in done.stderr and "--uri" in done.stderr
        assert received == []
    assert not (tmp_path / "out" / "mlflow.db").exists()  # refused before any store was touched


def test_the_store_is_where_the_folder_sits_not_where_it_says(tmp_path: Path) -> None:
    """The folder's recorded output: does not decide where a store is made: the local store is the one of the
    experiment the folder sits in (two folders up)."""
    folder = _untracked_folder(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    _rewrite_config(folder, output=str(elsewhere))
    done = _track(str(folder), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["tracking_uri"] == f"sqlite:///{folder.parent.parent / 'mlflow.db'}"
    assert (folder.parent.parent / "mlflow.db").is_file() and not elsewhere.exists()


@pytest.mark.slow
def test_precedence_command_line_then_environment_then_config(tmp_path: Path) -> None:
    """harness run: --set tracking.uri wins over MLFLOW_TRACKING_URI, which wins over the config's tracking.uri."""
    in_config, in_env, on_line = (f"sqlite:///{tmp_path / name}.db" for name in ("config", "env", "line"))
    config = _config(tmp_path, f"tracking: {{uri: '{in_config}'}}")
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_")}
    for extra, env, expected in (
        ([], {}, in_config),
        ([], {"MLFLOW_TRACKING_URI": in_env}, in_env),
        (["--set", f"tracking.uri={on_line}"], {"MLFLOW_TRACKING_URI": in_env}, on_line),
    ):
        done = subprocess.run(
            [sys.executable, "-m", "harness", "run", str(config), "--json", "--quiet", *extra],
            capture_output=True,
            text=True,
            check=False,
            env=clean | env,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["tracking_uri"] == expected


def test_a_symlinked_file_in_a_folder_is_refused_and_nothing_uploaded(tmp_path: Path) -> None:
    """summary.csv replaced by a link to a secret file: track and report refuse the folder (exit 2, the file named);
    no store is made, so nothing was uploaded."""
    folder = _untracked_folder(tmp_path)
    secret = tmp_path / "secret.txt"
    secret.write_text("password=hunter2\n")
    (folder / "summary.csv").unlink()
    (folder / "summary.csv").symlink_to(secret)
    done = _track(str(folder))
    assert done.returncode == 2 and "summary.csv is a symbolic link" in done.stderr, done.stderr
    assert not (tmp_path / "out" / "mlflow.db").exists()
    out, err = io.StringIO(), io.StringIO()
    assert main(["report", str(folder)], out, err) == 2 and "summary.csv is a symbolic link" in err.getvalue()


@pytest.mark.parametrize(
    ("name", "content", "says"),
    [
        ("gate.json", "{not json", "gate.json cannot be read"),
        ("gate.json", "[1, 2]", "gate.json cannot be read"),
        ("summary.parquet", "PAR1 not really", "summary.parquet cannot be read"),
        ("config.resolved.yaml", "- a list\n- not a config\n", "config.resolved.yaml is not a mapping"),
        ("provenance.json", '{"versions": {}}', "provenance.json has no inputs"),
        ("config.resolved.yaml", "a: &a [*a, *a]\n", "refers to a collection that holds it"),
    ],
)
def test_a_malformed_folder_is_a_user_error_naming_the_file(tmp_path: Path, name: str, content: str, says: str) -> None:
    folder = _untracked_folder(tmp_path)
    (folder / name).write_text(content)
    for command in (["report", str(folder)], ["track", str(folder)]):
        out, err = io.StringIO(), io.StringIO()
        code = main(command, out, err)
        assert code == 2, err.getvalue()
        assert says in err.getvalue() and str(folder) in err.getvalue()
        assert "Traceback" not in err.getvalue()


def test_a_summary_without_its_columns_is_refused(tmp_path: Path) -> None:
    import pandas as pd

    folder = _untracked_folder(tmp_path)
    pd.DataFrame({"x": [1]}).to_parquet(folder / "summary.parquet")
    out, err = io.StringIO(), io.StringIO()
    assert main(["report", str(folder)], out, err) == 2
    assert "summary.parquet is not a table harness wrote: it has no column 'dataset'" in err.getvalue()


# MLflow's own creation of a store, stopped (os._exit: as a kill -9) after the n-th SQL statement: what an interrupted
# first run of an older harness, or of MLflow itself, leaves behind
_HALF_MADE = textwrap.dedent(
    """
    import os, sys, sqlalchemy
    from sqlalchemy import event
    from mlflow.store.db.utils import _initialize_tables
    engine = sqlalchemy.create_engine("sqlite:///" + sys.argv[1])
    count = [0]
    @event.listens_for(engine, "before_cursor_execute")
    def stop(*args):
        count[0] += 1
        if count[0] > int(sys.argv[2]):
            os._exit(9)
    _initialize_tables(engine)
    print(count[0])
    """
)


def _statements_to_make_a_store(tmp_path: Path) -> int:
    done = subprocess.run(
        [sys.executable, "-c", _HALF_MADE, str(tmp_path / "whole.db"), str(10**9)], capture_output=True, text=True, check=True
    )
    return int(done.stdout)


@pytest.mark.slow
def test_a_store_interrupted_at_any_step_of_its_creation_recovers(tmp_path: Path) -> None:
    """A store whose creation stopped after 1, a quarter, half, or all but one of its SQL statements (before this
    fix: exit 4 on every later run, "table ... already exists"): the next harness track sets it aside, with a note,
    makes the store again and logs."""
    statements = _statements_to_make_a_store(tmp_path)
    assert statements > 20  # MLflow makes a store in many steps: the window this guards is real
    for step in (1, statements // 4, statements // 2, statements - 1):
        case = tmp_path / f"step{step}"
        case.mkdir()
        folder = _untracked_folder(case)
        store = case / "out" / "mlflow.db"
        stopped = subprocess.run([sys.executable, "-c", _HALF_MADE, str(store), str(step)], capture_output=True, check=False)
        assert stopped.returncode == 9 and store.exists()
        done = _track(str(folder), "--json")
        assert done.returncode == 0, (step, done.stderr)
        assert "was left half-made" in done.stderr and "set aside as mlflow.db.incomplete-" in done.stderr
        assert len(list(store.parent.glob("mlflow.db.incomplete-*"))) == 1
        again = _track(str(folder), "--json")  # the store made again is whole: the folder is found logged
        assert again.returncode == 0 and json.loads(again.stdout)["already_logged"] is True, again.stderr


@pytest.mark.slow
def test_harness_makes_a_store_whole_or_not_at_all(tmp_path: Path) -> None:
    """harness's own creation, stopped after the n-th statement, leaves no mlflow.db (only a temporary file, removed
    by the next creation), and the next track makes it and logs."""
    statements = _statements_to_make_a_store(tmp_path)
    folder = _untracked_folder(tmp_path)
    store = tmp_path / "out" / "mlflow.db"
    killed = textwrap.dedent(
        """
        import os, sys, sqlalchemy
        from sqlalchemy import event
        from pathlib import Path
        from harness.records import mlflow_store
        count = [0]
        @event.listens_for(sqlalchemy.engine.Engine, "before_cursor_execute")
        def stop(*args):
            count[0] += 1
            if count[0] > int(sys.argv[2]):
                os._exit(9)
        mlflow_store._create_store(Path(sys.argv[1]))
        """
    )
    stopped = subprocess.run([sys.executable, "-c", killed, str(store), str(statements // 2)], capture_output=True, check=False)
    assert stopped.returncode == 9, stopped.stderr
    assert not store.exists() and list(store.parent.glob(".mlflow.db.creating-*"))
    done = _track(str(folder), "--json")
    assert done.returncode == 0, done.stderr
    assert store.is_file() and not list(store.parent.glob(".mlflow.db.creating-*"))
    assert "half-made" not in done.stderr


def test_a_store_with_runs_at_an_old_schema_is_left_for_mlflow_db_upgrade(tmp_path: Path) -> None:
    """A store holding runs is never set aside: if its schema is not this MLflow's, the fix is mlflow db upgrade."""
    import sqlite3

    folder = _untracked_folder(tmp_path)
    assert _track(str(folder)).returncode == 0
    store = tmp_path / "out" / "mlflow.db"
    with sqlite3.connect(store) as connection:
        connection.execute("UPDATE alembic_version SET version_num = 'an_old_revision'")
    connection.close()
    done = _track(str(folder))
    assert done.returncode == 4, done.stderr
    assert "is at schema an_old_revision" in done.stderr and "mlflow db upgrade" in done.stderr
    assert store.is_file() and not list(store.parent.glob("mlflow.db.incomplete-*"))


def test_the_schema_head_read_from_the_scripts_is_alembics() -> None:
    """The head revision read from the text of MLflow's migration scripts is the one alembic finds by loading them."""
    from mlflow.store.db.utils import _get_latest_schema_revision

    from harness.records.mlflow_store import _schema_head

    assert _schema_head() == _get_latest_schema_revision()


def test_a_planted_store_link_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    folder = _untracked_folder(tmp_path)
    victim = tmp_path / "victim.txt"
    victim.write_text("important\n")
    (tmp_path / "out" / "mlflow.db").symlink_to(victim)
    done = _track(str(folder))
    assert done.returncode == 4 and "is a symbolic link" in done.stderr, done.stderr
    assert victim.read_text() == "important\n"


def _two_gated_runs(tmp_path: Path) -> tuple[Path, list[Path]]:
    from tests.decision.test_gate import GATES
    from tests.decision.test_gate import _config as gated_config

    candidate, guard = GATES["pass"]
    config = gated_config(tmp_path, guard, candidate=candidate, report="on")
    import time

    folders = []
    for attempt in range(2):
        if attempt:
            time.sleep(1.1)  # folders are named by the second they start in: the second one starts a second later
        out, err = io.StringIO(), io.StringIO()
        assert main(["run", str(config), "--json", "--quiet"], out, err) == 0, err.getvalue()
        folders.append(Path(json.loads(out.getvalue())["results_dir"]))
    return config, folders


def _previous_config(tmp_path: Path, results: Path) -> Path:
    path = tmp_path / "prev.yaml"  # the gated runs' data: b's values are reused, a is evaluated again
    path.write_text(
        yaml.safe_dump(
            {
                "experiment": "again",
                "datasets": [{"name": "d", "qrels": "qrels.txt", "segments": {"path": "seg.csv"}}],
                "systems": [{"name": "b", "previous": {"results": str(results)}}, {"name": "new", "runs": {"d": "a.run"}}],
                "measures": ["AP"],
                "output": "out2",
            }
        )
    )
    return path


def test_latest_that_is_a_copy_or_left_behind_is_refused(tmp_path: Path) -> None:
    """previous: .../latest reads the newest release or nothing: a real folder named latest (rsync -L, a sync tool)
    and a link to an older folder than the newest beside it are refused, with the folder to name."""
    import shutil

    _, (first, second) = _two_gated_runs(tmp_path)
    latest = second.parent / "latest"
    assert latest.is_symlink() and latest.resolve() == second.resolve()
    out, err = io.StringIO(), io.StringIO()
    assert main(["validate", str(_previous_config(tmp_path, latest))], out, err) == 0, err.getvalue()
    latest.unlink()
    latest.symlink_to(first.name)  # left behind: a run that could not move it
    out, err = io.StringIO(), io.StringIO()
    assert main(["validate", str(_previous_config(tmp_path, latest))], out, err) == 2
    assert f"links {first.name}, but {second.name} beside it is newer" in err.getvalue()
    production = tmp_path / "production"  # a link of its own name, through the stale latest: checked all the same
    production.symlink_to(latest)
    out, err = io.StringIO(), io.StringIO()
    assert main(["validate", str(_previous_config(tmp_path, production))], out, err) == 2
    assert f"links {first.name}, but {second.name} beside it is newer" in err.getvalue()
    # the MLflow evaluator's baseline: the config it writes keeps the link, so the loader checks it too
    from types import SimpleNamespace

    import pandas as pd

    from harness.config.load import load_config
    from harness.errors import ConfigError
    from harness.pipeline.mlflow_evaluator import write_experiment

    scratch = tmp_path / "evaluator"
    scratch.mkdir()
    data = SimpleNamespace(features_data=pd.DataFrame({"user": ["u1"]}), predictions_data=[["a"]], labels_data=[["a"]])
    written = write_experiment(data, None, {"query": "user", "baseline": str(production)}, scratch, "sqlite:///x.db")
    with pytest.raises(ConfigError, match="beside it is newer"):
        load_config(written)
    latest.unlink()
    shutil.copytree(first, latest)  # what rsync -L makes of the link
    out, err = io.StringIO(), io.StringIO()
    assert main(["validate", str(_previous_config(tmp_path, latest))], out, err) == 2
    assert "is a real folder, not the link harness run writes" in err.getvalue()


def test_a_damaged_earlier_folder_is_left_out_of_the_trend_with_a_warning(tmp_path: Path) -> None:
    _, (first, second) = _two_gated_runs(tmp_path)
    (first / "summary.parquet").write_bytes(b"damaged")
    out, err = io.StringIO(), io.StringIO()
    assert main(["report", str(second)], out, err) == 0, err.getvalue()
    html = (second / "report.html").read_text()
    assert f"The earlier results folder {first.name} was left out of the run-after-run charts" in html


def test_trend_charts_need_an_earlier_folder(tmp_path: Path) -> None:
    """One results folder draws no run-after-run chart (one dot a line says nothing); two draw one per guard."""
    _, (first, second) = _two_gated_runs(tmp_path)
    shutil_second = second.parent / ".hidden-second"
    second.rename(shutil_second)  # the first one alone
    out, err = io.StringIO(), io.StringIO()
    assert main(["report", str(first)], out, err) == 0, err.getvalue()
    assert "run after run" not in (first / "report.html").read_text()
    shutil_second.rename(second)
    assert main(["report", str(second)], io.StringIO(), io.StringIO()) == 0
    assert "run after run" in (second / "report.html").read_text()


def test_names_longer_than_mlflow_holds_are_shortened_there_and_whole_in_the_folder(tmp_path: Path) -> None:
    """A 600-character system name (before: MLflow refused the run name, tracking failed for good): logged with a
    run name MLflow holds, its start and a digest; the folder keeps the name whole."""
    from mlflow import MlflowClient

    long_name = "b" + "x" * 599
    config = _config(tmp_path).read_text().replace("{name: b,", f"{{name: {long_name},")
    (tmp_path / "exp.yaml").write_text(config)
    code, outcome, err = _run(tmp_path / "exp.yaml")
    assert code == 0 and outcome["tracking"] == "ok", err
    client = MlflowClient(str(outcome["tracking_uri"]))
    runs = client.search_runs([client.get_run(str(outcome["mlflow_run_id"])).info.experiment_id])
    assert all(len(r.info.run_name) <= 250 for r in runs)
    assert any(r.info.run_name.startswith(long_name[:200]) and "…" in r.info.run_name for r in runs)
    import pandas as pd

    assert long_name in set(pd.read_parquet(Path(str(outcome["results_dir"])) / "summary.parquet")["system"])


def test_experiment_names_are_checked_up_front_and_name_their_own_folders(tmp_path: Path) -> None:
    config = _config(tmp_path)
    text = config.read_text()
    config.write_text(text.replace("experiment: tracked", "experiment: " + "e" * 300))
    out, err = io.StringIO(), io.StringIO()
    assert main(["validate", str(config)], out, err) == 2
    assert "the experiment name is 300 characters, more than 200" in err.getvalue()
    for name in ("x y", "x_y"):
        config.write_text(text.replace("experiment: tracked", f"experiment: {name}"))
        code, outcome, err_text = _run(config, "--no-tracking")
        assert code == 0, err_text
        assert Path(str(outcome["results_dir"])).parent.name == name  # two experiments, two folders


def test_a_report_rendered_after_logging_joins_the_run_on_the_next_track(tmp_path: Path) -> None:
    """Logged without its report (interrupted before it, or report off), rendered later with harness report: the next
    harness track finds the folder logged and attaches report.html and summary.md to that run, once."""
    from mlflow import MlflowClient

    code, outcome, err = _run(_config(tmp_path))  # report: {enabled: false}
    assert code == 0 and outcome["tracking"] == "ok", err
    folder, run_id = Path(str(outcome["results_dir"])), str(outcome["mlflow_run_id"])
    client = MlflowClient(str(outcome["tracking_uri"]))
    assert "report.html" not in {a.path for a in client.list_artifacts(run_id)}
    assert main(["report", str(folder)], io.StringIO(), io.StringIO()) == 0
    done = _track(str(folder), "--json")
    assert done.returncode == 0 and json.loads(done.stdout)["already_logged"] is True, done.stderr
    assert {"report.html", "summary.md"} <= {a.path for a in client.list_artifacts(run_id)}


def test_a_per_query_table_written_in_parts_reads_as_the_whole(tmp_path: Path) -> None:
    """``per_query.parquet`` as a folder of Parquet parts (as Spark writes a table): read back as the one table it
    holds, in its parts' order, and the report is built from it."""
    import pandas as pd

    from harness.records.store import read_results
    from harness.report.model import build_model

    folder = _untracked_folder(tmp_path)
    whole = pd.read_parquet(folder / "per_query.parquet")
    (folder / "per_query.parquet").unlink()
    (folder / "per_query.parquet").mkdir()
    half = len(whole) // 2
    whole.iloc[:half].to_parquet(folder / "per_query.parquet" / "part-0.parquet", index=False)
    whole.iloc[half:].to_parquet(folder / "per_query.parquet" / "part-1.parquet", index=False)
    read = read_results(folder)
    pd.testing.assert_frame_equal(read.per_query, whole, check_exact=True)
    one = whole[(whole["system"] == "b") & (whole["measure"] == "AP")]
    pd.testing.assert_frame_equal(read.per_query_of(system="b", measure="AP"), one, check_exact=True)
    assert build_model(read).datasets
