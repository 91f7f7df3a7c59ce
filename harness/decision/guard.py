"""One guard put to its one-sided tests: its values on the tests' scale, the test that fits them, and its result.

A guard's values (:class:`PairedValues` per user, :class:`PairedMoments` from a comparison's exact sums,
:class:`ResampledValues` for a measure with one value per run, a version's seeded tables) become the users' drops
beyond the guard's margin in the measure's direction; :mod:`harness.stats` bounds them (t, betting or bootstrap) and
plans the users that would decide them; :func:`guard_result` states the verdict and its reason.

>>> import numpy as np
>>> from harness.measures.spec import Measure
>>> guard = Guard(Measure("AP"), "max_drop", 0.05)
>>> production = np.random.default_rng(1).uniform(0.2, 0.8, 400)
>>> candidate = production - 0.01 + np.random.default_rng(2).normal(0, 0.02, 400)
>>> tested = one_sided(guard, PairedValues(production, candidate), 0.05, 0.8, "t")
>>> tested.method == T_TEST, tested.drop_high < tested.margin, guard_result(guard, "d", "all", tested, 1.0, 0.05, 0.8).verdict
(True, True, 'PASS')
"""

from __future__ import annotations

import dataclasses
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from harness.comparison.versions import SeededValues
from harness.config.defaults import DEFAULT_MIN_AFFECTED
from harness.config.schema import Guard
from harness.decision import wording
from harness.decision.verdict import BETTING, BOOTSTRAP, PPI, T_TEST, UNDECIDED, VERSION, GuardLabel, GuardResult
from harness.evaluation.results import MIN_GEO_MEAN, aggregate_values
from harness.measures.registry import REGISTRY
from harness.measures.spec import Measure
from harness.stats import bounds, paired, power, ppi
from harness.stats.bounds import BoundChoice
from harness.stats.seeds import detectable

_BETTING_PLAN = "approximately, for the betting bound"


@dataclass(frozen=True)
class PairedValues:
    """One measure's values per user for production and candidate, aligned (the same user at the same index)."""

    production: np.ndarray
    candidate: np.ndarray


@dataclass(frozen=True)
class ResampledValues:
    """A measure with one value per run: both values and both in each bootstrap resample of the users (the same one)."""

    production: float
    candidate: float
    production_replicates: np.ndarray
    candidate_replicates: np.ndarray
    n: int


@dataclass(frozen=True)
class PairedMoments:
    """The mean and sd of candidate - production per user over ``n`` users, and both aggregates over those users: what
    a comparison holds (:class:`~harness.comparison.rows.Comparison`), from exact sums on any engine.

    An absolute margin only shifts the per-user differences, so a ``max_drop`` or ``min_gain``
    guard on a mean follows from these alone, bit for bit however they were computed.
    """

    production: float
    candidate: float
    n: int
    mean: float
    sd: float


@dataclass(frozen=True)
class CorrectedValues:
    """A judged dataset's values of a mean per user: both systems' under the judge's labels on every user (aligned),
    people's on the users they judged (``sampled``, a mask over them; their values in the same order), each user's
    stratum for a stratified sample, and the judge's name. The guard is decided on the judge's values corrected by
    people's (:mod:`harness.stats.ppi`)."""

    production: np.ndarray
    candidate: np.ndarray
    people_production: np.ndarray
    people_candidate: np.ndarray
    sampled: np.ndarray
    strata: np.ndarray | None = None
    judge: str = "judge"


Values = PairedValues | PairedMoments | ResampledValues | SeededValues | CorrectedValues | str  # a str: why not tested


@dataclass(frozen=True)
class GuardNumbers:
    """A guard's numbers before the gate's correction: on the aggregate's scale, and its two one-sided p-values."""

    production: float
    candidate: float
    drop: float
    margin: float
    drop_low: float
    drop_high: float
    p_pass: float
    p_fail: float
    n: int
    sd: float
    mde: float
    n_needed: int | None
    planned_for: str
    method: str
    changed: int | None = None
    undecided: str = ""  # why no bound decides (then both p are 1)
    note: str = ""  # what else the reader should know of the values (a version's seeds)
    t_from: int | None = None  # under auto, the users from which t decides this bounded measure (release.min_affected)
    judged: str = ""  # on a judged dataset: the queries people and the judge labelled (prediction-powered)

    @classmethod
    def nothing_decided(
        cls, production: float, candidate: float, drop: float, margin: float, n: int, sd: float, changed: int | None, reason: str
    ) -> GuardNumbers:
        """A guard no bound decides: no bounds, p = 1 both ways, nothing planned, and ``reason`` why."""
        return cls(
            production,
            candidate,
            drop,
            margin,
            math.nan,
            math.nan,
            1.0,
            1.0,
            n,
            sd,
            math.nan,
            None,
            "",
            UNDECIDED,
            changed,
            reason,
        )


def _aggregate(guard: Guard) -> str:
    aggregate = REGISTRY.definition(guard.measure).guard_aggregate(guard.measure)
    return "system" if aggregate == "catalogue" else aggregate


def one_sided(
    guard: Guard,
    values: PairedValues | PairedMoments | ResampledValues | SeededValues | CorrectedValues,
    alpha: float,
    target: float,
    bound: BoundChoice,
    min_affected: float | None = DEFAULT_MIN_AFFECTED,
) -> GuardNumbers | str:
    """A guard's one-sided test at ``alpha`` and its plan for ``target`` power, by the bound ``bound`` names; under
    ``auto``, t decides a measure with a known range only from :func:`~harness.stats.bounds.t_trusted_from` users
    for ``min_affected`` (``release.min_affected``; None: no such rule)."""
    if isinstance(values, ResampledValues):
        return _test_resampled(guard, values, alpha, target)
    if isinstance(values, SeededValues):
        return _test_version(guard, values, alpha, target)
    if isinstance(values, CorrectedValues):
        return _test_corrected(guard, values, alpha, target)
    if isinstance(values, PairedMoments):  # moments alone: the t-test is all they allow (release.bound: t)
        tested = _test_interval(guard, values, alpha, target)
        if isinstance(tested, GuardNumbers) and tested.undecided:  # sd 0: every user changed by the mean, or none did
            changed = 0 if values.mean == 0 else tested.n
            return _settle(tested, changed, bounds.no_spread(tested.n, changed))
        return tested
    terms = _excess_terms(guard, values)
    if isinstance(terms, str):
        return terms
    changed = bounds.changed_count(terms.drops)
    if bound != "t":
        chosen = _bounded(guard, terms, changed, alpha, target, bound, min_affected)
        if chosen is not None:
            return chosen
    tested = (
        _test_interval(guard, moments_of(values, guard.measure), alpha, target)
        if shifts_only(guard)
        else _test_paired(guard, terms, alpha, target)
    )
    if isinstance(tested, str):
        return tested
    if tested.undecided:
        return _settle(tested, changed, bounds.no_spread(tested.n, changed))
    if changed == 0:  # spread by a relative margin alone: t must not decide on it
        return _settle(tested, 0, "no user changed, and a sample that missed every changed user says nothing of them")
    tested = dataclasses.replace(tested, changed=changed)
    low, high = _range(guard, terms)
    if bound != "auto" or low is None or high is None or tested.n_needed is None:
        return tested
    # the users needed, by the bound that will decide there: t only from t_trusted_from users on, betting below
    distance, planned_for = _planned(guard, float(terms.margins.mean()), float((terms.drops - terms.margins).mean()))
    return _auto_planned(tested, tested.n_needed, distance, planned_for, (low, high), alpha, target, min_affected)


def _settle(tested: GuardNumbers, changed: int, reason: str) -> GuardNumbers:
    """The t-test's result, undecided for ``reason``."""
    return GuardNumbers.nothing_decided(
        tested.production, tested.candidate, tested.drop, tested.margin, tested.n, tested.sd, changed, reason
    )


class _Terms(NamedTuple):
    """A guard's values per user on the tests' scale (:func:`_excess_terms`)."""

    production: np.ndarray
    candidate: np.ndarray
    drops: np.ndarray  # in the measure's direction: log ratios for a geometric mean
    margins: np.ndarray  # the drop each user is allowed


def _excess_terms(guard: Guard, values: PairedValues) -> _Terms | str:
    """The users' values, drops and margins, or why there are too few users: the margin each user is allowed is ``r *
    production_i`` for a relative one, and a sum's margin spread over its n users."""
    aggregate, sign = _aggregate(guard), guard.sign
    prod, cand = np.asarray(values.production, dtype=np.float64), np.asarray(values.candidate, dtype=np.float64)
    n = int(prod.size)
    if n < 2:
        return f"{n} user(s) with values for both systems: a paired test needs 2 or more"
    if aggregate == "gmean":  # ratios of geometric means: differences of logs (relative margins only, see guards.py)
        r = guard.threshold / 100
        lp, lc = np.log(np.maximum(prod, MIN_GEO_MEAN)), np.log(np.maximum(cand, MIN_GEO_MEAN))
        return _Terms(prod, cand, sign * (lp - lc), np.full(n, -math.log1p(-r) if sign > 0 else math.log1p(r)))
    per_user = n if aggregate in ("sum", "count") else 1  # a margin on a sum is n times a margin on the mean
    margins = guard.margin(prod) if guard.condition == "max_drop_pct" else np.full(n, guard.margin() / per_user)
    return _Terms(prod, cand, sign * (prod - cand), margins)


def _range(guard: Guard, terms: _Terms) -> tuple[float, float] | tuple[None, None]:
    """The interval each user's excess drop lies in, from the measure's range, or (None, None) where it has none."""
    prod, cand = terms.production, terms.candidate
    aggregate = _aggregate(guard)
    # a geometric mean is tested on log ratios, which have no range
    value_range = None if aggregate == "gmean" else REGISTRY.definition(guard.measure).range_of(guard.measure)
    if value_range is not None and not (
        value_range[0] <= min(prod.min(), cand.min()) and max(prod.max(), cand.max()) <= value_range[1]
    ):
        value_range = None  # values outside the registry's range (custom gains, a judgment beyond the scale)
    return excess_range(guard, guard.sign, value_range) if value_range is not None else (None, None)


def _auto_planned(
    tested: GuardNumbers,
    n_t: int | None,
    distance: float,
    planned_for: str,
    excess_range: tuple[float, float],
    alpha: float,
    target: float,
    min_affected: float | None,
) -> GuardNumbers:
    """``tested`` with the users needed under ``auto`` for a measure whose excess lies in ``excess_range``: the fewer
    of the betting bound's users and t's (``n_t``), t's raised to :func:`~harness.stats.bounds.t_trusted_from` (below
    it t does not decide), and which plan that is, after ``planned_for`` (the case :func:`_planned` names)."""
    low, high = excess_range
    plan = bounds.auto_sample_size(n_t, distance, tested.sd, low, high, alpha, target, min_affected)
    if plan.needed is None:
        return dataclasses.replace(tested, n_needed=None)
    if plan.by == "t":
        label = (
            planned_for
            if n_t == plan.needed
            else f"{planned_for} (by t, which decides from {plan.t_from:,} users: release.min_affected)"
        )
    else:
        label = f"{planned_for} ({_BETTING_PLAN})"
    t_from = None if n_t is None or plan.t_from == sys.maxsize else plan.t_from
    return dataclasses.replace(tested, n_needed=plan.needed, planned_for=label, t_from=t_from)


def _bounded(
    guard: Guard, terms: _Terms, changed: int, alpha: float, target: float, bound: BoundChoice, min_affected: float | None
) -> GuardNumbers | None:
    """A guard on a mean (or geometric mean) bounded as ``bound`` says: None where that is the t-test (decided by the
    exact sums, as the comparisons decide it), else the betting bound's test or why nothing decides. ``changed``: the
    users whose drop is not 0."""
    aggregate, sign = _aggregate(guard), guard.sign
    prod, cand, drops, margins = terms
    n = int(prod.size)
    low, high = _range(guard, terms)
    found = bounds.mean_bound(drops - margins, low, high, alpha, bound, changed=changed, min_affected=min_affected)
    if found.method == "t":
        return None
    p_value, c_value = aggregate_values(guard.measure, prod), aggregate_values(guard.measure, cand)
    scale = _to_drop(aggregate, sign, n, p_value)
    mean_margin = float(margins.mean())
    drop = sign * (p_value - c_value)
    if found.method == "none":
        return GuardNumbers.nothing_decided(p_value, c_value, drop, scale(mean_margin), n, found.sd, changed, found.reason)
    distance, planned_for = _planned(guard, mean_margin, found.mean)
    mde, n_needed = bounds.betting_plan(n, found.sd, low, high, alpha, target, distance)  # type: ignore[arg-type]
    betting = GuardNumbers(
        p_value,
        c_value,
        drop,
        scale(mean_margin),
        scale(mean_margin + found.low),
        scale(mean_margin + found.high),
        found.p_below,
        found.p_above,
        n,
        found.sd,
        scale(mde) - scale(0.0),
        n_needed,
        f"{planned_for} ({_BETTING_PLAN})" if n_needed else planned_for,
        BETTING,
        changed,
    )
    trusted_but_few = changed > 0 and found.excess <= bounds.EXCESS_TOLERANCE * alpha and found.sd > 0
    if bound != "auto" or not trusted_but_few:  # betting for the skew, or asked for: its own plan
        return betting
    # betting only for want of users: t decides from t_trusted_from users on, and may need fewer than betting
    n_t = power.sample_size(distance, found.sd, alpha, target, "one") if distance else None
    return _auto_planned(betting, n_t, distance, planned_for, (low, high), alpha, target, min_affected)  # type: ignore[arg-type]


def excess_range(guard: Guard, sign: float, value_range: tuple[float, float]) -> tuple[float, float]:
    """The interval a user's excess drop (drop - margin) lies in when both values lie in ``value_range``: its extremes
    are at the corners, the excess being linear in both values.

    >>> from harness.measures.spec import Measure
    >>> excess_range(Guard(Measure("AP"), "max_drop", 0.01), 1.0, (0.0, 1.0))
    (-1.01, 0.99)
    >>> excess_range(Guard(Measure("AP"), "max_drop_pct", 10.0), 1.0, (0.0, 1.0))
    (-1.0, 0.9)
    """
    corners = []
    for prod in value_range:
        for cand in value_range:
            corners.append(sign * (prod - cand) - guard.margin(prod))
    return min(corners), max(corners)


def shifts_only(guard: Guard) -> bool:
    """The guard's margin only shifts the per-user differences of a mean: its test follows from their t interval."""
    return guard.condition in ("max_drop", "min_gain") and _aggregate(guard) == "mean"


def moments_of(values: PairedValues, measure: Measure) -> PairedMoments:
    """The mean and sd of candidate - production and both aggregates, from exact sums, as the comparisons compute
    them."""
    prod, cand = np.asarray(values.production, dtype=np.float64), np.asarray(values.candidate, dtype=np.float64)
    t = paired.run_tests(cand - prod, None, ("t",)).t
    return PairedMoments(
        aggregate_values(measure, prod), aggregate_values(measure, cand), int(prod.size), float(t.mean[0]), float(t.sd[0])
    )


def _test_interval(guard: Guard, values: PairedMoments, alpha: float, target: float) -> GuardNumbers | str:
    """A mean with an absolute margin: the one-sided t-test of the excess drop, from the differences' t interval."""
    n = values.n
    if n < 2 or not (math.isfinite(values.mean) and math.isfinite(values.sd)):
        return f"{n} user(s) with values for both systems: a paired test needs 2 or more"
    sign = guard.sign
    margin = guard.margin()  # an absolute one (shifts_only)
    excess = -sign * values.mean - margin  # the mean drop beyond the margin
    return _one_sided(guard, n, excess, values.sd, margin, values.production, values.candidate, sign, lambda x: x, alpha, target)


def _test_paired(guard: Guard, terms: _Terms, alpha: float, target: float) -> GuardNumbers:
    """The one-sided paired t-test of a measure with a value per user, on the per-user excess drop."""
    aggregate, sign = _aggregate(guard), guard.sign
    prod, cand, drops, margins = terms
    n = int(prod.size)
    t = paired.run_tests(drops - margins, None, ("t",)).t  # the excess's mean and sd, from exact sums
    mean_margin = float(aggregate_values(guard.measure, margins)) if aggregate != "gmean" else float(margins[0])
    if aggregate in ("sum", "count"):
        mean_margin /= n  # aggregate_values summed them: back to the per-user scale the tests use
    p_value, c_value = aggregate_values(guard.measure, prod), aggregate_values(guard.measure, cand)
    return _one_sided(
        guard,
        n,
        float(t.mean[0]),
        float(t.sd[0]),
        mean_margin,
        p_value,
        c_value,
        sign,
        _to_drop(aggregate, sign, n, p_value),
        alpha,
        target,
    )


def _one_sided(
    guard: Guard,
    n: int,
    excess: float,
    sd: float,
    margin: float,
    production: float,
    candidate: float,
    sign: float,
    scale: Callable[[float], float],
    alpha: float,
    target: float,
) -> GuardNumbers:
    """Both one-sided t-tests of a guard from the mean excess drop over its margin and the per-user sd (the tests'
    scale, :func:`~harness.stats.bounds.t_moments`), with the bounds, the minimum detectable effect and the users needed
    (:mod:`harness.stats.power`) carried to the aggregate's by ``scale``."""
    if not sd > 0:  # equal differences (up to rounding): no spread to bound the mean by, so nothing is decided
        return GuardNumbers.nothing_decided(
            production, candidate, sign * (production - candidate), scale(margin), n, sd, None, "no spread"
        )
    drop_low, drop_high, p_pass, p_fail = bounds.t_moments(n, excess, sd, alpha, offset=margin)
    distance, planned_for = _planned(guard, margin, excess)
    return GuardNumbers(
        production,
        candidate,
        sign * (production - candidate),
        scale(margin),
        scale(drop_low),
        scale(drop_high),
        p_pass,
        p_fail,
        n,
        sd,
        scale(power.minimum_detectable_effect(n, sd, alpha, target, "one")) - scale(0.0),
        power.sample_size(distance, sd, alpha, target, "one") if distance else None,
        planned_for,
        T_TEST,
    )


def _to_drop(aggregate: str, sign: float, n: int, production: float) -> Callable[[float], float]:
    """Map a drop on the tests' scale (a mean per user; a mean log ratio for a geometric mean) to the aggregate's."""
    if aggregate == "gmean":
        return (lambda x: production * -math.expm1(-x)) if sign > 0 else (lambda x: production * math.expm1(x))
    if aggregate in ("sum", "count"):
        return lambda x: x * n
    return lambda x: x


def _planned(guard: Guard, margin: float, excess: float) -> tuple[float, str]:
    """The distance from the margin that "users needed" plans for, and that case in words."""
    if guard.condition != "min_gain" and margin > 0:
        return margin, "for an equal candidate to pass"
    if guard.condition == "min_gain" and guard.threshold > 0:
        return -margin, "for an equal candidate to fail"
    return abs(excess), "if the true difference is the one observed"


def _test_version(guard: Guard, values: SeededValues, alpha: float, target: float) -> GuardNumbers | str:
    """A guard on a mean for the version claim: the excess drop of the procedures' means, users and seeds both
    random (:mod:`harness.stats.seeds`). One run of a system leaves the seed variance unknown: nothing is decided."""

    from harness.stats.seeds import crossed_corrected, crossed_difference

    aggregate, sign = _aggregate(guard), guard.sign
    if aggregate != "mean":
        return f"the version claim is tested on means, and {guard.measure} is a {aggregate}: decide it with claim: model"
    prod, cand = np.asarray(values.production, dtype=np.float64), np.asarray(values.candidate, dtype=np.float64)
    (r_prod, n), r_cand = prod.shape, cand.shape[0]
    p_value, c_value = float(prod.mean()), float(cand.mean())
    drop = sign * (p_value - c_value)
    relative = guard.condition == "max_drop_pct"
    margin = guard.margin(p_value)
    seeds = f"{r_cand} run(s) of the candidate against {r_prod} of production"
    if n < 2:
        return f"{n} user(s) in every run of both systems: a test needs 2 or more"
    if min(r_prod, r_cand) < 2:
        return GuardNumbers.nothing_decided(
            p_value,
            c_value,
            drop,
            margin,
            n,
            math.nan,
            None,
            f"{seeds}: with one run of a system its seed variance cannot be estimated, so "
            "no bound holds for the version; give several runs (seeds) of each, or claim: "
            "model for these trained runs",
        )
    judged, layers = "", None
    if values.judged:  # the judge's tables corrected by people's (harness.stats.seeds.crossed_corrected)
        assert values.sampled is not None and values.people_production is not None and values.people_candidate is not None
        sample = ppi.sample_layers(values.sampled, values.strata)
        if isinstance(sample, str):
            return sample
        layers, people = sample, int(values.sampled.sum())
        p_value, c_value = (
            crossed_corrected([(t, 1.0)], [f], values.sampled, layers).estimate
            for t, f in ((values.people_production, prod), (values.people_candidate, cand))
        )
        drop, margin = sign * (p_value - c_value), guard.margin(p_value)
        judged = f"{people:,} queries judged by people, {n:,} by the judge {values.judge} (prediction-powered)"
    # the excess drop, drop - margin, as w_p mean_p + w_c mean_c + constant
    weight_p = sign - guard.threshold / 100 if relative else sign
    constant = 0.0 if relative else -margin
    if values.judged:
        assert values.sampled is not None and values.people_production is not None and values.people_candidate is not None
        found = crossed_corrected(
            [(values.people_production, weight_p), (values.people_candidate, -sign)],
            [prod, cand],
            values.sampled,
            layers,
            constant,
        )
    else:
        found = crossed_difference(prod, cand, weight_p, -sign, constant)
    low, high = found.bounds(alpha)
    p_pass = found.p_below()
    distance, planned_for = _planned(guard, margin, found.estimate)
    mde, n_needed, allowed = found.plan(distance, alpha, target)
    if n_needed is None:
        planned_for = (
            f"{planned_for}: none at these seeds, whose variance alone ({found.seed_variance:.3g}) exceeds "
            f"what the distance allows ({allowed:.3g}); more seeds, not more users"
        )
    goodness = sign * (cand.mean(axis=1)[:, None] - prod.mean(axis=1)[None, :])  # every seed pair: candidate better?
    note = (
        f"{seeds}; seed noise is {found.seed_share:.0%} of the difference's variance; a candidate run beats a "
        f"production run in {int((goodness > 0).sum())} of {goodness.size} pairs"
        + (f" by the judge's values; {judged}" if judged else "")
    )
    return GuardNumbers(
        p_value,
        c_value,
        drop,
        margin,
        margin + low,
        margin + high,
        p_pass,
        1.0 - p_pass,
        n,
        math.sqrt(found.variance * n),
        mde,
        n_needed,
        planned_for,
        VERSION,
        None,
        "",
        note,
        judged=judged,
    )


def _test_resampled(guard: Guard, values: ResampledValues, alpha: float, target: float) -> GuardNumbers | str:
    """A measure with one value per run: the centred bootstrap over users (the comparisons' resamples)."""
    sign = guard.sign
    # a measure with a target (BiasDisparity's BD at 0): the drop is how much farther from it the candidate is, from
    # either side, and a max_drop_pct margin is a share of production's distance from it
    best_at = REGISTRY.definition(guard.measure).target_of(guard.measure)

    def drop(prod: np.ndarray | float, cand: np.ndarray | float) -> np.ndarray | float:
        return np.abs(cand - best_at) - np.abs(prod - best_at) if best_at is not None else sign * (prod - cand)

    def excess(prod: np.ndarray | float, cand: np.ndarray | float) -> np.ndarray | float:
        scale = np.abs(prod - best_at) if best_at is not None else prod
        return drop(prod, cand) - guard.margin(scale)

    observed = float(excess(values.production, values.candidate))
    margin = float(drop(values.production, values.candidate)) - observed
    replicates = np.asarray(excess(values.production_replicates, values.candidate_replicates))
    replicates = replicates[np.isfinite(replicates)]
    if not math.isfinite(observed):  # an undefined value is never evidence either way (and no count of users helps)
        return (
            f"undefined here: {guard.measure} has no value on these {values.n} users (production "
            f"{values.production:.4g}, candidate {values.candidate:.4g}); a measure between groups needs users of "
            "each group, a segment of one group has none to compare"
        )
    if values.n < 2 or replicates.size < 2:
        return f"{values.n} user(s): too few to resample"
    low, high, p_pass, p_fail, se = bounds.bootstrap_bound(observed, replicates, alpha)
    distance, planned_for = _planned(guard, margin, observed)
    mde, n_needed = power.bootstrap_plan(values.n, se, distance, alpha, target)
    return GuardNumbers(
        values.production,
        values.candidate,
        float(drop(values.production, values.candidate)),
        margin,
        margin + low,
        margin + high,
        p_pass,
        p_fail,
        values.n,
        se * math.sqrt(values.n),
        mde,
        n_needed,
        planned_for,
        BOOTSTRAP,
    )


def _test_corrected(guard: Guard, values: CorrectedValues, alpha: float, target: float) -> GuardNumbers | str:
    """A guard on a judged dataset's mean: each user's excess drop (drop - margin, linear in both values, so a
    relative margin too) under the judge's labels and under people's, its mean over every user corrected by people's
    (:func:`~harness.stats.ppi.ppi_sampled`) and bounded one-sided by Student's t with the same lambda. The users
    needed are the queries people would judge (the judge's on every query), planned for the distance from the
    margin as a t-test plans it."""
    sign = guard.sign
    prod, cand = np.asarray(values.production, dtype=np.float64), np.asarray(values.candidate, dtype=np.float64)
    people_prod = np.asarray(values.people_production, dtype=np.float64)
    people_cand = np.asarray(values.people_candidate, dtype=np.float64)
    n = int(prod.size)

    def excess(p: np.ndarray, c: np.ndarray) -> np.ndarray:
        return sign * (p - c) - (guard.margin(p) if guard.condition == "max_drop_pct" else guard.margin())

    layers = ppi.sample_layers(values.sampled, values.strata)
    if isinstance(layers, str):
        return layers
    judged = int(values.sampled.sum())
    f_all, y = excess(prod, cand), excess(people_prod, people_cand)
    found_excess = ppi.ppi_sampled(y, f_all, values.sampled, layers, 2 * alpha)
    corrected = [ppi.ppi_sampled(p, f, values.sampled, layers, 2 * alpha) for p, f in ((people_prod, prod), (people_cand, cand))]
    production, candidate = corrected[0].estimate, corrected[1].estimate
    margin = guard.margin(production) if guard.condition == "max_drop_pct" else guard.margin()
    drop = sign * (production - candidate)
    note = f"{judged:,} queries judged by people, {n:,} by the judge {values.judge} (prediction-powered)"
    if not found_excess.se > 0:
        return dataclasses.replace(
            GuardNumbers.nothing_decided(production, candidate, drop, margin, n, 0.0, None, "people's values do not spread"),
            note=note,
            judged=note,
        )
    from scipy import special

    t = found_excess.estimate / found_excess.se
    reach = found_excess.high - found_excess.estimate  # the one-sided (1 - alpha) t reach (a two-sided 1 - 2 alpha)
    distance, planned_for = _planned(guard, margin, found_excess.estimate)
    sd = found_excess.se * math.sqrt(judged)  # people's sample's spread, as the corrected se has it
    needed = None
    if values.strata is None and distance:
        sampled = values.sampled
        needed = ppi.queries_needed(y, f_all[sampled], f_all, distance, 2 * alpha, target)
    mde = detectable(found_excess.se**2, found_excess.df, 2 * alpha, target)  # one-sided at alpha
    return GuardNumbers(
        production,
        candidate,
        drop,
        margin,
        margin + found_excess.estimate - reach,
        margin + found_excess.estimate + reach,
        float(special.stdtr(found_excess.df, t)),
        float(special.stdtr(found_excess.df, -t)),
        n,
        sd,
        mde,
        needed,
        f"{planned_for} (queries judged by people)" if needed else planned_for,
        PPI,
        note=note,
        judged=note,
    )


def guard_result(
    guard: Guard,
    dataset: str,
    segment: str,
    tested: GuardNumbers | str,
    p_fail_adj: float | None,
    alpha: float,
    target: float,
    family: int = 1,
) -> GuardResult:
    # the label names the dataset (and segment) it was decided on: a guard without dataset: expands over every
    # dataset, and each copy must be told apart in gate.json, MLflow and the report
    text = wording.describe(dataclasses.replace(guard, dataset=dataset or guard.dataset))
    where = wording.where_decided(guard.measure, dataset, segment)
    base = GuardResult(
        guard=text,
        verdict="FAIL",
        reason="",
        measure=str(guard.measure),
        dataset=dataset,
        segment=segment,
        condition=guard.condition,
        threshold=guard.threshold,
        descriptive=guard.descriptive,
    )
    if isinstance(tested, str):
        label: GuardLabel = "DESCRIPTIVE" if guard.descriptive else "FAIL"
        return dataclasses.replace(base, verdict=label, reason=wording.unevaluated_reason(where, tested), evaluated=False)
    t = tested
    base = dataclasses.replace(
        base,
        production=t.production,
        candidate=t.candidate,
        difference=t.candidate - t.production,
        drop=t.drop,
        margin=t.margin,
        drop_low=t.drop_low,
        drop_high=t.drop_high,
        p_pass=t.p_pass,
        p_fail=t.p_fail,
        p_fail_adj=p_fail_adj,
        n_queries=t.n,
        n_changed=t.changed,
        sd=t.sd,
        mde=t.mde,
        n_needed=t.n_needed,
        planned_for=t.planned_for,
        method=t.method,
        judged=t.judged,
    )
    if t.undecided and not guard.descriptive:
        verdict: GuardLabel = "INCONCLUSIVE"
    elif guard.descriptive:
        verdict = "DESCRIPTIVE"
    elif t.p_pass < alpha:
        verdict = "PASS"
    elif p_fail_adj is not None and p_fail_adj < alpha:
        verdict = "FAIL"
    else:
        verdict = "INCONCLUSIVE"
        base = dataclasses.replace(base, n_needed_observed=_needed_at_observed(t, alpha, target))
    base = dataclasses.replace(base, verdict=verdict)
    reason = wording.guard_reason(
        base,
        where,
        alpha,
        target,
        undecided=t.undecided,
        note=t.note,
        # shown beyond the margin alone, but not after Holm's correction across the guards
        beyond_alone=p_fail_adj is not None and t.p_fail < alpha,
        family=family,
    )
    return dataclasses.replace(base, reason=reason)


def _needed_at_observed(t: GuardNumbers, alpha: float, target: float) -> int | None:
    """The users that would decide a guard if the true difference were the observed one: the minimum detectable
    effect shrinks as 1 / sqrt(n), so ``n (mde / distance)^2``; under auto's t threshold (``t_from``) no more than t's
    users there, raised to that threshold. None where the observed distance from the margin is 0, nothing was
    planned, or that is already what ``n_needed`` plans for."""
    distance = abs(t.margin - t.drop)
    if (
        t.planned_for == "if the true difference is the one observed"
        or not distance
        or not math.isfinite(t.mde)
        or not t.n_needed
    ):
        return None
    scaled = math.ceil(t.n * (t.mde / distance) ** 2)
    if t.t_from is None or not t.sd > 0:
        return scaled
    by_t = power.sample_size(distance, t.sd, alpha, target, "one")
    return scaled if by_t is None else min(scaled, max(by_t, t.t_from))


__all__ = [
    "CorrectedValues",
    "GuardNumbers",
    "PairedMoments",
    "PairedValues",
    "ResampledValues",
    "Values",
    "excess_range",
    "guard_result",
    "moments_of",
    "one_sided",
    "shifts_only",
]
