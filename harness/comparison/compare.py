"""Every comparison a reviewer asks for: pairs x measures x segments -> one table.

For each (dataset, segment, measure, pair): both aggregates, the difference b - a,
its 95% CIs (t and bootstrap), the p-value of every configured test, the same
p-values corrected within their family, whether the primary test's corrected p is
below alpha, the effect size (d_z), and win/tie/loss counts over queries (a win is
a query where b is better, in the measure's direction). For three systems or more,
a two-way ANOVA and a randomised Tukey HSD per measure.

Each measure is compared on the scale of its own aggregate:

* ``mean`` (most measures): the tests are on the per-query differences; the
  difference and its CIs are those of the means.
* ``gmean`` (GMAP, GMBpref): the tests are on the paired differences of
  log(max(v, 1e-5)) (trec_eval's floor); the difference is that of the geometric
  means, and its CIs are the log-ratio CIs carried over to that scale with system
  a's geometric mean held fixed: GM_a * (exp(bound) - 1).
* ``sum`` and ``count`` (num_ret, num_rel, ...): the tests are on the per-query
  differences; the difference and CIs are n times those of the means.

Families for correction: ``per_measure`` = the pairs of one (dataset, segment,
measure), which controls the family-wise error within each measure but not across
the measures of a table; ``grid`` = every pair x measure x dataset of a segment.
Pairs are tested over the queries both systems were evaluated on (all judged
queries under the default ``queries: qrels``); the Tukey HSD over the queries every
system shares (``n_queries_tukey``), the same ones unless the conventions drop
queries a run did not answer.

Randomness is keyed by identity: a query's random sign and Poisson weight in each
replicate of the pairs' tests are hashes of (seed, dataset, segment, query id, replicate)
(:mod:`harness.stats.keyed`), and the tests' sums are exact (:mod:`harness.stats.grid`).
A comparison's p-value therefore depends on its own per-query differences and ids only:
adding a system, a measure or a dataset never changes an untouched comparison, and
neither does the order of the queries or how they are split into parts (the sums of any
parts add up to the whole's: ``tests/stats/test_exact.py``). Comparisons over the same queries share one matrix
product. The randomised Tukey HSD (permutations of the systems within each query) and the
system measures' resampling over users (a coin and a Poisson(1) weight per user) are keyed
the same way.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from harness.comparison import judged
from harness.comparison.rows import FEW_QUERIES, Anova, Comparison, Comparisons
from harness.comparison.versions import runs_by_system, version_rows
from harness.config.defaults import DEFAULT_MIN_AFFECTED, DEFAULT_POWER
from harness.config.schema import Stats
from harness.errors import ComparisonError
from harness.evaluation.results import MIN_GEO_MEAN, RunResult, aggregate_values, same_queries
from harness.kernels.beyond import stack
from harness.measures.registry import REGISTRY
from harness.measures.spec import Measure
from harness.stats import anova as group_stats
from harness.stats import bounds, keyed, paired, power
from harness.stats.anova import AnovaResult
from harness.stats.correction import correct

if TYPE_CHECKING:
    from harness.kernels._segments import RankedLists

# Below this many queries a comparison is flagged few_queries: on skewed per-query differences (IR's usual case: most
# queries unchanged, a few gaining a lot) the t-test and the sign-flip test reject a true null of mean 0 far more often
# than alpha. Measured (4,000 trials, alpha 0.05, tests/stats/test_few_queries.py): exponential differences (skewness 2)
# 0.099 / 0.091 at 10 queries, 0.091 / 0.090 at 15, 0.080 / 0.082 at 25, 0.065 / 0.067 at 30; normal ones 0.047-0.053
# throughout. The bootstrap is not computed below paired.BOOTSTRAP_MIN_QUERIES (10).


@dataclass(frozen=True)
class CompareSettings(Stats):
    """The config's statistics settings (:class:`~harness.config.schema.Stats`, one home for their defaults) and which
    pairs to test: every system against ``baseline`` (``mode: baseline``) or all pairs, plus ``extra_pairs`` always
    (the release's production against candidate)."""

    baseline: str | None = None
    extra_pairs: tuple[tuple[str, str], ...] = ()


def _pairs(systems: list[str], settings: CompareSettings) -> list[tuple[str, str]]:
    if settings.mode == "baseline" and settings.baseline in systems:
        pairs = [(settings.baseline, s) for s in systems if s != settings.baseline]
    else:
        pairs = list(combinations(systems, 2))
    for a, b in settings.extra_pairs:
        if a in systems and b in systems and (a, b) not in pairs and (b, a) not in pairs:
            pairs.append((a, b))
    return pairs


def _segment_queries(result: RunResult, segment: str) -> set[str]:
    mask = dict(result.segment_masks()).get(segment)
    return set() if mask is None else set(result.per_query.query_ids[mask].tolist())


def _shared_queries(a: RunResult, b: RunResult, segment: str) -> np.ndarray:
    """The queries of ``segment`` both runs have, sorted (an object array): the users their system measures are
    resampled over."""
    return np.array(sorted(_segment_queries(a, segment) & _segment_queries(b, segment)), dtype=object)


def _rows(result: RunResult, queries: np.ndarray) -> np.ndarray:
    """Row of each of ``queries`` (ids all evaluated by the run) in the run's per-query table."""
    return result.per_query.rows_of(queries)


def _test_scale(measure: Measure, values: np.ndarray) -> np.ndarray:
    """One measure's values as the tests see them: logs (floored) for geometric means, else unchanged."""
    if REGISTRY.definition(measure).aggregate == "gmean":
        return np.log(np.maximum(values, MIN_GEO_MEAN))
    return np.asarray(values, dtype=np.float64)


def _on_test_scale(measures: tuple[Measure, ...], values: np.ndarray) -> np.ndarray:
    """(M, n) values as the tests see them, one row per measure."""
    return np.array([_test_scale(m, row) for m, row in zip(measures, values, strict=True)]).reshape(values.shape)


def count_blocks(results: list[RunResult], settings: CompareSettings) -> int:
    """How many (dataset, segment, pair) blocks :func:`compare` tests, and :data:`TUKEY_STEPS` for each (dataset,
    segment) group test of three systems or more (the randomised Tukey HSD, the slow part at scale, counted by the
    tenth of its trials): its unit of progress."""
    total = 0
    for dataset in dict.fromkeys(r.dataset for r in results):
        mine = [r for r in results if r.dataset == dataset]
        if len(mine) >= 2:
            segments = len(mine[0].segment_names())
            blocks = segments * len(_pairs([r.system for r in mine], settings))
            total += blocks * (2 if any(r.resamples_lists for r in mine) else 1)
            total += segments * TUKEY_STEPS if _group_tested(mine, settings) else 0
    return total


TUKEY_STEPS = 10  # progress steps of a segment's ANOVA and Tukey HSD: a tenth of its trials each


class _Steps:
    """``advance()`` called as the share of the Tukey trials done (:data:`~harness.stats.anova.Done`) passes each
    tenth, from whichever thread did them; :meth:`finish` makes up the rest: :data:`TUKEY_STEPS` calls in all."""

    def __init__(self, advance: Callable[[], None]) -> None:
        self.advance, self.taken = advance, 0
        self.lock = threading.Lock()

    def __call__(self, share: float) -> None:
        with self.lock:
            while self.taken < min(int(share * TUKEY_STEPS), TUKEY_STEPS):
                self.taken += 1
                self.advance()

    def finish(self) -> None:
        self(1.0)


def _group_tested(results: list[RunResult], settings: CompareSettings) -> bool:
    """Whether a dataset's systems get the ANOVA and the Tukey HSD: three or more, not versions, not a judge's
    values (they would read as people's)."""
    return len(results) >= 3 and settings.claim != "version" and results[0].people is None


def compare(
    results: list[RunResult],
    measures: tuple[Measure, ...],
    settings: CompareSettings,
    advance: Callable[[], None] = lambda: None,
    seeds: Sequence[RunResult] = (),
) -> Comparisons:
    """Every comparison (and ANOVA), in dataset, segment, pair, measure order; ``advance()`` after each pair.

    ``seeds``: under ``claim: version``, every run of every system (``results`` holds their versions,
    :func:`~harness.comparison.versions.versions`): the means are tested over users and seeds.
    """
    rows: list[dict[str, Any]] = []
    anova_rows: list[dict[str, Any]] = []
    every_measure = measures
    seeded = runs_by_system(seeds) if settings.claim == "version" else {}  # each version's runs, with their lists
    for dataset in dict.fromkeys(r.dataset for r in results):
        by_system = {r.system: r for r in results if r.dataset == dataset}
        systems = list(by_system)
        if len(systems) < 2:
            continue
        # per-query measures every run of the dataset has (a beyond-accuracy measure needs the dataset's training data)
        measures = tuple(m for m in every_measure if all(m in r.measures for r in by_system.values()))
        first = by_system[systems[0]]
        same = all(same_queries(first.per_query, by_system[s].per_query) for s in systems[1:])
        for segment in first.segment_names():
            start = len(rows)
            pairs = _pairs(systems, settings)
            on_union = _on_union(by_system, segment, systems, measures, same)  # every system's values on the union
            block = _paired_block(dataset, segment, pairs, measures, on_union, settings)
            rows.extend(paired_rows(dataset, segment, block, settings))  # pair, then measure order
            for _ in pairs:
                advance()
            for a, b in pairs:
                if (
                    (dataset, a) in seeded
                    and (dataset, b) in seeded
                    and (len(seeded[(dataset, a)]) > 1 or len(seeded[(dataset, b)]) > 1)
                ):
                    rows.extend(_version_system_rows(dataset, segment, seeded[(dataset, a)], seeded[(dataset, b)], settings))
                elif _system_measures(by_system[a], by_system[b]):
                    queries = _shared_queries(by_system[a], by_system[b], segment)
                    rows.extend(_system_rows(dataset, segment, by_system[a], by_system[b], queries, settings))
                if any(r.resamples_lists for r in by_system.values()):
                    advance()  # the pair's system measures: resampling their lists is the slow part at scale
            if by_system[systems[0]].people is not None:  # a judged dataset: its means corrected by people's labels
                judged.correct_pair_rows(rows[start:], by_system, segment, settings.tests, settings.alpha)
            if _group_tested(list(by_system.values()), settings):  # ANOVA and Tukey over users: not for versions
                steps = _Steps(advance)  # the slow part at scale: the bar moves through its trials
                groups = _group_tests(dataset, segment, systems, measures, on_union, settings, steps)
                anova_rows.extend(_anova_rows(dataset, segment, systems, measures, groups, rows[start:]))
                steps.finish()
    if settings.claim == "version":
        version_rows(rows, seeds or results)
    _correct(rows, settings)
    return Comparisons(tuple(Comparison.from_record(r) for r in rows), tuple(Anova.from_record(r) for r in anova_rows))


# ---- system measures: one value per run, resampled over users -------------------------------------------
BLOCK_CELLS = 1 << 24  # user weights held at once (replicates x queries): bounds memory, not results


def _system_measures(a: RunResult, b: RunResult) -> list[Measure]:
    if a.lists is None or b.lists is None:  # reused from an earlier evaluation: no lists to resample
        return []
    return [m for m in a.system_measures if m in b.system_measures]


def _user_keys(settings: CompareSettings, dataset: str, segment: str, queries: np.ndarray, draw: str) -> np.ndarray:
    """The users' keys for one kind of draw ("swap" coins, "resample" weights): keyed by user, as the paired tests."""
    return keyed.query_keys(settings.seed, (dataset, segment, "users", draw), queries)


def _resampled(
    result: RunResult, measures: tuple[Measure, ...], queries: np.ndarray, keys: np.ndarray, replicates: int
) -> tuple[dict[Measure, float], dict[Measure, np.ndarray]]:
    """A run's system measures on ``queries``: the value, and its value in each bootstrap resample of them."""
    lists = result.lists
    assert lists is not None
    at = _rows(result, queries)
    w = np.zeros((1, lists.n_queries))
    w[0, at] = 1.0
    full = {m: float(REGISTRY.definition(m).compute_system(lists, m, w)[0]) for m in measures}
    samples: dict[Measure, list[np.ndarray]] = {m: [] for m in measures}
    block = max(1, BLOCK_CELLS // max(lists.n_queries, 1))
    for start in range(0, replicates, block):
        drawn = keyed.poisson_matrix(keys, start, min(block, replicates - start))  # each user's Poisson(1) weight
        w = np.zeros((drawn.shape[0], lists.n_queries))
        w[:, at] = drawn
        for m in measures:
            samples[m].append(REGISTRY.definition(m).compute_system(lists, m, w))
    return full, {m: np.concatenate(v) for m, v in samples.items()}


def _within(interval: tuple[float, float], bounds: tuple[float, float] | None) -> tuple[float, float]:
    """An interval clipped to the values the measure can take: a centred bootstrap interval can reach past them
    (REO below 0), and no value there is possible.

    >>> _within((-0.02, 0.31), (0.0, float("inf")))
    (0.0, 0.31)
    """
    if bounds is None:
        return interval
    low, high = interval
    return float(min(max(low, bounds[0]), bounds[1])), float(min(max(high, bounds[0]), bounds[1]))


def _centred_interval(value: float, replicates: np.ndarray, confidence: float = 0.95) -> tuple[float, float]:
    """The replicates' central interval, moved from their own mean to ``value``: [v + q_lo - m*, v + q_hi - m*].

    Resampling users with replacement repeats some and loses others, which lowers a
    distinct-item count (coverage) and raises inequality (Gini) in every replicate: their
    spread measures the sampling variability, their mean is biased. So the spread is
    centred on the observed value (which a plain percentile or basic interval can exclude).
    """
    finite = replicates[np.isfinite(replicates)]
    if finite.size == 0 or not np.isfinite(value):
        return float("nan"), float("nan")
    lo, hi = np.quantile(finite, [(1 - confidence) / 2, (1 + confidence) / 2])
    centre = float(finite.mean())
    return float(value + lo - centre), float(value + hi - centre)


def system_summary(result: RunResult, settings: CompareSettings) -> list[dict[str, Any]]:
    """Summary rows of a run's system measures, per segment: the value and a bootstrap CI over its users.

    The CI is the centred bootstrap interval (:func:`_centred_interval`) over ``system_resamples``
    resamples of the segment's users, drawn from the stream keyed by (seed, dataset, segment,
    query set): the draws a comparison of this run over the same users uses.
    """
    if result.lists is None or not result.system_measures:
        return []
    out = []
    for segment, mask in result.segment_masks():
        queries = np.sort(result.per_query.query_ids[mask].astype(str)).astype(object)
        keys = _user_keys(settings, result.dataset, segment, queries, "resample")
        full, samples = _resampled(result, result.system_measures, queries, keys, settings.system_resamples)
        for m in result.system_measures:
            low, high = _within(_centred_interval(full[m], samples[m]), REGISTRY.definition(m).bounds_of(m))
            out.append(
                {
                    "dataset": result.dataset,
                    "system": result.system,
                    "segment": segment,
                    "measure": str(m),
                    "value": full[m],
                    "mean": full[m],
                    "ci_low": low,
                    "ci_high": high,
                    "n_queries": len(queries),
                }
            )
    return out


def _system_rows(
    dataset: str, segment: str, ra: RunResult, rb: RunResult, queries: np.ndarray, settings: CompareSettings
) -> list[dict[str, Any]]:
    """One row per system measure of a pair, from the two runs' lists over ``queries`` stacked together.

    * p-value: the paired randomization test over users. Each of ``system_resamples`` replicates
      swaps the two systems' lists for a random half of the users (a fair coin per user) and
      recomputes both values; p = (1 + #{|d*| >= |d|}) / (R + 1). Exact under the null that the
      two systems' lists are exchangeable for every user, whatever the measure (no variance estimate).
    * CI of d = value_b - value_a: the centred bootstrap interval over users (both runs get the
      same resamples), as in :func:`system_summary`.

    Each side's value is the measure of the lists that side weighs, so ``mean_a`` is run a's own
    value (its summary row's): items a run recommends outside the measure's universe join that
    run's universe (Gini's n), not the other's, in the observed values and in every replicate.
    """
    measures = _system_measures(ra, rb)
    if not measures:
        return []
    joined = _joined(ra, rb, queries)
    n = len(queries)
    swaps, resamples = (_user_keys(settings, dataset, segment, queries, draw) for draw in ("swap", "resample"))
    replicates = settings.system_resamples
    block = max(1, BLOCK_CELLS // max(2 * n, 1))

    def difference(weights_a: np.ndarray, weights_b: np.ndarray) -> dict[Measure, np.ndarray]:
        values_a, values_b = _both_sides(joined, measures, weights_a, weights_b)
        return {m: values_b[m] - values_a[m] for m in measures}

    observed_a, observed_b = _both_sides(joined, measures, np.ones((1, n)), np.zeros((1, n)))
    value_a = {m: float(observed_a[m][0]) for m in measures}
    observed = {m: float(observed_b[m][0] - observed_a[m][0]) for m in measures}
    swapped: dict[Measure, list[np.ndarray]] = {m: [] for m in measures}
    booted: dict[Measure, list[np.ndarray]] = {m: [] for m in measures}
    for start in range(0, replicates, block):
        size = min(block, replicates - start)
        coin = keyed.sign_matrix(swaps, start, size)  # 1: the user's two lists swapped in this replicate
        for m, v in difference(1.0 - coin, coin).items():
            swapped[m].append(v)
        drawn = keyed.poisson_matrix(resamples, start, size)
        for m, v in difference(drawn, np.zeros_like(drawn)).items():
            booted[m].append(v)
    out = []
    nan = float("nan")
    for m in measures:
        delta = observed[m]
        if not math.isfinite(delta):  # undefined on these users (one group's disparity, say): nothing to test, no p
            out.append(_system_row(dataset, segment, m, ra.system, rb.system, value_a[m], delta, n, replicates, settings))
            continue
        null = np.concatenate(swapped[m])
        # |d*| >= |d| up to rounding: a replicate equal to the observed difference counts
        p_swap = float((1 + np.sum(np.abs(null) >= abs(delta) * (1 - 1e-12) - 1e-15)) / (null.size + 1)) if n else nan
        interval, p_boot = _bootstrapped(delta, np.concatenate(booted[m]))
        out.append(
            _system_row(
                dataset, segment, m, ra.system, rb.system, value_a[m], delta, n, replicates, settings, interval, (p_swap, p_boot)
            )
        )
    return out


def _bootstrapped(delta: float, diffs: np.ndarray) -> tuple[tuple[float, float], float]:
    """A system measure's difference ``delta`` against its bootstrap replicates ``diffs``: the centred 95% interval
    and the bootstrap p, (1 + #{|d* - mean d*| >= |d|}) / (B + 1) over the finite replicates (NaN without one)."""
    finite = diffs[np.isfinite(diffs)]
    if not finite.size:
        return _centred_interval(delta, diffs), float("nan")
    spread = np.abs(finite - finite.mean())
    return _centred_interval(delta, diffs), float((1 + np.sum(spread >= abs(delta))) / (finite.size + 1))


def _target(definition: Any, measure: Measure) -> float:
    """The measure's target (:meth:`~harness.measures.registry.MeasureDef.target_of`), NaN for none: a column."""
    target = definition.target_of(measure)
    return float("nan") if target is None else float(target)


def _system_row(
    dataset: str,
    segment: str,
    m: Measure,
    system_a: str,
    system_b: str,
    value_a: float,
    delta: float,
    n: int,
    replicates: int,
    settings: CompareSettings,
    interval: tuple[float, float] = (math.nan, math.nan),
    p: tuple[float, float] = (math.nan, math.nan),
) -> dict[str, Any]:
    """A system measure's comparison row: the bootstrap ``interval`` of the difference and the ``p`` of the
    randomization and bootstrap tests. Where either value is undefined (``delta`` not finite) the difference, its
    interval and every p are NaN: never significant, never counted in its family's correction, read as undefined."""
    nan = float("nan")
    if not math.isfinite(delta):
        delta, interval, p = nan, (nan, nan), (nan, nan)
    low, high = interval
    definition = REGISTRY.definition(m)
    row: dict[str, Any] = {
        "dataset": dataset,
        "segment": segment,
        "measure": str(m),
        "system_a": system_a,
        "system_b": system_b,
        "aggregate": "system",
        "mean_a": value_a,
        "mean_b": value_a + delta,
        "delta": delta,
        "ci_low": low,
        "ci_high": high,
        "ci_low_t": nan,
        "ci_high_t": nan,
        "ci_low_bootstrap": low,
        "ci_high_bootstrap": high,
        "effect_size": nan,
        "higher_is_better": definition.higher(m),
        "target": _target(definition, m),
        "wins": 0,
        "ties": 0,
        "losses": 0,
        "n_queries": n,
        "few_queries": n < FEW_QUERIES,
        "n_dropped_nan": 0,
        "p_tukey_hsd": nan,
        "n_queries_tukey": 0,
        "p_floor": 1.0 / (replicates + 1),
        "resampled": True,  # over users, always
        "p_randomization": p[0],
        "p_bootstrap": p[1],
        "mde": nan,
        "n_needed": nan,
        "effect_size_low": nan,
        "effect_size_high": nan,
    }
    for test in settings.tests:
        row.setdefault(f"p_{test}", nan)
    return row


def _joined(ra: RunResult, rb: RunResult, queries: np.ndarray) -> RankedLists:
    """Both runs' lists over ``queries`` stacked together: a's users, then b's."""

    assert ra.lists is not None and rb.lists is not None
    return stack([(ra.lists, _rows(ra, queries)), (rb.lists, _rows(rb, queries))])


def _both_sides(
    joined: RankedLists, measures: Sequence[Measure], weights_a: np.ndarray, weights_b: np.ndarray
) -> tuple[dict[Measure, np.ndarray], dict[Measure, np.ndarray]]:
    """(f(a), f(b)) per row of weights over :func:`_joined` lists, where run a is weighted by [weights_a over a's users,
    weights_b over b's] and run b the other way round (one array each: shared counts)."""
    as_a, as_b = np.hstack([weights_a, weights_b]), np.hstack([weights_b, weights_a])
    values_a = {m: REGISTRY.definition(m).compute_system(joined, m, as_a) for m in measures}
    values_b = {m: REGISTRY.definition(m).compute_system(joined, m, as_b) for m in measures}
    return values_a, values_b


def system_replicates(
    ra: RunResult, rb: RunResult, measure: Measure, segment: str, settings: CompareSettings
) -> tuple[float, float, np.ndarray, np.ndarray, int]:
    """A system measure of two runs over the users of ``segment`` both have: (value of a, value of b, each one's
    value in every bootstrap resample of those users, how many users), from the keyed draws the comparison's CI uses.

    Both runs get the same resample of users, so ``reps_b - reps_a`` are the comparison's bootstrap differences.
    """
    queries = _shared_queries(ra, rb, segment)
    joined = _joined(ra, rb, queries)

    def both(weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # every user drawn alike for both runs
        values_a, values_b = _both_sides(joined, (measure,), weights, np.zeros_like(weights))
        return values_a[measure], values_b[measure]

    n = len(queries)
    value_a, value_b = both(np.ones((1, n)))
    keys = _user_keys(settings, ra.dataset, segment, queries, "resample")
    block = max(1, BLOCK_CELLS // max(2 * n, 1))
    reps_a, reps_b = [], []
    for start in range(0, settings.system_resamples, block):
        va, vb = both(keyed.poisson_matrix(keys, start, min(block, settings.system_resamples - start)))
        reps_a.append(va)
        reps_b.append(vb)
    return float(value_a[0]), float(value_b[0]), np.concatenate(reps_a), np.concatenate(reps_b), n


def version_replicates(
    runs_a: Sequence[RunResult],
    runs_b: Sequence[RunResult],
    measures: tuple[Measure, ...],
    segment: str,
    settings: CompareSettings,
) -> dict[Measure, VersionReplicates]:
    """System measures of two versions (each the mean over its runs), with ``system_resamples`` replicates resampled
    over users and seeds both: the pigeonhole bootstrap (Owen 2007). Every run gets the keyed user resample of
    :func:`system_summary` (a user's draws are keyed by the user: the same for every run), and each replicate draws
    each system's runs with replacement (keyed by the seed, dataset, segment and system), so ``reps_b - reps_a`` are
    the differences' replicates."""
    if not measures:
        return {}
    sides, n = [], 0
    for runs in (runs_a, runs_b):
        values: dict[Measure, list[float]] = {m: [] for m in measures}
        replicates: dict[Measure, list[np.ndarray]] = {m: [] for m in measures}
        for run in runs:  # each run once, every measure in the same pass (system_summary's resamples)
            queries = np.sort(run.per_query.query_ids[dict(run.segment_masks())[segment]].astype(str)).astype(object)
            keys = _user_keys(settings, run.dataset, segment, queries, "resample")
            full, samples = _resampled(run, measures, queries, keys, settings.system_resamples)
            for m in measures:
                values[m].append(full[m])
                replicates[m].append(samples[m])
            n = len(queries)
        seed_keys = keyed.query_keys(
            settings.seed,
            (runs[0].dataset, segment, runs[0].system, "seeds"),
            np.array([str(k) for k in range(len(runs))], dtype=object),
        )
        drawn = keyed.uniform_matrix(seed_keys, len(runs), 0, settings.system_resamples).astype(np.intp)  # reps x runs
        sides.append(
            {
                m: (float(np.mean(values[m])), np.take_along_axis(np.stack(replicates[m], axis=1), drawn, axis=1).mean(axis=1))
                for m in measures
            }
        )
    a, b = sides
    return {m: VersionReplicates(a[m][0], b[m][0], a[m][1], b[m][1], n) for m in measures}


class VersionReplicates(NamedTuple):
    """Two versions' value of a system measure and its replicates over users and seeds (:func:`version_replicates`),
    over ``n`` users: what a comparison row and a release guard (``ResampledValues``) read."""

    value_a: float
    value_b: float
    reps_a: np.ndarray
    reps_b: np.ndarray
    n: int


def _version_system_rows(
    dataset: str, segment: str, runs_a: Sequence[RunResult], runs_b: Sequence[RunResult], settings: CompareSettings
) -> list[dict[str, Any]]:
    """The system measures of two versions (:func:`version_replicates`): the difference of the runs' means, its
    centred bootstrap interval and bootstrap p over users and seeds (approximate); no randomization test (the runs of
    one system are not paired with the other's)."""
    measures = [
        m
        for m in _system_measures(runs_a[0], runs_b[0])
        if all(m in r.system_measures and r.lists is not None for r in (*runs_a, *runs_b))
    ]
    out = []
    for m, (value_a, value_b, reps_a, reps_b, n) in version_replicates(
        runs_a, runs_b, tuple(measures), segment, settings
    ).items():
        delta = value_b - value_a
        if not math.isfinite(delta):
            row = _system_row(
                dataset, segment, m, runs_a[0].system, runs_b[0].system, value_a, delta, n, settings.system_resamples, settings
            )
        else:
            interval, p_boot = _bootstrapped(delta, reps_b - reps_a)
            row = _system_row(
                dataset,
                segment,
                m,
                runs_a[0].system,
                runs_b[0].system,
                value_a,
                delta,
                n,
                settings.system_resamples,
                settings,
                interval,
                (math.nan, p_boot),
            )
        for test in settings.tests:  # the user-paired tests do not describe versions (comparison.versions)
            if test not in ("randomization", "bootstrap"):
                row.pop(f"p_{test}", None)
        row["version_note"] = f"{len(runs_a)} runs against {len(runs_b)}: the bootstrap over users and seeds (approximate)"
        out.append(row)
    return out


def _evaluated(result: RunResult, rows: np.ndarray, measures: tuple[Measure, ...]) -> np.ndarray:
    """(M, n): whether each measure counts each of the run's per-query ``rows`` (its own queries:
    :attr:`PerQuery.evaluated`)."""
    per_query = result.per_query
    if per_query.evaluated is None:
        return np.ones((len(measures), rows.size), dtype=bool)
    columns = [per_query.measures.index(m) for m in measures]
    return np.ascontiguousarray(per_query.evaluated[rows][:, columns].T)


def _values(result: RunResult, rows: np.ndarray, measures: tuple[Measure, ...]) -> np.ndarray:
    """(M, n): the run's value of each measure on each of its per-query ``rows``."""
    per_query = result.per_query
    columns = [per_query.measures.index(m) for m in measures]
    return np.ascontiguousarray(per_query.values[rows][:, columns].T)


@dataclass(frozen=True)
class PairedBlock:
    """The paired comparisons of one (dataset, segment): one row per pair x measure, tested together.

    ``tested``: every test of every row (each on its own queries: those both systems were
    evaluated on, less the NaN a measure leaves undefined); ``mean_a``, ``mean_b``: both
    aggregates over those queries; ``dropped``: the queries left out for NaN.
    """

    specs: list[tuple[tuple[str, str], Measure]]
    tested: paired.Tested
    mean_a: np.ndarray
    mean_b: np.ndarray
    dropped: np.ndarray
    resampled: np.ndarray  # the rows the randomization test and the bootstrap ran on (stats.resampling)


@dataclass(frozen=True)
class BlockArrays:
    """A paired block's rows over its queries.

    ``diffs`` (F, n): b - a on the tests' scale, 0 where ``mask`` leaves a query out (one of the
    two systems lacks it, or the measure is NaN for it); ``side_a``, ``side_b``: each row's
    values of a and b (the aggregates are taken over the row's mask); ``nan``: per pair and
    system (0 for a, 1 for b) and measure, the first query id with a NaN that ``nan: error``
    refuses and how many there are.
    """

    specs: list[tuple[tuple[str, str], Measure]]
    diffs: np.ndarray
    mask: np.ndarray
    side_a: np.ndarray
    side_b: np.ndarray
    dropped: np.ndarray
    nan: dict[tuple[int, int, int], tuple[str, int]]


def block_arrays(
    union: np.ndarray,
    values: dict[str, np.ndarray],
    evaluated: dict[str, np.ndarray],
    pairs: list[tuple[str, str]],
    measures: tuple[Measure, ...],
) -> BlockArrays:
    """``values[s]`` (M, n): system s's values on ``union`` (sorted query ids), NaN where ``evaluated[s]`` (M, n) is
    False (the system has not the query, or the measure does not count it)."""
    strict = np.array([not REGISTRY.definition(m).undefined_skipped for m in measures], dtype=bool)
    specs, diffs, masks, side_a, side_b, dropped = [], [], [], [], [], []
    nan: dict[tuple[int, int, int], tuple[str, int]] = {}
    for number, (a, b) in enumerate(pairs):
        both = evaluated[a] & evaluated[b]
        for side, system in enumerate((a, b)):
            missing = np.isnan(values[system]) & both & strict[:, None]
            for j in np.flatnonzero(missing.any(axis=1)).tolist():
                nan[(number, side, j)] = (str(union[np.argmax(missing[j])]), int(missing[j].sum()))
        for j, measure in enumerate(measures):
            defined = both[j] & ~np.isnan(values[a][j]) & ~np.isnan(values[b][j])  # nan: drop tests on the rest
            specs.append(((a, b), measure))
            diffs.append(np.where(defined, _test_scale(measure, values[b][j]) - _test_scale(measure, values[a][j]), 0.0))
            masks.append(defined)
            side_a.append(values[a][j])
            side_b.append(values[b][j])
            dropped.append(int(both[j].sum() - defined.sum()))
    shape = (len(specs), union.size)
    return BlockArrays(
        specs,
        np.array(diffs).reshape(shape),
        np.array(masks, dtype=bool).reshape(shape),
        np.array(side_a).reshape(shape),
        np.array(side_b).reshape(shape),
        np.array(dropped, dtype=np.int64),
        nan,
    )


def raise_first_nan(
    dataset: str,
    segment: str,
    pairs: list[tuple[str, str]],
    measures: tuple[Measure, ...],
    nan: dict[tuple[int, int, int], tuple[str, int]],
) -> None:
    """Under ``nan: error``: the first NaN (pair, then system a before b, then measure, then query id), if any."""
    if not nan:
        return
    number, side, j = min(nan)
    counted = sum(count for (p, s, _), (_, count) in nan.items() if (p, s) == (number, side))
    raise ComparisonError(
        f"{pairs[number][side]} has no value (NaN) for {measures[j]} on query {nan[(number, side, j)][0]!r} of dataset"
        f" {dataset!r} (segment {segment}, {counted} NaN value(s) in all): a paired test cannot use it",
        hint="fix the run or the measure, or set stats.nan: drop to leave such queries out of that comparison",
    )


RESAMPLING_TESTS = ("randomization", "bootstrap")


def t_trusted_from(alpha: float) -> int:
    """The fewest queries from which ``resampling: auto`` lets t stand for the resampling tests: the gate's rule
    (:func:`~harness.stats.bounds.t_trusted_from`) for a harm to 1% of the users, at each tail's ``alpha / 2``.

    >>> t_trusted_from(0.05)   # (1 - 0.01)^n <= 0.1 x 0.025
    597
    """
    return bounds.t_trusted_from(DEFAULT_MIN_AFFECTED, alpha / 2)


def resampled_rows(diffs: np.ndarray, mask: np.ndarray, settings: CompareSettings) -> np.ndarray:
    """(F,) the rows of a block the resampling tests run on: every row under ``resampling: always``, those where the
    t-test cannot be trusted under ``auto`` (:func:`~harness.stats.bounds.t_trusted_rows`, each decided on its own
    differences), none where no resampling test is computed (versions)."""
    if not any(test in RESAMPLING_TESTS for test in tests_of(settings)):
        return np.zeros(diffs.shape[0], dtype=bool)
    if settings.resampling == "always":
        return np.ones(diffs.shape[0], dtype=bool)
    return ~bounds.t_trusted_rows(diffs, mask, settings.alpha, t_trusted_from(settings.alpha))


def tests_of(settings: CompareSettings) -> tuple[str, ...]:
    """The tests every block computes: the configured ones, and t and bootstrap (their CIs are always reported); for
    versions, only the t's sums (the rows' version test comes from the runs' tables, :mod:`~harness.comparison.versions`)."""
    if settings.claim == "version":
        return ("t",)
    return tuple(dict.fromkeys(("t", "bootstrap", *settings.tests)))


# (the sorted union of the systems' queries, each system's (M, n) values on it, where it has them (M, n)): see _on_union
OnUnion = tuple[np.ndarray, dict[str, np.ndarray], dict[str, np.ndarray]]


def _on_union(
    by_system: dict[str, RunResult], segment: str, systems: list[str], measures: tuple[Measure, ...], same: bool
) -> OnUnion:
    """(the sorted union of the systems' queries in ``segment``, each system's (M, n) values on it (NaN where it has
    none), and where it has them (M, n): its queries, each measure's own among them).

    ``same``: every system's table holds the same queries in ascending order (:func:`same_queries`, the usual case);
    where their segment masks agree too, the union is those rows of the tables, read by position.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    masks = [dict(by_system[s].segment_masks()).get(segment) for s in systems]
    first = masks[0]
    if same and first is not None and all(m is not None and np.array_equal(m, first) for m in masks[1:]):
        rows = np.flatnonzero(first)
        union = np.asarray(by_system[systems[0]].per_query.query_ids[rows], dtype=object)
        values = {s: _values(by_system[s], rows, measures) for s in systems}
        return union, values, {s: _evaluated(by_system[s], rows, measures) for s in systems}
    # in Arrow: the union's sort compares UTF-8 bytes, which orders as Python's sorted() does (by code point), and
    # membership is hashed; sorting and searching 200,000 Python strings took 0.25 s a segment
    ids = {s: pa.array(list(_segment_queries(by_system[s], segment)), pa.string()) for s in systems}
    every = pc.unique(pa.chunked_array(list(ids.values()), pa.string()))
    sorted_ids = every.take(pc.sort_indices(every))
    union = sorted_ids.to_numpy(zero_copy_only=False)  # Python strings (an object array)
    values, evaluated = {}, {}
    for system in systems:
        present = pc.is_in(sorted_ids, value_set=ids[system]).to_numpy(zero_copy_only=False).astype(bool)
        rows = _rows(by_system[system], union[present])
        grid_values = np.full((len(measures), union.size), np.nan)
        grid_values[:, present] = _values(by_system[system], rows, measures)
        where = np.zeros((len(measures), union.size), dtype=bool)
        where[:, present] = _evaluated(by_system[system], rows, measures)
        values[system], evaluated[system] = grid_values, where
    return union, values, evaluated


def _paired_block(
    dataset: str,
    segment: str,
    pairs: list[tuple[str, str]],
    measures: tuple[Measure, ...],
    here: OnUnion,
    settings: CompareSettings,
) -> PairedBlock:
    """Every pair x measure of a segment as rows over the union of the systems' queries (``here``: :func:`_on_union`),
    each row masked to its own.

    Each query's random signs and Poisson weights are keyed by (seed, dataset, segment,
    query id) (:mod:`harness.stats.keyed`), shared by every row; a row's p-values depend on
    its own differences and those draws only, so no other system, measure, dataset or query
    changes them, and the sums are exact (:mod:`harness.stats.grid`), so neither does the
    queries' order or partitioning.
    """
    union, values, evaluated = here
    arrays = block_arrays(union, values, evaluated, pairs, measures)
    if settings.nan == "error":  # a measure's own "undefined for this user" (NaN) is no error: dropped
        raise_first_nan(dataset, segment, pairs, measures, arrays.nan)
    keys = keyed.query_keys(settings.seed, (dataset, segment), union)
    resampled = resampled_rows(arrays.diffs, arrays.mask, settings)
    tested = paired.run_tests(
        arrays.diffs, keys, tests_of(settings), settings.permutations, settings.resamples, mask=arrays.mask, resample=resampled
    )
    means = [
        np.array([aggregate_values(m, side[i][arrays.mask[i]]) for i, (_, m) in enumerate(arrays.specs)])
        for side in (arrays.side_a, arrays.side_b)
    ]
    return PairedBlock(arrays.specs, tested, means[0], means[1], arrays.dropped, resampled)


def paired_rows(dataset: str, segment: str, block: PairedBlock, settings: CompareSettings) -> list[dict[str, Any]]:
    """The comparison rows of a tested block."""
    specs, tested, mean_a, mean_b, dropped = block.specs, block.tested, block.mean_a, block.mean_b, block.dropped
    t, boot = tested.t, tested.bootstrap
    p: dict[str, np.ndarray] = {"t": t.p, "bootstrap": boot.p, "wilcoxon": tested.wilcoxon, "randomization": tested.randomization}
    nonzero = tested.nonzero
    floors = {
        "t": np.zeros(len(specs)),
        "wilcoxon": np.where(nonzero <= paired.WILCOXON_EXACT_MAX, paired.exact_sign_floor(nonzero), 0.0),
        "randomization": paired.randomization_floor(nonzero, settings.permutations),
        "bootstrap": np.full(len(specs), paired.bootstrap_floor(settings.resamples)),
    }
    wins, losses = tested.positive, tested.nonzero - tested.positive
    ties = tested.n - tested.nonzero
    out = []
    for i, ((a, b), measure) in enumerate(specs):
        definition = REGISTRY.definition(measure)
        higher = definition.higher(measure)
        n = int(tested.n[i])
        resampled = bool(block.resampled[i])
        primary = _paired_primary(resampled, settings)
        to_scale = _interval_mapping(definition.aggregate, n, float(mean_a[i]))
        row: dict[str, Any] = {
            "dataset": dataset,
            "segment": segment,
            "measure": str(measure),
            "system_a": a,
            "system_b": b,
            "aggregate": definition.aggregate,
            "mean_a": float(mean_a[i]) if n else float("nan"),
            "mean_b": float(mean_b[i]) if n else float("nan"),
            "delta": float(mean_b[i] - mean_a[i]) if n else float("nan"),
            "ci_low": to_scale(float(t.ci_low[i])),
            "ci_high": to_scale(float(t.ci_high[i])),
            "ci_low_t": to_scale(float(t.ci_low[i])),
            "ci_high_t": to_scale(float(t.ci_high[i])),
            "ci_low_bootstrap": to_scale(float(boot.ci_low[i])),
            "ci_high_bootstrap": to_scale(float(boot.ci_high[i])),
            "effect_size": float(tested.effect_size[i]),
            "higher_is_better": higher,
            "target": _target(definition, measure),
            "wins": int(wins[i] if higher else losses[i]),
            "ties": int(ties[i]),
            "losses": int(losses[i] if higher else wins[i]),
            "n_queries": n,
            "few_queries": n < FEW_QUERIES,
            "n_dropped_nan": int(dropped[i]),
            "p_tukey_hsd": float("nan"),
            "n_queries_tukey": 0,
            "p_floor": float(floors[primary][i]),
            "resampled": resampled,
        }
        for test in dict.fromkeys((*settings.tests, primary)):  # t's p where it stands for the resampling tests
            row[f"p_{test}"] = float(p[test][i])
        row["mean_difference"], row["sd_difference"] = float(t.mean[i]), float(t.sd[i])  # typed fields, not columns
        row["mde"], row["n_needed"] = _planning(n, float(t.ci_low[i]), float(t.ci_high[i]), settings.alpha, to_scale)
        # d_z's exact 95% interval (normal differences), from the t statistic; identical systems: [0, 0] as their d_z
        row["effect_size_low"], row["effect_size_high"] = (
            (0.0, 0.0) if n and not int(nonzero[i]) else power.effect_size_interval(n, float(t.statistic[i]))
        )
        out.append(row)
    return out


def _planning(n: int, low: float, high: float, alpha: float, to_scale: Callable[[float], float]) -> tuple[float, float]:
    """(the smallest difference these n queries detect with 80% power, the queries that would detect the observed one):
    the two-sided paired t-test at alpha before correction, with the sd of the differences its 95% interval implies.

    NaN below 2 queries, or when the differences are constant (their sd 0: any difference is detected).
    """
    if n < 2 or not (high > low):
        return float("nan"), float("nan")
    sd = paired.interval_sd(n, low, high)
    mde = to_scale(power.minimum_detectable_effect(n, sd, alpha, DEFAULT_POWER, "two")) - to_scale(0.0)
    needed = power.sample_size(abs(low + high) / 2, sd, alpha, DEFAULT_POWER, "two")
    return float(mde), float("nan") if needed is None else float(needed)


def _interval_mapping(aggregate: str, n: int, mean_a: float):  # type: ignore[no-untyped-def]
    """Carry a bound on the tests' scale (mean difference, or mean log ratio) to the aggregate's scale."""
    if aggregate == "gmean":
        return lambda bound: mean_a * float(np.expm1(bound))
    if aggregate in ("sum", "count"):
        return lambda bound: bound * n
    return lambda bound: bound


@dataclass(frozen=True)
class GroupTested:
    """Three systems or more on one (dataset, segment): per measure, the two-way ANOVA, the randomised Tukey HSD's
    (m, m) p-values and the queries analysed (those every system has and the measure defines for all of them)."""

    anova: list[AnovaResult]
    tukey: np.ndarray
    n: np.ndarray


def group_arrays(
    union: np.ndarray,
    values: dict[str, np.ndarray],
    evaluated: dict[str, np.ndarray],
    systems: list[str],
    measures: tuple[Measure, ...],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(the queries every system has, (M, m, n) values on the tests' scale, (M, n) where every system's is defined)."""
    every = np.logical_and.reduce([evaluated[s].any(axis=0) for s in systems])
    data = np.stack([_on_test_scale(measures, values[s][:, every]) for s in systems], axis=1)  # (M, m, n)
    counted = np.logical_and.reduce([evaluated[s][:, every] for s in systems])  # by each measure, for every system
    return union[every], data, ~np.isnan(data).any(axis=1) & counted


def tukey_identity(dataset: str, segment: str, systems: list[str]) -> tuple[str, ...]:
    """What the Tukey HSD's permutations are keyed by, beside the seed and the query id."""
    return (dataset, segment, "tukey-hsd", *sorted(systems))


def _group_tests(
    dataset: str,
    segment: str,
    systems: list[str],
    measures: tuple[Measure, ...],
    here: OnUnion,
    settings: CompareSettings,
    done: group_stats.Done | None = None,
) -> GroupTested:
    """The ANOVA and Tukey HSD here, over the queries every system has (``here``: :func:`_on_union`); ``done``: told
    the share of the Tukey trials done."""
    union, values, evaluated = here
    queries, data, defined = group_arrays(union, values, evaluated, systems, measures)
    # each measure is analysed over the queries where it is defined for every system (beyond accuracy: its own users;
    # NaN under nan: drop), so it never shrinks another's; the draws are keyed by query, so grouping changes nothing
    keys = keyed.query_keys(settings.seed, tukey_identity(dataset, segment, systems), queries)
    results, tukey = group_stats.run(data, keys, settings.permutations, mask=defined, done=done)
    assert tukey is not None
    return GroupTested(results, tukey, defined.sum(axis=1))


def _anova_rows(
    dataset: str,
    segment: str,
    systems: list[str],
    measures: tuple[Measure, ...],
    tested: GroupTested,
    pair_rows: list[dict[str, Any]],
) -> list[dict[str, Any]]:
    """The ANOVA rows of measures analysed over 2 queries or more; fills p_tukey_hsd in ``pair_rows``."""
    position = {s: i for i, s in enumerate(systems)}
    out = []
    for j, measure in enumerate(measures):
        n = int(tested.n[j])
        if n < 2:
            continue
        result = tested.anova[j]
        out.append(
            {
                "dataset": dataset,
                "segment": segment,
                "measure": str(measure),
                "systems": len(systems),
                "n_queries": n,
                "F": result.f,
                "p": result.p,
                "df_systems": result.df_systems,
                "df_residual": result.df_residual,
                "residual_variance": result.residual_variance,
            }
        )
        for row in pair_rows:
            if row["measure"] == str(measure):
                row["p_tukey_hsd"] = float(tested.tukey[j][position[row["system_a"]], position[row["system_b"]]])
                row["n_queries_tukey"] = n
    return out


def _correct(rows: list[dict[str, Any]], settings: CompareSettings) -> None:
    def family(row: dict[str, Any]) -> tuple[str, ...]:
        if settings.family == "grid":
            return (row["segment"],)
        return (row["dataset"], row["segment"], row["measure"])

    families: dict[tuple[str, ...], list[int]] = {}
    for i, row in enumerate(rows):
        families.setdefault(family(row), []).append(i)
    system_tests = ("randomization", "bootstrap") if any(r["aggregate"] == "system" for r in rows) else ()
    version = ("version",) if settings.claim == "version" else ()
    primaries = [_primary(row, settings, bool(version)) for row in rows]
    # the judged datasets' rows (ppi), and t where it stands for the resampling tests
    primary_tests = tuple(sorted(set(primaries) - set(settings.tests) - {*version, *system_tests}))
    tests = tuple(dict.fromkeys((*version, *(() if version else settings.tests), *system_tests, *primary_tests)))
    for members in families.values():
        for test in tests:
            adjusted = correct(np.array([rows[i].get(f"p_{test}", np.nan) for i in members]), settings.correction)
            for i, value in zip(members, adjusted.tolist(), strict=True):
                rows[i][f"p_{test}_adj"] = value
        # The smallest p the primary test can give a row (2/2^k for an exact sign-flip or Wilcoxon test over k
        # non-zero differences, 1/(B+1) for a sampled one): corrected over its family it may never reach alpha.
        factor = len(members) if settings.correction in ("holm", "bonferroni") else 1
        for i in members:
            rows[i]["resolution_limited"] = bool(rows[i]["p_floor"] * factor >= settings.alpha)
    for members in families.values():  # rows decided by different tests: their primary p-values corrected together
        if len({primaries[i] for i in members}) > 1:
            joint = correct(np.array([rows[i][f"p_{primaries[i]}"] for i in members]), settings.correction)
            for i, value in zip(members, joint.tolist(), strict=True):
                rows[i]["p_joint_adj"] = value
    for row, primary in zip(rows, primaries, strict=True):
        p_adj = row.pop("p_joint_adj", row[f"p_{primary}_adj"])
        row["p_adj"] = p_adj
        row["significant"] = bool(p_adj == p_adj and p_adj < settings.alpha and row["n_queries"] >= 2)
        row.update(
            {
                "primary_test": primary,
                "correction": settings.correction,
                "family": settings.family,
                "alpha": settings.alpha,
                "permutations": settings.permutations,
                "resamples": settings.system_resamples if row["aggregate"] == "system" else settings.resamples,
                "seed": settings.seed,
            }
        )


def _primary(row: dict[str, Any], settings: CompareSettings, version: bool) -> str:
    """The test whose corrected p decides a row's significance."""
    if row.get("estimator") == judged.ESTIMATOR and not (version and row["aggregate"] != "system"):
        return "ppi"  # under the version claim a judged mean is tested over users and seeds (p_version), corrected
    if row["aggregate"] == "system":
        return "bootstrap" if version else "randomization"  # over users and seeds; else swapping users' lists
    if version:
        return "version"
    return _paired_primary(row.get("resampled", True), settings)


def _paired_primary(resampled: bool, settings: CompareSettings) -> str:
    """The primary test of a row of paired differences: the configured one, or t where ``resampling: auto`` trusted it
    and did not run the resampling tests (they would add only their Monte Carlo error to t's p)."""
    return settings.primary if resampled or settings.primary not in RESAMPLING_TESTS else "t"
