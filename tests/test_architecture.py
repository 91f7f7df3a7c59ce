"""The layout the import contracts promise, checked on the import graph itself (grimp, as import-linter reads it).

``make lint`` runs the contracts in ``pyproject.toml`` (layers; no cycle between the modules of
a package); these tests check what a contract cannot say: no module reaches itself through any
chain of imports at all (TYPE_CHECKING imports included), the top level stays small, and
process state is set in one place.
"""

from __future__ import annotations

import re
from pathlib import Path

import grimp
import pytest

import harness

HARNESS = Path(harness.__file__).resolve().parent  # the package as imported: the source tree, or an installed wheel


def _graph() -> grimp.ImportGraph:
    """Every import, inside functions and under TYPE_CHECKING too, except the package root's lazy facade (it names
    the public objects of every layer, and is no layer itself)."""
    graph = grimp.build_graph("harness", cache_dir=None)
    for imported in list(graph.find_modules_directly_imported_by("harness")):
        graph.remove_import(importer="harness", imported=imported)
    return graph


def _cycles(graph: grimp.ImportGraph) -> dict[str, tuple[str, ...] | None]:
    """Each module that reaches itself through its imports, with one chain that does."""
    out = {}
    for module in sorted(graph.modules):
        back = sorted(m for m in graph.find_modules_directly_imported_by(module) if module in graph.find_upstream_modules(m))
        if back:  # module imports back, which reaches module again
            out[module] = (module, *(graph.find_shortest_chain(importer=back[0], imported=module) or ()))
    return out


def test_no_module_imports_itself_through_any_chain() -> None:
    assert _cycles(_graph()) == {}


def test_a_cycle_would_be_found() -> None:
    """The check above can fail: one import back from the readers to the tables makes a cycle it names."""
    graph = _graph()
    graph.add_import(importer="harness.data.trec", imported="harness.data.tables")
    assert {"harness.data.trec", "harness.data.tables"} <= set(_cycles(graph))


def test_the_top_level_holds_only_the_entry_points_and_the_leaves() -> None:
    modules = sorted(p.name for p in HARNESS.glob("*.py"))
    assert len(modules) <= 10, modules
    stages = {p.name for p in HARNESS.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert {"config", "data", "evaluation", "comparison", "decision", "records", "report", "pipeline", "engines"} <= stages


@pytest.mark.parametrize(
    ("pattern", "allowed"),
    [
        (r"\bos\._exit\(|atexit\._run_exitfuncs|\bgc\.set_threshold\(|OPENBLAS_", set()),
        (r"\bgc\.freeze\(", {"records/recorder.py"}),  # only in the recorder's own child, as it ends
        (r"\bsys\.modules\b", set()),  # a code path is chosen by an argument, never by what is loaded
    ],
)
def test_process_state_is_set_in_one_place(pattern: str, allowed: set[str]) -> None:
    found = {str(p.relative_to(HARNESS)) for p in HARNESS.rglob("*.py") if re.search(pattern, p.read_text())}
    assert found <= allowed, found
