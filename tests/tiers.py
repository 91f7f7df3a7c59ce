"""The test tiers: plain ``pytest`` runs the fast tier (unit tests, doctests, conformance, the CLI); the markers name
what it leaves to ``make test``, which runs every tier:

* ``slow``: Monte Carlo error rates, large generated cross-checks, and long end-to-end runs (a store interrupted
  at each step, kill -9 at each stage, explain's search);
* ``cluster``: a real Dask LocalCluster;
* ``server``: a real ``mlflow server`` on 127.0.0.1, or a notebook kernel;
* ``browser``: Debian's chromium.

A test that starts one of these without its marker fails, naming the marker (:func:`require`), so that the fast
tier cannot grow one by accident.
"""

from __future__ import annotations

import pytest

TIERS = ("slow", "cluster", "server", "browser")

# the markers of the test being set up (set by tests/conftest.py before any of its fixtures)
current: frozenset[str] = frozenset()


def require(marker: str, what: str) -> None:
    """Fail the running test unless it carries ``marker``: it is about to start ``what``."""
    if marker not in current:
        pytest.fail(f"this test starts {what}: mark it @pytest.mark.{marker} (tests/tiers.py)", pytrace=False)
