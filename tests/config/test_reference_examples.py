"""Every form docs/config.md shows loads: each key's example (and each other form a key takes) is set, in the
place the reference gives it, into a working config whose files exist, and the config goes through the real loader.

The example is applied inside its parents' examples, so ``release.guards.segment`` is tried as
``release: {guards: [{measure: nDCG@10, max_drop: 0.005, segment: new}]}``; a few keys need a setting beside them
that the example cannot show (a seed names one of several runs only when the claim is the model), given in ``_BESIDE``.
"""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.config.load import load_config
from harness.config.reference import TOP, Key, example, other_forms
from harness.errors import ConfigError

_TREC_RUN = "q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 1.0 r\nq2 Q0 d3 1 1.5 r\n"
_RATINGS_RUN = "user,item,score\nu1,i1,0.9\nu1,i2,0.5\nu2,i3,0.7\n"

# every file an example names, beside the config (configs/), and the results folder ../reports/exp/latest
_FILES = {
    "qrels.txt": "q1 0 d1 1\nq2 0 d3 2\n",
    "bm25.run": _TREC_RUN,
    "dense.run": _TREC_RUN.replace("2.0", "0.5"),
    "v1.run": _TREC_RUN.replace("1.5", "0.2"),
    "v2.run": _TREC_RUN.replace("1.0", "3.0"),
    "ratings.csv": "user,item,rating\nu1,i1,5\nu2,i3,4\n",
    "bm25.csv": _RATINGS_RUN,
    "dense.csv": _RATINGS_RUN.replace("0.9", "0.1"),
    "v1.csv": _RATINGS_RUN.replace("0.5", "0.95"),
    "v2-seed1.csv": _RATINGS_RUN.replace("0.7", "0.2"),
    "v2-seed2.csv": _RATINGS_RUN.replace("0.7", "0.3"),
    # both spellings of the segment columns: the example renames them (user, kind), the path alone takes the defaults
    "segments.csv": "query,segment,user,kind\nu1,new,u1,new\nu2,old,u2,old\n",
    "train.csv": "user,item,uid,iid\nu1,i2,u1,i2\nu2,i1,u2,i1\n",
    "items.csv": "item,provider,era\ni1,a,old\ni2,b,new\ni3,a,new\n",
    "judge.txt": "q1 0 d1 1\nq1 0 d2 1\nq2 0 d3 2\n",
    "strata.csv": "query,stratum\nq1,head\nq2,tail\n",
}

# a config every example is set into: two datasets (TREC files; a ratings table) and the systems the examples name
_BASE: dict[str, Any] = {
    "experiment": "reference-examples",
    "datasets": [
        {"name": "trec", "qrels": "qrels.txt"},
        {
            "name": "ratings",
            "qrels": "ratings.csv",
            "columns": {"query": "user", "doc": "item", "relevance": "rating"},
            "run_columns": {"query": "user", "doc": "item", "score": "score"},
            "segments": {"path": "segments.csv", "query": "user", "segment": "kind"},
        },
    ],
    "systems": [
        {"name": "bm25", "runs": {"trec": "bm25.run", "ratings": "bm25.csv"}},
        {"name": "dense", "runs": {"trec": "dense.run", "ratings": "dense.csv"}},
        {"name": "v1", "runs": {"trec": "v1.run", "ratings": "v1.csv"}},
        {"name": "v2", "runs": {"trec": "v2.run", "ratings": ["v2-seed1.csv", "v2-seed2.csv"]}},
    ],
    "measures": ["nDCG@10"],
}


def _walk(prefix: str, keys: tuple[Key, ...]) -> list[tuple[str, Key]]:
    out = []
    for key in keys:
        path = f"{prefix}.{key.name}".lstrip(".")
        out += [(path, key), *_walk(path, key.keys)]
    return out


# a judge's keys: on trec, one run of each system (a judged dataset is decided under claim: model)
_JUDGE_KEYS = [path for path, _ in _walk("datasets", next(k for k in TOP if k.name == "datasets").keys) if ".judge" in path]
_ONE_RUN = (("stats.claim", "model"), ("systems[v2].seed", "v2-seed1"))

# which element of a list of mappings a key's example is set in (by its name; else the first mapping)
_TARGET = {
    **{path: "trec" for path in _JUDGE_KEYS},
    "datasets": "ratings",
    "datasets.name": "trec",
    "datasets.qrels": "trec",
    "systems": "v2",
    "systems.name": "dense",
}

# what a key's example needs beside it, as (path, value) set after it; None removes the key
_TREC_ONLY = ("datasets", [{"name": "trec", "qrels": "qrels.txt"}])
_BESIDE: dict[str, tuple[tuple[str, Any], ...]] = {
    **{path: _ONE_RUN for path in _JUDGE_KEYS},
    "datasets.judge|1": _ONE_RUN,
    **{
        f"{path}{form}": (*_ONE_RUN, ("datasets[trec].judge.sample", "stratified"))
        for path in _JUDGE_KEYS
        if path.startswith("datasets.judge.strata")
        for form in ("", "|1")
        if not form or other_forms(path)
    },
    "datasets.judge.columns.user": (*_ONE_RUN, ("datasets[trec].judge.columns.query", None)),
    "datasets.judge.columns.item": (*_ONE_RUN, ("datasets[trec].judge.columns.doc", None)),
    "datasets": (("systems", [{"name": "bm25", "runs": {"trec": "bm25.run"}}]),),
    "systems": (_TREC_ONLY,),
    "systems.seed": (("stats.claim", "model"),),
    "release.promote": (("systems[v2].model", "models:/recsys/4"),),
    "release.promote.model": (("systems[v2].model", "models:/recsys/4"),),
    "release.promote.alias": (("systems[v2].model", "models:/recsys/4"),),
    "release.guards.dataset": (),
    "release.guards.segment": (("release.guards[0].dataset", "ratings"),),
    "release.guards.max_drop_pct": (("release.guards[0].max_drop", None),),
    "release.guards.min_gain": (("release.guards[0].max_drop", None),),
    "systems.previous": (("systems[v2].runs", None),),
    "systems.previous.results": (("systems[v2].runs", None),),
    "systems.previous.mlflow_run": (("systems[v2].runs", None), ("systems[v2].previous.results", None)),
    "systems.previous.model": (("systems[v2].runs", None), ("systems[v2].previous.results", None)),
    "systems.previous.uri": (("systems[v2].runs", None),),
    "systems.previous.system": (("systems[v2].runs", None),),
    "systems.runs|1": (
        _TREC_ONLY,
        ("systems[bm25].runs", "bm25.run"),
        ("systems[dense].runs", "v2.run"),
        ("systems[v1].runs", "v1.run"),
    ),
    # user: and item: are query: and doc: by the names a recommender's tables use (one of each pair)
    "datasets.columns.user": (("datasets[ratings].columns.query", None),),
    "datasets.columns.item": (("datasets[ratings].columns.doc", None),),
    "datasets.run_columns.user": (("datasets[ratings].run_columns.query", None),),
    "datasets.run_columns.item": (("datasets[ratings].run_columns.doc", None),),
    "systems.previous|1": (("systems[v2].runs", None),),
    "systems.previous|2": (("systems[v2].runs", None),),
    "systems.previous|3": (("systems[v2].runs", None),),
}


KEYS = _walk("", TOP)
# each key's example (form 0), then the other forms it takes (1, 2, ...)
FORMS = [(path, key, form) for path, key in KEYS for form in range(1 + len(other_forms(path)))]


def _element(items: list[Any], name: str | None) -> dict[str, Any]:
    return next(x for x in items if isinstance(x, dict) and (name is None or x.get("name") == name))


def _set(config: dict[str, Any], path: str, value: Any) -> None:
    """Set ``a.b[NAME].c`` (or ``[0]``) in ``config``; ``None`` removes the key."""
    node: Any = config
    parts = path.split(".")
    for part in parts[:-1]:
        name, _, index = part.partition("[")
        node = node.setdefault(name, {})
        if index:
            index = index.rstrip("]")
            node = node[int(index)] if index.isdigit() else next(x for x in node if x.get("name") == index)
    if value is None:
        node.pop(parts[-1], None)
    else:
        node[parts[-1]] = value


def _with_example(path: str, key: Key, form: int) -> dict[str, Any]:
    """The base config with the key's example set where the reference puts it, inside its parents' examples."""
    config = copy.deepcopy(_BASE)
    node: Any = config
    parts = path.split(".")
    for i, part in enumerate(parts[:-1]):
        prefix = ".".join(parts[: i + 1])
        if prefix not in ("datasets", "systems"):  # a parent's example is the context (these two are the base's)
            node[part] = yaml.safe_load(example(prefix, _find(prefix)))[part]
        node = node[part]
        if isinstance(node, list):
            node = _element(node, _TARGET.get(path, _TARGET.get(prefix)))
    line = (example(path, key), *other_forms(path))[form]
    parsed = yaml.safe_load(line)
    assert list(parsed) == [key.name], line
    node[key.name] = parsed[key.name]
    for where, value in _BESIDE.get(f"{path}|{form}" if form else path, ()):
        _set(config, where, value)
    return config


def _find(path: str) -> Key:
    return dict(KEYS)[path]


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("reference")
    configs = root / "configs"
    configs.mkdir()
    for name, text in _FILES.items():
        (configs / name).write_text(text)
    # an earlier results folder (the loader checks its per_query.parquet is there) and the latest link to it
    earlier = root / "reports" / "exp" / "20261128-120000-abcdef"
    earlier.mkdir(parents=True)
    (earlier / "per_query.parquet").write_bytes(b"")
    os.symlink(earlier.name, earlier.parent / "latest")
    return configs


@pytest.mark.parametrize(("path", "key", "form"), FORMS, ids=[f"{p}|{f}" if f else p for p, _, f in FORMS])
def test_every_documented_form_loads(path: str, key: Key, form: int, folder: Path) -> None:
    config = _with_example(path, key, form)
    file = folder / f"{path}-{form}.yaml"
    file.write_text(yaml.safe_dump(config, sort_keys=False))
    load_config(file)


def test_the_tables_of_this_file_name_keys_the_reference_has() -> None:
    paths = dict(KEYS)
    assert {p.split("|")[0] for p in [*_TARGET, *_BESIDE]} <= set(paths)
    assert all(int(p.split("|")[1]) <= len(other_forms(p.split("|")[0])) for p in _BESIDE if "|" in p)


def test_a_table_named_by_its_path_alone_takes_the_default_columns(folder: Path) -> None:
    config = copy.deepcopy(_BASE)
    ratings = config["datasets"][1]
    ratings.update(segments="segments.csv", train="train.csv", items="items.csv")
    file = folder / "path-alone.yaml"
    file.write_text(yaml.safe_dump(config, sort_keys=False))
    dataset = load_config(file).datasets[1]
    assert dataset.segments is not None and dataset.train is not None and dataset.items is not None
    assert (dataset.segments.path, dataset.segments.query_column, dataset.segments.segment_column) == (
        folder / "segments.csv",
        "query",
        "segment",
    )
    assert (dataset.train.path.name, dataset.train.user, dataset.train.item) == ("train.csv", "user", "item")
    assert (dataset.items.path.name, dataset.items.id, dataset.items.groups) == ("items.csv", "item", ())


def test_a_missing_table_named_by_its_path_alone_names_its_line(folder: Path) -> None:
    file = folder / "missing-segments.yaml"
    config = copy.deepcopy(_BASE)
    config["datasets"][1]["segments"] = "no-such.csv"
    file.write_text(yaml.safe_dump(config, sort_keys=False))
    line = next(i for i, text in enumerate(file.read_text().splitlines(), 1) if "no-such.csv" in text)
    with pytest.raises(ConfigError, match=rf"line {line}: datasets\[1\]\.segments\.path: file not found: .*no-such\.csv"):
        load_config(file)


# the scalar keys the loader reads through the reference table (a guard's keys and the conventions have their own
# checks, which name the same types: guard_of, Conventions.from_mapping)
_TYPED = [
    (path, key)
    for path, key in KEYS
    if key.kind in ("string", "path", "integer", "number", "boolean") and not path.startswith(("release.guards.", "conventions."))
]
_WRONG = {"string": [1], "path": [1], "integer": "many", "number": "much", "boolean": "maybe"}
_TYPE_NAMES = {"string": "str", "path": "str", "integer": "int", "number": "float", "boolean": "bool"}


@pytest.mark.parametrize(("path", "key"), _TYPED, ids=[p for p, _ in _TYPED])
def test_every_key_is_read_as_the_type_the_table_gives_it(path: str, key: Key, folder: Path) -> None:
    """Each key set to a value of another type is refused at its line, naming the table's type: the loader takes
    its keys' types from the table, so a key whose kind changes there is read as the new kind."""
    config = _with_example(path, key, 0)
    target = _example_parent(config, path)
    target[key.name] = _WRONG[key.kind]
    file = folder / f"wrong-{path}.yaml"
    file.write_text(yaml.safe_dump(config, sort_keys=False))
    with pytest.raises(ConfigError) as raised:
        load_config(file)
    message = str(raised.value)
    assert f"{key.name} must be a {_TYPE_NAMES[key.kind]}" in message or f".{key.name} must be a" in message, message
    assert f"must be a {_TYPE_NAMES[key.kind]}" in message, message


def _example_parent(config: dict[str, Any], path: str) -> dict[str, Any]:
    """The mapping ``_with_example`` set the key's example in."""
    node: Any = config
    parts = path.split(".")
    for i, part in enumerate(parts[:-1]):
        node = node[part]
        if isinstance(node, list):
            node = _element(node, _TARGET.get(path, _TARGET.get(".".join(parts[: i + 1]))))
    assert isinstance(node, dict)
    return node
