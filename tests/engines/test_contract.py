"""Every engine against the reference, through the whole engine interface (``harness.engines.Engine``).

The reference is the evaluator and the comparisons called directly on values in this process
(no engine): per-query values, aggregates, summaries and comparison rows must come out of
every engine (local threads, a real Dask LocalCluster) equal to it, bit for bit.
"""

from __future__ import annotations

import dataclasses
import math
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from harness.comparison.compare import compare
from harness.config.load import load_config
from harness.config.schema import Engine as EngineSpec
from harness.data.load import load_qrels, load_run
from harness.engines import DatasetWork, open_engine
from harness.evaluation.evaluator import Evaluator
from harness.evaluation.results import PerQuery, RunResult, aggregate_values, summarize
from harness.measures.parse import parse_measure
from harness.pipeline.experiment import _evaluator, _load_segments, compare_settings
from harness.pipeline.files import FileInputs, evaluate_files
from harness.progress import SILENT
from tests.generated import adversarial
from tests.tiers import require

ENGINES = ("local", pytest.param("dask", marks=pytest.mark.cluster))  # dask: on the package's LocalCluster
MEASURES = tuple(parse_measure(m) for m in ("nDCG@10", "AP", "RR", "P@5", "bpref", "GMAP", "NumRet"))
SYSTEMS = ("bm25", "dense", "hybrid")


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """TREC judgments and three runs over the same 60 queries (ties, graded and negative labels, missing queries),
    a segments file, and a config naming them."""
    root = tmp_path_factory.mktemp("contract")
    qrels, _ = adversarial(1, 60)
    (root / "qrels.txt").write_text("".join(f"{q} 0 {d} {r}\n" for q, docs in qrels.items() for d, r in docs.items()))
    for seed, name in enumerate(SYSTEMS, start=2):
        _, run = adversarial(seed, 60)  # the same query ids; other documents and scores
        lines = [f"{q} Q0 {d} {rank} {s} {name}\n" for q, docs in run.items() for rank, (d, s) in enumerate(docs.items())]
        (root / f"{name}.run").write_text("".join(lines))
    (root / "segments.csv").write_text(
        "query,segment\n" + "".join(f"q{i:03d},{'head' if i % 3 else 'tail'}\n" for i in range(60))
    )
    systems = "\n".join(f"  - {{name: {s}, runs: {{trec: {s}.run}}}}" for s in SYSTEMS)
    (root / "config.yaml").write_text(
        f"experiment: contract\ndatasets:\n  - name: trec\n    qrels: qrels.txt\n"
        f"    segments: {{path: segments.csv, query: query, segment: segment}}\n"
        f"systems:\n{systems}\nmeasures: [{', '.join(str(m) for m in MEASURES)}]\nbaseline: bm25\n"
        f"stats: {{permutations: 500, resamples: 500}}\ntracking: {{enabled: false}}\noutput: out\n"
    )
    return {"root": root, "qrels": root / "qrels.txt", "config": root / "config.yaml", **{s: root / f"{s}.run" for s in SYSTEMS}}


def _spec(engine: str) -> EngineSpec:
    return EngineSpec(name=engine)  # dask: the module's active client


def _reference(files: dict[str, Path]) -> dict[str, PerQuery]:
    evaluator = Evaluator(load_qrels(files["qrels"]), MEASURES)
    out = {}
    for s in SYSTEMS:
        aligned = evaluator.align(load_run(files[s]))
        out[s] = evaluator.evaluate_aligned(s, aligned, evaluator.item_lists(aligned))
    return out


def _experiment_reference(
    experiment: Any, files: dict[str, Path]
) -> tuple[Any, Any, dict[str, str], dict[str, PerQuery], list[RunResult], list[dict[str, Any]]]:
    """(settings, dataset, segments, per-query tables, results, comparison rows) of the config, without any engine."""
    settings = compare_settings(experiment)
    dataset = experiment.datasets[0]
    segments = _load_segments(dataset)
    reference = _reference(files)
    results = [
        RunResult("trec", s, t, np.array([segments.get(q, "") for q in t.query_ids], dtype=object), {})
        for s, t in reference.items()
    ]
    return settings, dataset, segments, reference, results, [r.to_record() for r in compare(results, MEASURES, settings)]


def _same_values(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and bool(np.array_equal(a, b, equal_nan=True))


def _same_record(a: dict[str, Any], b: dict[str, Any]) -> bool:
    def same(x: Any, y: Any) -> bool:
        return (isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y)) or x == y

    return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)


@pytest.mark.parametrize("engine", ENGINES)
def test_evaluate_files_gives_the_reference_values(engine: str, files: dict[str, Path], request: pytest.FixtureRequest) -> None:
    if engine == "dask":
        request.getfixturevalue("client")
    reference = _reference(files)
    inputs = FileInputs(files["qrels"], tuple((s, files[s]) for s in SYSTEMS), engine=_spec(engine))
    runs = evaluate_files(inputs, MEASURES)
    assert [r.label for r in runs] == list(SYSTEMS) and [r.name for r in runs] == list(SYSTEMS)
    for run in runs:
        ref = reference[run.label]
        for j, m in enumerate(ref.measures):  # every aggregate, bit for bit
            assert run.aggregates[m] == aggregate_values(m, ref.values[:, j]), (engine, run.label, m)
        assert list(run.per_query.query_ids) == list(ref.query_ids)
        assert _same_values(run.per_query.values, ref.values)
        # judged (q % 9 != 8) and left out of every run (q % 7 == 3) by adversarial()
        assert run.judged_queries_missing == sum(1 for q in range(60) if q % 7 == 3 and q % 9 != 8)


@pytest.mark.parametrize("engine", ENGINES)
def test_dataset_work_summaries_and_comparisons_are_the_reference(
    engine: str, files: dict[str, Path], request: pytest.FixtureRequest
) -> None:
    if engine == "dask":
        request.getfixturevalue("client")
    experiment = dataclasses.replace(load_config(files["config"]), engine=_spec(engine))
    settings, dataset, segments, _, ref_results, ref_rows = _experiment_reference(experiment, files)
    results = _dataset_work(experiment, dataset, segments)
    rows = [r.to_record() for r in compare(results, MEASURES, settings)]
    for result, ref in zip(results, ref_results, strict=True):
        assert [_same_record(a, b) for a, b in zip(summarize(result), summarize(ref), strict=True)] == [True] * len(
            summarize(ref)
        )
        assert _same_values(result.per_query.values, ref.per_query.values)
        assert list(result.segments) == list(ref.segments)
    assert len(rows) == len(ref_rows) and all(_same_record(a, b) for a, b in zip(rows, ref_rows, strict=True))


def _dataset_work(experiment: Any, dataset: Any, segments: dict[str, str]) -> list[RunResult]:
    """The dataset's runs through the engine the experiment names, in SYSTEMS' order."""
    with open_engine(experiment.engine, SILENT) as opened:
        evaluator = _evaluator(experiment, dataset, experiment.measures, SILENT, judgments=opened.reads_judgments)
        done = opened.evaluate(
            DatasetWork(experiment, dataset, evaluator, experiment.systems, segments, "", SILENT, lambda: None)
        )
    return [next(r for r in done if r.system == s) for s in SYSTEMS]


def _kill_once_at(task: str, flag: Path) -> Any:
    """A worker plugin that kills its worker's process (``os._exit``, as the OOM killer or a lost machine would) when
    a task named ``task`` starts executing, once for the whole cluster (``flag`` records it: the nanny's new worker
    gets the plugin too)."""
    from distributed import WorkerPlugin
    from distributed.utils import key_split

    class KillOnce(WorkerPlugin):  # type: ignore[misc]
        def transition(self, key: Any, start: str, finish: str, **kwargs: Any) -> None:
            if finish == "executing" and key_split(key) == task:
                try:
                    descriptor = os.open(flag, os.O_CREAT | os.O_EXCL | os.O_WRONLY)  # the first to get here, only
                except FileExistsError:
                    return
                os.close(descriptor)
                os._exit(1)

    return KillOnce()


@pytest.mark.cluster
def test_a_worker_lost_while_evaluating_changes_nothing(files: dict[str, Path], tmp_path: Path) -> None:
    """A worker process killed as it starts evaluating a partition: Dask recomputes what it held from the inputs'
    pieces (kept while the engine is open), and every per-query value and comparison row is the reference's."""
    from distributed import Client, LocalCluster

    require("cluster", "a Dask LocalCluster")

    experiment = load_config(files["config"])
    settings, dataset, segments, _, ref_results, ref_rows = _experiment_reference(experiment, files)
    flag = tmp_path / "killed"
    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, memory_limit="768MiB", dashboard_address=":0"
    ) as cluster:  # its own: a worker of it is killed
        with Client(cluster) as watcher:
            watcher.register_plugin(_kill_once_at("evaluate_piece", flag))
        spec = EngineSpec(name="dask", scheduler=cluster.scheduler_address, partitions=4)
        results = _dataset_work(dataclasses.replace(experiment, engine=spec), dataset, segments)
    assert flag.exists()  # killed where it was meant to be
    for result, ref in zip(results, ref_results, strict=True):
        assert _same_values(result.per_query.values, ref.per_query.values)
    rows = [r.to_record() for r in compare(results, MEASURES, settings)]
    assert len(rows) == len(ref_rows) and all(_same_record(a, b) for a, b in zip(rows, ref_rows, strict=True))
