"""The paired comparisons on the Dask cluster: partitions' exact partial sums, added; no per-query table gathered.

The workers keep each run's per-query table (:mod:`harness.engines.dask`). Here those
tables are stacked (one row per system and query) and shuffled by query id, so every
system's values of a query meet in one partition. Each partition then runs the
tests' first passes on its own queries (:func:`harness.stats.paired.scan`, then
:func:`~harness.stats.paired.partial` with the plan made from every partition's scan), and
the client adds what the partitions send back (a few numbers per comparison and replicate)
and finishes. Since every draw is keyed by query id and every sum is exact, the
comparisons are those of one process, bit for bit, in any partitioning
(``tests/engines/test_dask.py``, ``tests/stats/test_exact.py``).

The two-way ANOVA and the randomised Tukey HSD (three systems or more) are computed the same
way (:mod:`harness.stats.anova`'s passes). The system measures still use the lists the client
gathers.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass
from functools import reduce
from typing import Any

import numpy as np

from harness.comparison.compare import (
    CompareSettings,
    GroupTested,
    PairedBlock,
    block_arrays,
    group_arrays,
    raise_first_nan,
    tests_of,
    tukey_identity,
)
from harness.errors import HarnessError
from harness.evaluation.results import ValuesScan, kept
from harness.measures.spec import Measure
from harness.stats import anova as group_stats
from harness.stats import keyed, paired

ROWS_PER_PARTITION = 100_000  # (system, query) rows a partition holds


@dataclass(frozen=True)
class RemoteRuns:
    """A dataset's runs as the cluster holds them: per system, the futures of its partitions' per-query values, and
    the measures of their value columns (m0, m1, ...)."""

    pieces: dict[str, list[Any]]
    measures: tuple[Measure, ...]
    segment_of: Any  # each query's segment (a Series indexed by query id, on the cluster), when the dataset has segments
    queries: int  # per-query rows of the largest run


def _stacked(table: Any, system: str, columns: list[str]) -> Any:
    """A partition's per-query values of one system as rows of (query_id, system, its measures' columns)."""
    import pandas as pd

    if table is None:
        return pd.DataFrame({"query_id": pd.Series([], dtype=object), "system": pd.Series([], dtype=object),
                             **{c: pd.Series([], dtype=np.float64) for c in columns}})  # fmt: skip
    out = pd.DataFrame({"query_id": pd.Series(table["query_id"].to_numpy(dtype=object), dtype=object),
                        "system": pd.Series(np.full(len(table), system, dtype=object), dtype=object)})
    for column in columns:
        out[column] = table[column].to_numpy(dtype=np.float64)
    return out


def _arrays(frame: Any, segment: str, segment_of: Any, systems: list[str], measures: tuple[Measure, ...],
            columns: list[str]) -> tuple[np.ndarray, dict[str, np.ndarray], dict[str, np.ndarray]]:  # fmt: skip
    """(the partition's queries in the segment, sorted; each system's values on them; where it has them)."""
    if segment != "all":
        assert segment_of is not None
        frame = frame[frame["query_id"].map(segment_of).to_numpy() == segment]  # an index lookup, not a loop
    union = np.array(sorted(set(frame["query_id"].tolist())), dtype=object)
    values, evaluated = {}, {}
    for system in systems:
        mine = frame[frame["system"] == system]
        at = np.searchsorted(union, mine["query_id"].to_numpy(dtype=object))
        grid_values = np.full((len(measures), union.size), np.nan)
        grid_values[:, at] = mine[columns].to_numpy(dtype=np.float64).T
        present = np.zeros(union.size, dtype=bool)
        present[at] = True
        values[system], evaluated[system] = grid_values, present
    return union, values, evaluated


def _scan_part(frame: Any, segments: list[str], segment_of: Any, systems: list[str], pairs: list[tuple[str, str]],
               measures: tuple[Measure, ...], columns: list[str]) -> dict[str, Any]:  # fmt: skip
    """Pass 1 on one partition, for every segment: the paired scan, both sides' exact totals, the NaN dropped and
    found; with three systems or more, the ANOVA's scan too."""
    out = {}
    for segment in segments:
        union, values, evaluated = _arrays(frame, segment, segment_of, systems, measures, columns)
        arrays = block_arrays(union, values, evaluated, pairs, measures)
        # both sides' means as aggregate_values makes them here, from scans that add up
        totals = [[ValuesScan.of(m, kept(m, side[i][arrays.mask[i]]), mean=False) for i, (_, m) in enumerate(arrays.specs)]
                  for side in (arrays.side_a, arrays.side_b)]  # fmt: skip
        group = None
        if len(systems) >= 3:
            _, data, defined = group_arrays(union, values, evaluated, systems, measures)
            group = group_stats.scan(data, defined)
        out[segment] = (paired.scan(arrays.diffs, arrays.mask), totals, arrays.dropped, arrays.nan, group)
    return out


def _partial_part(frame: Any, plans: dict[str, Any], segment_of: Any, dataset: str, seed: int, systems: list[str],
                  pairs: list[tuple[str, str]], measures: tuple[Measure, ...], columns: list[str]) -> dict[str, Any]:  # fmt: skip
    """Pass 2 on one partition, for every segment: the exact partial sums, draws keyed by query id."""
    out = {}
    for segment, (plan, group_plan) in plans.items():
        union, values, evaluated = _arrays(frame, segment, segment_of, systems, measures, columns)
        arrays = block_arrays(union, values, evaluated, pairs, measures)
        keys = keyed.query_keys(seed, (dataset, segment), union)
        group = None
        if group_plan is not None:
            queries, data, defined = group_arrays(union, values, evaluated, systems, measures)
            group_keys = keyed.query_keys(seed, tukey_identity(dataset, segment, systems), queries)
            group = group_stats.partial(data, group_keys, group_plan, defined)
        out[segment] = (paired.partial(arrays.diffs, keys, plan, arrays.mask), group)
    return out


def _partial_into(running: dict[str, Any] | None, frame: Any, *args: Any) -> dict[str, Any]:
    """A partition's partial sums (:func:`_partial_part`) added to a running sum (None: the first)."""
    mine = _partial_part(frame, *args)
    return mine if running is None else _add(running, mine)


def _add(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    return {segment: (a[segment][0] + b[segment][0], None if a[segment][1] is None else a[segment][1] + b[segment][1])
            for segment in a}  # fmt: skip


def _streamed_sum(client: Any, futures: list[Any]) -> Any:
    """The sum of the futures' values (the chains' running sums), added on the cluster two at a time as they finish
    (exact sums: any order gives the same)."""
    from distributed import as_completed

    finished = as_completed(futures)  # type: ignore[no-untyped-call]
    futures.clear()  # as_completed holds them until they are added: nothing else keeps a partial alive
    waiting = None
    for future in finished:
        if waiting is None:
            waiting = future
            continue
        finished.add(client.submit(_add, waiting, future, pure=False))  # type: ignore[no-untyped-call]
        waiting = None
    assert waiting is not None
    return waiting.result()


ATTEMPTS = 3  # comparisons the cluster cut short (a worker lost with what only it held) start over, this often at most


def tests_on_cluster(client: Any, dataset: str, runs: RemoteRuns, segments: list[str], systems: list[str],
                     pairs: list[tuple[str, str]], measures: tuple[Measure, ...],
                     settings: CompareSettings) -> dict[str, tuple[PairedBlock, GroupTested | None]]:  # fmt: skip
    """Every segment's paired block (and, with three systems or more, ANOVA and Tukey HSD) of one dataset, from the
    runs the cluster holds.

    A lost worker can take with it what Dask cannot recompute: the shuffled partitions and the running sums, whose
    inputs were released once used. Then the comparisons start over from the runs' values (which the cluster
    recomputes from the inputs' pieces, kept while the engine is open); every draw is keyed and every sum exact, so
    the values are those of an undisturbed run. After ATTEMPTS, one error that names the stage.
    """
    from concurrent.futures import CancelledError

    from distributed import KilledWorker

    for attempt in range(1, ATTEMPTS + 1):
        try:
            return _tests_once(client, dataset, runs, segments, systems, pairs, measures, settings)
        except (CancelledError, KilledWorker) as exc:
            if attempt == ATTEMPTS:
                raise HarnessError(
                    f"the Dask cluster lost workers during the comparisons on {dataset}, {ATTEMPTS} times: {exc}",
                    hint="give the workers more memory (or fewer, larger partitions), or check why they die "
                         "(the dashboard, the workers' logs)",
                ) from None  # fmt: skip
    raise AssertionError("unreachable")


def _tests_once(client: Any, dataset: str, runs: RemoteRuns, segments: list[str], systems: list[str],
                pairs: list[tuple[str, str]], measures: tuple[Measure, ...],
                settings: CompareSettings) -> dict[str, tuple[PairedBlock, GroupTested | None]]:  # fmt: skip
    import dask.dataframe as dd
    from dask.delayed import delayed

    columns = [f"m{runs.measures.index(m)}" for m in measures]
    meta = _stacked(None, "", columns)
    stacked = dd.from_delayed([delayed(_stacked)(piece, system, columns) for system in systems
                               for piece in runs.pieces[system]], meta=meta)  # fmt: skip
    # one row per system and query: far fewer rows than the runs had, so fewer partitions (at least one per worker)
    workers = max(1, len(client.scheduler_info().get("workers", {})))
    partitions = max(workers, math.ceil(runs.queries * len(systems) / ROWS_PER_PARTITION))
    parts = client.persist(stacked.shuffle(on="query_id", npartitions=partitions)).to_delayed()
    shared = runs.segment_of
    scans = client.gather(client.compute([delayed(_scan_part)(part, segments, shared, systems, pairs, measures, columns)
                                          for part in parts]))  # fmt: skip
    plans, sides = {}, {}
    for segment in segments:
        mine = [s[segment] for s in scans]
        found: dict[tuple[int, int, int], tuple[str, int]] = {}
        for *_, nan, _ in mine:
            for key, (query, count) in nan.items():
                first, total = found.get(key, (query, 0))
                found[key] = (min(first, query), total + count)
        if settings.nan == "error":
            raise_first_nan(dataset, segment, pairs, measures, found)
        whole = reduce(lambda a, b: a + b, [scan for scan, *_ in mine])
        group_plan = None
        if len(systems) >= 3:
            group_plan = group_stats.Plan.of(reduce(lambda a, b: a + b, [g for *_, g in mine]), settings.permutations)
        plans[segment] = (paired.Plan.of(whole, tests_of(settings), settings.permutations, settings.resamples), group_plan)
        totals = [[reduce(operator.add, [t[side][i] for _, t, *_ in mine]) for i in range(len(whole.n))] for side in (0, 1)]
        sides[segment] = (totals, sum(dropped for _, _, dropped, *_ in mine))
    # Each partition's partial sums are replicates x comparisons, whatever its rows: held all at once, many partitions
    # filled small workers (225 partitions of the demo paused 768 MiB workers). So they are added along a few chains,
    # each task adding its partition's partials to the chain's running sum: at most 2 sums a worker at a time.
    chains: list[Any] = [None] * (2 * workers)
    for number, part in enumerate(parts):
        link = number % len(chains)
        chains[link] = delayed(_partial_into)(chains[link], part, plans, shared, dataset, settings.seed, systems, pairs,
                                              measures, columns)  # fmt: skip
    whole_partials = _streamed_sum(client, client.compute([c for c in chains if c is not None]))
    out = {}
    for segment in segments:
        plan, group_plan = plans[segment]
        whole, group_whole = whole_partials[segment]
        tested = paired.finish(plan, whole)
        (totals_a, totals_b), dropped = sides[segment]
        specs = [((a, b), m) for a, b in pairs for m in measures]
        means = [np.array([t[i].aggregate(m) for i, (_, m) in enumerate(specs)]) for t in (totals_a, totals_b)]
        groups = None
        if group_plan is not None:
            m = len(systems)
            groups = GroupTested(group_stats.anova(group_plan, group_whole, m), group_stats.tukey(group_plan, group_whole, m),
                                 group_plan.scan.n)  # fmt: skip
        out[segment] = (PairedBlock(specs, tested, means[0], means[1], np.asarray(dropped, dtype=np.int64)), groups)
    return out
