"""One real Dask LocalCluster for the engine tests (2 worker processes at 768 MiB each: the smallest that works)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.tiers import require


@pytest.fixture(scope="package")
def client() -> Iterator[Any]:
    from distributed import Client, LocalCluster

    require("cluster", "a Dask LocalCluster")
    with (
        LocalCluster(n_workers=2, threads_per_worker=1, processes=True, memory_limit="768MiB", dashboard_address=":0") as cluster,
        Client(cluster) as active,
    ):
        yield active  # harness's dask engine finds the active client
