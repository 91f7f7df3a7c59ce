"""The one pipeline every command runs: config -> load -> evaluate -> compare -> decide -> record -> report.

:mod:`~harness.pipeline.experiment` runs a config (``harness run``, ``validate``, the API's
``run_experiment``); :mod:`~harness.pipeline.files` the same stages on files named on the
command line (``harness eval``, ``harness compare``); :mod:`~harness.pipeline.plan` sizes a
decision from a results folder (``harness plan``). Each stage is a subpackage; this one only
orders them, and hands the work to the engine the config names (:mod:`harness.engines`).
"""

from harness.pipeline.experiment import Outcome, run_experiment, validate_experiment
from harness.pipeline.files import FileInputs, evaluate_files
from harness.pipeline.plan import plan_from_results

__all__ = ["FileInputs", "Outcome", "evaluate_files", "plan_from_results", "run_experiment", "validate_experiment"]
