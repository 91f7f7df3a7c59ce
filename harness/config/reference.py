"""Every key an experiment config takes: its type, default and meaning, in one table.

The loader accepts exactly these keys (:func:`keys_of` gives each section's), ``docs/config.md`` is this table
written out (:func:`markdown`) and ``configs/harness.schema.json`` is it as a JSON Schema that editors read
(:func:`json_schema`); the tests hold all three to it.

>>> keys_of("tracking")
('enabled', 'uri', 'experiment', 'record_paths')
>>> json_schema()["properties"]["stats"]["properties"]["alpha"]["type"]  # a number, or ${VAR} before it is filled
['number', 'string']
"""

from __future__ import annotations

import dataclasses
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args

from harness.config.defaults import DEFAULT_MIN_AFFECTED, DEFAULT_POWER
from harness.config.schema import Claim, Correction, Family, Mode, NanPolicy, OnInconclusive, Resampling, Sample, Stats
from harness.measures.conventions import Conventions
from harness.stats.bounds import BoundChoice

_STATS = Stats()


@dataclass(frozen=True)
class Key:
    """One key: ``kind`` is string, integer, number, boolean, list, mapping or path (a string naming a file)."""

    name: str
    kind: str
    doc: str
    default: Any = None
    choices: tuple[str, ...] = ()
    keys: tuple[Key, ...] = ()  # a mapping's keys, or a list's items' when they are mappings
    required: bool = False
    also: str = ""  # another form the key takes: "string" (a path alone, a measure's name alone)
    open: bool = False  # a mapping whose keys are the user's (gain schemes, tags, runs by dataset)


_COLUMNS_QRELS = (
    Key("query", "string", "the query (user) id column", "query"),
    Key("doc", "string", "the document (item) id column", "doc"),
    Key("user", "string", "the same as query"),
    Key("item", "string", "the same as doc"),
    Key("relevance", "string", "the label column", "relevance"),
)
_COLUMNS_RUN = (
    Key("query", "string", "the query (user) id column", "query"),
    Key("doc", "string", "the document (item) id column", "doc"),
    Key("user", "string", "the same as query"),
    Key("item", "string", "the same as doc"),
    Key("score", "string", "the score column", "score"),
    Key("sample", "string", "a stochastic run's sample column (expected exposure)"),
)
_FORMATS = ("trec", "csv", "tsv", "parquet", "jsonl")


def _conventions() -> tuple[Key, ...]:
    out = []
    for field in dataclasses.fields(Conventions):
        default = getattr(Conventions(), field.name)
        choices = tuple(str(m.value) for m in type(default)) if hasattr(default, "value") else ()
        kind = "string" if choices else {"bool": "boolean", "int": "integer"}.get(type(default).__name__, "integer")
        out.append(Key(field.name, kind, "see [Conventions](conventions.md)", default.value if choices else default, choices))
    return tuple(out)


TOP = (
    Key("experiment", "string", "names the results folder and the MLflow experiment", required=True),
    Key("description", "string", "a note shown in the report and on the MLflow run", ""),
    Key(
        "datasets",
        "list",
        "one or more judgment sets",
        required=True,
        keys=(
            Key("name", "string", "how results and run files refer to it (required with two datasets or more)", "default"),
            Key("qrels", "path", "the judgments: TREC qrels or a table", required=True),
            Key("format", "string", "the judgments' format (default: by the file's name, else trec)", None, _FORMATS),
            Key("columns", "mapping", "a table's columns for the judgments", keys=_COLUMNS_QRELS),
            Key("run_columns", "mapping", "a table run's columns", keys=_COLUMNS_RUN),
            Key("relevance_level", "integer", "binary measures: relevant iff label >= it (trec_eval -l)", 1),
            Key(
                "segments",
                "mapping",
                "each query's segment: every number also per segment",
                also="string",
                keys=(
                    Key("path", "path", "the table of segments", required=True),
                    Key("query", "string", "its query (user) column", "query"),
                    Key("segment", "string", "its segment column", "segment"),
                ),
            ),
            Key(
                "train",
                "mapping",
                "training interactions (beyond-accuracy measures)",
                also="string",
                keys=(
                    Key("path", "path", "the interactions table", required=True),
                    Key(
                        "columns",
                        "mapping",
                        "its columns",
                        keys=(
                            Key("query", "string", "the user column (or user:)", "user"),
                            Key("doc", "string", "the item column (or item:)", "item"),
                            Key("user", "string", "the user column", "user"),
                            Key("item", "string", "the item column", "item"),
                        ),
                    ),
                ),
            ),
            Key(
                "items",
                "mapping",
                "the item catalogue: features and groups",
                also="string",
                keys=(
                    Key("path", "path", "the catalogue table", required=True),
                    Key("id", "string", "its item id column", "item"),
                    Key("groups", "list", "columns that group items (read as labels)", []),
                ),
            ),
            Key(
                "judge",
                "mapping",
                "a model judge's labels of every query: people's qrels (a sample of the queries) correct them",
                also="string",
                keys=(
                    Key("qrels", "path", "the judge's labels: TREC qrels or a table", required=True),
                    Key("name", "string", "the judge's name, as the tables and the verdict show it", "judge"),
                    Key("format", "string", "their format (default: by the file's name, else trec)", None, _FORMATS),
                    Key("columns", "mapping", "a table's columns for the judge's labels", keys=_COLUMNS_QRELS),
                    Key("grades", "mapping", "the judge's grades on people's scale ({3: 2}: its 3 is people's 2)", open=True),
                    Key("sample", "string", "how people's queries were drawn", "random", get_args(Sample)),
                    Key(
                        "strata",
                        "mapping",
                        "sample: stratified: each query's stratum",
                        also="string",
                        keys=(
                            Key("path", "path", "the table of strata", required=True),
                            Key("query", "string", "its query (user) column", "query"),
                            Key("stratum", "string", "its stratum column", "stratum"),
                        ),
                    ),
                ),
            ),
        ),
    ),
    Key(
        "systems",
        "list",
        "the runs to compare; one per dataset",
        required=True,
        keys=(
            Key("name", "string", "the system's name", required=True),
            Key(
                "runs",
                "mapping",
                "dataset name -> run file, or a list or glob of its runs over training seeds (a path alone for one dataset)",
                also="string",
                open=True,
            ),
            Key(
                "seed",
                "string",
                "with several runs and claim: model, the one evaluated (its file name without its format and "
                "compression suffixes)",
            ),
            Key("description", "string", "a note shown in the report", ""),
            Key("tags", "mapping", "MLflow tags of the system's runs", open=True),
            Key("model", "string", "the registered model these runs are of (models:/NAME/VERSION, @ALIAS or m-...)"),
            Key(
                "previous",
                "mapping",
                "an earlier evaluation of this system instead of runs (or models:/, runs:/, a folder)",
                also="string",
                keys=(
                    Key("results", "path", "an earlier results folder"),
                    Key("mlflow_run", "string", "an MLflow run id"),
                    Key("model", "string", "a registered model: its latest harness evaluation (models:/NAME@ALIAS)"),
                    Key("uri", "string", "the tracking URI of that run or model"),
                    Key("system", "string", "the system's name there (default: this one's)"),
                ),
            ),
        ),
    ),
    Key(
        "measures",
        "list",
        "ir_measures names (nDCG@10, P(rel=2)@5) or {measure, cutoffs}",
        required=True,
        also="string",
        keys=(
            Key("measure", "string", "the measure", required=True),
            Key("cutoffs", "list", "its cutoffs (replace the top-level cutoffs)", []),
        ),
    ),
    Key("cutoffs", "list", "a measure named without @k expands over these", []),
    Key("gains", "mapping", "named gain schemes: linear, exponential or {label: gain}", open=True),
    Key("profile", "string", "one tool's conventions at once (harness measures lists them)", "trec_eval"),
    Key("conventions", "mapping", "each convention, over the profile", keys=_conventions()),
    Key("baseline", "string", "the system every other is compared against (else all pairs)"),
    Key(
        "stats",
        "mapping",
        "the paired tests",
        keys=(
            Key("enabled", "boolean", "compute the comparisons", _STATS.enabled),
            Key("tests", "list", "of t, wilcoxon, randomization, bootstrap", list(_STATS.tests)),
            Key("primary", "string", "the test whose corrected p decides significance", _STATS.primary),
            Key(
                "resampling",
                "string",
                "where the randomization test and the bootstrap run: only on comparisons where the t-test cannot be "
                "trusted, t deciding the others (auto), or on every one (always)",
                _STATS.resampling,
                get_args(Resampling),
            ),
            Key(
                "correction",
                "string",
                "across the family of comparisons",
                _STATS.correction,
                get_args(Correction),
            ),
            Key("family", "string", "per_measure, or the whole grid of pairs x measures", _STATS.family, get_args(Family)),
            Key("mode", "string", "against the baseline (the default with one), or all pairs", None, get_args(Mode)),
            Key("alpha", "number", "the significance level", _STATS.alpha),
            Key("permutations", "integer", "the randomization test's draws (at least 100)", _STATS.permutations),
            Key("resamples", "integer", "the bootstrap's draws", _STATS.resamples),
            Key("system_resamples", "integer", "a system measure's resamples (Coverage, Gini)", _STATS.system_resamples),
            Key("seed", "integer", "keys every draw: the same p-values every run", _STATS.seed),
            Key(
                "nan",
                "string",
                "a per-query value that is NaN: stop, or drop that query from that comparison",
                _STATS.nan,
                get_args(NanPolicy),
            ),
            Key(
                "claim",
                "string",
                "what comparisons and the gate decide: these trained runs (model), or the training "
                "procedures over their seeds (version; the default when a system has several runs)",
                None,
                get_args(Claim),
            ),
        ),
    ),
    Key(
        "release",
        "mapping",
        "the release gate: production against a candidate (docs/release.md)",
        keys=(
            Key("production", "string", "the system in production", required=True),
            Key("candidate", "string", "the candidate system", required=True),
            Key(
                "guards",
                "list",
                "what the candidate must not lose (docs/release.md)",
                keys=(
                    Key("measure", "string", "the guarded measure", required=True),
                    Key("dataset", "string", "one dataset (default: each)"),
                    Key("segment", "string", "one segment, or each (default: all users)"),
                    Key("max_drop", "number", "the largest drop allowed, in the measure's units"),
                    Key("max_drop_pct", "number", "the largest drop allowed, in percent of production"),
                    Key("min_gain", "number", "the smallest gain required"),
                    Key("descriptive", "boolean", "shown beside the gate, never deciding it", False),
                ),
            ),
            Key(
                "on_inconclusive",
                "string",
                "what INCONCLUSIVE exits as",
                "inconclusive",
                get_args(OnInconclusive),
            ),
            Key("power", "number", "the power the users needed are planned for", DEFAULT_POWER),
            Key("bound", "string", "how each guard's bound is made", "auto", get_args(BoundChoice)),
            Key("looks", "integer", "the gate's planned runs as users accrue: alpha is spent over them", 1),
            Key(
                "min_affected",
                "number",
                "the rarest harm, as a share of users, that bound: auto's t-test must not miss (0: t never decides a "
                "measure with a known range)",
                DEFAULT_MIN_AFFECTED,
            ),
            Key(
                "promote",
                "mapping",
                "on PASS, move a registry alias to the candidate's model version",
                keys=(
                    Key("model", "string", "the registered model", required=True),
                    Key("alias", "string", "the alias to move", required=True),
                ),
            ),
        ),
    ),
    Key(
        "tracking",
        "mapping",
        "MLflow",
        keys=(
            Key("enabled", "boolean", "log the results", True),
            Key("uri", "string", "the tracking URI (default: a local store beside the results)"),
            Key("experiment", "string", "the MLflow experiment (default: experiment)"),
            Key("record_paths", "boolean", "record local absolute paths (default: names relative to the config)", False),
        ),
    ),
    Key(
        "report",
        "mapping",
        "the HTML report",
        keys=(
            Key("enabled", "boolean", "render the report", True),
            Key("title", "string", "the report's title (default: experiment)"),
        ),
    ),
    Key(
        "output",
        "mapping",
        "where the results folders go: the results root (default: reports/ in the working directory), as a path or {path, csv}",
        also="string",
        keys=(
            Key("path", "path", "the results root (default: reports/ in the working directory)"),
            Key(
                "csv",
                "boolean",
                "also write per_query.csv, the per-query table as CSV (per_query.parquet is the record; every other "
                "table has its CSV twin always)",
                False,
            ),
        ),
    ),
    Key(
        "engine",
        "mapping",
        "where the work runs",
        keys=(
            Key("name", "string", "local, or dask (the extra)", "local", ("local", "dask")),
            Key("workers", "integer", "local threads (default: the cores)"),
            Key("scheduler", "string", "a Dask scheduler's address (default: a LocalCluster)"),
            Key("n_workers", "integer", "a LocalCluster's workers"),
            Key("memory_limit", "string", "a LocalCluster worker's memory (e.g. 4GB)"),
            Key("partitions", "integer", "the rows' partitions"),
        ),
    ),
)


# an example of each key whose default does not show one: what a line of a config looks like
_EXAMPLES = {
    "experiment": "experiment: trec-demo",
    "description": "description: BM25 against dense retrieval",
    "datasets": "datasets: [{name: trec, qrels: qrels.txt}]",
    "systems": "systems: [{name: bm25, runs: {trec: bm25.run}}]",
    "measures": "measures: [nDCG, P@5, {measure: AP, cutoffs: []}]",
    "cutoffs": "cutoffs: [5, 10, 20]",
    "gains": "gains: {linear: linear, graded: {1: 1, 2: 3, 3: 7}}",
    "conventions": "conventions: {ties: trec_eval, queries: qrels}",
    "baseline": "baseline: bm25",
    "output": "output: {path: ../reports, csv: true}",
    "output.path": "path: ../reports",
    "datasets.name": "name: trec",
    "datasets.qrels": "qrels: ${QRELS:-qrels.txt}",
    "datasets.format": "format: csv",
    "datasets.columns": "columns: {query: user, doc: item, relevance: rating}",
    "datasets.run_columns": "run_columns: {query: user, doc: item, score: score}",
    "datasets.segments": "segments: {path: segments.csv, query: user, segment: kind}",
    "datasets.segments.path": "path: segments.csv",
    "datasets.train": "train: {path: train.csv, columns: {query: user, doc: item}}",
    "datasets.train.path": "path: train.csv",
    "datasets.train.columns": "columns: {user: uid, item: iid}",
    "datasets.items": "items: {path: items.csv, id: item, groups: [provider]}",
    "datasets.items.path": "path: items.csv",
    "datasets.items.groups": "groups: [provider, era]",
    "datasets.judge": "judge: {qrels: judge.txt, name: gpt-judge}",
    "datasets.judge.qrels": "qrels: judge.txt",
    "datasets.judge.format": "format: csv",
    "datasets.judge.columns": "columns: {query: query, doc: doc, relevance: label}",
    "datasets.judge.grades": "grades: {3: 2, 2: 1}",
    "datasets.judge.strata": "strata: {path: strata.csv, query: query, stratum: stratum}",
    "datasets.judge.strata.path": "path: strata.csv",
    "systems.name": "name: dense",
    "systems.runs": "runs: {trec: dense.run, ratings: [v2-seed1.csv, v2-seed2.csv]}",
    "systems.description": "description: the dense retriever",
    "systems.tags": "tags: {family: dense}",
    "systems.seed": "seed: v2-seed1",
    "stats.claim": "claim: version",
    "systems.previous": "previous: {results: ../reports/exp/latest}",
    "systems.previous.results": "results: ../reports/exp/latest",
    "systems.previous.mlflow_run": "mlflow_run: 8c1f...",
    "systems.previous.uri": "uri: http://mlflow:5000",
    "systems.model": "model: models:/recsys/4",
    "systems.previous.model": "model: models:/recsys@champion",
    "release.promote": "promote: {model: recsys, alias: champion}",
    "release.promote.model": "model: recsys",
    "release.promote.alias": "alias: champion",
    "systems.previous.system": "system: production",
    "measures.measure": "measure: AP",
    "measures.cutoffs": "cutoffs: []",
    "tracking.uri": "uri: http://127.0.0.1:5000",
    "tracking.experiment": "experiment: release-checks",
    "report.title": "title: Recommender release check",
    "release": "release: {production: v1, candidate: v2, guards: [{measure: nDCG@10, max_drop: 0.005}]}",
    "release.production": "production: v1",
    "release.candidate": "candidate: v2",
    "release.guards": "guards: [{measure: nDCG@10, max_drop: 0.005}]",
    "release.guards.measure": "measure: nDCG@10",
    "release.guards.dataset": "dataset: ratings",
    "release.guards.segment": "segment: new",
    "release.guards.max_drop": "max_drop: 0.005",
    "release.guards.max_drop_pct": "max_drop_pct: 2",
    "release.guards.min_gain": "min_gain: 0.01",
    "stats.mode": "mode: all_pairs",
    "stats": "stats: {permutations: 10000, seed: 42}",
    "tracking": "tracking: {uri: http://127.0.0.1:5000}",
    "report": "report: {title: Release check}",
    "engine": "engine: {name: dask, n_workers: 4}",
    "datasets.run_columns.sample": "sample: draw",
    "datasets.columns.user": "user: user",
    "datasets.columns.item": "item: item",
    "datasets.run_columns.user": "user: user",
    "datasets.run_columns.item": "item: item",
    "engine.name": "name: dask",
    "engine.workers": "workers: 2",
    "engine.scheduler": "scheduler: tcp://10.0.0.5:8786",
    "conventions.depth": "depth: 100",
    "engine.n_workers": "n_workers: 4",
    "engine.memory_limit": "memory_limit: 4GB",
    "engine.partitions": "partitions: 16",
}


# the other forms a key takes (a path alone for a mapping, a string for a list's mapping), each a line of a config
_OTHER_FORMS = {
    "datasets.segments": ("segments: segments.csv",),
    "datasets.train": ("train: train.csv",),
    "datasets.items": ("items: items.csv",),
    "datasets.judge": ("judge: judge.txt",),
    "datasets.judge.strata": ("strata: strata.csv",),
    "systems.runs": ("runs: dense.run",),
    "systems.previous": ("previous: models:/recsys@champion", "previous: runs:/8c1f...", "previous: ../reports/exp/latest"),
    "output": ("output: ../reports",),
}


def other_forms(path: str) -> tuple[str, ...]:
    """The other forms of a key, each a line of a config (``systems.runs``: a path alone, for one dataset).

    >>> other_forms("datasets.train")
    ('train: train.csv',)
    """
    return _OTHER_FORMS.get(path, ())


def example(path: str, key: Key) -> str:
    """A line of a config setting the key: the example above, else the key at its default or first choice."""
    if path in _EXAMPLES:
        return _EXAMPLES[path]
    value = key.default if key.default is not None else (key.choices[0] if key.choices else None)
    text = json.dumps(value) if isinstance(value, list) else str(value).lower() if isinstance(value, bool) else value
    return f"{key.name}: {text}"


def _find(path: str) -> Key | None:
    keys: tuple[Key, ...] = TOP
    found = None
    for part in path.replace("[]", "").split("."):
        found = next((k for k in keys if k.name == part), None)
        if found is None:
            return None
        keys = found.keys
    return found


def keys_of(section: str) -> tuple[str, ...]:
    """The keys a section takes (``""``: the top level; ``datasets``, ``release.guards``: nested ones)."""
    if not section:
        return tuple(k.name for k in TOP)
    found = _find(section)
    if found is None:
        raise KeyError(section)
    return tuple(k.name for k in found.keys)


def entries_of(section: str) -> tuple[Key, ...] | None:
    """The keys a section declares, with their types and defaults (``""``: the top level); None for a section whose
    keys are the user's (``systems.tags``, ``gains``) or that is not in the table.

    >>> [(k.name, k.kind, k.default) for k in entries_of("report")]
    [('enabled', 'boolean', True), ('title', 'string', None)]
    >>> entries_of("systems.tags") is None
    True
    """
    if not section:
        return TOP
    found = _find(section)
    return None if found is None or found.open or not found.keys else found.keys


_JSON_TYPES = {
    "string": "string",
    "path": "string",
    "integer": "integer",
    "number": "number",
    "boolean": "boolean",
    "list": "array",
    "mapping": "object",
}


def _schema(key: Key) -> dict[str, Any]:
    out: dict[str, Any] = {"description": key.doc}
    if key.kind == "mapping":
        out["type"] = "object"
        if key.keys:
            out["properties"] = {k.name: _schema(k) for k in key.keys}
            out["additionalProperties"] = False
            required = [k.name for k in key.keys if k.required]
            if required:
                out["required"] = required
    elif key.kind == "list":
        out["type"] = "array"
        if key.keys:
            item: dict[str, Any] = {
                "type": "object",
                "properties": {k.name: _schema(k) for k in key.keys},
                "additionalProperties": False,
            }
            required = [k.name for k in key.keys if k.required]
            if required:
                item["required"] = required
            out["items"] = {"anyOf": [item, {"type": "string"}]} if key.also == "string" else item
    else:
        out["type"] = "integer" if key.kind == "integer" else _JSON_TYPES[key.kind]
        if key.kind == "string" and key.name == "memory_limit":
            out["type"] = ["string", "integer"]
    if key.choices:
        out["enum"] = list(key.choices)
    if key.default is not None and key.kind not in ("mapping",):
        out["default"] = key.default
    if key.also == "string" and key.kind == "mapping":
        return {"description": key.doc, "anyOf": [{k: v for k, v in out.items() if k != "description"}, {"type": "string"}]}
    types = [out["type"]] if isinstance(out["type"], str) else list(out["type"])
    if key.kind in ("integer", "number", "boolean"):
        types.append("string")  # ${VAR} in a config is text until the environment fills it
    if not key.required and key.default is None and key.kind not in ("list", "mapping"):
        types.append("null")  # written out as null: the default
        if key.choices:
            out["enum"] = [*key.choices, None]
    out["type"] = types[0] if len(types) == 1 else types
    return out


def json_schema() -> dict[str, Any]:
    """The config as a JSON Schema (draft 2020-12): what editors read to complete and check a config."""
    root = _schema(Key("config", "mapping", "a harness experiment config", keys=TOP))
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "harness experiment config", **root}


def markdown() -> str:
    """The reference as Markdown: one table per section, every key with its type, default and meaning."""
    lines = [
        "# Configuration reference",
        "",
        "Every key an experiment config takes, generated from `harness/config/reference.py` (the loader accepts "
        "exactly these). `configs/harness.schema.json` is the same as a JSON Schema: point an editor's YAML "
        "support at it. `configs/trec.yaml` shows every key in use.",
        "",
    ]

    def table(title: str, keys: tuple[Key, ...]) -> None:
        lines.extend(
            [
                f"## `{title}`" if title else "## Top level",
                "",
                "| key | type | default | meaning | example |",
                "| --- | --- | --- | --- | --- |",
            ]
        )
        for k in keys:
            kind = (
                k.kind
                + (f" ({' / '.join(k.choices)})" if k.choices else "")
                + (" of strings or mappings" if k.also and k.kind == "list" else " or string" if k.also else "")
            )
            default = (
                "required"
                if k.required
                else ("" if k.default is None else f"`{k.default!r}`" if k.default == "" else f"`{k.default}`")
            )
            path = f"{title}.{k.name}".lstrip(".").replace("[]", "")
            examples = " or ".join(f"`{line}`" for line in (example(path, k), *other_forms(path)))
            lines.append(f"| `{k.name}` | {kind} | {default} | {k.doc} | {examples} |")
        lines.append("")
        for k in keys:
            if k.keys:
                table(f"{title}.{k.name}".lstrip(".") + ("[]" if k.kind == "list" else ""), k.keys)

    table("", TOP)
    return "\n".join(lines)


def _files(root: Path) -> dict[Path, str]:
    return {
        root / "docs" / "config.md": markdown() + "\n",
        root / "configs" / "harness.schema.json": json.dumps(json_schema(), indent=1) + "\n",
    }


def write(root: Path) -> None:
    """Write ``docs/config.md`` and ``configs/harness.schema.json`` under ``root`` from the table:
    ``python -m harness.config.reference`` in the repository after a key changes (the tests compare them)."""
    for path, text in _files(root).items():
        path.write_text(text)


def stale(root: Path) -> list[Path]:
    """The generated files under ``root`` that are not the table written out (``--check``, in ``make lint``)."""
    return [path for path, text in _files(root).items() if not path.exists() or path.read_text() != text]


if __name__ == "__main__":
    if "--check" in sys.argv[1:]:
        for path in stale(Path.cwd()):
            print(f"{path} is not the configuration reference written out: run python -m harness.config.reference")
        sys.exit(1 if stale(Path.cwd()) else 0)
    write(Path.cwd())


__all__ = ["TOP", "Key", "entries_of", "example", "json_schema", "keys_of", "markdown", "other_forms", "stale", "write"]
