"""Why a number differs from another tool's: each peer's value on the user's own data, and the conventions behind it.

:func:`explain` evaluates a measure under every peer's conventions (:mod:`harness.measures.peers`)
and under each of those conventions alone, so a user sees which of them moves the number and for
how many queries. :func:`match` searches the space of conventions for the combinations that give a
number the user got elsewhere, nearest first.

>>> from harness.data.model import Qrels, Run
>>> qrels = Qrels.from_records([("q1", "a", 2), ("q1", "b", 1), ("q1", "c", 1), ("q2", "d", 1)])
>>> run = Run.from_records([("q1", "b", 1.0), ("q1", "a", 0.5), ("q1", "z", 0.2)])
>>> [(p.peer.name, round(p.value, 4)) for p in explain(qrels, run, ["nDCG@2"])[0].peers if p.value is not None][:5]
[('trec_eval', 0.4299), ('ir_measures', 0.4299), ('pytrec_eval', 0.8597), ('ranx', 0.4299), ('msrec', 0.5)]

q1's nDCG@2 is (1 + 2/log2 3) / (2 + 1/log2 3) = 0.8597; q2 is not in the run: 0 under trec_eval -c, left out
without -c. Microsoft Recommenders gains 1 per hit (1.0 for q1) and counts q2 as 0. Which settings give 1.0?

>>> matches = match(qrels, run, "nDCG@2", 1.0)
>>> matches[0].changes, sorted({m.profile for m in matches if m.profile})
({'queries': 'intersection', 'gain': 'binary'}, ['spark'])

Binary gains over the answered queries only: Spark's. And 0.5?

>>> matches = match(qrels, run, "nDCG@2", 0.5)
>>> matches[0].changes, sorted({m.profile for m in matches if m.profile})
({'gain': 'binary'}, ['mlflow', 'msrec', 'pyxclib', 'recbole'])
"""

from __future__ import annotations

import dataclasses
import itertools
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from harness.data._arrow import string_array
from harness.data.align import Aligned, alignment_conventions, evaluated_query_ids, kernel_settings
from harness.data.items import Catalog, Interactions, ItemContext
from harness.data.model import Intents, Qrels, Run
from harness.errors import MeasureError
from harness.evaluation.evaluator import Evaluator, as_qrels, as_run, builds_item_context
from harness.evaluation.results import aggregate_values
from harness.measures.conventions import (
    APDenominator,
    Conventions,
    GradedBelowLevel,
    IdealFrom,
    IPrecCut,
    NegativeLabels,
    Queries,
    Scores,
    ShortLists,
    Ties,
)
from harness.measures.parse import parse_measure
from harness.measures.peers import PEERS, Peer
from harness.measures.registry import REGISTRY
from harness.measures.spec import Measure
from harness.progress import SILENT, Progress

if TYPE_CHECKING:
    import pandas as pd

_KEPT_ALIGNMENTS = 2  # 20M rows aligned take about 1 GB: more kept at once cost memory, fewer realign more often
_CLOSE = 1e-12  # two values of one query closer than this are the same number (summation order, not a convention)
SYSTEM = "(the run)"  # the one "query" of a measure with one value per run (Coverage, Gini): affected or not, whole


@dataclass(frozen=True)
class Effect:
    """What one setting (``ties=input_order``), or a peer's whole set (``all``), does to the measure alone."""

    setting: str
    value: float
    delta: float  # value - harness's
    queries_affected: int | None  # queries whose value changes, enter or leave the mean; None: one value per run


@dataclass(frozen=True)
class PeerValue:
    """A peer's value of the measure on these files, or why harness cannot give it."""

    peer: Peer
    value: float | None
    differences: dict[str, object]  # its settings that are not harness's
    effects: tuple[Effect, ...]  # its whole set first, then each setting alone
    note: str  # why not reproduced, or what can still differ
    absent: bool = False  # the peer has no such measure at all (not a convention harness cannot follow)


@dataclass(frozen=True)
class Explanation:
    measure: Measure
    value: float  # harness's, under the conventions given
    queries: int  # the queries averaged over; 0 for a measure with one value per run
    peers: tuple[PeerValue, ...]

    def to_frame(self) -> pd.DataFrame:
        """One row per peer and setting: ``measure, peer, tool, setting, value, delta, queries_affected, note``."""
        import pandas as pd

        rows: list[dict[str, object]] = [
            {
                "measure": str(self.measure),
                "peer": "harness",
                "tool": "harness",
                "setting": "defaults",
                "value": self.value,
                "delta": 0.0,
                "queries_affected": 0,
                "note": "",
            }
        ]
        for p in self.peers:
            if p.value is None:
                rows.append(
                    {
                        "measure": str(self.measure),
                        "peer": p.peer.name,
                        "tool": p.peer.tool,
                        "setting": "all",
                        "value": None,
                        "delta": None,
                        "queries_affected": None,
                        "note": p.note,
                    }
                )
            for e in p.effects:
                rows.append(
                    {
                        "measure": str(self.measure),
                        "peer": p.peer.name,
                        "tool": p.peer.tool,
                        "setting": e.setting,
                        "value": e.value,
                        "delta": e.delta,
                        "queries_affected": e.queries_affected,
                        "note": p.note if e.setting == "all" else "",
                    }
                )
        return pd.DataFrame(rows)


@dataclass(frozen=True)
class Match:
    """One combination of settings and the value it gives; ``profile``: the peer whose settings these are, if any."""

    settings: dict[str, object]
    value: float
    distance: float
    profile: str | None
    changes: dict[str, object]  # the settings that are not harness's defaults: the fewer, the sooner it is listed


class _Values:
    """Per-query values under conventions. The run is aligned once per alignment (ties, universe, labels:
    :func:`~harness.data.align.alignment_conventions`) and read under each of the kernels' conventions (ideal, AP
    denominator, short lists, relevance level), as :func:`~harness.data.align.align` would have built them."""

    def __init__(
        self,
        qrels: Qrels | Intents,
        run: Run,
        measures: Iterable[Measure],
        keep_values: bool = True,
        context: Mapping[str, Any] | None = None,
    ) -> None:
        self.qrels, self.run = qrels, run
        self.context = dict(context or {})  # the Evaluator's train, items and user_groups, as harness eval reads them
        self.measures = tuple(dict.fromkeys(measures))
        self.keep_values = keep_values  # False: only the means are kept (match: a thousand settings x every query)
        # whether reading the scores as C floats can reorder anything: not when it makes no two scores of a query equal
        # that were not (rounding is monotone), so a search need not evaluate both precisions
        self.scores_matter = run.sample is not None or _equal_neighbours(run, np.float32) != _equal_neighbours(run, np.float64)
        self._means: dict[tuple[Conventions, Measure], float] = {}
        # over every query, or over some alone (keyed by them: those a tie rule or short lists read apart)
        self._union: OrderedDict[tuple[Conventions, tuple[str, ...]], tuple[Evaluator, Aligned]] = OrderedDict()
        self._tied_queries: dict[Scores, set[str]] = {}
        self._readings: dict[tuple[Conventions, Measure], Conventions] = {}
        self._apart_queries: dict[tuple[Conventions, bool, int | None], tuple[str, ...]] = {}
        self._positions: dict[Conventions, dict[str, int]] = {}  # each union's query ids' positions, by alignment
        self._union_values: dict[tuple[Conventions, Measure], tuple[np.ndarray, np.ndarray]] = {}  # their values
        self._universes: dict[tuple[Conventions, Queries, int | None], np.ndarray] = {}  # each universe's queries
        self._aligned: OrderedDict[Conventions, tuple[Evaluator, Aligned]] = OrderedDict()
        self._cache: dict[tuple[Conventions, Measure], tuple[np.ndarray, np.ndarray]] = {}

    def _evaluator(self, conventions: Conventions) -> tuple[Evaluator, Aligned]:
        key = alignment_conventions(conventions)
        if key not in self._aligned:
            averaged = key.ties is Ties.AVERAGE  # defined only for some measures: the others are not asked under it
            measures = [m for m in self.measures if not averaged or REGISTRY.definition(m).ties_average_ok]
            evaluator = Evaluator(self.qrels, measures, key, **self.context)
            self._aligned[key] = (evaluator, evaluator.align(self.run))
            if len(self._aligned) > _KEPT_ALIGNMENTS:  # a run's aligned lists are its size again: keep the latest few
                self._aligned.popitem(last=False)
        self._aligned.move_to_end(key)
        return self._aligned[key]

    def _reading(self, conventions: Conventions, measure: Measure) -> Conventions:
        if (conventions, measure) not in self._readings:  # a search asks for each of thousands of settings twice
            reading = _reading(conventions, measure)
            self._readings[conventions, measure] = (
                reading if self.scores_matter else dataclasses.replace(reading, scores=Conventions().scores)
            )
        return self._readings[conventions, measure]

    def get(self, conventions: Conventions, measure: Measure) -> tuple[np.ndarray, np.ndarray]:
        """(query ids, values) of ``measure``; conventions that cannot change it are not evaluated twice."""
        reading = self._reading(conventions, measure)
        if (reading, measure) in self._cache:
            return self._cache[reading, measure]
        evaluator, aligned = self._evaluator(reading)
        lists = dataclasses.replace(aligned.lists, **kernel_settings(reading))
        aligned = dataclasses.replace(aligned, lists=lists)
        definition = REGISTRY.definition(measure)
        if definition.is_system(measure):  # one value per run: the "queries" are the run, whole
            item_lists = evaluator.item_lists(aligned)
            value = float(definition.compute_system(item_lists, measure, np.ones((1, item_lists.n_queries)))[0])
            found = (np.array([SYSTEM], dtype=object), np.array([value]))
            self._means[reading, measure] = value
        else:
            per_query = evaluator.evaluate_aligned(self.run.name, aligned, only=[measure])
            found = (per_query.query_ids, per_query.values[:, 0])
            self._means[reading, measure] = aggregate_values(measure, found[1])
        if self.keep_values:
            self._cache[reading, measure] = found
        return found

    def mean(self, conventions: Conventions, measure: Measure) -> float:
        reading = self._reading(conventions, measure)
        if (reading, measure) not in self._means:
            shared = self._shared_mean(reading, measure)
            if shared is None:
                self.get(conventions, measure)
            else:
                self._means[reading, measure] = shared
        return self._means[reading, measure]

    def _shared_mean(self, reading: Conventions, measure: Measure) -> float | None:
        """The mean under ``reading`` from one evaluation over every query of the judgments and of the run, shared by
        the four ``queries`` conventions: a query's value is a function of its own rows, so a universe's mean is the
        mean of its queries' values there (exact sums: the same bits). None where that does not hold or is not
        worth it: a measure with one value per run, subtopic judgments, a stochastic run, items' context, a universe
        without queries."""
        definition = REGISTRY.definition(measure)
        if (
            isinstance(self.qrels, Intents)
            or self.run.sample is not None
            or definition.is_system(measure)
            or any(value is not None for value in self.context.values())
            or (reading.ties is Ties.AVERAGE and not definition.ties_average_ok)
        ):
            return None
        every = self._reading(dataclasses.replace(reading, queries=Queries.QRELS), measure)
        shared = self._shares_with(every, measure)
        if shared is not None and not self._apart(every, shared, measure):  # no query's value differs: one mean
            return self.mean(dataclasses.replace(reading, ties=shared.ties, short_lists=shared.short_lists), measure)
        key = alignment_conventions(every if shared is None else shared)  # the universe is the same under any tie rule
        evaluator, _ = self._union_aligned(key, measure)
        ids, values = self._every_values(every, measure) if shared is None else self._reshared(every, shared, measure)
        universe = (key, reading.queries, reading.relevance_level if reading.queries is Queries.RELEVANT else None)
        if universe not in self._universes:
            self._universes[universe] = self._universe(reading, evaluator, ids)
        inside = self._universes[universe]
        if not inside.any():
            return None  # the direct evaluation says what is wrong with an empty universe
        return aggregate_values(measure, values[inside])

    def _union_aligned(self, key: Conventions, measure: Measure, some: tuple[str, ...] = ()) -> tuple[Evaluator, Aligned]:
        """The run aligned under ``key`` over every query of the judgments and of the run, or over ``some`` alone
        (:meth:`_apart`)."""
        if (key, some) not in self._union:
            judged = set(pc.unique(pc.cast(self.qrels.query_id, pa.string())).to_pylist())
            queries = list(some) if some else sorted(judged | self._retrieved)
            evaluator = Evaluator(self.qrels, [measure], key, query_ids=queries, **self.context)
            self._union[key, some] = (evaluator, evaluator.align(self.run))
            if len(self._union) > _KEPT_ALIGNMENTS:
                self._union.popitem(last=False)
        self._union.move_to_end((key, some))
        return self._union[key, some]

    def _shares_with(self, every: Conventions, measure: Measure) -> Conventions | None:
        """The conventions whose values ``every``'s equal on every query but a few (:meth:`_apart`): ``every`` with
        harness's own tie rule, and with short lists padded at the measure's cutoff. A query without tied scores is
        ordered alike by every tie rule, and a list of at least k rows is cut at k alike under either rule for short
        lists. None where ``every`` has both of harness's, or averages ties (a query's values then come from another
        pass of the kernels, whatever its ties)."""
        default = Conventions()
        changes: dict[str, Any] = {}
        if every.ties not in (default.ties, Ties.AVERAGE) and default.ties is not Ties.AVERAGE:
            changes["ties"] = default.ties
        if every.short_lists is not default.short_lists and measure.cutoff is not None:
            changes["short_lists"] = default.short_lists
        return dataclasses.replace(every, **changes) if changes else None

    def _apart(self, every: Conventions, shared: Conventions, measure: Measure) -> tuple[str, ...]:
        """The queries whose values under ``every`` may differ from those under ``shared``: those with tied scores
        (where the tie rule differs) and those whose list is shorter than the cutoff (where the short lists' does),
        in ``shared``'s alignment, which only the tie rule tells from ``every``'s."""
        key = (alignment_conventions(every), every.short_lists is not shared.short_lists, measure.cutoff)
        if key not in self._apart_queries:  # the same queries for every gain, level and ideal
            apart: set[str] = set()
            if every.ties is not shared.ties:
                apart |= self._tied(every.scores)
            _, aligned = self._union_aligned(alignment_conventions(shared), measure)
            if every.short_lists is not shared.short_lists and measure.cutoff is not None:
                apart |= set(aligned.query_ids[aligned.lists.n_ret < measure.cutoff].tolist())
            self._apart_queries[key] = tuple(sorted(apart & set(aligned.query_ids.tolist())))
        return self._apart_queries[key]

    def _reshared(self, every: Conventions, shared: Conventions, measure: Measure) -> tuple[np.ndarray, np.ndarray]:
        """Every query's value under ``every``: ``shared``'s, where a query's rows are read alike under both (its
        values are then the same, bit for bit), and the others' own, evaluated alone (a query's value depends on its
        own rows only)."""
        if (every, measure) in self._union_values:
            return self._union_values[every, measure]
        ids, values = self._every_values(shared, measure)
        apart = self._apart(every, shared, measure)
        if apart:
            apart_ids, apart_values = self._every_values(every, measure, apart)
            key = alignment_conventions(shared)  # one union, so one order of ids, per alignment
            if key not in self._positions:
                self._positions[key] = {q: i for i, q in enumerate(ids.tolist())}
            where = self._positions[key]
            values = values.copy()
            values[[where[q] for q in apart_ids.tolist()]] = apart_values
        self._union_values[every, measure] = (ids, values)
        return ids, values

    def _every_values(self, every: Conventions, measure: Measure, some: tuple[str, ...] = ()) -> tuple[np.ndarray, np.ndarray]:
        """(query ids, values) of ``measure`` under ``every`` over every query (or over ``some`` alone): one
        evaluation for the four universes."""
        if some or (every, measure) not in self._union_values:
            evaluator, aligned = self._union_aligned(alignment_conventions(every), measure, some)
            lists = dataclasses.replace(aligned.lists, **kernel_settings(every))
            per_query = evaluator.evaluate_aligned(self.run.name, dataclasses.replace(aligned, lists=lists), only=[measure])
            if some:
                return per_query.query_ids, per_query.values[:, 0]
            self._union_values[every, measure] = (per_query.query_ids, per_query.values[:, 0])
        return self._union_values[every, measure]

    def _tied(self, scores: Scores) -> set[str]:
        """The queries with two equal scores once read at ``scores``' precision: the only ones a tie rule orders."""
        if scores not in self._tied_queries:
            self._tied_queries[scores] = _tied_queries(self.run, np.float32 if scores is Scores.FLOAT32 else np.float64)
        return self._tied_queries[scores]

    @cached_property
    def _retrieved(self) -> set[str]:
        """The queries the run answers."""
        return set(pc.unique(pc.cast(self.run.query_id, pa.string())).to_pylist())

    def _universe(self, reading: Conventions, evaluator: Evaluator, ids: np.ndarray) -> np.ndarray:
        """Which of ``ids`` the ``queries`` convention of ``reading`` evaluates: the alignment's own universe
        (:func:`harness.data.align.evaluated_query_ids`) of the judgments as prepared under these conventions."""
        chosen, _ = evaluated_query_ids(evaluator.prepared, string_array(sorted(self._retrieved)), None, reading)
        inside = set(chosen.tolist())
        return np.array([q in inside for q in ids.tolist()], dtype=bool)


def _tied_queries(run: Run, precision: type[np.floating[Any]]) -> set[str]:
    """The queries with two equal scores once read at ``precision``.

    >>> sorted(_tied_queries(Run.from_records([("q", "a", 1.0), ("q", "b", 1.0), ("r", "c", 2.0)]), np.float64))
    ['q']
    """
    names, codes, equal = _equal_pairs(run, precision)
    return set(names.take(pa.array(np.unique(codes[1:][equal]), pa.int64())).to_pylist())


def _equal_neighbours(run: Run, precision: type[np.floating[Any]]) -> int:
    """How many pairs of a query's scores, sorted, are equal once read at ``precision``.

    >>> run = Run.from_records([("q", "a", 1.0), ("q", "b", 1.00000001), ("q", "c", 2.0)])
    >>> _equal_neighbours(run, np.float64), _equal_neighbours(run, np.float32)   # a C float merges a and b
    (0, 1)
    """
    return int(np.count_nonzero(_equal_pairs(run, precision)[2]))


def _equal_pairs(run: Run, precision: type[np.floating[Any]]) -> tuple[pa.Array, np.ndarray, np.ndarray]:
    """(the query ids, each row's query as a code into them sorted by query then score, whether each row's score
    equals the one before it in the same query) once the scores are read at ``precision``."""
    ids = run.query_id.combine_chunks() if isinstance(run.query_id, pa.ChunkedArray) else run.query_id
    encoded = pc.dictionary_encode(pc.cast(ids, pa.string()))
    codes = encoded.indices.to_numpy(zero_copy_only=False)
    scores = run.score.astype(precision)
    order = np.lexsort((scores, codes))
    codes, scores = codes[order], scores[order]
    return encoded.dictionary, codes, (codes[1:] == codes[:-1]) & (scores[1:] == scores[:-1])


def _reading(conventions: Conventions, measure: Measure) -> Conventions:
    """``conventions`` with those that cannot change ``measure`` at their defaults: the relevance level of a measure
    without a ``rel`` parameter and with linear or exponential gains (trec_eval's -l leaves them alone) unless it
    decides the universe; the ideal, AP's denominator, short lists and the recall cut where the measure reads none."""
    default = Conventions()
    changes: dict[str, Any] = {
        k: getattr(default, k)
        for k in ("ideal_from", "ap_denominator", "short_lists", "iprec_cut")
        if not _can_change(measure, k)
    }
    # a measure reads the level through its `rel` parameter, or through gains that start at it
    reads_level = (
        _has_param(measure, "rel")
        or measure.param("gain") in ("binary", "elliot")
        or (_graded(measure) and conventions.graded_below_level is GradedBelowLevel.ZERO)
    )
    if not reads_level and conventions.queries is not Queries.RELEVANT:
        changes["relevance_level"] = default.relevance_level
    return dataclasses.replace(conventions, **changes)


def _affected(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> int:
    """Queries in one universe only, plus the common ones whose values differ."""
    left = dict(zip(a[0].tolist(), a[1].tolist(), strict=True))
    right = dict(zip(b[0].tolist(), b[1].tolist(), strict=True))
    changed = len(left.keys() ^ right.keys())
    for q in left.keys() & right.keys():
        x, y = left[q], right[q]
        if not (np.isnan(x) and np.isnan(y)) and not abs(x - y) <= _CLOSE:
            changed += 1
    return changed


def _context(
    qrels: Qrels | Intents,
    measures: list[Measure],
    train: Interactions | None,
    items: Catalog | None,
    user_groups: Mapping[str, str] | None,
) -> dict[str, Any]:
    """What every evaluator of the explanation shares: the items' context, built once from the training data and the
    catalogue (not once per alignment), and the user groups."""
    context: dict[str, Any] = {"user_groups": user_groups}
    if builds_item_context(measures, train is not None, items is not None):
        judged = qrels.judgments() if isinstance(qrels, Intents) else qrels
        context["item_context"] = ItemContext(train, items, judged, user_groups)
    return context


def _parsed(measures: Iterable[Measure | str]) -> list[Measure]:
    out = [parse_measure(m) if isinstance(m, str) else m for m in measures]
    if not out:
        raise MeasureError("no measure to explain", hint="name one: -m nDCG@10")
    return out


def _tie_dependent(values: _Values, conventions: Conventions, measure: Measure) -> int:
    """Queries whose value depends on how tied scores are ordered (relevant first and last differ); none when the
    conventions average over the tie orders."""
    if conventions.ties is Ties.AVERAGE:
        return 0
    best = values.get(dataclasses.replace(conventions, ties=Ties.OPTIMISTIC), measure)
    worst = values.get(dataclasses.replace(conventions, ties=Ties.PESSIMISTIC), measure)
    return _affected(best, worst)


def explain(
    qrels: Qrels | Any,
    run: Run | Any,
    measures: Iterable[Measure | str],
    conventions: Conventions | None = None,
    peers: Iterable[str] | None = None,
    progress: Progress = SILENT,
    *,
    train: Interactions | None = None,
    items: Catalog | None = None,
    user_groups: Mapping[str, str] | None = None,
) -> list[Explanation]:
    """For each measure: harness's value and each peer's (:data:`harness.measures.peers.PEERS`), with what each of the
    peer's settings alone changes. ``conventions``: harness's side (default: its defaults; ``-l`` and the like).
    ``train``, ``items`` and ``user_groups`` feed the recommender measures, as :class:`Evaluator` takes them; subtopic
    judgments (:class:`~harness.data.model.Intents`) the intent-aware ones."""
    qrels = qrels if isinstance(qrels, Intents) else as_qrels(qrels)
    run = as_run(run)
    base = conventions or Conventions()
    chosen = [PEERS[name] for name in (peers or PEERS)]
    asked = _parsed(measures)
    measures_read = _variants(asked, chosen, base)
    values = _Values(qrels, run, measures_read, context=_context(qrels, measures_read, train, items, user_groups))
    values._evaluator(base)  # what a measure needs and lacks (training data, a catalogue) said first; kept for the rows
    out = []
    with progress.task("explaining", len(asked) * len(chosen)) as advance:
        for measure in asked:
            out.append(_explain_one(values, base, measure, chosen, advance))
    return out


def _variants(asked: list[Measure], chosen: list[Peer], base: Conventions) -> list[Measure]:
    """Every measure explain reads: those asked, each peer's variant of them, and each variant parameter alone."""
    out = list(asked)
    for measure in asked:
        for peer in chosen:
            if peer.unreproducible(measure) is None:
                out.append(peer.measure_for(measure))
                out += [_alone(base, measure, k, v)[1] for k, v in peer.differences(measure, base).items() if "." in k]
    return out


def _explain_one(values: _Values, base: Conventions, measure: Measure, chosen: list[Peer], advance: Any) -> Explanation:
    here = values.get(base, measure)
    rows = []
    for peer in chosen:
        advance()
        why = peer.unreproducible(measure)
        if why is not None:
            rows.append(PeerValue(peer, None, {}, (), why, measure.name not in peer.cannot))
            continue
        differences = {k: v for k, v in peer.differences(measure, base).items() if _can_change(measure, k)}
        effects = [_effect("all", values, peer.conventions_for(measure, base), peer.measure_for(measure), here)]
        for key, value in differences.items():
            alone_conv, alone_measure = _alone(base, measure, key, value)
            effects.append(_effect(f"{key}={value}", values, alone_conv, alone_measure, here))
        note = peer.caveat
        if peer.arbitrary_ties and (n := _tie_dependent(values, peer.conventions_for(measure, base), measure)):
            note += f" ({n} queries here have tied scores that change this measure)"
        rows.append(PeerValue(peer, effects[0].value, differences, tuple(effects), note))
    queries = 0 if SYSTEM in here[0] else len(here[0])
    return Explanation(measure, aggregate_values(measure, here[1]), queries, tuple(rows))


def _can_change(measure: Measure, setting: str) -> bool:
    """Whether a convention the kernels read can change this measure at all (AP@k's denominator cannot change nDCG),
    as the registry says (``reads_conventions``); those at a cutoff only when the measure has one."""
    if setting in ("ap_denominator", "short_lists"):
        return measure.cutoff is not None and setting in REGISTRY.definition(measure).reads_conventions
    if setting in ("ideal_from", "iprec_cut"):
        return setting in REGISTRY.definition(measure).reads_conventions
    return True


def _graded(measure: Measure) -> bool:
    """Whether the measure's gains are linear or exponential in the label (what ``graded_below_level`` reads)."""
    return _has_param(measure, "gain") and measure.param("gains") is None and measure.param("gain") in (None, "linear", "exp")


def _has_param(measure: Measure, name: str) -> bool:
    return any(p.name == name for p in REGISTRY.definition(measure).params)


def _alone(base: Conventions, measure: Measure, key: str, value: object) -> tuple[Conventions, Measure]:
    """``base`` and ``measure`` with one setting changed: a convention, or ``Name.param`` of the measure."""
    _, dot, param = key.partition(".")
    if dot:
        return base, _with_param(measure, param, value)
    return Conventions.from_mapping({**base.as_dict(), key: value}), measure


def _with_param(measure: Measure, param: str, value: object) -> Measure:
    """``measure`` with one parameter set (left out when it is the default, as the parser writes it)."""
    definition = REGISTRY.definition(measure)
    params: dict[str, object] = {k: v for k, v in measure.params if k != param}
    if value != definition.param_info(param).default:
        params[param] = value
    return definition.make(params, measure.cutoff)


def _effect(
    setting: str, values: _Values, conventions: Conventions, measure: Measure, here: tuple[np.ndarray, np.ndarray]
) -> Effect:
    there = values.get(conventions, measure)
    value = aggregate_values(measure, there[1])
    whole = SYSTEM in here[0] or SYSTEM in there[0]  # a value of the run: no query moves it alone
    return Effect(setting, value, value - aggregate_values(measure, here[1]), None if whole else _affected(here, there))


# ---- match: which settings give a number ------------------------------------------------------------------------
def search_space(measure: Measure, qrels: Qrels) -> dict[str, tuple[object, ...]]:
    """The settings :func:`match` tries for ``measure``: every option of each convention that can change it.

    >>> q = Qrels.from_records([("q1", "a", 2), ("q1", "b", 1)])
    >>> space = search_space(parse_measure("nDCG@10"), q)
    >>> space["gain"], space["relevance_level"], "ap_denominator" in space
    (('linear', 'exp', 'binary', 'elliot'), (1, 2), False)
    """
    definition = REGISTRY.definition(measure)
    labels = np.asarray(qrels.relevance, dtype=np.float64)
    levels = sorted({int(v) for v in labels if v >= 1 and float(v).is_integer()})[:6] or [1]
    space: dict[str, tuple[object, ...]] = {
        "ties": tuple(t.value for t in Ties if t is not Ties.AVERAGE or definition.ties_average_ok),
        "scores": tuple(s.value for s in Scores),
        "queries": tuple(q.value for q in Queries),
        "relevance_level": tuple(levels),
    }
    if (labels < 0).any():
        space["negative_labels"] = (NegativeLabels.UNJUDGED.value, NegativeLabels.NONRELEVANT.value)
    if _can_change(measure, "ideal_from"):
        space["ideal_from"] = tuple(i.value for i in IdealFrom)
    if _has_param(measure, "gain"):
        space["gain"] = next(p.choices for p in definition.params if p.name == "gain")
    # the peers' variants of a recommender or intent-aware measure: Gini's form, Coverage's catalogue, ndeval's rank 1
    # (a ranking measure's variants are the conventions above: AP's denominator is ap_denominator)
    for param in definition.params if definition.beyond_accuracy or definition.intent_aware else ():
        if param.kind == "text" and param.choices and param.name != "gain":
            space[f"{definition.name}.{param.name}"] = param.choices
    if _can_change(measure, "ap_denominator"):
        space["ap_denominator"] = tuple(a.value for a in APDenominator)
    if _can_change(measure, "short_lists"):
        space["short_lists"] = tuple(s.value for s in ShortLists)
    if _has_param(measure, "gain") and len(levels) > 1:  # gains below a level above 1 (ranx): with the level searched
        space["graded_below_level"] = tuple(g.value for g in GradedBelowLevel)
    if _can_change(measure, "iprec_cut"):
        space["iprec_cut"] = tuple(c.value for c in IPrecCut)
    return space


def match(
    qrels: Qrels | Any,
    run: Run | Any,
    measure: Measure | str,
    target: float,
    tol: float = 5e-5,
    conventions: Conventions | None = None,
    progress: Progress = SILENT,
    *,
    train: Interactions | None = None,
    items: Catalog | None = None,
    user_groups: Mapping[str, str] | None = None,
) -> list[Match]:
    """Every combination of settings (:func:`search_space`) whose value is within ``tol`` of ``target`` (as far as a
    printed number tells: the fewest changes from harness's defaults first, then the nearest); when none is that close,
    those of the ten nearest values, nearest first. Each is named by the peer whose settings it is, if one's is."""
    if not tol >= 0:
        raise MeasureError(f"the tolerance must be 0 or more, got {tol}", hint="tol=5e-5: half a unit of the fourth decimal")
    qrels = qrels if isinstance(qrels, Intents) else as_qrels(qrels)
    run = as_run(run)
    (asked,) = _parsed([measure])
    base = conventions or Conventions()
    space = search_space(asked, qrels.judgments() if isinstance(qrels, Intents) else qrels)
    # the measure's own parameters (gain, Gini.form, ...) make its variants; the conventions, the combinations
    named = [k for k in space if k == "gain" or "." in k]
    defaults: dict[str, object] = {**base.as_dict(), **{k: _current(asked, k) for k in named}}
    variants: dict[tuple[tuple[str, object], ...], Measure] = {}
    for choice in itertools.product(*(space.pop(k) for k in named)):
        variant = asked
        for key, value in zip(named, choice, strict=True):
            variant = _with_param(variant, key.rpartition(".")[2], value)
        if _available(variant, train, items):  # Coverage over the catalogue needs one
            variants[tuple(zip(named, choice, strict=True))] = variant
    keys = list(space)
    combos = list(itertools.product(*(space[k] for k in keys)))
    context = _context(qrels, list(variants.values()), train, items, user_groups)
    values = _Values(qrels, run, variants.values(), keep_values=False, context=context)
    found = []
    peers = _peer_settings(asked, base)
    with progress.task("matching", len(combos)) as advance:
        for combo in combos:
            advance()
            settings = dict(zip(keys, combo, strict=True))
            conv = Conventions.from_mapping({**base.as_dict(), **settings})
            for chosen, variant in variants.items():
                value = values.mean(conv, variant)
                full = {**settings, **dict(chosen)}
                changes = {k: v for k, v in full.items() if defaults.get(k) != v}
                found.append(Match(full, value, abs(value - target), _profile(peers, settings, variant), changes))
    found.sort(key=lambda m: (m.distance if not np.isnan(m.distance) else np.inf, len(m.changes)))
    close = [m for m in found if m.distance <= tol]
    if close:  # all agree with the number as far as it was printed: the simplest explanation first
        return sorted(close, key=lambda m: (len(m.changes), m.distance))
    nearest = sorted({m.value for m in found}, key=lambda v: abs(v - target))[:10]  # the ten nearest values
    return [m for m in found if m.value in nearest]


def _current(measure: Measure, key: str) -> object:
    """A searched parameter's value in the measure asked: given, or its default (``gain``: linear)."""
    name = key.rpartition(".")[2]
    given = measure.param(name)
    if given is not None:
        return given
    return REGISTRY.definition(measure).param_info(name).default or ("linear" if name == "gain" else None)


def _available(measure: Measure, train: Interactions | None, items: Catalog | None) -> bool:
    """Whether the inputs given feed this variant (a catalogue for ``catalog=items``)."""
    given = ({"train"} if train is not None else set()) | ({"items", "features"} if items is not None else set())
    return REGISTRY.definition(measure).inputs(measure) <= given


def _peer_settings(measure: Measure, base: Conventions) -> list[tuple[str, Measure, dict[str, object]]]:
    """Each peer that can reproduce ``measure``: its name, its form of the measure and its conventions over ``base``,
    worked out once for a search (a search asks them for every combination)."""
    return [
        (peer.name, peer.measure_for(measure), peer.conventions_for(measure, base).as_dict())
        for peer in PEERS.values()
        if peer.unreproducible(measure) is None
    ]


def _profile(peers: list[tuple[str, Measure, dict[str, object]]], settings: dict[str, object], variant: Measure) -> str | None:
    """The first peer whose settings, among those searched (the others cannot change this measure), these are."""
    for name, form, theirs in peers:
        if form == variant and all(theirs[k] == v for k, v in settings.items()):
            return name
    return None


__all__ = ["Effect", "Explanation", "Match", "PeerValue", "explain", "match", "search_space"]
