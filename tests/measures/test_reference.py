"""docs/measures.md's tables are the measure definitions written out, and what they say of the other tools holds."""

from __future__ import annotations

import re

import pytest

from harness.measures.definition import FAMILIES
from harness.measures.parse import parse_measure
from harness.measures.peers import PEERS
from harness.measures.reference import main, render, table
from harness.measures.registry import PEER_NAMES, REGISTRY
from tests.repo import ROOT

PAGE = ROOT / "docs" / "measures.md"


def test_the_page_holds_every_family_s_table_as_the_definitions_write_it() -> None:
    """After a definition changes: python -m harness.measures.reference (in the repository) writes the tables again."""
    text = PAGE.read_text()
    assert render(text) == text
    for family in FAMILIES:
        assert f"<!-- measures: {family} -->\n{table(family)}\n<!-- end measures -->" in text


def test_every_measure_has_one_row_and_a_pipe_in_a_description_stays_in_its_cell() -> None:
    rows = [line for family in FAMILIES for line in table(family).splitlines()[2:]]
    assert len(rows) == len(list(REGISTRY))
    ee_l = next(row for row in rows if row.startswith("| `EE_L`"))
    assert "\\|\\|e - e*\\|\\|^2" in ee_l
    assert {len(re.split(r"(?<!\\)\|", row)) for row in rows} == {5}  # three cells between the row's two edges


def test_check_fails_on_a_page_whose_table_is_stale(tmp_path) -> None:  # type: ignore[no-untyped-def]
    page = tmp_path / "measures.md"
    stale = PAGE.read_text().replace("| Number of queries evaluated. |", "| Queries. |", 1)
    assert stale != PAGE.read_text()
    page.write_text(stale)
    assert main(["--check", "--page", str(page)]) == 1
    assert main(["--page", str(page)]) == 0  # writes the tables again
    assert page.read_text() == PAGE.read_text()


@pytest.mark.parametrize(
    "definition, peer", [(d, p) for d in REGISTRY for p in d.peer_names], ids=lambda x: getattr(x, "name", "")
)
def test_every_other_tool_s_name_names_a_peer_and_a_spelling_of_its_measure(definition, peer) -> None:  # type: ignore[no-untyped-def]
    assert peer.tool in PEERS
    required = {p.name: "g" for p in definition.params if p.required}
    spelling = peer.spelling
    if required:  # the tool's name stands for every value of the parameter a user names (the item groups' column)
        spelling = spelling.replace(")", "," + ",".join(f"{k}={v}" for k, v in required.items()) + ")", 1)
        spelling = spelling if "(" in spelling else f"{spelling}({','.join(f'{k}={v}' for k, v in required.items())})"
    measure = parse_measure(spelling + ("@10" if definition.cutoff == "required" else ""))
    assert measure.name == definition.name
    if peer.read:  # harness reads the tool's own name as that measure
        assert PEER_NAMES[peer.name] == (peer.spelling, peer.tool)
        assert parse_measure(peer.name + "@10" if definition.cutoff != "none" else peer.name).name == definition.name
