"""Shared fixtures: the reference data vendored under tests/fixtures (never read from ../shared).

``tests/fixtures/trec_eval`` holds trec_eval 10.0's own test inputs and expected outputs
(NIST; see its LICENSE.md), ``tests/fixtures/beyond_accuracy`` the peers' beyond-accuracy
golden case (see its README.md).
"""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "fixtures"
TREC_EVAL = DATA / "trec_eval"
BEYOND_ACCURACY = DATA / "beyond_accuracy"
FAIRNESS = DATA / "fairness"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The two xdist workers' shares (``--dist loadgroup``): a file's tests on one worker, as ``loadfile`` would, but
    every test that starts an mlflow server on the same one, so that two servers (about 0.5 GB each) never run at
    once beside the workers: make test stays within 4 GB."""
    for item in items:
        group = "mlflow-server" if item.get_closest_marker("server") else item.nodeid.split("::")[0]
        item.add_marker(pytest.mark.xdist_group(group))


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Before the test's fixtures: its markers, which tests/tiers.py's ``require`` reads."""
    from tests import tiers

    tiers.current = frozenset(mark.name for mark in item.iter_markers())


@pytest.fixture(scope="session")
def trec_eval_dir() -> Path:
    return TREC_EVAL
