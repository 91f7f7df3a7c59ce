"""The public face reads like scikit-learn's: every public function and class of ``harness`` has numpydoc
sections (what it takes, what it gives) and an example, which the doctests run."""

from __future__ import annotations

import inspect

import pytest

import harness

PUBLIC = [name for name in harness.__all__ if name != "__version__"]


@pytest.mark.parametrize("name", PUBLIC)
def test_every_public_object_has_numpydoc_sections_and_an_example(name: str) -> None:
    obj = getattr(harness, name)
    doc = inspect.getdoc(obj) or ""
    takes = "Parameters\n----------" in doc or (inspect.isclass(obj) and "Attributes\n----------" in doc)
    assert takes, f"{name}: no Parameters (or, for a class, Attributes) section"
    if not inspect.isclass(obj):
        assert "Returns\n-------" in doc, f"{name}: no Returns section"
    examples = doc.split("Examples\n--------", 1)
    assert len(examples) == 2 and ">>> " in examples[1], f"{name}: no Examples section with an example"
