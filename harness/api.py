"""The notebook API: plain functions over the same stages the command line uses.

>>> from harness import Qrels, Run, evaluate, compare
>>> qrels = Qrels.from_dict({f"q{i}": {"a": 1, "b": 0} for i in range(12)})
>>> good = evaluate(qrels, Run.from_dict({f"q{i}": {"a": 2.0, "b": 1.0} for i in range(12)}, name="good"), ["RR"])
>>> bad = evaluate(qrels, Run.from_dict({f"q{i}": {"a": 1.0, "b": 2.0} for i in range(12)}, name="bad"), ["RR"])
>>> table = compare([bad, good], baseline="bad", seed=1)
>>> table[["measure", "system_a", "system_b", "delta", "p_randomization"]].round(4).values.tolist()
[['RR', 'bad', 'good', 0.5, 0.0005]]
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from harness.comparison import TESTS, CompareSettings
from harness.comparison import compare as compare_results
from harness.errors import HarnessError
from harness.results import PerQuery, RunResult

if TYPE_CHECKING:
    import pandas as pd

    from harness.pipeline import Outcome


def compare(
    per_query: Sequence[PerQuery] | Mapping[str, PerQuery],
    baseline: str | None = None,
    *,
    tests: Sequence[str] = TESTS,
    primary: str = "randomization",
    correction: str = "holm",
    family: str = "per_measure",
    alpha: float = 0.05,
    permutations: int = 10_000,
    resamples: int = 10_000,
    seed: int = 20261121,
    nan: str = "error",
) -> pd.DataFrame:
    """Paired tests between runs evaluated on the same judgments: one row per pair x measure.

    ``per_query``: the runs' per-query tables (named by their run, or by the mapping's
    keys). With a ``baseline``, every other run is compared with it; without, every pair.
    The columns and their definitions are those of ``comparisons.csv`` (README,
    "Comparing systems"); the same seed gives the same p-values.
    """
    import pandas as pd

    tables = dict(per_query) if isinstance(per_query, Mapping) else {t.run: t for t in per_query}
    if len(tables) < 2 or len(tables) < len(per_query):  # fewer tables than given: two runs shared a name
        raise HarnessError("compare needs at least two per-query tables with distinct run names",
                           hint="name the runs (Run(..., name=...)) or pass {name: per_query}")  # fmt: skip
    names = list(tables)
    if baseline is not None and baseline not in tables:
        raise HarnessError(f"baseline {baseline!r} is not among the runs", hint=f"use one of {', '.join(names)}")
    measures = tables[names[0]].measures
    for name, table in tables.items():
        if set(table.measures) != set(measures):
            raise HarnessError(f"run {name!r} was evaluated on other measures than {names[0]!r}",
                               hint="evaluate every run with the same measures")  # fmt: skip
    for test in (*tests, primary):
        if test not in TESTS:
            raise HarnessError(f"unknown test {test!r}", hint=f"use {', '.join(TESTS)}")
    settings = CompareSettings(
        tests=tuple(tests), primary=primary, correction=correction, family=family, alpha=alpha,
        mode="baseline" if baseline else "all_pairs", permutations=permutations, resamples=resamples, seed=seed,
        baseline=baseline, nan=nan,
    )  # fmt: skip
    results = [RunResult("-", name, dataclasses.replace(t, run=name), np.full(len(t.query_ids), "", dtype=object), {})
               for name, t in tables.items()]  # fmt: skip
    rows, _ = compare_results(results, measures, settings)
    return pd.DataFrame(rows).drop(columns=["dataset"])


def run_experiment(
    config: str | Path,
    *,
    output: str | Path | None = None,
    overrides: Mapping[str, object] | None = None,
    tracking: bool = True,
    progress: bool = False,
) -> Outcome:
    """Run an experiment config as ``harness run`` does; the outcome carries the results as DataFrames.

    ``outcome.per_query``, ``.summary``, ``.comparisons``, ``.diagnostics`` are pandas
    DataFrames; ``outcome.gate`` is pass / fail / none; ``outcome.results_dir`` the folder.
    ``progress=True`` shows the stages on stderr.
    """
    from harness.config.load import load_config
    from harness.pipeline import run_experiment as run_pipeline

    experiment = load_config(config, overrides, output)
    if not tracking:
        experiment = dataclasses.replace(experiment, tracking=dataclasses.replace(experiment.tracking, enabled=False))
    from harness.progress import SILENT, Progress

    reporter = Progress(sys.stderr) if progress else SILENT
    return run_pipeline(experiment, reporter, argv=["harness.run_experiment", str(config)])


__all__ = ["compare", "run_experiment"]
