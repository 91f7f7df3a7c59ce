"""Frozen result types: per-query values and their aggregates."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache, cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from harness.kernels.beyond import recommendations
from harness.measures.parse import parse_measure
from harness.measures.registry import REGISTRY
from harness.measures.spec import Measure, deepest_cutoff
from harness.stats import grid
from harness.stats.grid import add_totals, float_total, total_over

if TYPE_CHECKING:
    import pandas as pd

    from harness.evaluation.labels import LabelAgreement
    from harness.kernels._segments import RankedLists

MIN_GEO_MEAN = 0.00001  # trec_eval.h: the floor of a value in a geometric mean


@dataclass(frozen=True, eq=False)
class PerQuery:
    """One run's values: ``values[i, j]`` is measure j on query i.

    Attributes
    ----------
    run : str
        The run's name.
    query_ids : numpy array of str
        The queries, in trec_eval's order (byte order of the ids).
    measures : tuple of Measure
        The measures, in the order asked.
    values : numpy array of float64
        Queries x measures.
    in_run : numpy array of bool
        Which queries the run retrieved anything for (the others are zero-filled).
    evaluated : numpy array of bool, optional
        ``evaluated[i, j]``: whether query i is among measure j's queries, when measures were evaluated under
        conventions of their own (a profile's tool counts other users for some measures: :func:`joined`); NaN
        where it is not. None: every query for every measure.

    Examples
    --------
    >>> from harness import evaluate
    >>> table = evaluate({"q1": {"a": 1}, "q2": {"b": 1}}, {"q1": {"a": 1.0, "b": 0.5}, "q2": {"a": 1.0}}, ["RR", "P@1"])
    >>> table.query_ids.tolist(), [str(m) for m in table.measures], table.values.tolist()
    (['q1', 'q2'], ['RR', 'P@1'], [[1.0, 1.0], [0.0, 0.0]])
    """

    run: str
    query_ids: np.ndarray
    measures: tuple[Measure, ...]
    values: np.ndarray
    in_run: np.ndarray
    evaluated: np.ndarray | None = None

    def rows_of(self, queries: np.ndarray) -> np.ndarray:
        """The row of each of ``queries`` (ids the table holds) in the table.

        >>> PerQuery("r", np.array(["q2", "q1"], dtype=object), (), np.zeros((2, 0)), np.ones(2, bool)).rows_of(
        ...     np.array(["q1", "q2", "q1"], dtype=object)).tolist()
        [1, 0, 1]
        """
        ids, order = self._sorted_ids
        return order[np.searchsorted(ids, np.asarray(queries).astype(str))]

    @cached_property
    def _sorted_ids(self) -> tuple[np.ndarray, np.ndarray]:
        """(the ids sorted, each one's row): found once, as every comparison, segment and guard looks rows up."""
        ids = self.id_text
        order = np.argsort(ids)
        return ids[order], order

    @cached_property
    def id_text(self) -> np.ndarray:
        """The ids as numpy text (``query_ids.astype(str)``, read-only), made once: a version's tests ask for them
        for every measure and segment."""
        ids = self.query_ids.astype(str)
        ids.setflags(write=False)
        return ids

    def segment_labels(self, segments: Mapping[str, str]) -> np.ndarray:
        """Each query's segment by ``segments`` (query id -> segment; None where it names none), looked up again only
        for a mapping whose content differs from the last one's (a copy of which is kept): a version's tests ask with
        the same mapping for every measure and segment, and a mapping changed in place since is never taken for its
        old self.

        >>> t = PerQuery("a", np.array(["u1", "u2"], dtype=object), (), np.zeros((2, 0)), np.ones(2, dtype=bool))
        >>> t.segment_labels({"u1": "new"}).tolist()
        ['new', None]
        """
        last = self._segment_labels
        if not last or last[0] != segments:
            labels = np.array([segments.get(q) for q in self.id_text.tolist()], dtype=object)
            labels.setflags(write=False)
            last[:] = [dict(segments), labels]
        return last[1]

    @cached_property
    def _segment_labels(self) -> list[Any]:
        return []

    @cached_property
    def ascending(self) -> bool:
        """Whether the ids are strictly ascending by code point (UTF-8's byte order, trec_eval's): checked, not assumed,
        as it lets :func:`same_queries` read a union or an intersection of two tables by position."""
        ids = self.query_ids
        return bool(ids.size < 2 or np.all(ids[1:] > ids[:-1]))

    def queries_of(self, j: int) -> np.ndarray:
        """Which queries measure j is evaluated on (a mask over ``query_ids``)."""
        return np.ones(len(self.query_ids), dtype=bool) if self.evaluated is None else self.evaluated[:, j]

    def __repr__(self) -> str:
        names = ", ".join(str(m) for m in self.measures[:4]) + (", ..." if len(self.measures) > 4 else "")
        return f"PerQuery({self.run!r}: {len(self.query_ids)} queries x {len(self.measures)} measures: {names})"

    def _repr_html_(self) -> str:
        """A notebook's view: the aggregate of each measure, then the first queries' values as a table."""
        from html import escape

        means = "".join(f"<th>{escape(str(m))}</th>" for m in self.measures)
        values = "".join(
            f"<td>{aggregate_values(m, self.values[self.queries_of(j), j]):.4f}</td>" for j, m in enumerate(self.measures)
        )
        head = (
            f"<p><b>{escape(self.run)}</b>: {len(self.query_ids)} queries x {len(self.measures)} measures</p>"
            f"<table><thead><tr><th></th>{means}</tr></thead><tbody><tr><th>aggregate</th>{values}</tr></tbody>"
            "</table>"
        )
        return head + str(self.to_frame(wide=True).head(10).to_html(index=False, float_format="{:.4f}".format))

    def column(self, measure: Measure | str) -> np.ndarray:
        if isinstance(measure, str):
            measure = parse_measure(measure)
        return self.values[:, self.measures.index(measure)]

    def to_frame(self, wide: bool = False) -> pd.DataFrame:
        """Tidy table: ``run, query_id, measure, value`` (or one column per measure)."""
        import pandas as pd

        if wide:
            frame = pd.DataFrame(self.values, columns=[str(m) for m in self.measures])
            frame.insert(0, "query_id", self.query_ids.astype(str))
            frame.insert(0, "run", self.run)
            return frame
        n_q, n_m = self.values.shape
        frame = pd.DataFrame(
            {
                "run": np.full(n_q * n_m, self.run, dtype=object),
                "query_id": np.repeat(self.query_ids.astype(str), n_m),
                "measure": np.tile(np.array([str(m) for m in self.measures], dtype=object), n_q),
                "value": self.values.reshape(-1),
            }
        )
        return frame if self.evaluated is None else frame[self.evaluated.reshape(-1)].reset_index(drop=True)


def same_queries(a: PerQuery, b: PerQuery) -> bool:
    """Whether two tables hold the same queries in the same ascending order: then the sorted union of their queries,
    and their intersection, are either one's ids, and each query's row is the same in both (no search by id).

    >>> ids = np.array(["u1", "u2"], dtype=object)
    >>> one = PerQuery("a", ids, (), np.zeros((2, 0)), np.ones(2, bool))
    >>> same_queries(one, PerQuery("b", ids.copy(), (), np.zeros((2, 0)), np.ones(2, bool)))
    True
    >>> same_queries(one, PerQuery("b", ids[::-1].copy(), (), np.zeros((2, 0)), np.ones(2, bool)))
    False
    """
    return a.ascending and (a.query_ids is b.query_ids or np.array_equal(a.query_ids, b.query_ids))


def joined(run: str, tables: list[PerQuery], measures: tuple[Measure, ...]) -> PerQuery:
    """One run's tables of measures evaluated apart (each under its own conventions), as one table over the union of
    their queries, with each measure's own queries (``evaluated``): the tables' measures, in the order of ``measures``
    (a measure no table has, one value per run, has no column).

    >>> p10, arp10, both_in_run = (Measure("P", cutoff=10),), (Measure("ARP", cutoff=10),), np.array([True, True])
    >>> a = PerQuery("r", np.array(["q1", "q2"], dtype=object), p10, np.array([[0.25], [0.5]]), both_in_run)
    >>> b = PerQuery("r", np.array(["q0", "q2"], dtype=object), arp10, np.array([[3.0], [4.0]]), both_in_run)
    >>> both = joined("r", [a, b], arp10 + p10)
    >>> both.query_ids.tolist(), both.evaluated.tolist()
    (['q0', 'q1', 'q2'], [[True, False], [False, True], [True, True]])
    >>> aggregate(both).to_dict()
    {'ARP@10': 3.5, 'P@10': 0.375}
    """
    measures = tuple(m for m in measures if any(m in table.measures for table in tables))
    union = np.array(sorted({q for table in tables for q in table.query_ids.tolist()}), dtype=object)
    values = np.full((union.size, len(measures)), np.nan)
    evaluated = np.zeros((union.size, len(measures)), dtype=bool)
    in_run = np.zeros(union.size, dtype=bool)
    position = {m: j for j, m in enumerate(measures)}
    for table in tables:
        rows = np.searchsorted(union, table.query_ids) if union.size else np.zeros(0, dtype=np.int64)
        in_run[rows] |= table.in_run
        for k, measure in enumerate(table.measures):
            values[rows, position[measure]] = table.values[:, k]
            evaluated[rows, position[measure]] = table.queries_of(k)
    return PerQuery(run, union, measures, values, in_run, None if evaluated.all() else evaluated)


def joined_result(parts: tuple[RunResult, ...], measures: tuple[Measure, ...]) -> RunResult:
    """One run's results under each group's conventions (:func:`joined`) as one: its diagnostics those of the first
    part (the experiment's own conventions), its lists those of the part with its system measures (one run gathers
    them under one set of conventions), and its long tail that of the first part that counts one."""
    first = parts[0]
    per_query = joined(first.per_query.run, [p.per_query for p in parts], measures)
    segment_of = {q: g for p in parts for q, g in zip(p.per_query.query_ids.tolist(), p.segments.tolist(), strict=True)}
    segments = np.array([segment_of[q] for q in per_query.query_ids.tolist()], dtype=object)
    system = next((p for p in parts if p.system_measures), first)
    tail = next((p for p in parts if p.item_counts is not None), first)
    return replace(
        first,
        per_query=per_query,
        segments=segments,
        lists=system.lists,
        system_measures=system.system_measures,
        item_counts=tail.item_counts,
        item_counts_cutoff=tail.item_counts_cutoff,
    )


def aggregate_values(measure: Measure, values: np.ndarray) -> float:
    """Aggregate one measure's per-query values the way its registry entry says.

    Sums are exact and rounded once (the mean is the correctly rounded mean), so an aggregate
    never depends on the queries' order, nor on how they are split into parts.

    >>> aggregate_values(Measure("AP"), np.array([0.5, 0.25]))
    0.375
    >>> round(aggregate_values(Measure("GMAP"), np.array([0.5, 0.0])), 6)  # floor 1e-5
    0.002236
    """
    return ValuesScan.of(measure, kept(measure, values), mean=False).aggregate(measure)


def kept(measure: Measure, values: np.ndarray) -> np.ndarray:
    """The values a measure aggregates: beyond-accuracy measures leave out the users they are undefined for (NaN)."""
    return values[~np.isnan(values)] if REGISTRY.definition(measure).undefined_skipped else values


def aggregate_total(measure: Measure, values: np.ndarray) -> tuple[int, int]:
    """The exact sum an aggregate divides (values, or their floored logs for a geometric mean), as
    :func:`harness.stats.grid.float_total`; the totals of parts add up (``grid.add_totals``)."""

    if REGISTRY.definition(measure).aggregate == "gmean":
        return float_total(np.log(np.maximum(values, MIN_GEO_MEAN)))
    return float_total(values)


def aggregate_from_total(measure: Measure, total: tuple[int, int], n: int) -> float:
    """A measure's aggregate over n values from their exact total: rounded once."""

    kind = REGISTRY.definition(measure).aggregate
    if n == 0:
        return float("nan") if REGISTRY.definition(measure).undefined_skipped else 0.0
    if kind == "count":
        return float(n)
    if kind == "sum":
        return total_over(total, 1)
    if kind == "gmean":
        return float(np.exp(total_over(total, n)))
    return total_over(total, n)


@dataclass(frozen=True)
class ValuesScan:
    """The first pass of a summary row over some of its values (those :func:`kept`): a count, exact totals and the
    largest magnitude. Scans of parts add up (``+``) to the whole's, in any partitioning and order.

    >>> whole = ValuesScan.of(Measure("AP"), np.array([0.5, 0.25, 0.0]))
    >>> parts = ValuesScan.of(Measure("AP"), np.array([0.0, 0.5])) + ValuesScan.of(Measure("AP"), np.array([0.25]))
    >>> whole == parts, whole.aggregate(Measure("AP"))
    (True, 0.25)
    """

    n: int = 0
    total: tuple[int, int] = (0, 0)  # the aggregate's (aggregate_total), over the finite values
    value_total: tuple[int, int] | None = (0, 0)  # the values' (for the mean), over the finite values; None: not asked
    largest: float = 0.0  # the largest finite |value|
    nan: bool = False  # non-finite values seen: the aggregate and the mean are then what float arithmetic gives
    up: bool = False  # +inf
    down: bool = False  # -inf

    @classmethod
    def of(cls, measure: Measure, values: np.ndarray, mean: bool = True) -> ValuesScan:
        """The scan of ``values``; ``mean=False``: without the values' own total (the aggregate only)."""

        n = int(values.size)
        nan = up = down = False
        finite = np.isfinite(values)
        if not finite.all():
            nan, up, down = bool(np.isnan(values).any()), bool((values == np.inf).any()), bool((values == -np.inf).any())
            values = values[finite]
        total = aggregate_total(measure, values)
        value_total: tuple[int, int] | None = total
        if REGISTRY.definition(measure).aggregate == "gmean":
            value_total = float_total(values) if mean else None
        largest = float(np.abs(values).max()) if values.size else 0.0
        return cls(n, total, value_total, largest, nan, up, down)

    def __add__(self, other: ValuesScan) -> ValuesScan:
        mine, theirs = self.value_total, other.value_total
        return ValuesScan(
            self.n + other.n,
            add_totals(self.total, other.total),
            None if mine is None or theirs is None else add_totals(mine, theirs),
            max(self.largest, other.largest),
            self.nan or other.nan,
            self.up or other.up,
            self.down or other.down,
        )

    @property
    def finite(self) -> bool:
        return not (self.nan or self.up or self.down)

    def _float_arithmetic(self) -> float:
        """What float sums give with non-finite values: NaN with a NaN or both infinities, else the infinity."""
        return float("nan") if self.nan or (self.up and self.down) else (float("inf") if self.up else float("-inf"))

    def aggregate(self, measure: Measure) -> float:
        """The measure's aggregate (:func:`aggregate_from_total`)."""
        if self.n and not self.finite:
            return self._float_arithmetic()
        return aggregate_from_total(measure, self.total, self.n)

    def exponent(self) -> int:
        """The grid the second pass sums on (:func:`grid_sums`): that of the largest magnitude."""

        return int(grid.exponent(np.array([self.largest]))[0])

    def mean_ci(self, sums: tuple[int, int], confidence: float = 0.95) -> tuple[float, float, float]:
        """(mean, low, high) from this scan and the second pass's (sum, sum of squares) on its grid
        (:func:`grid_sums`): Student's t interval of the mean; NaN bounds below 2 values.

        >>> values = np.array([0.2, 0.4, 0.6])
        >>> scan = ValuesScan.of(Measure("AP"), values)
        >>> [round(v, 4) for v in scan.mean_ci(grid_sums(values, scan.exponent()))]
        [0.4, -0.0968, 0.8968]
        """

        nan = float("nan")
        if self.n == 0:
            return nan, nan, nan
        if not self.finite:
            return self._float_arithmetic(), nan, nan
        assert self.value_total is not None, "a scan made with mean=False"
        mean = grid.total_over(self.value_total, self.n)
        if self.n < 2:
            return mean, nan, nan
        from scipy import special

        n, (s1, s2) = self.n, sums
        variance = (n * s2 - s1 * s1) / (n * (n - 1)) * float(np.ldexp(1.0, 2 * (self.exponent() - grid.PRECISION)))
        half = float(special.stdtrit(n - 1, 0.5 + confidence / 2) * np.sqrt(variance / n))
        return mean, mean - half, mean + half


def grid_sums(values: np.ndarray, e: int) -> tuple[int, int]:
    """The second pass of a summary row: (sum, sum of squares) of the finite values on the grid 2^(e - 52), exact.
    Those of parts add up, element by element."""

    values = values[np.isfinite(values)]
    if not values.size:
        return 0, 0
    first, second = grid.integer_sums(grid.on_grid(values[None, :], np.array([e], dtype=np.int64)))
    return int(first[0]), int(second[0])


def summary_row(measure: Measure, scan: ValuesScan, sums: tuple[int, int]) -> dict[str, object]:
    """A summary row's numbers: ``value`` (the measure's aggregate), ``mean`` with its 95% t-interval, ``n_queries``."""
    mean, low, high = scan.mean_ci(sums)
    return {
        "measure": str(measure),
        "value": scan.aggregate(measure),
        "mean": mean,
        "ci_low": low,
        "ci_high": high,
        "n_queries": scan.n,
    }


class Aggregates(dict[Measure, float]):
    """One number per measure, indexable by the Measure or by its name as written.

    >>> values = Aggregates({Measure("AP"): 0.5})
    >>> values["AP"], values[Measure("AP")], "AP" in values
    (0.5, 0.5, True)
    """

    @staticmethod
    def _key(key: object) -> object:
        if isinstance(key, str):
            return parse_measure(key)
        return key

    def __getitem__(self, key: object) -> float:
        return super().__getitem__(self._key(key))  # type: ignore[index]

    def __contains__(self, key: object) -> bool:
        return super().__contains__(self._key(key))

    def get(self, key: object, default: float | None = None) -> float | None:  # type: ignore[override,unused-ignore]
        return super().get(self._key(key), default)  # type: ignore[call-overload]

    def to_dict(self) -> dict[str, float]:
        """Plain ``{measure name: value}``."""
        return {str(m): v for m, v in self.items()}

    def __repr__(self) -> str:
        """Shown by name, as it is indexed.

        >>> Aggregates({Measure("AP"): 0.5, Measure("nDCG", (), 10): 0.25})
        {'AP': 0.5, 'nDCG@10': 0.25}
        """
        return repr(self.to_dict())


def aggregate(per_query: PerQuery) -> Aggregates:
    """The summary of a run: one number per measure (its mean, sum or geometric mean, as the registry says).

    Parameters
    ----------
    per_query : PerQuery
        A run's per-query table (:func:`harness.evaluate`).

    Returns
    -------
    Aggregates
        A mapping of measure to value, indexed by a measure or its name; exact sums rounded once, so the value
        never depends on the queries' order or on how they were split.

    Examples
    --------
    >>> from harness import evaluate
    >>> table = evaluate({"q1": {"a": 1}, "q2": {"b": 1}}, {"q1": {"a": 1.0, "b": 0.5}, "q2": {"a": 1.0}}, ["RR"])
    >>> aggregate(table)["RR"]
    0.5
    """
    return Aggregates(
        {m: aggregate_values(m, per_query.values[per_query.queries_of(j), j]) for j, m in enumerate(per_query.measures)}
    )


@dataclass(frozen=True, eq=False)
class RunResult:
    """One system on one dataset: its per-query values, segments and data diagnostics."""

    dataset: str
    system: str
    per_query: PerQuery
    segments: np.ndarray  # segment name per query ('' when the query has none)
    diagnostics: dict[str, object]
    # system measures (coverage, entropy, Gini) are functions of the lists as a whole: kept to resample users
    lists: RankedLists | None = None  # the ranked lists with their items, in per_query's query order
    system_measures: tuple[Measure, ...] = ()
    item_counts: np.ndarray | None = None  # recommendations of each recommended item, descending (the long tail)
    item_counts_cutoff: int | None = None  # the lists' cutoff they were counted at (None: whole lists)
    seed: str = ""  # which of the system's runs on the dataset (its training seed): "" for its only run
    # a dataset with a model judge (judge:): per_query holds the judge's values of every query, ``people`` people's
    # values of the queries they judged, ``strata`` each of per_query's queries' stratum (a stratified sample)
    people: PerQuery | None = None
    strata: np.ndarray | None = None
    judge: str = ""  # the judge's name
    labels: LabelAgreement | None = None  # people's and the judge's labels on the documents both judged (the dataset's)

    @property
    def measures(self) -> tuple[Measure, ...]:
        return self.per_query.measures

    @property
    def resamples_lists(self) -> bool:
        """Its system measures are resampled over its lists (not when reused from an earlier evaluation)."""
        return bool(self.system_measures) and self.lists is not None

    def segment_names(self) -> list[str]:
        """'all', then each segment that has queries, sorted."""
        return [name for name, _ in self._segment_masks]

    def segment_masks(self) -> list[tuple[str, np.ndarray]]:
        """('all', every query), then (segment, its queries) for each segment, sorted by name (read-only masks)."""
        return list(self._segment_masks)

    @cached_property
    def _segment_masks(self) -> tuple[tuple[str, np.ndarray], ...]:
        # found once per run: the comparisons, the gate and the report ask for them per segment and system, and each
        # asking compared 200,000 names as Python strings (1.5 s of a run's comparisons at that size)
        segments = self.segments
        names = ["all", *sorted(set(segments.tolist()) - {""})]
        masks = tuple((name, np.ones(len(segments), dtype=bool) if name == "all" else segments == name) for name in names)
        for _, mask in masks:
            mask.setflags(write=False)
        return masks


@dataclass(frozen=True)
class EvaluatedRun:
    """One run of ``harness eval`` / ``harness compare``, as an engine returns it.

    ``label`` names it in the output (``NAME=`` or the file name), ``given`` is the ``NAME=``
    given, if any, and ``name`` the run's own name (a TREC run's tag). ``aggregates`` holds every
    measure's value for the run: the aggregate of the per-query ones, and the system measures'
    (``system_measures``) single values. ``relstrings``: trec_eval's relstring of each query,
    per length asked for (None for a query only a measure under conventions of its own counts).
    """

    label: str
    given: str | None
    name: str
    judged_queries_missing: int
    per_query: PerQuery
    aggregates: Mapping[Measure, float]
    system_measures: tuple[Measure, ...] = ()
    relstrings: Mapping[int, Sequence[str | None]] = field(default_factory=dict)  # None: not a query of its own


def per_query_rows(
    dataset: str,
    system: str,
    query_ids: np.ndarray,
    segments: np.ndarray,
    measures: tuple[Measure, ...],
    values: np.ndarray,
    seed: str | None = None,
    evaluated: np.ndarray | None = None,
) -> pd.DataFrame:
    """The results' per-query table of one run (or part of it): ``dataset, system, query_id, segment, measure, value``,
    one row per query and measure, in the queries' order, then the measures'; with ``seed`` (a system with several
    runs in the experiment), a ``seed`` column after ``system``: which run. ``evaluated``: each measure's own queries
    (:attr:`PerQuery.evaluated`); the others have no row.

    >>> per_query_rows("d", "s", np.array(["q1"], dtype=object), np.array([""], dtype=object), (Measure("AP"),),
    ...                np.array([[0.5]])).values.tolist()
    [['d', 's', 'q1', '', 'AP', 0.5]]
    """
    import pandas as pd

    n_m = values.shape[1]
    ids = query_ids.astype(str).astype(object)
    text = _text_columns(dataset, system, seed, ids, segments, [str(m) for m in measures], n_m)
    frame = pd.DataFrame({**text, "value": values.reshape(-1)})
    return frame if evaluated is None else frame[evaluated.reshape(-1)].reset_index(drop=True)


def _text_columns(
    dataset: str, system: str, seed: str | None, ids: np.ndarray, segments: np.ndarray, measures: list[str], n_m: int
) -> dict[str, object]:
    """:func:`per_query_rows`' text columns, each value repeated as the rows need it. Where pandas keeps text in Arrow
    (pandas 3's ``str``), they are built in Arrow from each distinct value, giving the same columns as Python strings
    would (0.2 s for 1M rows where the strings took 0.8 s); elsewhere as object arrays, as pandas then keeps them."""
    import pandas as pd

    rows = ids.size * n_m
    if not _arrow_text():
        return {
            "dataset": np.full(rows, dataset, dtype=object),
            "system": np.full(rows, system, dtype=object),
            **({} if seed is None else {"seed": np.full(rows, seed, dtype=object)}),
            "query_id": np.repeat(ids, n_m),
            "segment": np.repeat(segments, n_m),
            "measure": np.tile(np.array(measures, dtype=object), ids.size),
        }
    import pyarrow as pa

    def repeated(values: list[str], at: np.ndarray) -> object:
        text = pa.DictionaryArray.from_arrays(pa.array(at, pa.int32()), pa.array(values, pa.large_string()))
        return pd.array(text.dictionary_decode(), dtype=_arrow_text())

    codes, names = pd.factorize(segments)
    return {
        "dataset": repeated([dataset], np.zeros(rows, np.int32)),
        "system": repeated([system], np.zeros(rows, np.int32)),
        **({} if seed is None else {"seed": repeated([seed], np.zeros(rows, np.int32))}),
        "query_id": repeated(ids.tolist(), np.repeat(np.arange(ids.size, dtype=np.int32), n_m)),
        "segment": repeated([str(name) for name in names], np.repeat(codes.astype(np.int32), n_m)),
        "measure": repeated(measures, np.tile(np.arange(n_m, dtype=np.int32), ids.size)),
    }


@cache
def _arrow_text() -> object:
    """The dtype pandas gives Python strings where it keeps them in Arrow's large strings (pandas 3's ``str``), None
    where it keeps them otherwise (pandas 2's objects)."""
    import pandas as pd
    import pyarrow as pa

    inferred = pd.Series(np.array(["a"], dtype=object))
    kept = getattr(inferred.array, "_pa_array", None)  # pandas' Arrow-backed arrays' storage
    return (
        inferred.dtype
        if isinstance(inferred.dtype, pd.StringDtype) and kept is not None and kept.type == pa.large_string()
        else None
    )


def long_tail_cutoff(measures: tuple[Measure, ...]) -> int | None:
    """The cutoff the long tail is counted at: the largest of the beyond-accuracy measures' (None: whole lists)."""
    return deepest_cutoff(m for m in measures if REGISTRY.definition(m).beyond_accuracy)


def recommendation_counts(lists: RankedLists, cutoff: int | None) -> np.ndarray:
    """How often each recommended item is recommended within ``cutoff``, descending (the long tail)."""
    counts = recommendations(lists, cutoff)
    return np.sort(counts[counts > 0])[::-1]


def group_rows(result: RunResult) -> list[dict[str, object]]:
    """The run's value of each group behind its system measures that have groups (REO's P_g per item group, each
    group's share of exposure, ...), for the report's group charts. ExposureShare gives every category of its column
    at once: one chart for all its categories, named without ``category``.

    >>> from harness import Catalog, Evaluator, Interactions, Qrels, Run
    >>> import pandas as pd
    >>> items = Catalog.from_frame(pd.DataFrame({"item": ["a", "b"], "maker": ["acme", "zeta"]}))
    >>> evaluator = Evaluator(Qrels.from_records([("u", "a", 1)]), ["ExposureShare(group=maker,category=acme)@2"],
    ...                       train=Interactions.from_records([("v", "a")]), items=items)
    >>> lists = evaluator.item_lists(evaluator.align(Run.from_records([("u", "b", 2.0), ("u", "a", 1.0)])))
    >>> result = RunResult("d", "s", None, None, {}, lists, evaluator.system_measures)
    >>> [(r["measure"], r["group"], round(r["value"], 4)) for r in group_rows(result)]   # 0.85 and 1 of 1.85
    [("ExposureShare(group='maker')@2", 'acme', 0.4595), ("ExposureShare(group='maker')@2", 'zeta', 0.5405)]
    """
    if result.lists is None:
        return []
    rows: list[dict[str, object]] = []
    seen = set()
    for measure in result.system_measures:
        named = REGISTRY.definition(measure).group_values(result.lists, measure)
        key = replace(measure, params=tuple(p for p in measure.params if p[0] != "category"))
        if named is None or key in seen:
            continue
        seen.add(key)
        by = "" if measure.param("group") is None else str(measure.param("group"))  # the catalogue column, if any
        rows += [
            {
                "dataset": result.dataset,
                "system": result.system,
                "measure": str(key),
                "by": by,
                "group": group,
                "value": float(value),
            }
            for group, value in zip(*named, strict=True)
        ]
    return rows


def long_tail_rows(result: RunResult, points: int = 200) -> list[dict[str, object]]:
    """The recommendation-count curve of a run, at most ``points`` ranks (log-spaced, first and last kept)."""
    if result.item_counts is None or result.item_counts.size == 0:
        return []
    counts = result.item_counts
    ranks = np.unique(np.geomspace(1, counts.size, num=min(points, counts.size)).round().astype(np.int64))
    cumulative = np.cumsum(counts) / counts.sum()
    return [
        {
            "dataset": result.dataset,
            "system": result.system,
            "cutoff": result.item_counts_cutoff or 0,
            "rank": int(r),
            "recommendations": float(counts[r - 1]),
            "cumulative_share": float(cumulative[r - 1]),
            "items_recommended": int(counts.size),
        }
        for r in ranks.tolist()
    ]


def summarize(result: RunResult) -> list[dict[str, object]]:
    """Summary rows of one run: every measure over all queries and within each segment.

    ``value`` is the measure's own aggregate (mean, sum or geometric mean); ``mean``
    and its 95% interval describe the per-query values whatever the aggregate.
    """
    rows: list[dict[str, object]] = []
    for segment, mask in result.segment_masks():
        for j, measure in enumerate(result.per_query.measures):
            values = kept(measure, result.per_query.values[mask & result.per_query.queries_of(j), j])
            scan = ValuesScan.of(measure, values)
            rows.append(
                {
                    "dataset": result.dataset,
                    "system": result.system,
                    "segment": segment,
                    **summary_row(measure, scan, grid_sums(values, scan.exponent())),
                }
            )
    return rows
