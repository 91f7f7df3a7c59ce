"""YAML -> :class:`~harness.config.schema.Experiment`, validated, with located errors.

Each key is read as ``harness/config/reference.py`` declares it: the keys a section
takes, each one's type, default and whether it is required. Every mistake names the
file, the line and the fix: unknown keys come with the nearest valid key, types with
what was expected. ``${VAR}`` (or ``${VAR:-default}``)
in a string is replaced from the environment; paths resolve relative to the config
file; only plain YAML (what ``yaml.safe_load`` accepts) is read.

Precedence, in one place (:func:`load_config`): built-in defaults, then the named
profile, then the file's ``conventions``, then overrides given by the caller (CLI).
"""

from __future__ import annotations

import contextlib
import copy
import difflib
import glob
import math
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, get_args

import yaml

from harness._atomic import sha256_file
from harness._text import clipped
from harness.config.defaults import COLUMN_SYNONYMS, DEFAULT_DATASET, MAX_ALPHA
from harness.config.extras import missing_dask
from harness.config.formats import FORMATS, QRELS_FORMATS, table_format_of
from harness.config.guards import (
    GUARD_KEYS,
    RETIRED,
    guard_of,
    on_inconclusive,
    release_bound,
    release_looks,
    release_min_affected,
    release_power,
)
from harness.config.reference import Key, entries_of, keys_of
from harness.config.schema import (
    Claim,
    Correction,
    Dataset,
    Engine,
    Experiment,
    Family,
    Guard,
    ItemsSpec,
    Judge,
    Mode,
    ModelRef,
    NanPolicy,
    Previous,
    Promote,
    Release,
    ReportSpec,
    Resampling,
    Segments,
    Stats,
    System,
    TableColumns,
    Test,
    Tracking,
    TrainSpec,
)
from harness.config.yaml_limits import MAX_BYTES, compose_bounded
from harness.errors import ConfigError, ConventionError, GuardSpecError, HarnessError
from harness.measures.conventions import Conventions
from harness.measures.definition import MAX_CUTOFF
from harness.measures.parse import labeller, lookup, parse_measure
from harness.measures.peers import PEERS, PROFILES, by_conventions
from harness.measures.registry import REGISTRY
from harness.measures.spec import Measure, format_param

_ENV = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


# a key's kind in the reference table -> the Python types its value may take
_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "path": (str,),
    "integer": (int,),
    "number": (float,),
    "boolean": (bool,),
    "list": (list,),
    "mapping": (dict,),
}
_FROM_TABLE: Any = object()  # value()'s default: the key's default in the reference table


def _table_types(entry: Key) -> tuple[type, ...]:
    """The types a key's value may take: its kind's, and a string where it takes one as another form."""
    if entry.name == "memory_limit":  # "4GB" or a count of bytes, as Dask takes it
        return (str, int)
    return _TYPES[entry.kind] + ((str,) if entry.also == "string" and entry.kind == "mapping" else ())


class _Section:
    """A YAML mapping with its node, so that every value knows its line; a section the reference table declares
    (``where`` without list indices) takes each key's type, default and requiredness from that table."""

    def __init__(self, node: yaml.Node, source: Path, where: str) -> None:
        if not isinstance(node, yaml.MappingNode):
            example = (
                "experiment: name, datasets: [...], systems: [...], measures: [...]"
                if not where
                else f"{where.split('.')[-1].split('[')[0]}: {{key: value, ...}}"
            )
            raise ConfigError(
                f"{where or 'the config'} must be a mapping of keys to values",
                path=source,
                line=_line(node),
                hint=f"write it as 'key: value' lines, e.g. {example}",
            )
        self.node = node
        self.source = source
        self.where = where
        self.table_keys = entries_of(re.sub(r"\[\d*\]", "", where))
        self.items: dict[str, tuple[yaml.Node, yaml.Node]] = {}
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
            if not isinstance(key, str):
                raise ConfigError("keys must be plain words", path=source, line=_line(key_node))
            if key in self.items:
                raise ConfigError(f"key {self._name(key)!r} appears twice", path=source, line=_line(key_node), hint="keep one")
            self.items[key] = (key_node, value_node)

    def _name(self, key: str) -> str:
        return f"{self.where}.{key}" if self.where else key

    def check_keys(self, allowed: tuple[str, ...] | None = None) -> None:
        """Refuse a key that is not ``allowed``: by default the keys the reference table declares here."""
        if allowed is None:
            if self.table_keys is None:
                raise KeyError(f"{self.where!r} is not a section of the reference table (harness/config/reference.py)")
            allowed = tuple(k.name for k in self.table_keys)
        for key, (key_node, _) in self.items.items():
            if key not in allowed:
                close = difflib.get_close_matches(key, allowed, n=1, cutoff=0.5)
                hint = f"did you mean {close[0]!r}?" if close else f"valid keys here: {', '.join(allowed)}"
                raise ConfigError(f"unknown key {self._name(key)!r}", path=self.source, line=_line(key_node), hint=hint)

    def line(self, key: str) -> int:
        return _line(self.items[key][1]) if key in self.items else _line(self.node)

    def has(self, key: str) -> bool:
        return key in self.items

    def raw(self, key: str) -> yaml.Node:
        return self.items[key][1]

    def value(
        self,
        key: str,
        kind: type | tuple[type, ...] | None = None,
        default: Any = _FROM_TABLE,
        required: bool | None = None,
    ) -> Any:
        """The key's value, checked: of its type, else its default, else the error naming the key, line and fix.

        ``kind``, ``default`` and ``required`` come from the reference table; a caller gives one only where it
        depends on the rest of the config (a second dataset makes a name required) or the section is the user's
        own (tags, runs by dataset)."""
        if self.table_keys is None:  # the user's own keys (tags, runs by dataset): the caller says what they hold
            if kind is None:
                raise KeyError(f"{self._name(key)!r}: a key of the user's own needs its kind")
            default, required = (None if default is _FROM_TABLE else default), bool(required)
        else:
            entry = next((k for k in self.table_keys if k.name == key), None)
            if entry is None:
                raise KeyError(f"{self._name(key)!r} is not in the reference table (harness/config/reference.py)")
            kind = _table_types(entry) if kind is None else kind
            default = copy.deepcopy(entry.default) if default is _FROM_TABLE else default
            required = entry.required if required is None else required
        if key not in self.items:
            if required:
                raise ConfigError(
                    f"missing key {self._name(key)!r}", path=self.source, line=_line(self.node), hint=f"add {key}: ..."
                )
            return default
        node = self.items[key][1]
        value = _construct(node, self.source)
        if value is None and not required:
            return default
        expected = kind if isinstance(kind, tuple) else (kind,)
        ok = isinstance(value, expected) and not (isinstance(value, bool) and bool not in expected)
        if float in expected and isinstance(value, int) and not isinstance(value, bool):
            ok, value = True, float(value) if int not in expected else value
        if not ok:
            names = " or ".join(t.__name__ for t in expected)
            raise ConfigError(
                f"{self._name(key)} must be a {names}, got {clipped(value)}",
                path=self.source,
                line=_line(node),
                hint=f"write {key}: <{names}>",
            )
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 2**63:
            raise ConfigError(
                f"{self._name(key)} is out of range: {value}",
                path=self.source,
                line=_line(node),
                hint=f"write {key}: <a whole number below 2**63>",
            )
        if isinstance(value, float) and not math.isfinite(value):
            raise ConfigError(
                f"{self._name(key)} must be a finite number, got {value}",
                path=self.source,
                line=_line(node),
                hint=f"write {key}: <a finite number>",
            )
        return value

    def section(self, key: str) -> _Section | None:
        if key not in self.items or _construct(self.items[key][1], self.source) is None:
            return None
        return _Section(self.items[key][1], self.source, self._name(key))

    def table(self, key: str, alone: str = "path") -> _Section | None:
        """``key: {path: FILE, ...}``, or the file alone (``segments: segments.csv``), read as ``{path: FILE}`` (or
        as the key ``alone`` names: ``judge: judge.txt`` is ``{qrels: judge.txt}``)."""
        node = self.items.get(key, (None, None))[1]
        if isinstance(node, yaml.ScalarNode) and _construct(node, self.source) is not None:
            name = yaml.ScalarNode("tag:yaml.org,2002:str", alone, node.start_mark, node.end_mark)
            return _Section(
                yaml.MappingNode("tag:yaml.org,2002:map", [(name, node)], node.start_mark, node.end_mark),
                self.source,
                self._name(key),
            )
        return self.section(key)

    def error(self, key: str, message: str, hint: str | None = None) -> ConfigError:
        return ConfigError(message, path=self.source, line=self.line(key), hint=hint)


def _line(node: yaml.Node) -> int:
    return node.start_mark.line + 1


def _expand_env(text: str, source: Path, line: int) -> str:
    def replace(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name in os.environ:
            return os.environ[name]
        if default is not None:
            return default
        raise ConfigError(
            f"environment variable {name} is not set",
            path=source,
            line=line,
            hint=f"export {name}=... or write ${{{name}:-default}}",
        )

    return _ENV.sub(replace, text)


def _env_notes(text: str, source: Path) -> tuple[str, ...]:
    """One note per environment variable the config reads that the environment sets: its value goes into
    config.resolved.yaml, the report and MLflow, where a secret would be shown to everyone who reads them (the value
    itself is never printed). A variable left unset gives the config's own default, and no note.

    >>> import os
    >>> os.environ["HARNESS_DOCTEST_OUT"] = "out"
    >>> [n.split(": ")[1:3] for n in _env_notes("output: ${HARNESS_DOCTEST_OUT}  # ${NOT_THIS}\\n", Path("c.yaml"))]
    [['line 1', 'the value of ${HARNESS_DOCTEST_OUT} is written into config.resolved.yaml, the report and MLflow']]
    >>> _env_notes("output: ${HARNESS_DOCTEST_UNSET:-out}\\n", Path("c.yaml"))
    ()
    >>> del os.environ["HARNESS_DOCTEST_OUT"]
    """
    notes: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        code = line.split(" #", 1)[0] if not line.lstrip().startswith("#") else ""
        for match in _ENV.finditer(code):
            if match.group(1) not in os.environ:
                continue
            notes.setdefault(
                match.group(1),
                f"{source}: line {number}: the value of ${{{match.group(1)}}} is written into config.resolved.yaml, "
                "the report and MLflow: keep secrets out of it",
            )
    return tuple(notes.values())


def _construct(node: yaml.Node, source: Path) -> Any:
    """Plain YAML only (safe_load's constructor), with ${VAR} expanded in strings."""
    constructor = yaml.constructor.SafeConstructor()
    try:
        value = constructor.construct_object(node, deep=True)
    except yaml.constructor.ConstructorError as exc:
        raise ConfigError(
            f"unsupported YAML: {exc.problem}", path=source, line=_line(node), hint="use plain values, lists and mappings"
        ) from None
    return _expand_all(value, source, _line(node))


def _expand_all(value: Any, source: Path, line: int) -> Any:
    if isinstance(value, str):
        return _expand_env(value, source, line)
    if isinstance(value, list):
        return [_expand_all(v, source, line) for v in value]
    if isinstance(value, dict):
        return {k: _expand_all(v, source, line) for k, v in value.items()}
    return value


def _path(section: _Section, key: str, base: Path, required: bool = True, must_exist: bool = True) -> Path | None:
    text = section.value(key, str, required=required)  # a table key of kind path, or a run keyed by its dataset
    if text is None:
        return None
    path = _resolved(text, base)
    if must_exist and not path.exists():
        raise section.error(
            key, f"{section._name(key)}: file not found: {path}", hint="check the path; it is relative to the config file"
        )
    if must_exist and not (path.is_file() or path.is_dir()):  # a FIFO blocks a read forever, a device never ends it
        raise section.error(
            key,
            f"{section._name(key)}: not a regular file (a pipe, socket or device): {path}",
            hint="write it to a file and name that file",
        )
    return path


def _resolved(text: str, base: Path) -> Path:
    """A path as a config writes it: ``~`` expanded, relative to the config's folder ``base``."""
    path = Path(text).expanduser()
    return path if path.is_absolute() else base / path


def _columns(section: _Section | None, value_name: str) -> TableColumns:
    if section is None:
        return TableColumns(value=value_name)
    runs = value_name == "score"
    section.check_keys()
    for alias, role in COLUMN_SYNONYMS.items():  # a query is a user and a document an item, as on the command line
        if section.has(role) and section.has(alias):
            raise section.error(alias, f"{section._name(alias)} and {role} name the same column", hint="keep one of them")
    return TableColumns(
        query=_column(section, "query", "user"),
        doc=_column(section, "doc", "item"),
        value=section.value(value_name),
        sample=section.value("sample") if runs else None,  # a stochastic run's sample column
    )


def _column(section: _Section, key: str, synonym: str) -> str:
    """A column named by its key or by its synonym (``query`` or ``user``), else the key's default."""
    return str(section.value(key, default=None) or section.value(synonym, default=None) or section.value(key))


def _format(section: _Section, key: str, path: Path, allowed: tuple[str, ...] = FORMATS) -> str:
    fmt = section.value(key)
    if fmt is None:
        return table_format_of(path) or "trec"
    if fmt not in allowed:
        raise section.error(
            key,
            f"{section._name(key)} must be one of {', '.join(allowed)}, got {fmt!r}",
            hint="or leave it out to go by the file name",
        )
    return fmt


def _items(root: _Section, key: str, example: str) -> list[yaml.Node]:
    """The entries of a required, non-empty list (datasets, systems)."""
    if not root.has(key):
        raise root.error(key, f"missing key {key!r}", hint=f"add {key}: {example}")
    node = root.raw(key)
    if not isinstance(node, yaml.SequenceNode) or not node.value:
        raise ConfigError(f"{key} must be a non-empty list", path=root.source, line=_line(node), hint=f"write {key}: {example}")
    return list(node.value)


def _datasets(root: _Section, base: Path) -> tuple[Dataset, ...]:
    nodes = _items(root, "datasets", "[{name: ..., qrels: ...}]")
    out: list[Dataset] = []
    for i, item in enumerate(nodes):
        section = _Section(item, root.source, f"datasets[{i}]")
        section.check_keys()
        # one dataset may go unnamed: it is then "default", the name harness compare and harness.compare key their
        # random draws by, so the three give the same p-values for the same seed
        name = section.value("name", default=None, required=len(nodes) > 1) or DEFAULT_DATASET
        if any(d.name == name for d in out):
            raise section.error("name", f"dataset name {name!r} is used twice", hint="give each dataset its own name")
        qrels = _path(section, "qrels", base)
        assert qrels is not None
        segments = _query_labels(section, "segments", "segment", base)
        level = section.value("relevance_level")
        train = None
        if (spec := section.table("train")) is not None:
            spec.check_keys()
            train_path = _path(spec, "path", base)
            assert train_path is not None
            cols = spec.section("columns")
            if cols is not None:
                cols.check_keys()
            # the user and item columns, spelt like a dataset's (query, doc) or as themselves (user, item)
            user_column = "user" if cols is None else _column(cols, "query", "user")
            item_column = "item" if cols is None else _column(cols, "doc", "item")
            train = TrainSpec(train_path, user_column, item_column)
        items = None
        if (spec := section.table("items")) is not None:
            spec.check_keys()
            items_path = _path(spec, "path", base)
            assert items_path is not None
            groups = spec.value("groups")
            if not all(isinstance(g, str) and g for g in groups):
                raise spec.error(
                    "groups",
                    f"items.groups must name columns of {items_path.name}, got {clipped(groups)}",
                    hint="write groups: [provider, genre]",
                )
            items = ItemsSpec(items_path, spec.value("id"), tuple(groups))
        judge = _judge(section, base, qrels)
        out.append(
            Dataset(
                name=name,
                qrels=qrels,
                qrels_format=_format(section, "format", qrels, QRELS_FORMATS),
                qrels_columns=_columns(section.section("columns"), "relevance"),
                run_columns=_columns(section.section("run_columns"), "score"),
                relevance_level=level,
                segments=segments,
                train=train,
                items=items,
                judge=judge,
            )
        )
    return tuple(out)


def _query_labels(section: _Section, key: str, column: str, base: Path) -> Segments | None:
    """``key: {path: FILE, query: COLUMN, <column>: COLUMN}`` (or the file alone): a table of each query's label (its
    segment, its stratum)."""
    spec = section.table(key)
    if spec is None:
        return None
    spec.check_keys()
    path = _path(spec, "path", base)
    assert path is not None
    return Segments(path, spec.value("query"), spec.value(column))


def _judge(dataset: _Section, base: Path, people: Path) -> Judge | None:
    """``judge: {qrels: FILE, ...}`` (or the file alone): a model judge's labels, which people's qrels correct."""
    section = dataset.table("judge", alone="qrels")
    if section is None:
        return None
    section.check_keys()
    path = _path(section, "qrels", base)
    assert path is not None
    if path.resolve() == people.resolve():
        raise section.error(
            "qrels",
            f"{section._name('qrels')} is the dataset's own qrels: the judge's labels and people's must be two files",
            hint="qrels: people's judgments (a sample of the queries); judge.qrels: the model's labels of every query",
        )
    grades: list[tuple[float, float]] = []
    if (mapping := section.section("grades")) is not None:
        for key in mapping.items:
            try:
                grade = float(key)
            except ValueError:
                raise mapping.error(key, f"{mapping._name(key)}: {key!r} is not a grade", hint="write grades: {3: 2}") from None
            grades.append((grade, float(mapping.value(key, (int, float), required=True))))
    sample = section.value("sample")
    strata = _query_labels(section, "strata", "stratum", base)
    if sample == "stratified" and strata is None:
        raise section.error(
            "sample", "sample: stratified needs each query's stratum", hint="add strata: {path: strata.csv, query: query}"
        )
    if sample == "random" and strata is not None:
        raise section.error(
            "strata",
            f"{section._name('strata')} is given, and sample is random: which draw was it?",
            hint="write sample: stratified if people's queries were drawn within the strata, else remove strata",
        )
    return Judge(
        qrels=path,
        qrels_format=_format(section, "format", path, QRELS_FORMATS),
        columns=_columns(section.section("columns"), "relevance"),
        name=section.value("name"),
        grades=tuple(grades),
        sample=sample,
        strata=strata,
    )


def _runs_section(section: _Section, datasets: list[str]) -> _Section | None:
    """A system's ``runs:``: a mapping of dataset name to its run (a file, a list or a glob of them); with one dataset,
    a path (a list, a glob) alone stands for that dataset's."""
    if not section.has("runs") or isinstance(section.raw("runs"), yaml.MappingNode):
        return section.section("runs")
    node = section.raw("runs")
    if _construct(node, section.source) is None:
        return None
    if len(datasets) != 1:
        raise section.error(
            "runs",
            f"{section._name('runs')} is a path alone, and there are {len(datasets)} datasets: whose run is it?",
            hint=f"key each run by its dataset's name: runs: {{{datasets[0]}: {_construct(node, section.source)!s}, ...}}",
        )
    key = yaml.ScalarNode("tag:yaml.org,2002:str", datasets[0], node.start_mark, node.end_mark)
    return _Section(
        yaml.MappingNode("tag:yaml.org,2002:map", [(key, node)], node.start_mark, node.end_mark),
        section.source,
        section._name("runs"),
    )


def _systems(root: _Section, base: Path, datasets: tuple[Dataset, ...]) -> tuple[System, ...]:
    nodes = _items(root, "systems", "[{name: ..., runs: {dataset: path}}]")
    names = [d.name for d in datasets]
    out: list[System] = []
    for i, item in enumerate(nodes):
        section = _Section(item, root.source, f"systems[{i}]")
        section.check_keys()
        name = section.value("name")
        if any(s.name == name for s in out):
            raise section.error("name", f"system name {name!r} is used twice", hint="give each system its own name")
        runs_section = _runs_section(section, names)
        previous = _previous(section, base)
        if previous is not None and runs_section is not None:
            raise section.error(
                "previous",
                f"system {name!r} has both runs and previous",
                hint="keep runs (evaluate) or previous (reuse), not both",
            )
        if runs_section is None and previous is None:
            raise section.error("runs", f"system {name!r} has no runs", hint=f"add runs: {{{names[0]}: path/to/run}}")
        model = _model_ref(section, "model", section.value("model")) if section.has("model") else None
        if model is not None and previous is not None:
            raise section.error(
                "model",
                f"system {name!r} reuses an earlier evaluation (previous:), which names its model",
                hint="remove model: here; previous: models:/NAME@ALIAS links it",
            )
        if runs_section is None:
            out.append(System(name, (), section.value("description"), _tags(section), previous))
            continue
        runs_section.check_keys(tuple(names))
        runs: list[tuple[str, Path]] = []
        labels: list[str] = []
        for dataset in names:
            if runs_section.has(dataset):
                seeds = _seed_runs(runs_section, dataset, base)
                runs.extend((dataset, path) for _, path in seeds)
                labels.extend(label for label, _ in seeds)
        seed = section.value("seed")
        if seed is not None and seed not in labels:
            known = sorted({label for label in labels if label})
            raise section.error(
                "seed",
                f"system {name!r} has no run {seed!r}"
                + (f" (its runs: {', '.join(known)})" if known else " (it has one run per dataset)"),
                hint="name a run by its file name without suffix" if known else "remove seed:",
            )
        out.append(
            System(
                name,
                tuple(runs),
                section.value("description"),
                _tags(section),
                model=model,
                seeds=tuple(labels) if any(labels) else (),
                seed=seed,
            )
        )
    return tuple(out)


_GLOB = re.compile(r"[*?[]")
# what a run's seed label drops from its file name: a compression suffix, then the format's
_COMPRESSED = (".gz", ".bz2", ".xz", ".zst")
_FORMATS = (".run", ".txt", ".trec", ".csv", ".tsv", ".parquet", ".jsonl", ".json")


def seed_label(path: Path) -> str:
    """A seed's label: its run file's name without its compression and format suffixes (``x.run.gz`` and ``x.run``
    are both ``x``, so that one run given twice is caught), other dots kept.

    >>> seed_label(Path("runs/v2-seed1.run.gz")), seed_label(Path("v2.seed1.csv")), seed_label(Path("v2-s3"))
    ('v2-seed1', 'v2.seed1', 'v2-s3')
    """
    name = path.name
    for suffixes in (_COMPRESSED, _FORMATS):
        lower = name.lower()
        name = next((name[: -len(x)] for x in suffixes if lower.endswith(x) and len(name) > len(x)), name)
    return name


def _run_file(path: Path, what: str, runs: _Section, line: int | None) -> Path:
    """A seed's run as a regular file (or a table's folder, as a single path may be); a dangling link, a FIFO, a
    socket or a device is refused, not dropped."""
    if path.is_file() or path.is_dir():
        return path
    kind = "a link to nothing" if path.is_symlink() else "not a regular file (a pipe, socket or device)"
    raise ConfigError(
        f"{what}: {path} is {kind}" if path.is_symlink() or path.exists() else f"{what}: file not found: {path}",
        path=runs.source,
        line=line,
        hint="name each seed's run file; it is relative to the config file",
    )


def _seed_runs(runs: _Section, dataset: str, base: Path) -> list[tuple[str, Path]]:
    """A dataset's runs of one system as (seed label, file): one file (label ""), or a list or glob of them, one per
    training seed, each labelled by :func:`seed_label`. A path that exists is taken as it is, ``[`` and all."""
    node = runs.raw(dataset)
    line = _line(node)
    if isinstance(node, yaml.ScalarNode):
        text = str(runs.value(dataset, str, ""))
        if not _GLOB.search(text) or _resolved(text, base).exists():
            path = _path(runs, dataset, base)
            assert path is not None
            return [("", path)]
    if isinstance(node, yaml.SequenceNode):
        entries = runs.value(dataset, list)
        if not entries:
            raise runs.error(dataset, f"{runs._name(dataset)} lists no runs", hint="list one run file per seed")
        paths = []
        for i, item in enumerate(node.value):
            text = _construct(item, runs.source)
            if not isinstance(text, str):
                raise ConfigError(
                    f"{runs._name(dataset)}[{i}] must be a path, got {clipped(text)}",
                    path=runs.source,
                    line=_line(item),
                    hint="write one run file per line: - runs/v2-seed1.csv",
                )
            paths.append(_run_file(_resolved(text, base), f"{runs._name(dataset)}[{i}]", runs, _line(item)))
    else:
        full = str(_resolved(str(runs.value(dataset, str)), base))
        matched = sorted(Path(p) for p in glob.glob(full))
        if not matched:
            raise runs.error(
                dataset,
                f"{runs._name(dataset)}: no file matches {full}",
                hint="check the pattern; it is relative to the config file",
            )
        paths = [_run_file(path, f"{runs._name(dataset)} matches", runs, line) for path in matched]
    if len(paths) == 1:
        return [("", paths[0])]
    labels = [seed_label(p) for p in paths]
    twice = next((label for label in labels if labels.count(label) > 1), None)
    if twice is not None:
        raise runs.error(
            dataset,
            f"{runs._name(dataset)}: two runs are labelled {twice!r} (a run's seed is its file name without its "
            "format and compression suffixes)",
            hint="give each seed's run its own file name",
        )
    _refuse_same_runs(runs, dataset, paths, line)
    return list(zip(labels, paths, strict=True))


def _refuse_same_runs(runs: _Section, dataset: str, paths: list[Path], line: int | None) -> None:
    """Two seeds' runs that are one file (the same path once links are resolved) or the same bytes (the same
    sha256): one run counted twice would shrink the seed variance a version's verdict rests on. Only files of equal
    size are hashed."""
    seen: dict[Path, Path] = {}
    for path in paths:
        real = path.resolve()
        if real in seen:
            raise ConfigError(
                f"{runs._name(dataset)}: {seen[real]} and {path} are one file ({real}): one run counted as two seeds",
                path=runs.source,
                line=line,
                hint="name each seed's own run file once",
            )
        seen[real] = path
    by_size: dict[int, list[Path]] = {}
    for path in paths:
        if path.is_file():
            by_size.setdefault(path.stat().st_size, []).append(path)
    for group in (g for g in by_size.values() if len(g) > 1):
        digests: dict[str, Path] = {}
        for path in group:
            digest = sha256_file(path)
            if digest in digests:
                raise ConfigError(
                    f"{runs._name(dataset)}: {digests[digest]} and {path} hold the same run (sha256 {digest[:12]}...): "
                    "one run counted as two seeds",
                    path=runs.source,
                    line=line,
                    hint="each seed's run must come from its own training; remove the copy",
                )
            digests[digest] = path


def _tags(section: _Section) -> tuple[tuple[str, str], ...]:
    tags_section = section.section("tags")
    if tags_section is None:
        return ()
    return tuple((key, str(tags_section.value(key, (str, int, float, bool)))) for key in tags_section.items)


def _previous(section: _Section, base: Path) -> Previous | None:
    """``previous: {results: FOLDER}``, ``{mlflow_run: ID, uri: URI}`` or ``{model: models:/NAME@ALIAS, uri: URI}``,
    with an optional ``system``; or the same as one string: ``models:/recsys@champion``, ``runs:/ID`` or a folder."""
    if section.has("previous") and isinstance(section.raw("previous"), yaml.ScalarNode):
        text = section.value("previous", str, required=True)
        if text.startswith("runs:/"):
            return Previous(mlflow_run=text.removeprefix("runs:/").strip("/"), line=section.line("previous"))
        if text.startswith("models:/"):
            return Previous(model=_model_ref(section, "previous", text), line=section.line("previous"))
        return Previous(_previous_folder(section, "previous", _path(section, "previous", base)), line=section.line("previous"))
    node = section.section("previous")
    if node is None:
        return None
    node.check_keys()
    results = _path(node, "results", base) if node.has("results") else None
    mlflow_run = node.value("mlflow_run")
    model = _model_ref(node, "model", node.value("model")) if node.has("model") else None
    if sum(x is not None for x in (results, mlflow_run, model)) != 1:
        raise section.error(
            "previous",
            "previous needs exactly one of results, mlflow_run or model",
            hint="write previous: {results: ../reports/NAME/latest}, previous: {mlflow_run: RUN_ID} or "
            "previous: models:/NAME@ALIAS",
        )
    if results is not None:
        results = _previous_folder(node, "results", results)
    return Previous(results, mlflow_run, node.value("uri"), node.value("system"), section.line("previous"), model)


def _previous_folder(node: _Section, key: str, results: Path | None) -> Path:
    assert results is not None
    for hop in _links(results):  # a link of another name may lead through "latest": each hop named so is checked
        if hop.name == "latest":
            _check_latest(node, hop)
    results = results.resolve()  # pin "latest" to the folder it names now
    if not (results / "per_query.parquet").exists():
        raise node.error(
            key,
            f"{results} is not a results folder (no per_query.parquet)",
            hint="give a folder harness run wrote, runs:/RUN_ID or models:/NAME@ALIAS",
        )
    return results


def _links(path: Path, most: int = 40) -> list[Path]:
    """``path`` and each path its chain of symbolic links leads through, in order (at most ``most`` hops).

    >>> _links(Path("/no/such/latest"))
    [PosixPath('/no/such/latest')]
    """
    chain = [path]
    while chain[-1].is_symlink() and len(chain) <= most:
        target = Path(os.readlink(chain[-1]))
        chain.append(target if target.is_absolute() else chain[-1].parent / target)
    return chain


def _model_ref(section: _Section, key: str, text: str) -> ModelRef:
    try:
        return ModelRef.parse(text)
    except ValueError as exc:
        raise section.error(key, str(exc), hint=f"write {key}: models:/recsys@champion") from None


def _check_latest(node: _Section, latest: Path) -> None:
    """``latest`` must be the link harness run writes, to the newest complete results folder beside it: a real folder
    of that name (a copy: rsync -L, a sync tool) or a link left behind (a run that could not move it) would make
    ``previous`` compare against an old release without a word."""
    if latest.exists() and not latest.is_symlink():
        raise node.error(
            "results",
            f"{latest} is a real folder, not the link harness run writes (a copy made by "
            "rsync -L or a sync tool): it may hold an old release",
            hint="name the results folder itself, or delete the copy (the next harness run links it)",
        )
    if not latest.is_symlink():
        return

    def started(folder: Path) -> str:  # a results folder's name: <YYYYMMDD-HHMMSS>-<random id>
        return folder.name[:15]

    newest = max(
        (
            p
            for p in latest.parent.iterdir()
            if p.is_dir() and not p.is_symlink() and not p.name.startswith(".") and (p / "summary.parquet").exists()
        ),
        key=started,
        default=None,
    )
    # stale only when a folder started in a later second: two runs in one second are not ordered by their names
    if newest is not None and started(newest) > started(latest.resolve()):
        raise node.error(
            "results",
            f"{latest} links {latest.resolve().name}, but {newest.name} beside it is newer",
            hint=f"name the folder you mean: {newest} (or run again: latest then links the new one)",
        )


def _gain_schemes(root: _Section) -> tuple[tuple[str, str], ...]:
    section = root.section("gains")
    if section is None:
        return (("linear", ""),)
    out: list[tuple[str, str]] = []
    for name in section.items:
        value = section.value(name, (str, dict))
        if value == "linear":
            out.append((name, ""))
        elif value in ("exponential", "exp"):
            out.append((name, "gain='exp'"))
        elif isinstance(value, dict):
            try:
                table = tuple(sorted((float(k), float(v)) for k, v in value.items()))
            except (TypeError, ValueError):
                raise section.error(
                    name, f"gains.{name} must map levels to numbers", hint="write e.g. {0: 0, 1: 1, 2: 3}"
                ) from None
            out.append((name, f"gains={format_param(table)}"))
        else:
            raise section.error(
                name, f"gains.{name} must be linear, exponential or a {{level: gain}} table, got {clipped(value)}"
            )
    if not out:
        raise section.error("gains", "gains is empty", hint="name at least one scheme, e.g. linear: linear")
    return tuple(out)


def _with_params(text: str, extra: str) -> str:
    """Add a parameter to a measure's text: nDCG@10 + gain='exp' -> nDCG(gain='exp')@10."""
    if not extra:
        return text
    name, at, cutoff = text.partition("@")
    if name.endswith(")"):
        return f"{name[:-1]},{extra})" + (f"@{cutoff}" if at else "")
    return f"{name}({extra})" + (f"@{cutoff}" if at else "")


def _alias_notes(root: _Section) -> tuple[str, ...]:
    """A note for each measure the config names by another tool's name (``map@100``, ``recall@10``): said once, with
    the name harness reads it as, so that nobody wonders which measure ran."""
    node = root.raw("measures")
    notes = []
    for item in node.value if isinstance(node, yaml.SequenceNode) else []:
        value = _construct(item.value[0][1] if isinstance(item, yaml.MappingNode) and item.value else item, root.source)
        if not isinstance(value, str):
            continue
        written = re.split(r"[(@]", value.strip(), maxsplit=1)[0].strip()
        try:
            canonical = lookup(written).name
        except HarnessError:
            continue
        if canonical.lower() != written.lower():
            with contextlib.suppress(HarnessError):  # with its cutoff and parameters where written: map@100 is AP@100
                canonical = str(parse_measure(value)) if "@" in value or "(" in value else canonical
            said = f"{value.strip()} is read as {canonical} ({written} is another tool's name for it)"
            notes.append(f"{root.source}: line {_line(item)}: {said}")
    return tuple(notes)


def _measures(root: _Section, cutoffs: tuple[int, ...], schemes: tuple[tuple[str, str], ...]) -> tuple[Measure, ...]:
    if not root.has("measures"):
        raise root.error("measures", "missing key 'measures'", hint="add measures: [nDCG, AP, RR@10]")
    node = root.raw("measures")
    if not isinstance(node, yaml.SequenceNode) or not node.value:
        raise ConfigError("measures must be a list", path=root.source, line=_line(node), hint="write measures: [nDCG, AP, RR@10]")
    out: list[Measure] = []
    for item in node.value:
        own_cutoffs: tuple[int, ...] | None = None
        if isinstance(item, yaml.MappingNode):
            section = _Section(item, root.source, "measures[]")
            section.check_keys()
            text = section.value("measure")
            listed = section.value("cutoffs")
            if any(isinstance(c, bool) or not isinstance(c, int) for c in listed):
                raise section.error("cutoffs", "cutoffs must be whole numbers", hint="write cutoffs: [5, 10]")
            own_cutoffs = tuple(listed)
        else:
            text = _construct(item, root.source)
            if not isinstance(text, str):
                text = str(text)
        try:
            definition = lookup(re.split(r"[(@]", text.strip(), maxsplit=1)[0].strip())
            has_cutoff = "@" in text
            # parse once to validate the parameters (a required cutoff comes later, from `cutoffs`)
            measure = parse_measure(text if has_cutoff or definition.cutoff != "required" else f"{text}@1")
        except HarnessError as exc:
            raise ConfigError(f"measures: {exc.message}", path=root.source, line=_line(item), hint=exc.hint) from None
        graded = (
            any(p.name == "gains" for p in definition.params) and measure.param("gain") is None and measure.param("gains") is None
        )
        variants = [_with_params(text, extra) for _, extra in schemes] if graded else [text]
        expand = not has_cutoff and definition.cutoff != "none"
        use_cutoffs = own_cutoffs if own_cutoffs is not None else cutoffs
        for variant in variants:
            if expand and use_cutoffs:
                texts = [f"{variant}@{c}" for c in use_cutoffs]
            elif expand and definition.cutoff == "required":
                raise ConfigError(
                    f"{measure.name} needs a cutoff",
                    path=root.source,
                    line=_line(item),
                    hint="add cutoffs: [10] or write it with @10",
                )
            else:
                texts = [variant]
            for t in texts:
                try:
                    m = parse_measure(t)
                except HarnessError as exc:
                    raise ConfigError(f"measures: {exc.message}", path=root.source, line=_line(item), hint=exc.hint) from None
                if m not in out:
                    out.append(m)
                if len(out) > MAX_MEASURES:
                    raise ConfigError(
                        f"measures expand to more than {MAX_MEASURES:,} measures (with the cutoffs and gain schemes)",
                        path=root.source,
                        line=_line(node),
                        hint="list fewer measures or cutoffs; several configs can share the same data",
                    )
    return tuple(out)


MAX_MEASURES = 1_000  # expanded measures in one experiment: each is a column of every table and a test of every pair


def _check_inputs(root: _Section, measures: tuple[Measure, ...], datasets: tuple[Dataset, ...]) -> None:
    """A beyond-accuracy measure needs a dataset with its inputs (train, items); datasets without them skip it."""
    names = {
        "train": "training interactions (train:)",
        "items": "an item catalogue (items:)",
        "user_groups": "user groups (segments:)",
    }
    for measure in measures:
        needs = REGISTRY.definition(measure).inputs(measure)
        if needs and not any(needs <= d.inputs() for d in datasets):
            what = " and ".join(names[n] for n in sorted(needs - {"features"}))
            raise ConfigError(
                f"measures: {measure} needs {what}, and no dataset has them",
                path=root.source,
                line=_line(root.raw("measures")),
                hint="add to a dataset train: {path: train.csv, columns: {query: user, doc: item}}"
                " and items: {path: items.csv, id: item}",
            )


def _conventions(root: _Section, overrides: Mapping[str, object]) -> tuple[Conventions, str, frozenset[str]]:
    """(the conventions: the profile's, then the file's ``conventions``, then ``overrides``; the profile; the
    conventions set over the profile's, which stay the user's for every measure)."""
    profile = root.value("profile")
    if profile not in PROFILES:
        raise root.error("profile", f"unknown profile {profile!r}", hint=f"use one of {', '.join(PROFILES)}")
    values: dict[str, object] = dict(PROFILES[profile])
    section = root.section("conventions")
    if section is not None:
        for key in section.items:
            values[key] = _construct(section.raw(key), root.source)
    values.update(overrides)
    given = frozenset((section.items if section is not None else {}).keys() | overrides.keys())
    try:
        return Conventions.from_mapping(values), profile, given
    except ConventionError as exc:
        bad = next((k for k in (section.items if section else {}) if k in exc.message), None)
        line = section.line(bad) if section is not None and bad else root.line("conventions")
        raise ConfigError(f"conventions: {exc.message}", path=root.source, line=line, hint=exc.hint) from None


def _one_of(section: _Section, key: str, value: Any, options: Any, what: str | None = None, hint: str | None = None) -> Any:
    """``value`` when it is one of the ``Literal`` type ``options`` (their one home), else the config error naming them."""
    allowed = get_args(options)
    if value not in allowed:
        raise section.error(key, f"unknown {what or key} {value!r}", hint=hint or f"use one of {', '.join(allowed)}")
    return value


MAX_REPLICATES = 10_000_000  # permutations, resamples: 1/(B+1) is already far below any alpha


def _claim(root: _Section, section: _Section | None, systems: tuple[System, ...], datasets: tuple[Dataset, ...]) -> Claim:
    """``stats.claim``, by default ``version`` when a system has several runs of a dataset evaluated, else ``model``;
    a system with several runs under ``model`` must pick one (``seed:``), and only ``model`` picks one."""
    seeded = [s for s in systems if any(s.seeded(d.name) for d in datasets)]
    default: Claim = "version" if seeded else "model"
    claim = default if section is None else _one_of(section, "claim", section.value("claim", default=default), Claim)
    for i, system in enumerate(systems):
        node = _Section(root.raw("systems").value[i], root.source, f"systems[{i}]")
        if claim == "model" and system in seeded:
            runs = ", ".join(label for label, _ in system.runs_of(next(d.name for d in datasets if system.seeded(d.name))))
            raise node.error(
                "runs",
                f"claim: model decides one trained run of each system, and {system.name!r} has several ({runs})",
                hint="pick one with seed: <label>, or use stats.claim: version (the training procedure, over its seeds)",
            )
        if claim == "version" and system.seed is not None:
            raise node.error(
                "seed",
                f"seed: picks one run of {system.name!r}, and claim: version decides over every run of each system",
                hint="remove seed:, or set stats.claim: model",
            )
        with_judge = next((d for d in datasets if d.judge is not None), None)
        if with_judge is not None and system.previous is not None:
            raise node.error(
                "previous",
                f"{system.name!r} reuses earlier values (previous:), and dataset {with_judge.name!r} has a judge: earlier "
                "values hold no people's labels to correct the judge's by",
                hint="give the system's run file, so it is evaluated under both labellings",
            )
    return claim


def _stats(root: _Section, baseline: str | None, systems: tuple[System, ...], datasets: tuple[Dataset, ...]) -> Stats:
    section = root.section("stats")
    defaults = Stats()
    claim = _claim(root, section, systems, datasets)
    if section is None:
        return Stats(claim=claim) if baseline is not None else Stats(mode="all_pairs", claim=claim)
    section.check_keys()
    tests = tuple(_one_of(section, "tests", test, Test, "test") for test in section.value("tests"))
    primary = section.value("primary", default=defaults.primary if defaults.primary in tests else tests[0])
    if primary not in tests:
        raise section.error(
            "primary", f"primary test {primary!r} is not among stats.tests", hint=f"use one of {', '.join(tests)}"
        )
    correction = _one_of(section, "correction", section.value("correction"), Correction)
    family = _one_of(section, "family", section.value("family"), Family)
    resampling = _one_of(section, "resampling", section.value("resampling"), Resampling)
    mode = _one_of(section, "mode", section.value("mode", default="baseline" if baseline else "all_pairs"), Mode)
    if mode == "baseline" and baseline is None:
        raise section.error(
            "mode", "stats.mode is baseline but no baseline system is set", hint="add baseline: <system> or use mode: all_pairs"
        )
    alpha = section.value("alpha")
    if not 0 < alpha <= MAX_ALPHA:
        raise section.error(
            "alpha",
            f"alpha must be above 0 and at most {MAX_ALPHA:g}, got {alpha} (a one-sided bound at a higher level lies "
            "on the wrong side of the estimate)",
            hint="write alpha: 0.05",
        )
    permutations = section.value("permutations")
    resamples = section.value("resamples")
    system_resamples = section.value("system_resamples")
    for key, n in (("permutations", permutations), ("resamples", resamples), ("system_resamples", system_resamples)):
        if n < 100:
            raise section.error(key, f"{key} must be at least 100, got {n}", hint=f"write {key}: 10000")
        if n > MAX_REPLICATES:  # each replicate is a pass over the data: beyond this, hours of work for nothing
            raise section.error(key, f"{key} must be at most {MAX_REPLICATES:,}, got {n:,}", hint=f"write {key}: 10000")
    nan = _one_of(
        section,
        "nan",
        section.value("nan"),
        NanPolicy,
        "NaN policy",
        "use error (stop) or drop (leave the query out of that comparison)",
    )
    return Stats(
        tests=tests,
        primary=primary,
        resampling=resampling,
        correction=correction,
        family=family,
        mode=mode,
        alpha=alpha,
        permutations=permutations,
        resamples=resamples,
        seed=section.value("seed"),
        nan=nan,
        system_resamples=system_resamples,
        enabled=section.value("enabled"),
        claim=claim,
    )


def _guard_measure(g: _Section, text: str, measures: tuple[Measure, ...], schemes: tuple[tuple[str, str], ...]) -> Measure:
    """A guard's measure: one of the expanded measures, by canonical name or by the report's label (``nDCG@10 [graded]``)."""
    label = labeller(dict(schemes))
    by_name = {label(str(m)): m for m in measures} | {str(m): m for m in measures}
    # the linear scheme's measures carry no [name] in their label; "nDCG@10 [linear]" names them too
    graded = {m for m in measures if any(p.kind == "gains" for p in REGISTRY.definition(m).params)}
    for name, gain in schemes:
        if gain in ("", "linear"):
            by_name |= {f"{label(str(m))} [{name}]": m for m in graded if "[" not in label(str(m))}
    if text.strip() in by_name:
        return by_name[text.strip()]
    try:
        parsed = parse_measure(text)
    except HarnessError as exc:
        raise g.error("measure", f"guard measure: {exc.message}", hint=exc.hint) from None
    if str(parsed) in by_name:
        return by_name[str(parsed)]
    close = difflib.get_close_matches(text.strip(), list(by_name), n=3, cutoff=0.4)
    raise g.error(
        "measure",
        f"guard measure {text!r} is not among the measures this experiment computes",
        hint=(f"did you mean {', '.join(repr(c) for c in close)}? " if close else "")
        + f"or add {text.strip()} to measures: (guards name an expanded measure, listed by 'harness validate'; with "
        "gains, a graded measure is computed per scheme)",
    )


def _report(root: _Section) -> ReportSpec:
    section = root.section("report")
    if section is None:
        return ReportSpec()
    if section.has("release"):  # the gate's own key since it decides the exit code, not only what the report shows
        raise ConfigError(
            "the release gate is configured at the top level, not under report:",
            path=root.source,
            line=_line(section.items["release"][0]),
            hint="move release: (with the same keys) out of report: to the top level of the config",
        )
    section.check_keys()
    return ReportSpec(section.value("enabled"), section.value("title"))


def _release(
    root: _Section,
    systems: tuple[System, ...],
    datasets: tuple[Dataset, ...],
    measures: tuple[Measure, ...],
    schemes: tuple[tuple[str, str], ...],
) -> Release | None:
    """``release:``, the release gate: production, candidate, guards and how they are decided."""
    rel = root.section("release")
    if rel is None:
        return None
    names = [s.name for s in systems]
    rel.check_keys()
    production = rel.value("production")
    candidate = rel.value("candidate")
    for key, value in (("production", production), ("candidate", candidate)):
        if value not in names:
            close = difflib.get_close_matches(value, names, n=1)
            raise rel.error(
                key,
                f"release.{key} {value!r} is not a system",
                hint=f"did you mean {close[0]!r}?" if close else f"use one of {', '.join(names)}",
            )
    if production == candidate:
        raise rel.error("candidate", "release.candidate is production itself", hint="name the system to release")
    try:
        when_inconclusive = on_inconclusive(rel.value("on_inconclusive"))
    except GuardSpecError as exc:
        raise rel.error("on_inconclusive", exc.message, hint=exc.hint) from None
    try:
        power = release_power(rel.value("power"))
    except GuardSpecError as exc:
        raise rel.error("power", exc.message, hint=exc.hint) from None
    try:
        bound = release_bound(rel.value("bound"))
    except GuardSpecError as exc:
        raise rel.error("bound", exc.message, hint=exc.hint) from None
    try:
        looks = release_looks(rel.value("looks"))
    except GuardSpecError as exc:
        raise rel.error("looks", exc.message, hint=exc.hint) from None
    try:
        min_affected = release_min_affected(rel.value("min_affected"))
    except GuardSpecError as exc:
        raise rel.error("min_affected", exc.message, hint=exc.hint) from None
    guards: list[Guard] = []
    if rel.has("guards"):
        node = rel.raw("guards")
        if not isinstance(node, yaml.SequenceNode):
            raise rel.error("guards", "release.guards must be a list", hint="write guards: [{measure: nDCG@10, max_drop: 0.005}]")
        for item in node.value:
            g = _Section(item, root.source, "release.guards[]")
            g.check_keys((*GUARD_KEYS, *RETIRED))
            measure = _guard_measure(g, g.value("measure"), measures, schemes)
            dataset = g.value("dataset")
            if dataset is not None and dataset not in [d.name for d in datasets]:
                raise g.error(
                    "dataset",
                    f"guard dataset {dataset!r} is not a dataset",
                    hint=f"use one of {', '.join(d.name for d in datasets)}",
                )
            definition = REGISTRY.definition(measure)
            aggregate = definition.guard_aggregate(measure)
            g.value("segment")  # a name, said at its line as any config value is
            values = {key: _construct(g.raw(key), root.source) for key in g.items}
            try:
                guard = guard_of(values, measure, aggregate, line=_line(item))
            except GuardSpecError as exc:
                raise g.error(exc.key, exc.message, hint=exc.hint) from None
            reused = any(s.previous is not None for s in systems if s.name in (production, candidate))
            if aggregate in ("system", "catalogue") and reused:
                raise g.error(
                    "measure",
                    f"{measure} has one value per run, resampled from the runs' lists; a system reused with previous: "
                    "has only per-query values",
                    hint="guard a per-query measure, or evaluate both systems from their run files",
                )
            guards.append(guard)
    return Release(
        production,
        candidate,
        tuple(guards),
        when_inconclusive,
        power,
        bound,
        _promote(rel, next(s for s in systems if s.name == candidate)),
        looks,
        min_affected,
    )


def _promote(release: _Section, candidate: System) -> Promote | None:
    """``release.promote: {model: NAME, alias: ALIAS}``: the candidate must name a version of that model."""
    node = release.section("promote")
    if node is None:
        return None
    node.check_keys()
    promote = Promote(node.value("model"), node.value("alias"))
    model = candidate.model
    if model is None or model.name is None:
        raise release.error(
            "promote",
            f"release.promote moves {promote.model}@{promote.alias} to the candidate's "
            f"version, and candidate {candidate.name!r} names none",
            hint=f"add model: models:/{promote.model}/VERSION to system {candidate.name!r}",
        )
    if model.name != promote.model:
        raise release.error(
            "promote",
            f"release.promote names model {promote.model!r}, and candidate {candidate.name!r} is a version of {model.name!r}",
            hint=f"write promote: {{model: {model.name}, alias: {promote.alias}}}",
        )
    return promote


TOP_KEYS = keys_of("")  # every top-level key (harness/config/reference.py)
MAX_EXPERIMENT_NAME = 200  # a folder's name (255 bytes) and an MLflow experiment's (a 256-character column)


def _place(node: yaml.Node, mark: Any) -> None:
    """Give an override's nodes the position of what they replace, so that errors name a line of the file."""
    node.start_mark = node.end_mark = mark
    children = node.value if isinstance(node, (yaml.SequenceNode, yaml.MappingNode)) else []
    for child in children:
        for part in child if isinstance(child, tuple) else (child,):
            _place(part, mark)


def _apply_overrides(node: yaml.Node, overrides: Mapping[str, object], source: Path) -> None:
    """``--set KEY=VALUE`` for any config key, by dotted path (``stats.permutations``, ``datasets.0.relevance_level``).

    A bare convention name (``ties``) means ``conventions.ties``. The value replaces the
    file's (or is added) before the config is validated, so a bad value gets the same error.
    """
    conventions = {f.name for f in __import__("dataclasses").fields(Conventions)}
    for key, value in overrides.items():
        path = [f"conventions.{key}" if key in conventions else key][0].split(".")
        if path[0] not in TOP_KEYS:
            close = difflib.get_close_matches(path[0], TOP_KEYS, n=1)
            raise ConfigError(
                f"--set {key}: unknown key {path[0]!r}",
                path=source,
                hint=f"did you mean {close[0]!r}?" if close else f"valid keys: {', '.join(TOP_KEYS)}",
            )
        replacement: yaml.Node = yaml.compose(yaml.safe_dump(value)) or yaml.ScalarNode("tag:yaml.org,2002:null", "")
        current = node
        for depth, part in enumerate(path):
            last = depth == len(path) - 1
            if isinstance(current, yaml.SequenceNode):
                if not part.isdigit() or int(part) >= len(current.value):
                    raise ConfigError(
                        f"--set {key}: {part!r} is not an item of the list",
                        path=source,
                        hint=f"use an index from 0 to {len(current.value) - 1}",
                    )
                if last:
                    current.value[int(part)] = replacement
                current = current.value[int(part)]
                continue
            if not isinstance(current, yaml.MappingNode):
                raise ConfigError(
                    f"--set {key}: {'.'.join(path[:depth])} is not a mapping",
                    path=source,
                    hint="set a key of a mapping, e.g. stats.permutations=1000",
                )
            found = next((pair for pair in current.value if isinstance(pair[0], yaml.ScalarNode) and pair[0].value == part), None)
            _place(replacement, (found[1] if found is not None else current).start_mark)  # errors point at the file's line
            if found is None:
                child: yaml.Node = replacement if last else yaml.MappingNode("tag:yaml.org,2002:map", [])
                key_node = yaml.ScalarNode("tag:yaml.org,2002:str", part)
                _place(key_node, current.start_mark)
                _place(child, current.start_mark)
                current.value.append((key_node, child))
                current = child
            elif last:
                current.value[current.value.index(found)] = (found[0], replacement)
            else:
                current = found[1]


def load_config(path: str | Path, overrides: Mapping[str, object] | None = None, output: str | Path | None = None) -> Experiment:
    """Read, validate and resolve an experiment config (files are checked to exist, not read).

    ``overrides``: ``{dotted.key: value}``, as ``--set`` gives them; a mistake in one says so.
    """
    try:
        return _load_config(path, overrides or {}, output)
    except ConfigError as exc:
        culprit = None if "--set" in exc.message else _culprit(path, overrides or {}, output, exc.message)
        if culprit is not None:
            exc.message += f" (from --set {culprit}={(overrides or {})[culprit]})"
        raise


def _culprit(path: str | Path, overrides: Mapping[str, object], output: str | Path | None, message: str) -> str | None:
    """The override that makes a config fail with ``message``: the file alone does not, that override alone does (a
    config is read in milliseconds, so each is tried); None when the file itself is wrong or only a combination is."""
    attempts: list[Mapping[str, object]] = [{}, *({key: value} for key, value in overrides.items())]
    for attempt in attempts:
        try:
            _load_config(path, attempt, output)
        except ConfigError as exc:
            if exc.message == message:
                return next(iter(attempt), None)  # {}: the file's own mistake, named by the error already
        except HarnessError:
            continue
    return None


def _load_config(path: str | Path, overrides: Mapping[str, object], output: str | Path | None) -> Experiment:
    source = Path(path)
    if not source.exists():
        raise ConfigError("config file not found", path=source, hint="check the path")
    if source.is_dir():
        raise ConfigError("the config path is a folder, not a file", path=source, hint="name the YAML file itself")
    if not source.is_file():
        raise ConfigError(
            "the config is not a regular file (a pipe, socket or device)",
            path=source,
            hint="write the config to a file and name that file",
        )
    if source.stat().st_size > MAX_BYTES:  # before reading it: a config is never this large
        raise ConfigError(
            f"the config is {source.stat().st_size} bytes, more than the {MAX_BYTES} harness reads",
            path=source,
            hint="a config names its files; it does not hold data",
        )
    raw = source.read_bytes()
    try:
        text = raw.decode("utf-8")
        node = compose_bounded(text, source)
    except UnicodeDecodeError as exc:
        raise ConfigError(
            "not UTF-8 text", path=source, line=raw.count(b"\n", 0, exc.start) + 1, hint="save the config as UTF-8"
        ) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        raise ConfigError(
            f"invalid YAML: {exc.problem}",
            path=source,
            line=mark.line + 1 if mark else None,
            hint="check indentation and quoting",
        ) from None
    if node is None:
        raise ConfigError("the config is empty", path=source, hint="start from configs/demo.yaml")
    base = source.resolve().parent
    _apply_overrides(node, overrides, source)
    root = _Section(node, source, "")
    root.check_keys()
    name = root.value("experiment")
    if len(name) > MAX_EXPERIMENT_NAME:
        raise root.error(
            "experiment",
            f"the experiment name is {len(name)} characters, more than {MAX_EXPERIMENT_NAME}",
            hint="a shorter name (it names a folder and an MLflow experiment)",
        )
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.\- ]*", name):
        raise root.error(
            "experiment",
            f"experiment name {name!r} has characters that cannot name a folder",
            hint="use letters, digits, - _ . and spaces",
        )
    datasets = _datasets(root, base)
    systems = _systems(root, base, datasets)
    cutoffs_raw = root.value("cutoffs")
    if any(isinstance(c, bool) or not isinstance(c, int) or not 1 <= c <= MAX_CUTOFF for c in cutoffs_raw):
        raise root.error("cutoffs", f"cutoffs must be whole numbers from 1 to {MAX_CUTOFF:,}", hint="write cutoffs: [5, 10, 20]")
    cutoffs = tuple(dict.fromkeys(cutoffs_raw))
    schemes = _gain_schemes(root)
    measures = _measures(root, cutoffs, schemes)
    _check_inputs(root, measures, datasets)
    conventions, profile, given = _conventions(root, {})
    _check_system_conventions(root, measures, profile, conventions, given)
    baseline = root.value("baseline")
    names = [s.name for s in systems]
    if baseline is not None and baseline not in names:
        close = difflib.get_close_matches(baseline, names, n=1)
        raise root.error(
            "baseline",
            f"baseline {baseline!r} is not among the systems",
            hint=f"did you mean {close[0]!r}?" if close else f"use one of {', '.join(names)}",
        )
    engine_section = root.section("engine")
    engine = Engine()
    if engine_section is not None:
        engine = _engine(engine_section)
        uncut = [m for m in measures if REGISTRY.definition(m).is_system(m) and m.cutoff is None]
        if engine.name == "dask" and uncut:
            raise engine_section.error(
                "name",
                f"{uncut[0]} counts every recommended item of every list: on the dask engine give it a cutoff",
                hint=f"write {uncut[0]}@10 (the lists down to the cutoff are gathered to compute it)",
            )
    tracking_section = root.section("tracking")
    tracking = Tracking()
    if tracking_section is not None:
        tracking_section.check_keys()
        if len(tracking_section.value("experiment") or "") > MAX_EXPERIMENT_NAME:
            raise tracking_section.error(
                "experiment",
                f"tracking.experiment is longer than {MAX_EXPERIMENT_NAME} characters",
                hint="a shorter name: MLflow stores an experiment's name in 256 characters",
            )
        tracking = Tracking(
            tracking_section.value("enabled"),
            tracking_section.value("uri"),
            tracking_section.value("experiment"),
            uri_on_command_line="tracking.uri" in overrides,
            record_paths=tracking_section.value("record_paths"),
        )
    per_query_csv = False
    configured = None
    if root.has("output") and isinstance(root.raw("output"), yaml.MappingNode):
        spec = root.section("output")
        assert spec is not None
        spec.check_keys()
        configured = spec.value("path")
        per_query_csv = spec.value("csv")
    elif root.has("output"):
        configured = root.value("output", str)
    if output is not None:
        out_dir = Path(output)
    else:
        out_dir = (
            (base / configured)
            if configured is not None and not Path(configured).is_absolute()
            else Path(configured or "reports")
        )
    out_dir = out_dir.expanduser().resolve()
    return Experiment(
        name=name,
        source=source.resolve(),
        datasets=datasets,
        systems=systems,
        measures=measures,
        cutoffs=cutoffs,
        conventions=conventions,
        profile=profile,
        conventions_given=given,
        gain_schemes=schemes,
        output=out_dir,
        per_query_csv=per_query_csv,
        description=root.value("description"),
        baseline=baseline,
        stats=_stats(root, baseline, systems, datasets),
        tracking=tracking,
        report=_report(root),
        release=_release(root, systems, datasets, measures, schemes),
        engine=engine,
        notes=(*_env_notes(text, source), *_alias_notes(root)),
    )


def _check_system_conventions(
    root: _Section, measures: tuple[Measure, ...], profile: str, conventions: Conventions, given: frozenset[str]
) -> None:
    """The system measures (one value per run, from every user's list) share one set of conventions: a profile whose
    tool computes some under conventions of its own and others not cannot be followed in one run."""
    system = [m for m in measures if REGISTRY.definition(m).is_system(m)]
    apart = by_conventions(profile, system, conventions, given)
    if len(apart) > 1:
        first, second = (group[0] for group in apart.values())
        own = PEERS[profile].own_conventions(first) or PEERS[profile].own_conventions(second)
        raise root.error(
            "measures",
            f"{PEERS[profile].tool} computes {first} and {second} over different users ({profile} profile): one run "
            "gathers the lists of its system measures once",
            hint=f"evaluate them in two configs, or set conventions: {{{', '.join(f'{k}: {v}' for k, v in own.items())}}} "
            "for both",
        )


def _engine(section: _Section) -> Engine:
    """``engine: {workers}`` (one machine) or ``engine: {name: dask, scheduler, n_workers, memory_limit, partitions}``."""
    section.check_keys()
    name = section.value("name")
    if name not in ("local", "dask"):
        raise section.error("name", f"unknown engine {name!r}", hint="write name: local (one machine) or name: dask")
    counts = {key: section.value(key) for key in ("workers", "n_workers", "partitions")}
    for key, count in counts.items():
        if count is not None and count < 1:
            raise section.error(key, f"{key} must be at least 1, got {count}", hint=f"write {key}: 2")
    memory_limit = section.value("memory_limit")
    scheduler = section.value("scheduler")
    if name == "local":
        given = [key for key in ("scheduler", "n_workers", "memory_limit", "partitions") if key in section.items]
        if given:
            raise section.error(given[0], f"{given[0]} is a setting of the dask engine", hint="add name: dask, or remove it")
    else:
        problem = missing_dask()
        if problem:
            raise section.error("name", problem, hint="pip install 'harness[dask]'")
    return Engine(
        counts["workers"],
        name,
        scheduler,
        counts["n_workers"],
        None if memory_limit is None else str(memory_limit),
        counts["partitions"],
    )
