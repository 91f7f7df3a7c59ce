"""The one pipeline every command runs: config -> load -> evaluate -> compare -> decide -> record -> report.

:mod:`~harness.pipeline.experiment` runs a config (``harness run``, ``validate``, the API's
``run_experiment``); :mod:`~harness.pipeline.files` the same stages on files named on the
command line (``harness eval``, ``harness compare``); :mod:`~harness.pipeline.plan` sizes a
decision from a results folder (``harness plan``). Each stage is a subpackage; this one only
orders them, and hands the work to the engine the config names (:mod:`harness.engines`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.pipeline.experiment import Outcome, run_experiment, validate_experiment
    from harness.pipeline.files import FileInputs, evaluate_files
    from harness.pipeline.plan import plan_from_results

# each name from its module, loaded when first asked for: `harness eval` needs files.py, not a config's whole pipeline
_HOMES = {
    "Outcome": "experiment",
    "run_experiment": "experiment",
    "validate_experiment": "experiment",
    "FileInputs": "files",
    "evaluate_files": "files",
    "plan_from_results": "plan",
}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module 'harness.pipeline' has no attribute {name!r}")
    return getattr(importlib.import_module(f"harness.pipeline.{_HOMES[name]}"), name)


__all__ = ["FileInputs", "Outcome", "evaluate_files", "plan_from_results", "run_experiment", "validate_experiment"]
