"""The later stages again, on a results folder already written: ``harness track``, ``harness report`` and
``harness promote``.

A folder holds everything the record and report stages read, so they run on it exactly as
they ran at the end of ``harness run``. A folder is data that may come from anyone: ``harness track`` never acts on
the registry, and ``harness promote`` acts only on a verdict it computed again from the folder's per-query values.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any

import numpy as np

from harness._text import clipped
from harness.comparison.compare import CompareSettings
from harness.config.schema import Guard, Release, Stats
from harness.decision.release import decide_release, gate_keys
from harness.decision.verdict import Decision
from harness.errors import HarnessError
from harness.evaluation.results import RunResult
from harness.measures.parse import parse_measure
from harness.measures.registry import REGISTRY
from harness.measures.spec import Measure
from harness.records.looks import earlier_looks
from harness.records.mlflow_store import destination
from harness.records.previous import per_query_of_rows
from harness.records.recorded import release_section
from harness.records.registry import Promotion
from harness.records.store import SavedResults, read_results, write_tracking
from harness.records.track import Tracked, promote_release, track_results
from harness.report.render import write_report
from harness.stats.looks import Look, spent_by


def track_folder(folder: str | Path, uri: str | None = None, experiment: str | None = None) -> Tracked:
    """Log a results folder to MLflow and note where: ``uri``, else ``MLFLOW_TRACKING_URI``, else the local store of
    the experiment the folder sits in (``<output>/mlflow.db``, two folders up).

    The folder's own record of where it was meant to go (its config's ``tracking.uri``) is never followed: a folder
    can come from anywhere, and following it would send the user's credentials where the folder says. Where it names
    another destination than the one chosen, nothing is sent and the error says how to choose it.
    """
    results = read_results(folder)
    to = destination(uri, None, results.folder.parent.parent)
    recorded = (results.config.get("tracking") or {}).get("uri")
    if to.is_default and recorded and recorded != to.uri:
        raise HarnessError(
            f"the folder was meant to be logged at {clipped(recorded)}, which harness does not take from a results folder",
            path=results.folder,
            hint=f"if you trust that address, name it: harness track {folder} --uri <URI> (or set MLFLOW_TRACKING_URI); "
            f"to log to the local store, --uri {to.uri}",
        )
    tracked = track_results(results, to, experiment)
    write_tracking(results, tracked.as_dict())
    return tracked


def report_folder(folder: str | Path) -> tuple[Path, Decision | None]:
    """Render a results folder's report again: (the report's path, the release decision it shows, if any)."""
    path, model = write_report(read_results(folder))
    return path, model.verdict


def _recorded_release(results: SavedResults) -> Release:
    """The release gate as the folder's config records it; HarnessError where it has none, or a guard whose values
    are not per query (a system measure needs the runs' lists, which a folder does not keep)."""
    recorded, gate = release_section(results.config), results.verdict
    if not recorded or gate is None:
        raise HarnessError("the folder holds no release gate to promote by", path=results.folder, hint="promote a gated run")
    guards = tuple(
        Guard(
            parse_measure(str(g["measure"])),
            g["condition"],
            float(g["threshold"]),
            g.get("dataset"),
            g.get("segment"),
            bool(g.get("descriptive")),
        )
        for g in recorded.get("guards") or []
    )
    system = [g for g in guards if REGISTRY.definition(g.measure).is_system(g.measure)]
    if system:
        raise HarnessError(
            f"the guard on {system[0].measure} is decided from the runs' lists, which a results folder does not keep: "
            "its verdict cannot be computed again here",
            path=results.folder,
            hint="promote from the harness run that decides the gate (release.promote in its config)",
        )
    return Release(
        str(recorded["production"]),
        str(recorded["candidate"]),
        guards,
        recorded.get("on_inconclusive", "inconclusive"),
        float(recorded.get("power", gate.power)),
        recorded.get("bound", gate.bound),
        None,
        int(recorded.get("looks", 1)),
        recorded.get("min_affected", gate.min_affected),
    )


def recompute_gate(results: SavedResults) -> Decision:
    """The folder's release decision computed again from its per-query values, as ``harness run`` decided it (the
    guards, alpha, bound, claim and look its config and gate.json record). Raises HarnessError where the folder has no
    gate, or a guard whose values are not per query (a system measure needs the runs' lists, which a folder does not
    keep)."""
    release, gate = _recorded_release(results), results.verdict
    guards = release.guards
    assert gate is not None  # _recorded_release refuses a folder without one
    stats = {k: v for k, v in (results.config.get("stats") or {}).items() if k in {f.name for f in dataclasses.fields(Stats)}}
    stats["tests"] = tuple(stats.get("tests") or Stats.tests)
    settings = CompareSettings(**stats, extra_pairs=((release.production, release.candidate),))
    measures = tuple(dict.fromkeys(g.measure for g in guards))
    own = bool(results.config.get("measure_conventions"))
    runs: list[RunResult] = []
    for dataset in dict.fromkeys(results.per_query["dataset"].astype(str)):
        for name in (release.production, release.candidate):
            frame = results.per_query_of(dataset, name)
            frame = frame[frame["measure"].isin([str(m) for m in measures])]
            labels = list(dict.fromkeys(frame["seed"].fillna("").astype(str))) if "seed" in frame.columns else [""]
            for label in labels if len(frame) else []:
                rows = frame if len(labels) == 1 else frame[frame["seed"] == label]
                per_query = per_query_of_rows(rows, name, measures, own)
                if isinstance(per_query, list):
                    continue  # a measure another dataset has: this dataset's guards say so when decided
                segment_of = dict(zip(rows["query_id"].astype(str), rows["segment"].fillna("").astype(str), strict=False))
                segments = np.array([segment_of.get(q, "") for q in per_query.query_ids.tolist()], dtype=object)
                judged = _people_of(results, dataset, name, measures, own, label)
                runs.append(RunResult(dataset, name, per_query, segments, {}, seed=label if len(labels) > 1 else "", **judged))
    look = None
    if release.looks > 1:  # the look as recorded: its level is checked against the gate's records by promote_folder
        look = Look(gate.look, gate.looks, max(spent_by(gate.alpha, gate.look, gate.looks) - gate.tested_at, 0.0))
    decision = decide_release(release, runs, settings, None, look)
    return dataclasses.replace(decision, look_id=gate.look_id, production_evidence=gate.production_evidence)


def _people_of(
    results: SavedResults, dataset: str, system: str, measures: tuple[Measure, ...], own: bool, seed: str = ""
) -> dict[str, Any]:
    """On a judged dataset, people's values of a system (``per_query_people``) and the judge's name, as RunResult
    takes them; nothing elsewhere. A stratified sample's strata are not in the folder: refused."""
    judge = next((d.get("judge") for d in results.config.get("datasets") or [] if d.get("name") == dataset), None)
    if not judge:
        return {}
    if judge.get("sample") == "stratified":
        raise HarnessError(
            f"dataset {dataset!r} was judged on a stratified sample, whose strata the folder does not keep: its gate "
            "cannot be computed again here",
            path=results.folder,
            hint="promote from the harness run that decides the gate (release.promote in its config)",
        )
    frame = None if results.per_query_people is None else results.per_query_people
    rows = None if frame is None else frame[(frame["dataset"] == dataset) & (frame["system"] == system)]
    if rows is not None and "seed" in rows.columns:  # one run of several (its seed), as per_query's rows are taken
        rows = rows[rows["seed"].fillna("").astype(str) == seed]
    people = None if rows is None or not len(rows) else per_query_of_rows(rows, system, measures, own)
    if people is None or isinstance(people, list):
        raise HarnessError(
            f"dataset {dataset!r} has a judge, and the folder holds no people's values of {system}",
            path=results.folder,
            hint=_UNCHANGED_FOLDER,
        )
    return {"people": people, "judge": str(judge.get("name") or "judge")}


_UNCHANGED_FOLDER = "give the folder harness run wrote, as it wrote it (per_query_people.parquet beside per_query)"
DISAGREE_TOLERANCE = 1e-9  # a guard's numbers recomputed from the same values, by sums in another order


def _disagreement(recomputed: Decision, recorded: Decision) -> str | None:
    """Where a folder's gate.json says other than its per-query values decide, in words (None: they agree)."""
    if recomputed.verdict != recorded.verdict:
        return f"its values decide {recomputed.verdict}, and its gate.json says {recorded.verdict}"
    if len(recomputed.guards) != len(recorded.guards):
        return f"its values decide {len(recomputed.guards)} guards, and its gate.json lists {len(recorded.guards)}"
    for mine, theirs in zip(recomputed.guards, recorded.guards, strict=True):
        if (mine.guard, mine.verdict) != (theirs.guard, theirs.verdict):
            return f"guard {theirs.guard}: its values decide {mine.verdict}, and its gate.json says {theirs.verdict}"
        for field in ("difference", "drop_low", "drop_high", "margin"):
            a, b = getattr(mine, field), getattr(theirs, field)
            if (a is None) != (b is None) or (
                a is not None and not math.isclose(float(a), float(b), rel_tol=DISAGREE_TOLERANCE, abs_tol=1e-12)
            ):
                return f"guard {theirs.guard}: its values give {field} {a!r}, and its gate.json says {b!r}"
    return None


def promote_folder(folder: str | Path, uri: str | None = None, experiment: str | None = None) -> tuple[Tracked, Promotion]:
    """``harness promote FOLDER``: the folder's gate computed again from its per-query values, refused when it
    disagrees with gate.json or when its look is not among the gate's recorded looks; then the folder logged (once:
    :func:`track_folder`) and the alias moved as :func:`~harness.records.track.promote_release` moves it (PASS only,
    under the store's lock)."""
    results = read_results(folder)
    recomputed = recompute_gate(results)
    assert results.verdict is not None
    differ = _disagreement(recomputed, results.verdict)
    if differ is not None:
        raise HarnessError(
            f"the folder's release gate is not the one its values decide: {differ}",
            path=results.folder,
            hint="nothing was promoted; run the gate again (harness run) and promote that",
        )
    if not release_section(results.config).get("promote"):
        raise HarnessError(
            "the folder's config names no release.promote", path=results.folder, hint="add release.promote and run the gate again"
        )
    if recomputed.looks > 1:  # checked before anything is logged: the folder's own gate.json does not vouch for it
        to = destination(uri, None, results.folder.parent.parent)
        seen = earlier_looks(
            results.folder.parent,
            recomputed.key,
            recomputed.alpha,
            (to.uri, experiment or _experiment_of(results)),
            # the key such a gate was recorded under while descriptive guards were part of it: derived from the
            # folder's guards, never taken from its gate.json
            also=tuple(gate_keys(_recorded_release(results), recomputed.claim)[1:]),
        )
        own = str(results.folder / "gate.json")
        if not any(r.id == recomputed.look_id and r.where != own and math.isclose(r.level, recomputed.tested_at) for r in seen):
            raise HarnessError(
                f"look {recomputed.look} of the gate ({recomputed.look_id or 'no id'}) is not among its recorded looks",
                path=results.folder,
                hint="promote from the folder harness run wrote for that look, beside its experiment's .looks.jsonl",
            )
    tracked = track_folder(folder, uri, experiment)
    promoted = promote_release(results, recomputed, tracked)
    assert promoted is not None
    return tracked, promoted


def _experiment_of(results: SavedResults) -> str:
    return str((results.config.get("tracking") or {}).get("experiment") or results.config["name"])


__all__ = ["promote_folder", "recompute_gate", "report_folder", "track_folder"]
