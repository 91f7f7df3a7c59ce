"""Evaluator: judgments prepared once, scored against many runs. No I/O.

>>> from harness.data.model import Qrels, Run
>>> qrels = Qrels.from_records([("q1", "d1", 1), ("q1", "d2", 1), ("q2", "d3", 1)])
>>> run = Run.from_records([("q1", "d1", 3.0), ("q1", "d9", 2.0), ("q1", "d2", 1.0)])
>>> per_query = evaluate(qrels, run, ["P@2", "AP"])
>>> per_query.query_ids.tolist(), per_query.values.round(4).tolist()
(['q1', 'q2'], [[0.5, 0.8333], [0.0, 0.0]])
"""

from __future__ import annotations

import dataclasses
import sys
import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from harness.data.align import Aligned, PreparedQrels, align
from harness.data.intents import intent_data
from harness.data.items import Catalog, Interactions, ItemContext
from harness.data.load import check_shares_judged
from harness.data.model import Intents, Qrels, Run
from harness.data.samples import sample_rankings
from harness.errors import ConventionError, DataWarning, InputFormatError
from harness.evaluation.results import PerQuery
from harness.kernels._segments import RankedLists
from harness.kernels.exposure import SampleData
from harness.measures.conventions import Conventions, Queries, Ties
from harness.measures.parse import parse_measure
from harness.measures.registry import REGISTRY
from harness.measures.spec import Measure, deepest_cutoff


def _as_measures(measures: Iterable[Measure | str]) -> tuple[Measure, ...]:
    """Parsed, in the given order, each once."""
    return tuple(dict.fromkeys(parse_measure(m) if isinstance(m, str) else m for m in measures))


def builds_item_context(measures: Iterable[Measure], train: bool, items: bool) -> bool:
    """Whether an evaluation builds the items' context (from the training data, the catalogue and the judgments):
    with either input, or a beyond-accuracy measure. Its judgments must then be read where it is built.

    >>> builds_item_context([parse_measure("AP")], train=False, items=False)
    False
    >>> builds_item_context([parse_measure("Novelty@10")], train=False, items=False)
    True
    """
    return train or items or any(REGISTRY.definition(m).beyond_accuracy for m in measures)


class Evaluator:
    """Prepare judgments and measures once; ``evaluate(run)`` for each run.

    Parameters
    ----------
    qrels : Qrels or Intents
        The judgments.
    measures : iterable of Measure or str
        The measures (names as :func:`harness.parse_measure` reads them).
    conventions : Conventions, optional
        The conventions in force (default: trec_eval's).
    query_ids : sequence of str, optional
        The queries to evaluate (default: as ``conventions.queries`` says).
    train : Interactions, optional
        Training interactions, for the beyond-accuracy measures.
    items : Catalog, optional
        The item catalogue, for feature similarity and item groups.
    item_context, user_groups : optional
        Prepared item statistics, and each user's group for the user-fairness measures.

    Examples
    --------
    >>> from harness import Qrels, Run
    >>> evaluator = Evaluator(Qrels.from_dict({"q1": {"a": 1, "b": 1}}), ["P@2", "R@1"])
    >>> evaluator.evaluate(Run.from_dict({"q1": {"a": 2.0, "c": 1.0}})).values.tolist()
    [[0.5, 0.5]]
    """

    def __init__(
        self,
        qrels: Qrels | Intents,
        measures: Iterable[Measure | str],
        conventions: Conventions | None = None,
        query_ids: Sequence[str] | None = None,
        train: Interactions | None = None,
        items: Catalog | None = None,
        item_context: ItemContext | None = None,
        user_groups: Mapping[str, str] | None = None,
    ) -> None:
        self.conventions = conventions or Conventions()
        self.measures = _as_measures(measures)
        definitions = {m: REGISTRY.definition(m) for m in self.measures}
        # subtopic judgments: the intent-aware measures read them, the others each document's largest judgment
        self.intents = qrels if isinstance(qrels, Intents) else None
        if isinstance(qrels, Intents):
            qrels = qrels.judgments()
        intent_aware = [str(m) for m, d in definitions.items() if d.intent_aware]
        if intent_aware and self.intents is None:
            raise InputFormatError(
                f"{', '.join(intent_aware)} need{'s' if len(intent_aware) == 1 else ''} subtopic judgments",
                hint="give the qrels as ndeval's 'query subtopic doc judgment' lines: --qrels-format ndeval, "
                "qrels_format: ndeval in a config, or harness.read_subtopic_qrels(path)",
            )
        self._reads_intents = bool(intent_aware)
        # expected exposure reads a stochastic run's sampled rankings; every other measure its first sample
        self.reads_samples = REGISTRY.reads_samples(self.measures)
        # per-query measures go into the per-query table; system ones (coverage, entropy, Gini) have one value per run
        self.query_measures = tuple(m for m in self.measures if not definitions[m].is_system(m))
        self.system_measures = tuple(m for m in self.measures if definitions[m].is_system(m))
        self.items: ItemContext | None = None
        cooccurrence = [m for m, d in definitions.items() if d.uses_cooccurrence(m)]
        self._cooccurrence = bool(cooccurrence)
        # one pass of the similarity kernels serves every cutoff: it goes as deep as the deepest one
        self._pair_depth = deepest_cutoff(cooccurrence)
        # the item measures read each user's first `_item_depth` rows at most: only those rows get their item
        # (20M rows, 10 read of each 100: a tenth of the lookups); None: every row (one is uncut, or none reads items)
        self._reads_items = {m for m, d in definitions.items() if d.beyond_accuracy}
        self._item_depth = deepest_cutoff(self._reads_items)
        if item_context is None and builds_item_context(self.measures, train is not None, items is not None):
            item_context = ItemContext(train, items, as_qrels(qrels), user_groups)
        self.items = item_context  # given: prepared once for the whole dataset (the dask engine's partitions share it)
        if self.items is not None:
            for m, d in definitions.items():
                self.items.require(d.inputs(m), str(m), d.catalogue_columns(m))
        if self.conventions.ties is Ties.AVERAGE:
            unsupported = [str(m) for m in self.measures if not REGISTRY.definition(m).ties_average_ok]
            if unsupported:
                raise ConventionError(
                    f"ties='average' is defined only for measures that sum per-position values; not for {', '.join(unsupported)}",
                    hint="use ties: trec_eval for these measures, or evaluate them separately",
                )
        self.prepared = PreparedQrels.build(as_qrels(qrels), self.conventions)
        self.query_ids = None if query_ids is None else np.asarray(sorted(query_ids), dtype=object)

    def align(self, run: Run) -> Aligned:
        """The run's lists, per query in the universe's order (a stochastic run's first sample; its sampled rankings
        too when a measure reads them)."""
        aligned = align(self.prepared, run.first_sample(), self.query_ids)
        if self.reads_samples:
            samples = sample_rankings(run, aligned.query_ids, self.conventions.ties, self.conventions.scores)
            aligned = dataclasses.replace(aligned, samples=samples)
        return aligned

    def evaluate(self, run: Run | Any) -> PerQuery:
        """Every per-query measure of a run. A run that shares no query with the judgments is refused, as the command
        line refuses it: every value would be 0 for nothing the run did."""
        run = as_run(run)
        check_shares_judged(run, self.prepared.judged, self.prepared.source)
        aligned = self.align(run)
        missing = aligned.stats.judged_queries_missing
        if missing and self.conventions.queries is Queries.QRELS:
            warnings.warn(missing_queries_note(missing, run.source), DataWarning, stacklevel=_user_frame())
        return self.evaluate_aligned(run.name, aligned)

    def item_lists(self, aligned: Aligned) -> RankedLists:
        """The lists the item measures read: each user's first rows down to their deepest cutoff, with each row's item
        and the item statistics (the aligned lists themselves when no measure reads items).

        Cold items are numbered by their first appearance in these rows, so on every engine alike.
        """
        if self.items is None:
            return aligned.lists
        rows = self.item_rows(aligned)
        lists = aligned.lists if self._item_depth is None else aligned.lists.head(self._item_depth)
        reads = frozenset().union(*(REGISTRY.definition(m).reads(m) for m in self.measures))
        data = self.items.for_run(
            aligned.run_doc_ids,
            aligned.query_ids,
            cooccurrence=self._cooccurrence,
            pair_depth=self._pair_depth,
            judged_code=self.items.judged_codes(self.prepared.docs, self.prepared.judged_rows_of(aligned.query_ids))
            if "judged" in reads
            else None,
            score=(aligned.score if rows is None else aligned.scores_at(rows)) if "score" in reads else None,
            query_id_array=aligned.query_id_array,
            item_rows=aligned.source_rows if rows is None else aligned.source_rows[rows],
        )
        lists = dataclasses.replace(lists, items=data)
        # the per-user terms of the system measures that are sums over users: what a resample or a Dask
        # partition carries of the run instead of its judgments
        parts = {m: terms(lists, m) for m in self.system_measures if (terms := REGISTRY.definition(m).user_terms) is not None}
        return dataclasses.replace(lists, items=dataclasses.replace(data, user_parts=parts)) if parts else lists

    def item_rows(self, aligned: Aligned) -> np.ndarray | None:
        """The aligned rows :meth:`item_lists` holds (None: all of them)."""
        return aligned.lists.head_rows(self._item_depth)

    def _label_lists(self, aligned: Aligned) -> RankedLists:
        """The whole aligned lists the other measures read, with their subtopics and sampled rankings when measures
        read them."""
        lists = aligned.lists
        if not (self.reads_samples or self._reads_intents):
            return lists
        judged = self.prepared.judged_docs_of(aligned.query_ids)  # parallel to the lists' judged_label
        if self.reads_samples:
            assert aligned.samples is not None
            lists = dataclasses.replace(lists, samples=SampleData(aligned.samples, judged.to_pylist()))
        if self._reads_intents:
            assert self.intents is not None
            lists = dataclasses.replace(
                lists,
                intents=intent_data(
                    self.intents, aligned.query_ids, aligned.item_array(), lists.n_ret, judged, np.diff(lists.judged_offsets)
                ),
            )
        return lists

    def evaluate_aligned(
        self, name: str, aligned: Aligned, lists: RankedLists | None = None, only: Sequence[Measure] | None = None
    ) -> PerQuery:
        """Every per-query measure on an aligned run (``lists``: its :meth:`item_lists`, when already built; ``only``:
        these of the evaluator's per-query measures)."""
        measures = self.query_measures if only is None else tuple(only)
        item_lists = lists if lists is not None else self.item_lists(aligned)
        label_lists = self._label_lists(aligned)
        values = np.zeros((len(aligned.query_ids), len(measures)))
        missing = ~aligned.in_run
        judged: dict[int, RankedLists] = {}
        for j, measure in enumerate(measures):
            lists = item_lists if measure in self._reads_items else label_lists
            if measure.param("judged_only"):  # ir_measures' judged_only=True: this measure over judged documents only
                if id(lists) not in judged:
                    judged[id(lists)] = lists.judged_subset()
                lists = judged[id(lists)]
            definition = REGISTRY.definition(measure)
            column = definition.compute(lists, measure)
            # a judged query the run did not answer scores 0, as with trec_eval -c (which also zeroes utility, unj and
            # rbp_resid), but for the counts defined without a run; beyond-accuracy values of a user without a list
            # are undefined (NaN), not 0
            if not definition.defined_without_run and not definition.undefined_skipped:
                column = np.where(missing, 0.0, column)
            values[:, j] = column
        return PerQuery(name, aligned.query_ids, measures, values, aligned.in_run)

    def system_values(self, lists: RankedLists, weights: np.ndarray | None = None) -> dict[Measure, np.ndarray]:
        """Each system measure under each row of user weights (B x queries; default: the run itself, B = 1)."""
        w = np.ones((1, lists.n_queries)) if weights is None else np.atleast_2d(weights)
        return {m: REGISTRY.definition(m).compute_system(lists, m, w) for m in self.system_measures}


def _coerce(value: Any, kind: type[Qrels] | type[Run], columns: str) -> Any:
    if isinstance(value, kind):
        return value
    if isinstance(value, Mapping):
        return kind.from_dict(value)
    if hasattr(value, "columns"):
        return kind.from_frame(value)
    raise TypeError(f"expected {kind.__name__}, a DataFrame with columns {columns}, or a dict; got {type(value).__name__}")


def as_qrels(qrels: Any) -> Qrels:
    """Qrels, a DataFrame with columns query, doc, relevance, or pytrec_eval's ``{query: {doc: relevance}}``."""
    return _coerce(qrels, Qrels, "query, doc, relevance")  # type: ignore[no-any-return]


def as_run(run: Any) -> Run:
    """A Run, a DataFrame with columns query, doc, score, or pytrec_eval's ``{query: {doc: score}}``."""
    return _coerce(run, Run, "query, doc, score")  # type: ignore[no-any-return]


def _user_frame() -> int:
    """The stack level of the first caller outside harness: a warning points at the user's line, however many of
    harness's own calls (``evaluate`` -> ``Evaluator.evaluate``) lie between."""
    frame, level = sys._getframe(1), 1
    while frame is not None and str(frame.f_globals.get("__name__", "")).startswith("harness."):
        frame, level = frame.f_back, level + 1  # type: ignore[assignment]
    return level


def missing_queries_note(missing: int, run: str) -> str:
    """What a judged query missing from the run means under ``queries: qrels``, for the terminal and for Python."""
    return (
        f"{missing} judged queries are not in {run} and count as 0 (trec_eval does so only with -c; without it, "
        "it averages over the queries the run answered: --queries intersection, or queries='intersection')"
    )


def evaluate(
    qrels: Qrels | Any,
    run: Run | Any,
    measures: Iterable[Measure | str],
    conventions: Conventions | None = None,
    query_ids: Sequence[str] | None = None,
    train: Interactions | None = None,
    items: Catalog | None = None,
    *,
    relevance_level: int | None = None,
) -> PerQuery:
    """Evaluate one run: a per-query table (aggregate it with :func:`harness.aggregate`).

    Parameters
    ----------
    qrels : Qrels, DataFrame or dict
        The judgments: Qrels, a DataFrame (columns query, doc, relevance; ``Qrels.from_frame`` for other names) or
        a pytrec_eval-style dict ``{query: {doc: label}}``.
    run : Run, DataFrame or dict
        The ranked lists, likewise (column score; ``{query: {doc: score}}``).
    measures : iterable of Measure or str
        The measures (names as :func:`harness.parse_measure` reads them).
    conventions : Conventions, optional
        The conventions in force (default: trec_eval's).
    query_ids : sequence of str, optional
        The queries to evaluate (default: as ``conventions.queries`` says).
    train, items : Interactions, Catalog, optional
        For the beyond-accuracy measures; system measures (Coverage, Entropy, Gini, ...) have one value per run:
        use :class:`Evaluator` and ``system_values``.
    relevance_level : int, optional
        Relevant iff label >= it (the command line's ``-l``, pytrec_eval's ``relevance_level``).

    Returns
    -------
    PerQuery
        ``values[i, j]``: measure j on query i.

    Raises
    ------
    MeasureError, InputFormatError
        An unknown measure; inputs that cannot be evaluated (a run sharing no query with the judgments).

    Examples
    --------
    >>> evaluate({"q": {"a": 1, "b": 2}}, {"q": {"a": 2.0, "b": 1.0}}, ["RR"], relevance_level=2).values.tolist()
    [[0.5]]
    """
    if relevance_level is not None:
        conventions = Conventions.from_mapping({**(conventions or Conventions()).as_dict(), "relevance_level": relevance_level})
    return Evaluator(as_qrels(qrels), measures, conventions, query_ids, train, items).evaluate(as_run(run))
