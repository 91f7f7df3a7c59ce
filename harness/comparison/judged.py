"""The numbers of a dataset with a model judge, corrected by people's labels (prediction-powered inference).

On a judged dataset each run has the judge's value of every query and people's value of the queries they judged
(:class:`~harness.evaluation.results.RunResult` ``people``). A measure averaged over queries is estimated by
:func:`~harness.stats.ppi.ppi_sampled`: for a system's mean, on its values; for a pair's difference, on the
per-query differences, lambda tuned on them (so a corrected difference is not the difference of the corrected
means). Intervals are 95%, as every interval of the tables, with Student's t; the p of a difference is the same
t's, with the same lambda. Those rows name their estimator ``ppi`` and keep the judge's own numbers beside them in
``judge_*`` columns; the tests that do not apply to a corrected estimate (Wilcoxon, the randomisation and bootstrap
tests of the judge's values) move to ``judge_p_<test>``. Other rows of a judged dataset (a geometric mean, a sum,
a measure of the whole lists) are the judge's values alone: their estimator is ``judge``.

>>> from harness.measures.spec import Measure
>>> from harness.evaluation.results import PerQuery
>>> ids = np.array([f"q{i}" for i in range(6)], dtype=object)
>>> judge = PerQuery("a", ids, (Measure("AP"),), np.array([[1.0], [0.5], [1.0], [0.5], [1.0], [0.0]]), np.ones(6, bool))
>>> people = PerQuery("a", ids[:3], (Measure("AP"),), np.array([[1.0], [0.0], [1.0]]), np.ones(3, bool))
>>> found = corrected_mean(judge, people, None, Measure("AP"), np.ones(6, dtype=bool))
>>> round(found.lam, 12), round(found.estimate, 12), found.n, found.N   # 0.5 mean(rest) + mean(y - 0.5 f)
(0.5, 0.5, 3, 3)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from harness.comparison.rows import FEW_QUERIES
from harness.evaluation.agreement import Agreement, systems_agreement
from harness.evaluation.results import PerQuery, RunResult
from harness.measures.registry import REGISTRY
from harness.measures.spec import Measure
from harness.stats.ppi import MIN_HUMAN, PPIEstimate, layers_of, ppi_sampled, queries_needed, sample_layers
from harness.stats.seeds import detectable

CONFIDENCE = 0.95  # the tables' intervals
PLANNED_POWER = 0.8
ESTIMATOR = "ppi"
JUDGE_ONLY = "judge"


def corrects(measure: Measure) -> bool:
    """Is the measure corrected by people's labels: a mean over queries (a geometric mean, a sum or a measure of the
    whole lists is not linear in the queries' values)."""
    definition = REGISTRY.definition(measure)
    return definition.aggregate == "mean" and not definition.is_system(measure)


def _on(table: PerQuery, queries: np.ndarray, measure: Measure) -> tuple[np.ndarray, np.ndarray]:
    """(where each of ``queries`` is among the table's with a value of ``measure``, those values in that order)."""
    ids = table.query_ids.astype(str)
    j = table.measures.index(measure)
    values = table.values[:, j]
    defined = table.queries_of(j) & ~np.isnan(values)
    _, at_queries, at_table = np.intersect1d(queries, ids[defined], assume_unique=True, return_indices=True)
    present = np.zeros(queries.size, dtype=bool)
    present[at_queries] = True
    order = np.argsort(at_queries, kind="stable")
    return present, values[np.flatnonzero(defined)[at_table[order]]]


def _estimate(
    f_all: np.ndarray, sampled: np.ndarray, y: np.ndarray, strata: np.ndarray | None, alpha: float
) -> PPIEstimate | str:
    """The corrected mean of values the judge gave every query (``f_all``) and people the ``sampled`` ones (``y``);
    or why it cannot be corrected."""
    layers = sample_layers(sampled, strata)
    return layers if isinstance(layers, str) else ppi_sampled(y, f_all, sampled, layers, alpha)


def corrected_mean(
    judge: PerQuery, people: PerQuery, strata: np.ndarray | None, measure: Measure, mask: np.ndarray, alpha: float = 0.05
) -> PPIEstimate | str:
    """One run's mean of ``measure`` over its queries within ``mask`` (over ``judge``'s queries), the judge's values
    corrected by people's; or why it cannot be."""
    j = judge.measures.index(measure)
    values = judge.values[:, j]
    keep = mask & judge.queries_of(j) & ~np.isnan(values)
    queries = judge.query_ids.astype(str)[keep]
    sampled, y = _on(people, queries, measure)
    return _estimate(values[keep], sampled, y, None if strata is None else strata[keep], alpha)


def corrected_difference(
    a: RunResult, b: RunResult, queries: np.ndarray, measure: Measure, alpha: float = 0.05
) -> tuple[PPIEstimate | str, np.ndarray]:
    """b - a on ``measure`` over ``queries`` (sorted ids, where both have the judge's value), the per-query
    differences corrected by people's, with lambda tuned on them; and people's differences (for wins and losses)."""
    f_all, sampled, y = _differences(a, b, queries, measure)
    strata = None
    if a.strata is not None:
        _, at, _ = np.intersect1d(a.per_query.query_ids.astype(str), queries, assume_unique=True, return_indices=True)
        strata = a.strata[at]
    return _estimate(f_all, sampled, y, strata, alpha), y


def _differences(a: RunResult, b: RunResult, queries: np.ndarray, measure: Measure) -> tuple[np.ndarray, ...]:
    """(the judge's b - a on every one of ``queries``, which of them people judged, people's b - a there)."""
    assert a.people is not None and b.people is not None
    has_a, f_a = _on(a.per_query, queries, measure)
    has_b, f_b = _on(b.per_query, queries, measure)
    assert has_a.all() and has_b.all()
    in_a, y_a = _on(a.people, queries, measure)
    in_b, y_b = _on(b.people, queries, measure)
    sampled = in_a & in_b
    return f_b - f_a, sampled, y_b[sampled[in_b]] - y_a[sampled[in_a]]


def summary_rows(result: RunResult, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A judged run's summary rows (``rows``, :func:`~harness.evaluation.results.summarize`'s, the judge's values):
    each mean corrected by people's labels, the judge's beside it."""
    assert result.people is not None
    masks = dict(result.segment_masks())
    measures = {str(m): m for m in result.per_query.measures}
    out = []
    for row in rows:
        measure = measures.get(row["measure"])
        if measure is None or not corrects(measure):
            out.append({**row, "estimator": JUDGE_ONLY})
            continue
        found = corrected_mean(result.per_query, result.people, result.strata, measure, masks[row["segment"]], 1 - CONFIDENCE)
        if isinstance(found, str):
            out.append(corrected_summary(row, found))
        else:
            out.append(corrected_summary(row, "", found.estimate, found.low, found.high, found.n, found.n + found.N, found.lam))
    return out


def corrected_summary(
    row: Mapping[str, Any],
    why: str = "",
    estimate: float = math.nan,
    low: float = math.nan,
    high: float = math.nan,
    n_human: int = 0,
    n_judge: int | None = None,
    lam: float = math.nan,
) -> dict[str, Any]:
    """A judged mean's summary row: the judge's ``row`` with its corrected value and interval in place (NaN, and
    ``why``, where it cannot be corrected), the judge's own numbers in ``judge_*``, people's queries and the judge's
    (by default the row's), and lambda."""
    judge = {f"judge_{k}": row[k] for k in ("value", "mean", "ci_low", "ci_high")}
    return {
        **row,
        "value": estimate,
        "mean": estimate,
        "ci_low": low,
        "ci_high": high,
        "estimator": ESTIMATOR,
        **judge,
        "n_human": n_human,
        "n_judge": row["n_queries"] if n_judge is None else n_judge,
        "lambda": lam,
        "estimator_note": why,
    }


def correct_pair_rows(
    rows: list[dict[str, Any]], by_system: Mapping[str, RunResult], segment: str, tests: tuple[str, ...], alpha: float
) -> None:
    """A judged dataset's comparison rows of one segment, in place: each mean's corrected by people's labels
    (:func:`corrected_difference`), the judge's numbers moved to ``judge_*``; the others named the judge's alone."""
    measures = {str(m): m for m in next(iter(by_system.values())).per_query.measures}
    for row in rows:
        measure = measures.get(row["measure"]) if row["aggregate"] != "system" else None
        if measure is None or not corrects(measure):
            row["estimator"] = JUDGE_ONLY
            continue
        a, b = by_system[row["system_a"]], by_system[row["system_b"]]
        queries = _shared(a, b, measure, segment)
        found, people_diffs = corrected_difference(a, b, queries, measure, 1 - CONFIDENCE)
        judge_only = {
            "judge_mean_a": row["mean_a"],
            "judge_mean_b": row["mean_b"],
            "judge_delta": row["delta"],
            "judge_ci_low": row["ci_low"],
            "judge_ci_high": row["ci_high"],
            **{f"judge_p_{test}": row.pop(f"p_{test}") for test in dict.fromkeys((*tests, "t")) if f"p_{test}" in row},
        }
        means = [corrected_mean(r.per_query, r.people, r.strata, measure, _mask(r, queries), 1 - CONFIDENCE) for r in (a, b)]  # type: ignore[arg-type]
        higher = bool(row["higher_is_better"])
        positive, negative = int((people_diffs > 0).sum()), int((people_diffs < 0).sum())
        row.update(
            {
                "mean_a": means[0].estimate if not isinstance(means[0], str) else math.nan,
                "mean_b": means[1].estimate if not isinstance(means[1], str) else math.nan,
                "ci_low_t": math.nan,
                "ci_high_t": math.nan,
                "ci_low_bootstrap": math.nan,
                "ci_high_bootstrap": math.nan,
                "effect_size": math.nan,
                "effect_size_low": math.nan,
                "effect_size_high": math.nan,
                "wins": positive if higher else negative,
                "losses": negative if higher else positive,
                "ties": int(people_diffs.size - positive - negative),
                "p_tukey_hsd": math.nan,
                "n_queries_tukey": 0,
                "p_floor": 0.0,
                "mean_difference": math.nan,
                "sd_difference": math.nan,
                **judge_only,
                "estimator": ESTIMATOR,
                "n_judge": int(queries.size),
            }
        )
        if isinstance(found, str):
            row.update(
                {
                    "delta": math.nan,
                    "ci_low": math.nan,
                    "ci_high": math.nan,
                    "p_ppi": math.nan,
                    "n_human": 0,
                    "lambda": math.nan,
                    "mde": math.nan,
                    "n_needed": math.nan,
                    "few_queries": True,
                    "estimator_note": found,
                }
            )
            continue
        needed = _people_needed(a, b, queries, measure, found, alpha)
        row.update(
            {
                "delta": found.estimate,
                "ci_low": found.low,
                "ci_high": found.high,
                "p_ppi": found.p,
                "n_human": found.n,
                "lambda": found.lam,
                "few_queries": found.n < FEW_QUERIES,
                "mde": _mde(found, alpha),
                "n_needed": math.nan if needed is None else float(needed),
                "estimator_note": "",
            }
        )


def _mask(result: RunResult, queries: np.ndarray) -> np.ndarray:
    return np.isin(result.per_query.query_ids.astype(str), queries)


def _shared(a: RunResult, b: RunResult, measure: Measure, segment: str) -> np.ndarray:
    """The sorted queries of ``segment`` where both runs have the judge's value of ``measure``."""
    sides = []
    for r in (a, b):
        j = r.per_query.measures.index(measure)
        keep = dict(r.segment_masks())[segment] & r.per_query.queries_of(j) & ~np.isnan(r.per_query.values[:, j])
        sides.append(r.per_query.query_ids.astype(str)[keep])
    return np.intersect1d(sides[0], sides[1])


def _mde(found: PPIEstimate, alpha: float) -> float:
    """The smallest difference the corrected test detects with 80% power, two-sided at ``alpha``."""
    return detectable(found.se**2, found.df, alpha, PLANNED_POWER) if found.se > 0 else math.nan


def _people_needed(
    a: RunResult, b: RunResult, queries: np.ndarray, measure: Measure, found: PPIEstimate, alpha: float
) -> int | None:
    """The queries people would judge to tell the observed difference from 0 (a random sample: not planned for
    strata)."""
    if a.strata is not None:
        return None
    f_all, sampled, y = _differences(a, b, queries, measure)
    return queries_needed(y, f_all[sampled], f_all, found.estimate, alpha, PLANNED_POWER)


def agreement_of(results: Sequence[RunResult], alpha: float = 1 - CONFIDENCE) -> Agreement | None:
    """The audit of a judged dataset's judge (as ``harness agree`` prints it), from its runs' values under each
    labelling: the labels' agreement, each system's bias, the rankings and the pairs corrected, over the queries every
    run has; None without a judge or with no labels both judged."""
    judged = [r for r in results if r.people is not None]
    if not judged or judged[0].labels is None:
        return None
    measures = [m for m in judged[0].per_query.measures if corrects(m) and all(m in r.per_query.measures for r in judged)]
    every = _common([r.per_query.query_ids.astype(str) for r in judged])
    human = _common([r.people.query_ids.astype(str) for r in judged if r.people is not None])
    human = human[np.isin(human, every)]
    people = np.isin(every, human)
    systems: tuple[Any, ...] = ((), (), ())
    layers = None
    if judged[0].strata is not None:
        found = layers_of(_aligned(judged[0], every, judged[0].strata), people)
        layers = None if isinstance(found, str) else found
    if measures and human.size >= MIN_HUMAN:
        values_h = np.array([[_on(r.people, human, m)[1] for m in measures] for r in judged])  # type: ignore[arg-type]
        values_j = np.array([[_on(r.per_query, every, m)[1] for m in measures] for r in judged])
        if values_h.shape[-1] == human.size and values_j.shape[-1] == every.size:  # a value of every query
            systems = systems_agreement(
                [r.system for r in judged], [str(m) for m in measures], values_h, values_j, people, layers, alpha
            )
    strata = () if layers is None or judged[0].strata is None else tuple(sorted(set(judged[0].strata.tolist())))
    biases, rankings, pairs = systems
    return Agreement(judged[0].labels, biases, rankings, int(human.size), int(every.size), alpha, strata, pairs)


def _common(ids: Sequence[np.ndarray]) -> np.ndarray:
    out = ids[0]
    for more in ids[1:]:
        out = np.intersect1d(out, more)
    return np.sort(out)


def _aligned(result: RunResult, queries: np.ndarray, values: np.ndarray) -> np.ndarray:
    _, _, at = np.intersect1d(queries, result.per_query.query_ids.astype(str), assume_unique=True, return_indices=True)
    return values[at]
