"""What harness's records are called in MLflow: a results folder's key and its parent run's name, each measure's metric
key, the params of a config, the release view's columns, the UI's addresses, and every name held to what MLflow's
columns hold."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from harness.measures.parse import parse_measure
from harness.records.connection import key_part

# What MLflow holds (a run's name is a 250-character column in its SQL stores; tag and param values 8000 and 6000)
RUN_NAME_CHARS, TAG_CHARS, PARAM_CHARS, EXPERIMENT_CHARS = 250, 5000, 5000, 250
DATASET_NAME_CHARS, INPUT_TAG_CHARS = 500, 500  # an input's name, and an input tag's value


def held(text: str, limit: int) -> str:
    """``text`` as MLflow can hold it: unchanged when it fits, else its start and a digest of the whole, so that two
    long names stay two (the results folder keeps every name whole).

    >>> held("a" * 300, 20)
    'aaaaaaaaa…003ef1ba9e'
    """
    if len(text) <= limit:
        return text
    return f"{text[: limit - 11]}…{hashlib.sha1(text.encode()).hexdigest()[:10]}"


def _flatten(prefix: str, value: Any) -> dict[str, str]:
    if isinstance(value, dict):
        out: dict[str, str] = {}
        for k, v in value.items():
            out.update(_flatten(f"{prefix}.{k}" if prefix else str(k), v))
        return out
    text = ",".join(str(v) for v in value) if isinstance(value, list) else str(value)
    return {prefix: text}


def params_of(config: dict[str, Any]) -> dict[str, str]:
    params = {
        "measures": ", ".join(config["measures"]),
        "n_measures": str(len(config["measures"])),
        "cutoffs": ",".join(str(c) for c in config.get("cutoffs", [])),
        "profile": str(config.get("profile")),
        "baseline": str(config.get("baseline")),
        "datasets": ",".join(d["name"] for d in config["datasets"]),
        "systems": ",".join(s["name"] for s in config["systems"]),
    }
    params.update({f"gains.{key_part(name)}": str(text) for name, text in (config.get("gain_schemes") or {}).items()})
    conventions = {k: v for k, v in config.get("conventions", {}).items() if k != "relevance_level"}
    params.update(_flatten("conventions", conventions))
    for d in config["datasets"]:  # evaluated per dataset: the experiment-wide value would mislead
        params[f"dataset.{key_part(d['name'])}.relevance_level"] = str(d.get("relevance_level"))
    for name in [*(d["name"] for d in config["datasets"]), *(config.get("gain_schemes") or {})]:
        if key_part(name) != name:  # the original name, kept as a value beside the key it became
            params[f"name.{key_part(name)}"] = name
    params.update(_flatten("stats", config.get("stats", {})))
    return {k: v if len(v) <= 6000 else v[:5980] + " ...(truncated)" for k, v in params.items()}


def results_key(experiment: str, folder: Path) -> str:
    """The stable key of a results folder: the experiment's name and the folder's own name (its time and random id).

    >>> results_key("demo", Path("out/demo/20261124-075857-f3983d"))
    'demo/20261124-075857-f3983d'
    """
    return f"{experiment}/{folder.name}"


def parent_name(experiment: str, folder: Path, verdict: Any) -> str:
    """The parent run's name: the experiment, the folder and, with a gate, its verdict: the one column the MLflow UI's
    runs table always shows, so a release's verdict reads there without adding columns.

    >>> parent_name("demo", Path("out/demo/20261124-075857-f3983d"), None)
    'demo 20261124-075857-f3983d'
    """
    name = f"{experiment} {folder.name}"
    return name if verdict is None else f"{verdict.verdict} {verdict.candidate} vs {verdict.production} · {name}"


def metric_key(measure: str, gain_schemes: dict[str, str]) -> str:
    """The MLflow metric key of a measure; a named gain scheme gives a readable key.

    >>> metric_key("nDCG(gains={1:0,2:3})@10", {"graded": "gains={1:0,2:3}"})
    'ndcg_graded_at_10'
    >>> metric_key("P(rel=2)@5", {})
    'p_rel_2_at_5'
    """

    parsed = parse_measure(measure)
    for name, text in gain_schemes.items():
        if text and text != "linear" and f"({text})" in measure:
            plain = parse_measure(measure.replace(f"({text})", ""))
            key = plain.mlflow_key()
            scheme = key_part(name.lower())
            return key.replace("_at_", f"_{scheme}_at_", 1) if plain.cutoff is not None else f"{key}_{scheme}"
    return parsed.mlflow_key()


def summary_key(keys: dict[str, str], measure: Any, segment: Any) -> str:
    """A summary row's MLflow key: its measure's key, and ``.<segment>`` for a segment.

    >>> summary_key({"AP": "ap"}, "AP", "all"), summary_key({"AP": "ap"}, "AP", "new users")
    ('ap', 'ap.new_users_cb6df8')
    """
    return keys[measure] if segment == "all" else f"{keys[measure]}.{key_part(str(segment))}"


def evaluator_key(keys: dict[str, str], row: Any, first_dataset: str, system: str) -> str:
    """A summary row's metric key in a run the MLflow evaluator made (:func:`~harness.records.track.log_into_run`): a
    second dataset's as ``<dataset>/<key>``, another system's as ``<system>/<key>``.

    >>> from types import SimpleNamespace
    >>> row = SimpleNamespace(measure="AP", segment="all", dataset="d2", system="v1")
    >>> evaluator_key({"AP": "ap"}, row, "d1", "v2")
    'v1/d2/ap'
    """
    key = summary_key(keys, row.measure, row.segment)
    if row.dataset != first_dataset:
        key = f"{key_part(str(row.dataset))}/{key}"
    return key if row.system == system else f"{key_part(str(row.system))}/{key}"


def description_of(config: dict[str, Any]) -> str:
    """The experiment's and the systems' descriptions, as the parent run's note."""
    lines = [config.get("description") or ""]
    lines += [f"- {s['name']}: {s['description']}" for s in config["systems"] if s.get("description")]
    return "\n".join(line for line in lines if line)


# The MLflow UI's shared views: an experiment tag holding a view's JSON (its columns), opened by an address that names
# it (``viewStateShareKey``). harness keeps one, with the verdict and the guards' numbers as columns.
SHARED_VIEW_PREFIX, RELEASE_VIEW = "mlflow.sharedViewState.", "harness-release"


GUARD_COLUMNS = ("difference", "drop_high", "passed")  # of each guard, in the release view: the delta and its bound


MAX_VIEW_CHARS = 5000  # an experiment tag's value holds at most this


def release_view(columns: list[str], earlier: str | None) -> str:
    """The release view's JSON (an MLflow UI view state): the verdict, then each guard's columns, those of views
    logged before first (one experiment's releases usually share their guards), right after the run's name and wide
    enough to read, within MAX_VIEW_CHARS.

    >>> view = json.loads(release_view(["guard.AP.d.difference"], None))
    >>> view["columnOrder"][:3]
    ['attributes.`Run Name`', 'tags.`release.verdict`', 'metrics.`guard.AP.d.difference`']
    """
    wanted = ["tags.`release.verdict`", *(f"metrics.`{key}`" for key in columns), "attributes.`Dataset`"]
    try:
        kept = list(json.loads(earlier)["selectedColumns"]) if earlier else []
    except (ValueError, KeyError, TypeError):  # edited by hand: started again
        kept = []
    selected = list(dict.fromkeys([*kept, *wanted]))

    def view() -> dict[str, Any]:
        shown = [c for c in selected if not c.startswith("attributes.")]
        return {
            "selectedColumns": selected,
            "columnOrder": ["attributes.`Run Name`", *shown, "runDateAndNestInfo"],
            "columnWidths": {"attributes.`Run Name`": 320} | {c: 230 for c in shown if c.startswith("metrics.")},
        }

    while len(json.dumps(view())) > MAX_VIEW_CHARS:
        selected.pop(1)  # the oldest guard's columns go first; the verdict stays
    return json.dumps(view())


def runs_table_url(server: str, experiment_id: str, view: str | None = None) -> str:
    """The MLflow UI's runs table of an experiment, in its model-training mode; with ``view``, as that shared view
    shows it (the release view: the verdict and the guards' numbers as columns).

    >>> runs_table_url("http://127.0.0.1:5000/", "1")
    'http://127.0.0.1:5000/#/experiments/1/runs?workflowType=machine_learning'
    >>> runs_table_url("http://127.0.0.1:5000/", "1", RELEASE_VIEW)
    'http://127.0.0.1:5000/#/experiments/1/runs?workflowType=machine_learning&viewStateShareKey=harness-release'
    """
    address = f"{server.rstrip('/')}/#/experiments/{experiment_id}/runs?workflowType=machine_learning"
    return address if view is None else f"{address}&viewStateShareKey={view}"


def run_url(tracking_uri: str, experiment_id: str, run_id: str) -> str | None:
    """The run's page in the MLflow UI, for a server URI.

    >>> run_url("http://127.0.0.1:5000/", "1", "abc")
    'http://127.0.0.1:5000/#/experiments/1/runs/abc?workflowType=machine_learning'
    """
    if tracking_uri.startswith(("http://", "https://")):  # the model-training view, not MLflow 3's GenAI one
        return f"{tracking_uri.rstrip('/')}/#/experiments/{experiment_id}/runs/{run_id}?workflowType=machine_learning"
    return None


def quoted(text: str) -> str:
    return text.replace("\\", "\\\\").replace("'", "\\'")
