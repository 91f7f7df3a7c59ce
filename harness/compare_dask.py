"""The paired comparisons on the Dask cluster: partitions' exact partial sums, added; no per-query table gathered.

The workers keep each run's per-query table (:mod:`harness.engine_dask`). Here those
tables are stacked (one row per system and query) and shuffled by query id, so every
system's values of a query meet in one partition. Each partition then runs the paired
tests' first passes on its own queries (:func:`harness.stats.paired.scan`, then
:func:`~harness.stats.paired.partial` with the plan made from every partition's scan), and
the client adds what the partitions send back (a few numbers per comparison and replicate)
and finishes. Since every draw is keyed by query id and every sum is exact, the
comparisons are those of one process, bit for bit, in any partitioning
(``tests/test_dask.py``, ``tests/stats/test_exact.py``).

Only the paired rows are computed here; the two-way ANOVA and Tukey HSD (three systems or
more) and the system measures still use the per-query values the client holds.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import reduce
from typing import Any

import numpy as np

from harness.comparison import CompareSettings, PairedBlock, block_arrays, raise_first_nan, tests_of
from harness.measures.spec import Measure
from harness.results import aggregate_from_total, aggregate_total
from harness.stats import grid, keyed, paired


@dataclass(frozen=True)
class RemoteRuns:
    """A dataset's runs as the cluster holds them: per system, the futures of its partitions' pieces, and the
    measures of their value columns (m0, m1, ...)."""

    pieces: dict[str, list[Any]]
    measures: tuple[Measure, ...]
    segment_of: dict[str, str] | None  # query id -> its segment, when the dataset has segments


def _stacked(piece: Any, system: str, columns: list[str]) -> Any:
    import pandas as pd

    if piece.table is None:
        return pd.DataFrame({"query_id": pd.Series([], dtype=object), "system": pd.Series([], dtype=object),
                             **{c: pd.Series([], dtype=np.float64) for c in columns}})  # fmt: skip
    out = pd.DataFrame({"query_id": pd.Series(piece.table["query_id"].to_numpy(dtype=object), dtype=object),
                        "system": pd.Series(np.full(len(piece.table), system, dtype=object), dtype=object)})
    for column in columns:
        out[column] = piece.table[column].to_numpy(dtype=np.float64)
    return out


def _arrays(frame: Any, segment: str, segment_of: Any, pairs: list[tuple[str, str]],
            measures: tuple[Measure, ...], columns: list[str]) -> tuple[np.ndarray, Any]:  # fmt: skip
    """(the partition's queries in the segment, sorted; their block arrays)."""
    if segment != "all":
        assert segment_of is not None
        frame = frame[frame["query_id"].map(segment_of).to_numpy() == segment]  # an index lookup, not a loop
    union = np.array(sorted(set(frame["query_id"].tolist())), dtype=object)
    values, evaluated = {}, {}
    for system in dict.fromkeys(s for pair in pairs for s in pair):
        mine = frame[frame["system"] == system]
        at = np.searchsorted(union, mine["query_id"].to_numpy(dtype=object))
        grid_values = np.full((len(measures), union.size), np.nan)
        grid_values[:, at] = mine[columns].to_numpy(dtype=np.float64).T
        present = np.zeros(union.size, dtype=bool)
        present[at] = True
        values[system], evaluated[system] = grid_values, present
    return union, block_arrays(union, values, evaluated, pairs, measures)


def _scan_part(frame: Any, segments: list[str], segment_of: Any, pairs: list[tuple[str, str]],
               measures: tuple[Measure, ...], columns: list[str]) -> dict[str, Any]:  # fmt: skip
    """Pass 1 on one partition, for every segment: the scan, both sides' exact totals, the NaN dropped and found."""
    out = {}
    for segment in segments:
        _, arrays = _arrays(frame, segment, segment_of, pairs, measures, columns)
        totals = [[aggregate_total(m, side[i][arrays.mask[i]]) for i, (_, m) in enumerate(arrays.specs)]
                  for side in (arrays.side_a, arrays.side_b)]  # fmt: skip
        out[segment] = (paired.scan(arrays.diffs, arrays.mask), totals, arrays.dropped, arrays.nan)
    return out


def _partial_part(frame: Any, plans: dict[str, paired.Plan], segment_of: Any, dataset: str, seed: int,
                  pairs: list[tuple[str, str]], measures: tuple[Measure, ...], columns: list[str]) -> dict[str, Any]:  # fmt: skip
    """Pass 2 on one partition, for every segment: the exact partial sums, draws keyed by query id."""
    out = {}
    for segment, plan in plans.items():
        union, arrays = _arrays(frame, segment, segment_of, pairs, measures, columns)
        keys = keyed.query_keys(seed, (dataset, segment), union)
        out[segment] = paired.partial(arrays.diffs, keys, plan, arrays.mask)
    return out


def _add(a: dict[str, paired.Partial], b: dict[str, paired.Partial]) -> dict[str, paired.Partial]:
    return {segment: a[segment] + b[segment] for segment in a}


def _tree_sum(client: Any, futures: list[Any]) -> Any:
    """The sum of the futures' values, added pairwise on the cluster (exact sums: any order gives the same)."""
    while len(futures) > 1:
        futures = [client.submit(_add, futures[i], futures[i + 1]) if i + 1 < len(futures) else futures[i]
                   for i in range(0, len(futures), 2)]  # fmt: skip
    return futures[0].result()


def paired_blocks_on_cluster(client: Any, dataset: str, runs: RemoteRuns, segments: list[str],
                             pairs: list[tuple[str, str]], measures: tuple[Measure, ...],
                             settings: CompareSettings) -> dict[str, PairedBlock]:  # fmt: skip
    """Every segment's paired block of one dataset, from the runs the cluster holds."""
    import dask.dataframe as dd
    from dask.delayed import delayed

    systems = list(dict.fromkeys(s for pair in pairs for s in pair))
    columns = [f"m{runs.measures.index(m)}" for m in measures]
    meta = _stacked(type("Empty", (), {"table": None})(), "", columns)
    stacked = dd.from_delayed([delayed(_stacked)(piece, system, columns) for system in systems
                               for piece in runs.pieces[system]], meta=meta)  # fmt: skip
    partitions = max(len(p) for p in runs.pieces.values())  # as many as the runs were evaluated in
    parts = client.persist(stacked.shuffle(on="query_id", npartitions=partitions)).to_delayed()
    import pandas as pd

    # each query's segment, as a Series indexed by query id: mapped by index lookup on the workers, sent once
    shared = client.scatter(pd.Series(runs.segment_of, dtype=object), broadcast=True) if runs.segment_of else None
    scans = client.gather(client.compute([delayed(_scan_part)(part, segments, shared, pairs, measures, columns)
                                          for part in parts]))  # fmt: skip
    plans, sides = {}, {}
    for segment in segments:
        mine = [s[segment] for s in scans]
        found: dict[tuple[int, int, int], tuple[str, int]] = {}
        for *_, nan in mine:
            for key, (query, count) in nan.items():
                first, total = found.get(key, (query, 0))
                found[key] = (min(first, query), total + count)
        if settings.nan == "error":
            raise_first_nan(dataset, segment, pairs, measures, found)
        whole = reduce(lambda a, b: a + b, [scan for scan, *_ in mine])
        plans[segment] = paired.Plan.of(whole, tests_of(settings), settings.permutations, settings.resamples)
        totals = [[reduce(grid.add_totals, [t[side][i] for _, t, *_ in mine]) for i in range(len(whole.n))] for side in (0, 1)]
        sides[segment] = (totals, sum(dropped for _, _, dropped, _ in mine))
    partial_futures = client.compute([delayed(_partial_part)(part, plans, shared, dataset, settings.seed, pairs, measures,
                                                             columns) for part in parts])  # fmt: skip
    whole_partials = _tree_sum(client, partial_futures)
    out = {}
    for segment in segments:
        tested = paired.finish(plans[segment], whole_partials[segment])
        (totals_a, totals_b), dropped = sides[segment]
        specs = [((a, b), m) for a, b in pairs for m in measures]
        n = tested.n.tolist()
        means = [np.array([aggregate_from_total(m, t[i], n[i]) for i, (_, m) in enumerate(specs)]) for t in (totals_a, totals_b)]
        out[segment] = PairedBlock(specs, tested, means[0], means[1], np.asarray(dropped, dtype=np.int64))
    return out
