"""MLflow's model registry as the source of production: a model reference resolved and pinned, the latest harness
evaluation of a model found again, and an alias moved to a released version.

``models:/recsys@champion`` is resolved once, when a run starts, to the version the alias names then (and its logged
model), and the run records that version: the numbers stay about one model whatever the alias points at later. Every
harness evaluation of a model carries the tags :data:`MODEL_ID_TAG` and :data:`MODEL_TAG` (``recsys/3``), by which
``previous: models:/recsys@champion`` finds it again: the evaluation that promoted the version, else the one in the
experiment the config logs to (:func:`production_evidence`); its values are checked against the digests recorded when
it was logged and against the metrics MLflow links to the model, then against this run's inputs and conventions
exactly as a results folder's are.

>>> model_tag(ModelRef("models:/recsys/3", name="recsys", version="3"))
'recsys/3'
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import Iterator
from typing import Any

from harness.config.schema import ModelRef, Promote
from harness.errors import ConfigError, HarnessError, TrackingError
from harness.records.connection import explain, key_part, mlflow_defaults

MODEL_ID_TAG, MODEL_TAG, SYSTEM_TAG = "harness.model_id", "harness.model", "harness.system"
KIND_TAG, COMPLETE_TAG = "harness.kind", "harness.complete"
PER_QUERY_TAG = "harness.per_query_sha256"  # of the per_query.parquet logged with a parent (or evaluator) run
SEARCHED = 200  # the latest evaluations of a model looked at for a complete one


def model_tag(model: ModelRef) -> str | None:
    """The tag value that names a registered model's version (``NAME/VERSION``), when the reference has both."""
    return f"{model.name}/{model.version}" if model.name and model.version else None


def qrels_tag(dataset: str) -> str:
    """The tag holding the sha256 of a dataset's judgments on a run that evaluated it.

    >>> qrels_tag("trec")
    'harness.qrels_sha256.trec'
    """
    return f"harness.qrels_sha256.{key_part(dataset)}"


def _client(tracking_uri: str) -> Any:
    mlflow_defaults()
    from mlflow import MlflowClient

    return MlflowClient(tracking_uri=tracking_uri, registry_uri=tracking_uri)


def resolve_model(model: ModelRef, tracking_uri: str) -> ModelRef:
    """The reference pinned: an alias to its version now, a version to its logged model, a logged model to itself.
    Raises ConfigError (exit 2, one line) when the registry has no such model, TrackingError when it cannot be
    reached."""
    try:
        client = _client(tracking_uri)
        if model.name is None:
            assert model.model_id is not None
            logged = client.get_logged_model(model.model_id)
            return dataclasses.replace(model, model_id=logged.model_id)
        version = (
            client.get_model_version_by_alias(model.name, model.alias)
            if model.alias is not None
            else client.get_model_version(model.name, model.version)
        )
        return dataclasses.replace(model, version=str(version.version), model_id=_logged_model_of(version))
    except Exception as exc:
        raise _failure(exc, f"cannot resolve {model.uri} in the registry at {tracking_uri}") from None


def _logged_model_of(version: Any) -> str | None:
    """A model version's logged model: its ``model_id``, which a tracking server's REST answer leaves out, else the
    id its source names (``models:/m-...``, as ``mlflow.register_model`` of a logged model writes it).

    >>> from types import SimpleNamespace
    >>> _logged_model_of(SimpleNamespace(model_id=None, source="models:/m-4f2a"))
    'm-4f2a'
    """
    if getattr(version, "model_id", None):
        return str(version.model_id)
    source = str(getattr(version, "source", "") or "")
    named = source.removeprefix("models:/")
    return named if source.startswith("models:/m-") and "/" not in named else None


def _failure(exc: BaseException, what: str) -> HarnessError:
    text = str(exc)
    if "RESOURCE_DOES_NOT_EXIST" in text or "not found" in text.lower() or "does not exist" in text.lower():
        return ConfigError(
            f"{what}: {explain(exc)}", hint="check the name, version or alias (mlflow models are listed in the UI's Models tab)"
        )
    return TrackingError(f"{what}: {explain(exc)}", hint="is the tracking server running at that address?")


@dataclasses.dataclass(frozen=True)
class Evidence:
    """The harness evaluation that stands for a registered model's version: where its results are, and what they must
    hash to when read back (:func:`harness.records.previous.load_previous` checks both before any value is used)."""

    run_id: str  # the run holding the results: a harness run's parent, or an evaluator's run
    system: str  # the system's name there
    values: str  # the digest of the system's values (SavedResults.values_digest), recorded when logged
    per_query: str  # the sha256 of its per_query.parquet, recorded when logged
    linked: tuple[tuple[str, str | None], ...]  # (run, its dataset) whose metrics MLflow links to the model; None: all
    evaluator: bool  # an evaluator's run (mlflow.models.evaluate), rather than a harness run's parent
    found_by: str  # how it was chosen, in words
    experiment: str  # the experiment's name

    def describe(self) -> str:
        """The evaluation as the verdict names it.

        >>> Evidence("4f2a", "v1", "", "", (), False, "promoted by it", "recsys").describe()
        "MLflow run 4f2a (system 'v1' in experiment 'recsys', promoted by it)"
        """
        return f"MLflow run {self.run_id} (system {self.system!r} in experiment {self.experiment!r}, {self.found_by})"


def production_evidence(model: ModelRef, tracking_uri: str, experiment: str, judgments: dict[str, str]) -> Evidence:
    """The evaluation of a pinned model that a ``previous: models:/...`` reuses, shown to be harness's own: the one
    that promoted the version (the tags :func:`promote` sets on it), else one found only in ``experiment`` (the one
    this config logs to, never any other on the server), from a complete parent run harness logged, on the same
    judgments (``judgments``: dataset -> sha256 of its qrels; evaluations on others are skipped, not chosen). Several
    evaluations of the model whose values differ are refused as ambiguous. Raises ConfigError (exit 2, naming the
    runs) when none qualifies, TrackingError when the store cannot be reached."""
    try:
        client = _client(tracking_uri)
        version = client.get_model_version(model.name, model.version) if model.name and model.version else None
        tags = dict(getattr(version, "tags", None) or {})
        if EVALUATION_RUN_TAG in tags:
            found = _evaluation(client, tags[EVALUATION_RUN_TAG], tags.get(EVALUATION_SYSTEM_TAG), judgments)
            if isinstance(found, str) or found.values != tags.get(VALUES_TAG):
                why = found if isinstance(found, str) else "its values are not the ones recorded on the version"
                raise ConfigError(
                    f"{model.uri} ({model.pinned}) was promoted by MLflow run {tags[EVALUATION_RUN_TAG]}, "
                    f"which cannot stand for it: {why}",
                    hint="evaluate production from its run files (runs: instead of previous:), or name an evaluation "
                    "with previous: runs:/RUN_ID",
                )
            return dataclasses.replace(found, found_by="the harness run that promoted it")
        return _searched(client, model, experiment, judgments)
    except HarnessError:
        raise
    except Exception as exc:
        raise _failure(exc, f"cannot search the evaluations of {model.uri} at {tracking_uri}") from None


def _searched(client: Any, model: ModelRef, experiment: str, judgments: dict[str, str]) -> Evidence:
    """The one evaluation of ``model`` in ``experiment`` (:func:`production_evidence`), found by its tags."""
    where = f"experiment {experiment!r}"
    found_experiment = client.get_experiment_by_name(experiment)
    wanted = [f"tags.`{MODEL_ID_TAG}` = '{model.model_id}'"] if model.model_id else []
    if model_tag(model):
        wanted.append(f"tags.`{MODEL_TAG}` = '{model_tag(model)}'")
    results: dict[str, str] = {}  # the runs holding results, newest first -> the system's name there
    for condition in wanted if found_experiment is not None else []:
        newest = ["attributes.start_time DESC"]
        runs = client.search_runs([found_experiment.experiment_id], condition, order_by=newest, max_results=SEARCHED)
        for run in runs:
            run_tags = run.data.tags
            system = run_tags.get(SYSTEM_TAG)
            if run_tags.get(KIND_TAG) == "system" and system and "mlflow.parentRunId" in run_tags:
                results.setdefault(run_tags["mlflow.parentRunId"], system)
            elif run_tags.get(KIND_TAG) == "evaluation" and system:
                results.setdefault(run.info.run_id, system)
    chosen: list[Evidence] = []
    skipped: list[str] = []
    for run_id, system in results.items():
        found = _evaluation(client, run_id, system, judgments)
        if isinstance(found, str):
            skipped.append(f"run {run_id}: {found}")
        else:
            chosen.append(found)
    if not chosen:
        raise ConfigError(
            f"no harness evaluation of {model.uri} ({model.pinned}) in {where} can stand for it"
            + (f" ({len(skipped)} skipped; {skipped[0]})" if skipped else ""),
            hint="evaluate that model first in this experiment: a harness run whose system says model: "
            f"models:/{model.name or model.model_id}/..., on these judgments",
        )
    if len({e.values for e in chosen}) > 1:
        differ = next(e for e in chosen if e.values != chosen[0].values)
        raise ConfigError(
            f"{len(chosen)} harness evaluations of {model.uri} ({model.pinned}) in {where} on these judgments disagree "
            f"(runs {chosen[0].run_id} and {differ.run_id} hold different values): which stands for production is "
            "ambiguous",
            hint="name the one to reuse: previous: runs:/RUN_ID",
        )
    one = "the only evaluation" if len(chosen) == 1 else f"the newest of {len(chosen)} equal evaluations"
    return dataclasses.replace(chosen[0], found_by=f"{one} of {model.pinned or model.uri} in the experiment")


def _evaluation(client: Any, run_id: str, system: str | None, judgments: dict[str, str]) -> Evidence | str:
    """The evaluation a run holds, or why it cannot stand for a model: not a complete, finished run harness logged,
    no values of the system, or values on other judgments than ``judgments``."""
    run = client.get_run(run_id)
    tags, kind = run.data.tags, run.data.tags.get(KIND_TAG)
    finished = run.info.status == "FINISHED" and run.info.lifecycle_stage == "active"
    if kind not in ("experiment", "evaluation") or tags.get(COMPLETE_TAG) != "true" or not finished:
        return "not a complete, finished run of harness run, harness track or harness's evaluator"
    if PER_QUERY_TAG not in tags or system is None:
        return "it records no sha256 of its per-query values (logged by an older harness: evaluate it again)"
    holders = [run]
    if kind == "experiment":
        holders = [
            child
            for child in client.search_runs(
                [run.info.experiment_id], filter_string=f"tags.mlflow.parentRunId = '{run_id}'", max_results=10_000
            )
            if child.data.tags.get(KIND_TAG) == "system" and child.data.tags.get(SYSTEM_TAG) == system
        ]
    values = {h.data.tags.get(VALUES_TAG) for h in holders}
    if not holders or None in values or len(values) != 1:
        return f"no recorded values of system {system!r}"
    shared = [d for d in judgments if any(qrels_tag(d) in h.data.tags for h in holders)]
    if not shared:
        return "it evaluated none of this config's datasets"
    other = [d for d in shared if any(h.data.tags.get(qrels_tag(d), judgments[d]) != judgments[d] for h in holders)]
    if other:
        return f"its judgments for dataset {other[0]!r} are not this config's"
    experiment = client.get_experiment(run.info.experiment_id).name
    linked = tuple((h.info.run_id, h.data.tags.get("dataset") if kind == "experiment" else None) for h in holders)
    return Evidence(run_id, system, str(values.pop()), tags[PER_QUERY_TAG], linked, kind == "evaluation", "", experiment)


# Promotions of one alias are serialised by a lock the store itself holds: a registered model's name is unique in
# every MLflow store (SQL or server), so creating one succeeds for exactly one of several processes; it is deleted when
# the move is done. A lock older than LOCK_STALE seconds was left by a process that died and is taken over.
LOCK_PREFIX, LOCK_STALE, LOCK_WAIT = "harness-promotion-lock.", 300.0, 60.0
# The tags a promoted version carries: the harness evaluation that decided its release (its parent run, the system's
# name there and the digest of the system's values), by which ``previous: models:/NAME@ALIAS`` finds production's
# evidence again without searching for it.
EVALUATION_RUN_TAG, EVALUATION_SYSTEM_TAG = "harness.evaluation_run", "harness.evaluation_system"
VALUES_TAG = "harness.values_sha256"


@dataclasses.dataclass(frozen=True)
class Promotion:
    """What a promotion did: ``moved`` (the alias now names the candidate's version), and the line recorded."""

    moved: bool
    line: str


def lock_name(model: str, alias: str) -> str:
    """The registered model that holds the lock on promotions of ``model@alias``.

    >>> lock_name("recsys", "champion")
    'harness-promotion-lock.recsys.champion'
    """
    return f"{LOCK_PREFIX}{model}.{alias}"


@contextlib.contextmanager
def promotion_lock(client: Any, model: str, alias: str, wait: float = LOCK_WAIT) -> Iterator[None]:
    """Held while one promotion of ``model@alias`` reads and moves it; TrackingError when another holds it for longer
    than ``wait`` seconds."""
    name, deadline = lock_name(model, alias), time.monotonic() + wait
    while True:
        try:
            client.create_registered_model(name, description=f"harness: a promotion of {model}@{alias} is under way")
            break
        except Exception as exc:
            text = str(exc)
            if "RESOURCE_DOES_NOT_EXIST" in text and time.monotonic() <= deadline:
                # a tracking server's create met the lock as its holder released it (it looks up the model it
                # collided with, and finds it gone): free now, so take it
                time.sleep(0.05)
                continue
            if "ALREADY_EXISTS" not in text and "already exists" not in text.lower():
                raise
        with contextlib.suppress(Exception):  # a holder that died: its lock is taken over once stale
            held = client.get_registered_model(name)
            if time.time() - held.creation_timestamp / 1000 > LOCK_STALE:
                client.delete_registered_model(name)
                continue
        if time.monotonic() > deadline:
            raise TrackingError(
                f"another promotion of {model}@{alias} has held its lock ({name!r}) for over {wait:g} s",
                hint=f"wait for it and run harness promote again; a lock older than {LOCK_STALE:g} s is taken over",
            )
        time.sleep(0.1)
    try:
        yield
    finally:
        with contextlib.suppress(Exception):
            client.delete_registered_model(name)


def _alias_version(client: Any, model: str, alias: str) -> str | None:
    try:
        return str(client.get_model_version_by_alias(model, alias).version)
    except Exception as exc:
        if "RESOURCE_DOES_NOT_EXIST" not in str(exc) and "not found" not in str(exc).lower():
            raise
        return None


def promote(
    rule: Promote,
    candidate: ModelRef,
    production: ModelRef | None,
    tracking_uri: str,
    evidence: dict[str, str] | None = None,
) -> Promotion:
    """Move ``rule.alias`` to the candidate's version, if it points at production's version of the model (or at none,
    or at the candidate's already). Never moves an alias that someone pointed elsewhere since production was pinned:
    the read, the move and a second read that confirms it happen under :func:`promotion_lock`, so that of two
    promotions from the same version one moves it and the other says why not. ``evidence``: tags set on the
    candidate's version (:data:`EVALUATION_RUN_TAG` ...), the harness evaluation that decided its release."""
    client = _client(tracking_uri)
    if candidate.version is None:
        raise ConfigError(f"the candidate {candidate.uri} names no version of {rule.model}", hint="name models:/NAME/VERSION")
    where = f"{rule.model}@{rule.alias}"
    with promotion_lock(client, rule.model, rule.alias):
        now = _alias_version(client, rule.model, rule.alias)
        if now == candidate.version:
            return Promotion(False, f"not moved: {where} already names version {now}")
        expected = production.version if production is not None and production.name == rule.model else None
        if now is not None and now != expected:
            return Promotion(
                False,
                f"not moved: {where} names version {now}, not production's "
                f"({'version ' + expected if expected else 'production is not a version of ' + rule.model})",
            )
        for key, value in (evidence or {}).items():  # before the move: a promoted version always names its evidence
            client.set_model_version_tag(rule.model, candidate.version, key, value)
        client.set_registered_model_alias(rule.model, rule.alias, candidate.version)
        after = _alias_version(client, rule.model, rule.alias)
    if after != candidate.version:
        return Promotion(False, f"not moved: {where} names version {after} after the move to {candidate.version}")
    return Promotion(True, f"{where} moved from {'version ' + now if now else 'no version'} to version {candidate.version}")


__all__ = [
    "MODEL_ID_TAG",
    "MODEL_TAG",
    "SYSTEM_TAG",
    "Evidence",
    "Promotion",
    "model_tag",
    "production_evidence",
    "promote",
    "promotion_lock",
    "resolve_model",
]
