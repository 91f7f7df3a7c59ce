"""Where records go: the tracking destination (the command line, MLflow's environment, the config, or a local store
beside the results) and a local SQLite store made whole, atomically, and locked while a process logs to it."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from harness._atomic import exclusive
from harness.errors import TrackingError


@contextlib.contextmanager
def store_lock(tracking_uri: str, output_root: Path) -> Iterator[list[str]]:
    """An exclusive lock beside a local SQLite store (``<db>.lock``) while a process logs to it, with the store made
    ready under it (:func:`_ready_store`). Yields what the reader should know (a store set aside)."""
    if not tracking_uri.startswith("sqlite:///"):
        yield []
        return
    database = Path(tracking_uri.removeprefix("sqlite:///"))
    database.parent.mkdir(parents=True, exist_ok=True)
    with exclusive(str(database.with_name(database.name + ".lock")), os.O_RDWR | os.O_CREAT):
        yield _ready_store(database, output_root / "mlartifacts")


def _ready_store(database: Path, artifacts: Path) -> list[str]:
    """A local store that MLflow can open, made atomically: MLflow creates a new SQLite store in some thirty DDL steps
    and migrations, and a kill or a full disk between two of them left a half-made file that failed every later run
    for good. Here a new store is made in a temporary file beside it and renamed into place when complete, so the
    store is either absent or whole. A half-made one (left by an older harness, or by MLflow itself) holding no run
    is set aside under a new name, with a note, and made again; one holding runs at an older schema is left for
    ``mlflow db upgrade``. Symbolic links are refused: a planted ``mlflow.db`` link would write outside the folder.
    """
    for path in (database, artifacts):
        if path.is_symlink():
            raise TrackingError(
                f"the local MLflow store's {path.name} is a symbolic link ({path} -> {os.readlink(path)}); "
                "harness writes only inside the output folder",
                path=path,
                hint="remove the link, or name another store with MLFLOW_TRACKING_URI",
            )
    notes = []
    if database.exists():
        revision, runs = _store_state(database)
        head = _schema_head()
        if revision == head:
            return []
        if runs:
            raise TrackingError(
                f"the MLflow store {database} is at schema {revision or 'none'}, this MLflow needs {head}",
                path=database,
                hint=f"back it up, then run: mlflow db upgrade sqlite:///{database}",
            )
        aside = database.with_name(f"{database.name}.incomplete-{time.strftime('%Y%m%d-%H%M%S')}")
        os.replace(database, aside)
        notes.append(
            f"the MLflow store {database} was left half-made (its creation was interrupted) and held no run: "
            f"set aside as {aside.name} and made again"
        )
    _create_store(database)
    return notes


def _store_state(database: Path) -> tuple[str | None, int]:
    """(the schema revision a SQLite store records, how many runs it holds), read without MLflow. Opened for writing
    only so that SQLite can roll back a transaction a killed process left in its journal."""
    import sqlite3

    connection = sqlite3.connect(database)
    try:
        tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        revision = (
            (connection.execute("SELECT version_num FROM alembic_version").fetchone() or (None,))[0]
            if "alembic_version" in tables
            else None
        )
        runs = connection.execute("SELECT COUNT(*) FROM runs").fetchone()[0] if "runs" in tables else 0
    except sqlite3.DatabaseError:  # not a database at all (truncated, overwritten): nothing MLflow could read either
        return None, 0
    finally:
        connection.close()
    return revision, int(runs)


def _schema_head() -> str:
    """The schema revision this MLflow's stores are made at: the one revision of its migration scripts that no other
    revises, read from their text (alembic loads all of them as modules to say the same: 1.8 s in every run). When the
    text does not name exactly one head, alembic's answer."""
    spec = importlib.util.find_spec("mlflow")  # where MLflow is, without importing it
    folders = spec.submodule_search_locations if spec is not None else None
    named: set[str] = set()
    revised: set[str] = set()
    for script in (Path(next(iter(folders))) / "store" / "db_migrations" / "versions").glob("*.py") if folders else ():
        text = script.read_text(encoding="utf-8")
        named.update(re.findall(r"^revision\s*=\s*[\"']([0-9a-f]+)[\"']", text, flags=re.MULTILINE))
        for line in re.findall(r"^down_revision\s*=\s*(.+)$", text, flags=re.MULTILINE):
            revised.update(re.findall(r"[\"']([0-9a-f]+)[\"']", line))
    heads = named - revised
    if len(heads) == 1:
        return heads.pop()
    from mlflow.store.db.utils import _get_latest_schema_revision

    return str(_get_latest_schema_revision())  # type: ignore[no-untyped-call]


def _create_store(database: Path) -> None:
    """Make MLflow's tables in a temporary file beside ``database``, then rename it into place (atomic on POSIX)."""
    import sqlalchemy
    from mlflow.store.db.utils import _initialize_tables

    for stale in database.parent.glob(f".{database.name}.creating-*"):  # left by a creation that was killed
        stale.unlink(missing_ok=True)
    temporary = database.with_name(f".{database.name}.creating-{os.getpid()}")
    engine = sqlalchemy.create_engine(f"sqlite:///{temporary}", poolclass=sqlalchemy.pool.NullPool)
    try:
        _initialize_tables(engine)  # type: ignore[no-untyped-call]
        engine.dispose()
        os.replace(temporary, database)
    except BaseException:
        engine.dispose()
        temporary.unlink(missing_ok=True)
        raise


def default_uri(output_root: Path) -> str:
    return f"sqlite:///{output_root.resolve() / 'mlflow.db'}"


@dataclass(frozen=True)
class Destination:
    """Where results are logged, and who said so: the command line, the environment, the user's config, or the
    default local store beside the results. Never a results folder: a folder is data, and data that chose where it
    is sent (with the user's credentials) could send them anywhere."""

    uri: str
    source: str  # "command line" | "MLFLOW_TRACKING_URI" | "config" | "local store"
    output_root: Path  # a local store's artifacts go in <output_root>/mlartifacts

    @property
    def is_default(self) -> bool:
        return self.source == "local store"


def destination(command_line: str | None, configured: str | None, output_root: Path) -> Destination:
    """The tracking destination. Precedence: the command line, then ``MLFLOW_TRACKING_URI``, then the user's config,
    then the local store ``<output_root>/mlflow.db``.

    >>> destination("http://127.0.0.1:5000", None, Path("/tmp/out")).source
    'command line'
    >>> destination(None, None, Path("/tmp/out")).uri
    'sqlite:////tmp/out/mlflow.db'
    """
    for uri, source in (
        (command_line, "command line"),
        (os.environ.get("MLFLOW_TRACKING_URI"), "MLFLOW_TRACKING_URI"),
        (configured, "config"),
    ):
        if uri:
            return Destination(uri, source, output_root)
    return Destination(default_uri(output_root), "local store", output_root)


UI_ADDRESS = "http://127.0.0.1:5000"  # where ui_command serves the UI


def ui_command(uri: str) -> str:
    """The command that serves the MLflow UI on a store at :data:`UI_ADDRESS`: the ``mlflow`` beside this Python
    (relative to the working folder when inside it, as ``.venv/bin/mlflow``)."""
    import shlex

    mlflow = Path(sys.executable).parent / "mlflow"
    with contextlib.suppress(ValueError):
        mlflow = mlflow.relative_to(Path.cwd())
    return f"{shlex.quote(str(mlflow))} ui --backend-store-uri {shlex.quote(uri)} --host 127.0.0.1 --port 5000"
