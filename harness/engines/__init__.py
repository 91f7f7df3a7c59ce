"""Engines: who reads the rows and computes the per-query values (this process, or a Dask cluster).

The pipeline opens one engine with :func:`open_engine` and hands it each dataset's work
(:class:`DatasetWork`); it never asks which engine it has. Every engine returns the same
:class:`~harness.evaluation.results.RunResult` values, bit for bit, with the per-query values
in memory: everything after the evaluation runs here, whatever the engine.
``tests/engines/test_contract.py`` holds every engine to the same results.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from harness.engines._common import DatasetWork, FilesWork
from harness.engines.local import LocalEngine

if TYPE_CHECKING:
    from harness.config.schema import Engine as EngineSpec
    from harness.evaluation.results import EvaluatedRun, RunResult
    from harness.progress import Progress


class Engine(Protocol):
    """What the pipeline asks of an engine."""

    reads_judgments: bool  # does the evaluator prepare the judgments in this process?

    def evaluate(self, work: DatasetWork) -> list[RunResult]:
        """Every run of ``work`` (a system's, or one seed's of it), in its order."""
        ...

    def evaluate_files(self, work: FilesWork) -> list[EvaluatedRun]:
        """Every run of ``harness eval`` / ``harness compare``, in order."""
        ...


@contextmanager
def open_engine(spec: EngineSpec, progress: Progress) -> Iterator[Engine]:
    """The engine the config names, open for the duration of the block (a Dask client is closed after it)."""
    if spec.name == "dask":
        from harness.engines.dask import DaskEngine, client_for  # the optional extra, imported only when asked for

        # the inputs' pieces outlive the client: a worker lost mid-evaluation has its values recomputed from them
        with tempfile.TemporaryDirectory(prefix="harness-dask-") as scratch, client_for(spec, progress) as client:
            yield DaskEngine(client, spec, Path(scratch))
        return
    yield LocalEngine(spec)


__all__ = ["DatasetWork", "Engine", "FilesWork", "open_engine"]
