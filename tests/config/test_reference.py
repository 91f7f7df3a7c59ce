"""The configuration reference is the loader's: every key it accepts, the docs page and the JSON Schema written from
one table (harness/config/reference.py), and every bundled config valid against the schema."""

from __future__ import annotations

import dataclasses
import json

import jsonschema
import pytest
import yaml

from harness.config.guards import GUARD_KEYS
from harness.config.load import load_config
from harness.config.reference import json_schema, keys_of, markdown
from harness.demo import generate
from harness.errors import ConfigError
from harness.measures.conventions import Conventions
from tests.repo import ROOT

SCHEMA = ROOT / "configs" / "harness.schema.json"


def test_the_docs_page_and_the_schema_file_are_the_table_written_out() -> None:
    """After a key changes: python -m harness.config.reference (in the repository) writes both again."""
    assert (ROOT / "docs" / "config.md").read_text() == markdown() + "\n"
    assert json.loads(SCHEMA.read_text()) == json_schema()


def test_the_table_has_what_the_guards_and_the_conventions_take() -> None:
    assert keys_of("release.guards") == GUARD_KEYS
    assert keys_of("conventions") == tuple(f.name for f in dataclasses.fields(Conventions))


@pytest.mark.parametrize("name", ["demo.yaml", "trec.yaml"])
def test_every_bundled_config_is_valid_against_the_schema(name: str) -> None:
    jsonschema.validate(yaml.safe_load((ROOT / "configs" / name).read_text()), json_schema())


def test_a_wrong_key_fails_the_schema_as_it_fails_the_loader(tmp_path) -> None:  # type: ignore[no-untyped-def]
    config = yaml.safe_load((ROOT / "configs" / "trec.yaml").read_text())
    config["stats"]["permutation"] = 1000  # for permutations
    with pytest.raises(jsonschema.ValidationError, match="permutation"):
        jsonschema.validate(config, json_schema())
    generate(tmp_path)  # the files the config names, so that the key is what is wrong
    (tmp_path / "configs").mkdir()
    path = tmp_path / "configs" / "wrong.yaml"
    path.write_text((ROOT / "configs" / "trec.yaml").read_text().replace("  permutations:", "  permutation:"))
    with pytest.raises(ConfigError, match=r"line 65: unknown key 'stats\.permutation'\. Fix: did you mean 'permutations'"):
        load_config(path)


def test_every_key_has_an_example_that_is_yaml_setting_it() -> None:
    """Each example is one YAML line that sets its key (to a value the key's type takes)."""
    from harness.config.reference import example
    from tests.config.test_reference_examples import KEYS

    kinds = {"string": str, "path": str, "integer": int, "number": (int, float), "boolean": bool, "list": list, "mapping": dict}
    checked = 0
    for path, key in KEYS:
        parsed = yaml.safe_load(example(path, key))
        assert list(parsed) == [key.name], path
        value = parsed[key.name]
        assert isinstance(value, kinds[key.kind]) or (key.also and isinstance(value, str)), (path, value)
        checked += 1
    assert checked > 80


def _without_required(schema: object) -> object:
    """The schema of a part of a config: what a docs snippet shows, without the keys it leaves out."""
    if isinstance(schema, dict):
        return {k: _without_required(v) for k, v in schema.items() if k != "required"}
    if isinstance(schema, list):
        return [_without_required(v) for v in schema]
    return schema


# a config's snippets: the YAML blocks of the README and the docs with a key of a config (not CI files' YAML)
SNIPPETS = [
    (page.name, i, snippet)
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    for i, block in enumerate(page.read_text().split("```yaml\n")[1:])
    if set(snippet := yaml.safe_load(block.split("```")[0])) & set(keys_of(""))
]


def test_the_docs_have_config_snippets() -> None:
    assert len(SNIPPETS) >= 8


@pytest.mark.parametrize(("page", "index", "snippet"), SNIPPETS, ids=[f"{p}-{i}" for p, i, _ in SNIPPETS])
def test_every_config_snippet_in_the_docs_is_valid_against_the_schema(page: str, index: int, snippet: dict[str, object]) -> None:
    jsonschema.validate(snippet, _without_required(json_schema()))
