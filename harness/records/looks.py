"""The looks of a release gate, recorded where they cannot be lost: what the earlier looks spent of alpha.

A gate planned for several looks (``release.looks``) tests each at its share of alpha (:mod:`harness.stats.looks`),
less what the earlier looks of the same gate (:func:`~harness.decision.release.gate_key`) spent. Those are read from
three records, each of which alone could be lost:

* the ledger ``<output>/<experiment>/.looks.jsonl``: one line per look, appended and synced to disk *before* its
  verdict is shown, so a look whose results folder could not be written (a full disk) still counts;
* the ``gate.json`` of the results folders still there;
* the parent runs MLflow holds for the experiment (``release.gate_key``, ``release.look_id``; deleted runs too), so
  that a fresh CI workspace or a trimmed output folder does not start the count again.

Each look has an id, written to all three: a look is counted once however many records hold it, and the earlier
looks are the union of the records. Records that contradict each other about one look (its number, its level), or,
for a gate planned for several looks, a level outside (0, alpha], are refused, naming where they are: a hand-edited
record is never trusted to lower the spending (a one-look gate's records are only counted, for a note). A look that no
record holds was never shown. What starts a plan again is a new gate: other guards or systems, a new
experiment name, or a new ``--output`` folder with a new tracking experiment.

>>> LookRecord("4f2a", "k", 2, 4, 0.0054, ".looks.jsonl line 2").as_line()
'{"id": "4f2a", "key": "k", "look": 2, "looks": 4, "level": 0.0054}'
"""

from __future__ import annotations

import json
import math
import os
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness._atomic import exclusive
from harness.errors import ConfigError, HarnessError, TrackingError
from harness.records.connection import explain, mlflow_defaults
from harness.records.store import previous_folders
from harness.stats.looks import Look

LEDGER = ".looks.jsonl"  # a dot-name, as the staging folders: the folder's other entries are results folders
GATE_KEY_TAG, LOOK_ID_TAG = "release.gate_key", "release.look_id"
MAX_LEDGER_BYTES = 16 * 2**20


@dataclass(frozen=True)
class LookRecord:
    """One earlier look of a gate: its id, the gate's key, its number of the planned looks, the level its guards were
    tested at, and where it was read (for the messages)."""

    id: str
    key: str
    look: int
    looks: int
    level: float
    where: str

    def as_line(self) -> str:
        """The ledger's line for the look."""
        return json.dumps({"id": self.id, "key": self.key, "look": self.look, "looks": self.looks, "level": self.level})


def new_look_id() -> str:
    """A look's id: random, so two runs can never take the same one."""
    return secrets.token_hex(8)


def earlier_looks(
    root: Path,
    key: str,
    alpha: float,
    tracking: tuple[str, str] | None = None,
    spent: bool = True,
    also: tuple[str, ...] = (),
) -> list[LookRecord]:
    """The earlier looks of gate ``key`` (or of its earlier keys, ``also``: :func:`~harness.decision.release.gate_keys`)
    in the experiment's folder ``root`` and, with ``tracking`` (tracking URI, experiment name), in MLflow: one record
    per look, in look order. Raises ConfigError, naming the record, when two records of a look disagree or, where the
    looks are ``spent`` (a gate planned for several), a level is not in (0, alpha]; TrackingError when MLflow cannot
    be read."""
    found = [
        record
        for each in dict.fromkeys((key, *also))
        for record in (*_ledger(root, each), *_folders(root, each), *(_mlflow(*tracking, each) if tracking else []))
    ]
    by_id: dict[str, LookRecord] = {}
    for record in found:
        if spent and (not (math.isfinite(record.level) and 0 < record.level <= alpha) or record.look < 1):
            raise ConfigError(
                f"the gate's earlier look recorded in {record.where} was tested at level {record.level!r}, outside "
                f"(0, {alpha:g}], or numbered {record.look!r}",
                hint="restore the record harness wrote (a record edited by hand cannot lower what the looks spent); "
                "if alpha was changed since, that is a new plan: name a new experiment",
            )
        seen = by_id.setdefault(record.id, record)
        if (seen.look, seen.level) != (record.look, record.level):
            raise ConfigError(
                f"the records of the gate's look {record.id} disagree: look {seen.look} at level {seen.level!r} in "
                f"{seen.where}, look {record.look} at level {record.level!r} in {record.where}",
                hint="restore the record harness wrote; a record edited by hand cannot lower what the looks spent",
            )
    return sorted(by_id.values(), key=lambda r: (r.look, r.id))


def next_look(
    root: Path,
    key: str,
    alpha: float,
    planned: int,
    tracking: tuple[str, str] | None = None,
    also: tuple[str, ...] = (),
) -> tuple[Look, list[LookRecord]]:
    """This look of a gate planned for ``planned`` looks, by its records (:func:`earlier_looks`): the number after
    them and what they spent, with the records themselves (for :func:`record_look`)."""
    before = earlier_looks(root, key, alpha, tracking, spent=True, also=also)
    return Look(len(before) + 1, planned, math.fsum(r.level for r in before)), before


def record_look(root: Path, record: LookRecord, before: list[LookRecord], alpha: float) -> None:
    """Append a look to the ledger, synced to disk, before its verdict is shown; refused (ConfigError) when another
    look of the gate was recorded since ``before`` was read (two runs of one gate at once: the later must run again),
    HarnessError when the ledger cannot be written (the verdict is then not shown, and nothing is spent)."""
    ledger = root / LEDGER
    try:
        root.mkdir(parents=True, exist_ok=True)
        with exclusive(str(ledger), os.O_RDWR | os.O_CREAT):
            now = {r.id for r in earlier_looks(root, record.key, alpha, spent=record.looks > 1)}
            new = now - {r.id for r in before}
            if new:
                raise ConfigError(
                    f"another look of this gate ({sorted(new)[0]}) was recorded in {ledger} while this one ran",
                    hint="run the gate again: its level depends on what the earlier looks spent",
                )
            with open(ledger, "a", encoding="utf-8") as handle:
                handle.write(record.as_line() + "\n")
                handle.flush()
                os.fsync(handle.fileno())
    except OSError as exc:
        raise HarnessError(
            f"the gate's look could not be recorded in {ledger}: {exc.strerror or exc}",
            hint="free space or fix the folder's permissions, and run again; the verdict is not shown until its look is recorded",
        ) from None


def _ledger(root: Path, key: str) -> list[LookRecord]:
    ledger = root / LEDGER
    if not ledger.exists():
        return []
    if ledger.is_symlink() or not ledger.is_file() or ledger.stat().st_size > MAX_LEDGER_BYTES:
        raise ConfigError(f"{ledger} is not the ledger of looks harness writes", hint="restore the file harness wrote")
    out = []
    lines = ledger.read_text(encoding="utf-8", errors="replace").splitlines()
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        where = f"{ledger} line {number}"
        try:
            entry = json.loads(text)
            if entry["key"] == key:
                look, looks, level = int(entry["look"]), int(entry["looks"]), float(entry["level"])
                out.append(LookRecord(str(entry["id"]), key, look, looks, level, where))
        except (ValueError, KeyError, TypeError):
            if number == len(lines) and not text.rstrip().endswith("}"):
                continue  # the last line cut short by a crash while it was written: that look was never shown
            raise ConfigError(f"{where} is not a look harness recorded", hint="restore the file harness wrote") from None
    return out


def _folders(root: Path, key: str) -> list[LookRecord]:
    out = []
    for folder in previous_folders(root):
        try:
            gate = json.loads((folder / "gate.json").read_text())
        except (OSError, ValueError):  # no gate there, or unreadable: not a look of this gate that can be counted
            continue
        if isinstance(gate, dict) and gate.get("key") == key:
            level = gate.get("level") if gate.get("level") is not None else gate.get("alpha")
            try:
                out.append(
                    LookRecord(
                        str(gate.get("look_id") or f"folder:{folder.name}"),
                        key,
                        int(gate.get("look", 1)),
                        int(gate.get("looks", 1)),
                        float(level),  # type: ignore[arg-type]
                        str(folder / "gate.json"),
                    )
                )
            except (TypeError, ValueError):
                raise ConfigError(
                    f"{folder / 'gate.json'} records no level of its look", hint="restore the file harness wrote"
                ) from None
    return out


def _mlflow(tracking_uri: str, experiment: str, key: str) -> list[LookRecord]:
    mlflow_defaults()
    try:
        from mlflow import MlflowClient
        from mlflow.entities import ViewType

        client = MlflowClient(tracking_uri=tracking_uri)
        found = client.get_experiment_by_name(experiment)
        if found is None:
            return []
        runs: list[Any] = []
        token = None
        while True:
            page = client.search_runs(
                [found.experiment_id],
                f"tags.`{GATE_KEY_TAG}` = '{key}'",
                run_view_type=ViewType.ALL,  # a deleted run's look was shown all the same
                max_results=1000,
                page_token=token,
            )
            runs.extend(page)
            token = page.token
            if not token:
                break
    except Exception as exc:
        raise TrackingError(
            f"cannot read the gate's earlier looks from MLflow at {tracking_uri}: {explain(exc)}",
            hint="the looks' alpha spending needs every earlier look: start the tracking server, or run with "
            "--no-tracking where no look was ever logged",
        ) from None
    out = []
    for run in runs:
        tags = run.data.tags
        if LOOK_ID_TAG not in tags:
            continue
        number, _, planned = str(tags.get("release.look", "1 of 1")).partition(" of ")
        try:
            level = float(run.data.metrics["release_gate_level"])
            out.append(LookRecord(tags[LOOK_ID_TAG], key, int(number), int(planned or 1), level, f"MLflow run {run.info.run_id}"))
        except (KeyError, ValueError):
            raise ConfigError(
                f"MLflow run {run.info.run_id} records a look of this gate without its level",
                hint="log it again with harness track",
            ) from None
    return out


__all__ = ["LEDGER", "LookRecord", "earlier_looks", "new_look_id", "next_look", "record_look"]
