"""MLflow's model registry as the source of production: a model reference resolved and pinned, the latest harness
evaluation of a model found again, and an alias moved to a released version.

``models:/recsys@champion`` is resolved once, when a run starts, to the version the alias names then (and its logged
model), and the run records that version: the numbers stay about one model whatever the alias points at later. Every
harness evaluation of a model carries the tags :data:`MODEL_ID_TAG` and :data:`MODEL_TAG` (``recsys/3``), by which
``previous: models:/recsys@champion`` finds the latest one, complete and finished, and reuses its per-query values;
those are checked against this run's inputs and conventions exactly as a results folder's are.

>>> model_tag(ModelRef("models:/recsys/3", name="recsys", version="3"))
'recsys/3'
"""

from __future__ import annotations

import dataclasses
from typing import Any

from harness.config.schema import ModelRef, Promote
from harness.errors import ConfigError, HarnessError, TrackingError
from harness.records.connection import explain, mlflow_defaults

MODEL_ID_TAG, MODEL_TAG, SYSTEM_TAG = "harness.model_id", "harness.model", "harness.system"
KIND_TAG, COMPLETE_TAG = "harness.kind", "harness.complete"
SEARCHED = 200  # the latest evaluations of a model looked at for a complete one


def model_tag(model: ModelRef) -> str | None:
    """The tag value that names a registered model's version (``NAME/VERSION``), when the reference has both."""
    return f"{model.name}/{model.version}" if model.name and model.version else None


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


def latest_evaluation(model: ModelRef, tracking_uri: str) -> tuple[str, str]:
    """(the run holding the results, the system's name there) of the latest complete harness evaluation of a pinned
    model: the parent run of a ``harness run`` whose system named the model, or a run ``mlflow.models.evaluate(...,
    evaluators="harness")`` logged."""
    try:
        client = _client(tracking_uri)
        wanted = [f"tags.`{MODEL_ID_TAG}` = '{model.model_id}'"] if model.model_id else []
        if model_tag(model):
            wanted.append(f"tags.`{MODEL_TAG}` = '{model_tag(model)}'")
        experiments = [e.experiment_id for e in _all_experiments(client)]
        for condition in wanted:
            runs = (
                client.search_runs(
                    experiments, filter_string=condition, order_by=["attributes.start_time DESC"], max_results=SEARCHED
                )
                if experiments
                else []
            )
            for run in runs:
                found = _results_run(client, run)
                if found is not None:
                    return found
    except Exception as exc:
        raise _failure(exc, f"cannot search the evaluations of {model.uri} at {tracking_uri}") from None
    raise ConfigError(
        f"no complete harness evaluation of {model.uri} ({model.pinned}) at {tracking_uri}",
        hint="evaluate that model first: a harness run whose system says model: "
        f"models:/{model.name or model.model_id}/..., or mlflow.models.evaluate(..., "
        'evaluators="harness", model_id=...)',
    )


def _all_experiments(client: Any) -> list[Any]:
    out, token = [], None
    while True:
        page = client.search_experiments(max_results=1000, page_token=token)
        out.extend(page)
        token = page.token
        if not token:
            return out


def _results_run(client: Any, run: Any) -> tuple[str, str] | None:
    """Where a tagged run's results are: a ``harness run`` child's complete parent, or a complete evaluator run."""
    tags = run.data.tags
    system = tags.get(SYSTEM_TAG) or tags.get("system")
    if system is None or run.info.status != "FINISHED":
        return None
    if tags.get(KIND_TAG) == "system":
        parent = client.get_run(tags["mlflow.parentRunId"])
        if parent.data.tags.get(COMPLETE_TAG) == "true" and parent.info.status == "FINISHED":
            return parent.info.run_id, system
        return None
    if tags.get(KIND_TAG) == "evaluation" and tags.get(COMPLETE_TAG) == "true":
        return run.info.run_id, system
    return None


def promote(rule: Promote, candidate: ModelRef, production: ModelRef | None, tracking_uri: str) -> str:
    """Move ``rule.alias`` to the candidate's version, if it points at production's version of the model (or at none,
    or at the candidate's already); returns what was done, as recorded on the parent run. Never moves an alias that
    someone pointed elsewhere since production was pinned."""
    client = _client(tracking_uri)
    assert candidate.version is not None
    try:
        now: str | None = str(client.get_model_version_by_alias(rule.model, rule.alias).version)
    except Exception as exc:
        if "RESOURCE_DOES_NOT_EXIST" not in str(exc) and "not found" not in str(exc).lower():
            raise
        now = None
    where = f"{rule.model}@{rule.alias}"
    if now == candidate.version:
        return f"{where} already names version {now}"
    expected = production.version if production is not None and production.name == rule.model else None
    if now is not None and now != expected:
        return (
            f"not moved: {where} names version {now}, not production's "
            f"({'version ' + expected if expected else 'production is not a version of ' + rule.model})"
        )
    client.set_registered_model_alias(rule.model, rule.alias, candidate.version)
    return f"{where} moved from {'version ' + now if now else 'no version'} to version {candidate.version}"


__all__ = ["MODEL_ID_TAG", "MODEL_TAG", "SYSTEM_TAG", "latest_evaluation", "model_tag", "promote", "resolve_model"]
