"""What every engine does the same way: read a system's run, and make a run's result from its values."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from harness.config.schema import Dataset, Experiment, System, TableColumns
from harness.data.load import check_shares_judged, load_run
from harness.data.model import Intents, Qrels, Run
from harness.evaluation.evaluator import Evaluator
from harness.evaluation.results import PerQuery, RunResult
from harness.kernels._segments import RankedLists
from harness.measures.spec import Measure
from harness.progress import Progress


@dataclass(frozen=True)
class DatasetWork:
    """One dataset's systems to evaluate, as the pipeline hands them to an engine: each holding one run (a system with
    several seeds comes once per seed, :meth:`~harness.config.schema.System.each_run`).

    ``segments`` maps query id -> segment; ``skipped`` names the measures this dataset cannot
    compute (for the diagnostics); ``advance`` counts one finished run for the progress bar.
    """

    experiment: Experiment
    dataset: Dataset
    evaluator: Evaluator
    systems: tuple[System, ...]
    segments: dict[str, str]
    skipped: str
    progress: Progress
    advance: Callable[[], None]


@dataclass(frozen=True)
class FilesWork:
    """The runs of ``harness eval`` / ``harness compare``, as the pipeline hands them to an engine.

    ``qrels`` is the judgments when they were read here (``None``: the engine's workers read
    ``qrels_path``); ``runs`` holds (label, label given or None, path) per run.
    """

    evaluator: Evaluator
    qrels_path: Path
    qrels_columns: Mapping[str, str]
    qrels: Qrels | Intents | None  # subtopic judgments as read (the intent-aware measures read them)
    runs: tuple[tuple[str, str | None, Path], ...]
    run_columns: Mapping[str, str]
    relstring_lengths: tuple[int, ...]
    progress: Progress


def judgments_of(dataset: Dataset) -> str:
    return f"dataset {dataset.name!r} ({dataset.qrels})"


def qrels_columns(c: TableColumns) -> dict[str, str]:
    """A table of judgments' columns as the readers take them."""
    return {"query": c.query, "doc": c.doc, "relevance": c.value}


def run_columns(c: TableColumns) -> dict[str, str]:
    """A dataset's run columns as the readers take them (a stochastic run's sample column when it names one)."""
    return {"query": c.query, "doc": c.doc, "score": c.value, **({"sample": c.sample} if c.sample else {})}


def checked_run(
    dataset: Dataset, system: System, path: Path, judged: AbstractSet[str], progress: Progress, samples: bool = False
) -> Run:
    """A system's run on a dataset; a user error when it shares no query with the judgments. ``samples``: a TREC
    run's second column is each line's sample (a measure reads stochastic rankings)."""
    progress(f"reading {system.name}{f' [{system.run_label}]' if system.run_label else ''} on {dataset.name}")
    run = load_run(path, run_columns(dataset.run_columns), name=system.name, samples=samples)
    check_shares_judged(run, judged, judgments_of(dataset))
    return run


def segments_of(query_ids: np.ndarray, segments: dict[str, str]) -> np.ndarray:
    """Each query's segment ('' when it has none)."""
    return np.array([segments.get(q, "") for q in query_ids.tolist()], dtype=object)


def dataset_diagnostics(
    dataset: Dataset, diagnostics: dict[str, object], unsegmented: int | None, skipped: str, item_rows: dict[str, int] | None
) -> dict[str, object]:
    """A run's diagnostics with the dataset-level ones added; ``item_rows``: the rows recommending items outside the
    training items, the catalogue or both (:meth:`~harness.kernels._segments.ItemData.rows_outside`)."""
    diagnostics["queries_without_segment"] = unsegmented
    if item_rows is not None and (dataset.train or dataset.items):  # recommendations of items neither knows
        diagnostics["cold_recommendations"] = item_rows["cold_recommendations"]
    if item_rows is not None and dataset.train and dataset.items:  # each universe apart, where both are given
        diagnostics["recommendations_outside_train"] = item_rows["recommendations_outside_train"]
        diagnostics["recommendations_outside_catalogue"] = item_rows["recommendations_outside_catalogue"]
    if skipped:
        diagnostics["measures_not_computed"] = skipped
    return diagnostics


def run_result(
    dataset: Dataset,
    system: System,
    per_query: PerQuery,
    diagnostics: dict[str, object],
    segments: dict[str, str],
    skipped: str,
    item_rows: dict[str, int] | None,
    lists: RankedLists | None,
    system_measures: tuple[Measure, ...],
    counts: np.ndarray | None,
    cutoff: int | None,
) -> RunResult:
    """A run's result with its values here: its queries' segments, and the dataset-level diagnostics."""
    seg = segments_of(per_query.query_ids, segments)
    dataset_diagnostics(dataset, diagnostics, int((seg == "").sum()) if segments else None, skipped, item_rows)
    return RunResult(
        dataset.name, system.name, per_query, seg, diagnostics, lists, system_measures, counts, cutoff, seed=system.run_label
    )
