"""Release gate: PASS, FAIL or INCONCLUSIVE, each verdict with the error it controls and at what rate.

Every guard is one one-sided test of one measure against a stated margin
(:mod:`harness.config.guards`). With ``drop = production - candidate`` in the measure's
direction and ``margin`` the drop the guard allows (``max_drop: m`` allows m,
``max_drop_pct: r`` allows r% of production, ``min_gain: g`` allows -g):

* **PASS** when the drop's one-sided (1 - alpha) upper bound is below the margin: the test
  of H0 "drop >= margin" rejects at alpha. A candidate truly worse than the margin passes
  a guard with probability at most alpha.
* **FAIL** when the drop's lower bound is above the margin: the test of H0 "drop <= margin"
  rejects at alpha after Holm's correction across the gate's guards. A candidate within
  every margin fails the gate with probability at most alpha.
* **INCONCLUSIVE** otherwise: the data cannot tell. This is never evidence of no drop; the
  guard says how small a distance from the margin its users resolve (the minimum
  detectable effect, at the planned power) and how many users would decide it.

The gate passes when every guard passes (an intersection-union test: each guard at alpha
bounds the gate's false-PASS rate at alpha, with no correction across guards), fails when
any guard fails, and is otherwise INCONCLUSIVE.

How each guard is tested: a mean by the bound ``release.bound`` names (:mod:`harness.stats.bounds`):
under ``auto`` the paired t-test on the per-user excess drop ``e = drop_i - margin_i`` (exact
sums, :mod:`harness.stats.paired`) where the users' skewness puts its error within alpha / 10,
else the betting bound, exact for any values in the measure's range. A margin relative to
production is the per-user ``r * production_i``, so the ratio is tested exactly rather than
with production's mean taken as known. No guard is decided without spread or with no changed
user (INCONCLUSIVE, with the reason). Geometric means (GMAP) are tested on log ratios
(relative margins only). Measures with one value per run built from sums over users (REO,
RSP) by the bootstrap over users the comparisons use: the same keyed resamples, approximate;
catalogue measures (Coverage, Gini) decide no guard (:mod:`harness.config.guards`).

>>> import numpy as np
>>> from harness.config.schema import Guard
>>> from harness.measures.spec import Measure
>>> rng = np.random.default_rng(1)
>>> production = rng.uniform(0, 1, 400)
>>> decision = decide_arrays([(Guard(Measure("AP"), "max_drop", 0.05), "d", "all",
...                            PairedValues(production, production + rng.normal(0, 0.05, 400)))], "prod", "cand")
>>> decision.verdict, decision.guards[0].verdict
('PASS', 'PASS')
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from collections.abc import Sequence

import numpy as np

from harness.comparison.compare import CompareSettings, system_replicates, version_replicates
from harness.comparison.rows import Comparisons
from harness.comparison.versions import runs_by_system, seeded_judged, seeded_pair, segment_map, tables_of
from harness.config.defaults import DEFAULT_MIN_AFFECTED, DEFAULT_POWER
from harness.config.schema import Guard, Release
from harness.decision.guard import (
    CorrectedValues,
    GuardNumbers,
    PairedMoments,
    PairedValues,
    ResampledValues,
    Values,
    guard_result,
    one_sided,
    shifts_only,
)
from harness.decision.verdict import Decision
from harness.errors import HarnessError
from harness.evaluation.results import PerQuery, RunResult, same_queries
from harness.measures.registry import REGISTRY
from harness.measures.spec import Measure
from harness.stats.bounds import BoundChoice
from harness.stats.correction import correct
from harness.stats.looks import Look


def decide_arrays(
    checks: Sequence[tuple[Guard, str, str, Values]],
    production: str,
    candidate: str,
    alpha: float = 0.05,
    power_target: float = DEFAULT_POWER,
    on_inconclusive: str = "inconclusive",
    bound: BoundChoice = "auto",
    sweep: Sequence[tuple[Guard, str, str, Values]] = (),
    look: Look | None = None,
    key: str = "",
    claim: str = "model",
    seeds: tuple[int, int] = (1, 1),
    min_affected: float | None = DEFAULT_MIN_AFFECTED,
) -> Decision:
    """The decision from each guard's values on each dataset and segment it applies to: ``(guard, dataset, segment,
    values)``, values as :class:`PairedValues`, :class:`ResampledValues`, or the reason they could not be had;
    ``bound`` says how a guard on a mean is bounded (:mod:`harness.stats.bounds`), and ``min_affected`` from how many
    users ``auto`` lets t decide (:func:`~harness.stats.bounds.t_trusted_from`; None: no such rule). ``sweep``: the same for the
    unguarded segments of each guarded measure; those whose drop is significantly beyond the guard's margin (Holm
    within the sweep) are the decision's warnings. ``look``: which of the gate's planned looks this is; its guards are
    tested at its share of alpha (:mod:`harness.stats.looks`), and alpha is the rate over all the looks."""
    level = alpha if look is None or look.planned == 1 else look.level(alpha)
    if not level > 0:
        assert look is not None
        raise HarnessError(
            f"the gate's alpha ({alpha:g}) is spent: this would be look {look.number} of "
            f"{look.planned} planned, and the earlier looks spent {look.spent:.3g}",
            hint="a new decision needs a new gate (another experiment name, or other guards)",
        )
    decision = _decide(checks, production, candidate, level, power_target, on_inconclusive, bound, min_affected)
    decision = _gate_plan(decision, checks, level, power_target, bound, min_affected)
    if look is not None and look.planned > 1:
        decision = dataclasses.replace(decision, alpha=alpha, look=look.number, looks=look.planned, level=level)
    decision = dataclasses.replace(decision, key=key, claim=claim, seeds=seeds)
    swept = [
        (g, d, s, one_sided(g, v, alpha, power_target, bound, min_affected)) for g, d, s, v in sweep if not isinstance(v, str)
    ]
    tested = [(g, d, s, t) for g, d, s, t in swept if isinstance(t, GuardNumbers)]
    adjusted = correct(np.array([t.p_fail for *_, t in tested], dtype=np.float64), "holm")
    warnings = []
    for (guard, dataset, segment, t), p_adj in zip(tested, adjusted.tolist(), strict=True):
        if p_adj < alpha:
            found = guard_result(guard, dataset, segment, t, p_adj, alpha, power_target, len(tested))
            warnings.append(dataclasses.replace(found, guard=found.guard + " (segment sweep)"))
    return dataclasses.replace(decision, warnings=tuple(warnings))


def _gate_plan(
    decision: Decision,
    checks: Sequence[tuple[Guard, str, str, Values]],
    level: float,
    target: float,
    bound: BoundChoice,
    min_affected: float | None,
) -> Decision:
    """The decision with the users the whole gate needs to decide an equal candidate with ``target`` power: each
    deciding guard's share (``GuardResult.n_needed_gate``, users of its own dataset and segment) and, when every guard
    is on the same users, the gate's one number (``Decision.n_needed_gate``).

    With a ``min_gain`` guard an equal candidate should FAIL: one such guard failing suffices, and Holm's first step
    tests it at ``level / k`` (k deciding guards), so each plans for that level. Otherwise it should PASS every guard:
    each is planned at ``target ** (1 / k)`` power, so that all pass with ``target`` when the guards' tests are
    independent (more when they are positively related, as guards on related measures are), and the gate needs the
    most users any guard then needs. Unchanged with one guard (its own plan is the gate's) or when a guard has no plan
    for an equal candidate."""
    deciding = [i for i, (g, _, _, v) in enumerate(checks) if not g.descriptive]
    if len(deciding) < 2 or any(isinstance(checks[i][3], str) for i in deciding):
        return decision
    k = len(deciding)
    gains = [i for i in deciding if checks[i][0].condition == "min_gain" and checks[i][0].threshold > 0]
    if gains:
        at, planned, power_each = level / k, gains, target
        case = (
            f"for an equal candidate to FAIL the gate with {target:.0%} power (a min_gain guard at {at:.3g}, Holm's "
            f"first step across the {k} guards; any one of them suffices)"
        )
    else:
        at, planned, power_each = level, deciding, target ** (1 / k)
        case = (
            f"for an equal candidate to PASS all {k} guards with {target:.0%} power (each planned at "
            f"{power_each:.1%}; the guards taken as independent, conservative when they are positively related)"
        )
    tested = {i: one_sided(checks[i][0], checks[i][3], at, power_each, bound, min_affected) for i in planned}  # type: ignore[arg-type]
    if any(
        not isinstance(t, GuardNumbers) or t.n_needed is None or not t.planned_for.startswith("for an equal")
        for t in tested.values()
    ):
        return decision
    needed = {i: int(t.n_needed) for i, t in tested.items() if isinstance(t, GuardNumbers) and t.n_needed is not None}
    guards = tuple(dataclasses.replace(g, n_needed_gate=needed.get(i)) for i, g in enumerate(decision.guards))
    populations = {(checks[i][1], checks[i][2]) for i in planned}
    gate = (min(needed.values()) if gains else max(needed.values())) if len(populations) == 1 else None
    return dataclasses.replace(decision, guards=guards, n_needed_gate=gate, gate_planned_for=case)


def _decide(
    checks: Sequence[tuple[Guard, str, str, Values]],
    production: str,
    candidate: str,
    alpha: float,
    power_target: float,
    on_inconclusive: str,
    bound: BoundChoice,
    min_affected: float | None,
) -> Decision:
    tested = [
        one_sided(guard, values, alpha, power_target, bound, min_affected) if not isinstance(values, str) else values
        for guard, _, _, values in checks
    ]
    deciding = [i for i, t in enumerate(tested) if isinstance(t, GuardNumbers) and not checks[i][0].descriptive]
    adjusted = correct(np.array([tested[i].p_fail for i in deciding], dtype=np.float64), "holm")  # type: ignore[union-attr]
    p_fail_adj = dict(zip(deciding, adjusted.tolist(), strict=True))
    results = []
    for i, ((guard, dataset, segment, _), t) in enumerate(zip(checks, tested, strict=True)):
        results.append(guard_result(guard, dataset, segment, t, p_fail_adj.get(i), alpha, power_target, len(deciding)))
    return Decision(production, candidate, tuple(results), alpha, power_target, on_inconclusive, bound, min_affected=min_affected)


EACH = "each"  # segment: each: a guard per segment


def expand(release: Release, available: Sequence[tuple[str, str]]) -> list[tuple[Guard, str, str]]:
    """Each guard on each dataset and segment it applies to, given the (dataset, segment) pairs that have values.

    A guard without a dataset applies to every dataset (for a segment guard, every dataset
    with that segment); one that applies nowhere is kept with dataset "" and fails as unevaluated.
    """
    out: list[tuple[Guard, str, str]] = []
    for guard in release.guards:
        if guard.segment == EACH:  # a guard per segment of each dataset: the gate passes only if every one does
            pairs = [(d, s) for d, s in available if s != "all" and guard.dataset in (None, d)]
            out.extend((dataclasses.replace(guard, segment=s), d, s) for d, s in pairs)
            if not pairs:
                out.append((guard, guard.dataset or "", EACH))
            continue
        segment = guard.segment or "all"
        datasets = [guard.dataset] if guard.dataset else sorted({d for d, s in available if s == segment})
        out.extend((guard, dataset, segment) for dataset in datasets or [""])
    return out


def sweep_of(
    release: Release, guarded: Sequence[tuple[Guard, str, str]], available: Sequence[tuple[str, str]]
) -> list[tuple[Guard, str, str]]:
    """The segment sweep: for every deciding guard, whether over all users or on a segment, each segment of its
    dataset (all users included) that no guard of that measure covers, tested as the first such guard would test it
    there (its margin, its condition).

    >>> from harness.config.schema import Release
    >>> from harness.measures.spec import Measure
    >>> guard = Guard(Measure("AP"), "max_drop", 0.01)
    >>> [(d, s) for _, d, s in sweep_of(Release("p", "c", (guard,)), [(guard, "d", "all")],
    ...                                  [("d", "all"), ("d", "new"), ("d", "old")])]
    [('d', 'new'), ('d', 'old')]
    >>> new = Guard(Measure("AP"), "max_drop", 0.01, segment="new")
    >>> [(d, s) for _, d, s in sweep_of(Release("p", "c", (new,)), [(new, "d", "new")],
    ...                                  [("d", "all"), ("d", "new"), ("d", "old")])]
    [('d', 'all'), ('d', 'old')]
    """
    covered = {(str(g.measure), d, s) for g, d, s in guarded}
    out = []
    for guard, dataset, _ in guarded:
        if guard.descriptive or not dataset:
            continue
        for d, s in available:
            if d == dataset and (str(guard.measure), d, s) not in covered:
                covered.add((str(guard.measure), d, s))
                out.append((dataclasses.replace(guard, dataset=d, segment=None if s == "all" else s), d, s))
    return out


def gate_key(release: Release, claim: str = "model") -> str:
    """A gate's identity across runs: the two systems, the deciding guards and the claim (not the data, which grows
    between looks, nor alpha or the plan, nor a descriptive guard, which decides nothing). The earlier looks of a gate
    are the records that carry the same key (:func:`gate_keys`); a gate on the versions is another gate than one on
    two trained runs.

    >>> from harness.config.schema import Release
    >>> gate_key(Release("v1", "v2")) == gate_key(Release("v1", "v2", looks=20)), len(gate_key(Release("v1", "v2")))
    (True, 16)
    >>> gate_key(Release("v1", "v2")) == gate_key(Release("v1", "v2"), claim="version")
    False
    >>> from harness.config.schema import Guard
    >>> from harness.measures.spec import Measure
    >>> everyone, new = Guard(Measure("AP"), "max_drop", 0.01), Guard(Measure("AP"), "max_drop", 0.01, segment="new")
    >>> gate_key(Release("v1", "v2", guards=(everyone, new))) == gate_key(Release("v1", "v2", guards=(new, everyone)))
    True
    >>> shown = Guard(Measure("Coverage", cutoff=10), "max_drop_pct", 40.0, descriptive=True)
    >>> gate_key(Release("v1", "v2", guards=(everyone, shown))) == gate_key(Release("v1", "v2", guards=(everyone,)))
    True
    """
    return _key(release, claim, [g for g in release.guards if not g.descriptive])


def gate_keys(release: Release, claim: str = "model") -> tuple[str, ...]:
    """The keys a gate's looks are recorded under: :func:`gate_key`, then, for a gate with descriptive guards, the key
    harness wrote for it while they were part of the key (every guard in), so that the looks recorded then count.

    >>> from harness.config.schema import Guard
    >>> from harness.measures.spec import Measure
    >>> everyone = Guard(Measure("AP"), "max_drop", 0.01)
    >>> len(gate_keys(Release("v1", "v2", guards=(everyone,))))
    1
    >>> shown = Guard(Measure("Coverage", cutoff=10), "max_drop_pct", 40.0, descriptive=True)
    >>> key, before = gate_keys(Release("v1", "v2", guards=(everyone, shown)))
    >>> key == gate_key(Release("v1", "v2", guards=(everyone,))), before == key
    (True, False)
    """
    key, every_guard = gate_key(release, claim), _key(release, claim, list(release.guards))
    return (key,) if every_guard == key else (key, every_guard)


def _key(release: Release, claim: str, chosen: list[Guard]) -> str:
    # a deciding guard's fields, its descriptive flag (False) included: the keys of gates without a descriptive guard
    # are the ones harness always wrote
    guards = [[str(g.measure), g.condition, g.threshold, g.dataset, g.segment, g.descriptive] for g in chosen]
    identity = [
        release.production,
        release.candidate,
        # a field left out (None: every dataset, all users) sorts after any value; with none left out, the order (and
        # so every key written before) is the fields' own
        sorted(guards, key=lambda fields: [(x is None, "" if x is None else x) for x in fields]),
        *(["version"] if claim == "version" else []),
    ]
    return hashlib.sha256(json.dumps(identity, default=str).encode()).hexdigest()[:16]


def decide_release(
    release: Release,
    results: Sequence[RunResult],
    settings: CompareSettings,
    comparisons: Comparisons | None = None,
    look: Look | None = None,
) -> Decision:
    """The release decision from the runs' results (their per-query values, and lists for system measures).

    A guard on a mean with an absolute margin is decided from the (production, candidate) row
    of ``comparisons`` (the moments of its paired t-test, from exact sums), not computed again. Other
    guards read the two systems' per-query values.
    """
    runs = runs_by_system(results)
    by_key = {key: group[0] for key, group in runs.items()}
    both = [
        d
        for d in dict.fromkeys(r.dataset for r in results)
        if (d, release.production) in by_key and (d, release.candidate) in by_key
    ]
    available = [(d, s) for d in both for s in by_key[(d, release.production)].segment_names()]
    version = settings.claim == "version"

    def values(guard: Guard, dataset: str, segment: str) -> Values:
        if not dataset:
            return f"no dataset has values for both systems{'' if segment == 'all' else f' in segment {segment!r}'}"
        if (dataset, segment) not in available:
            return f"no values for both {release.production} and {release.candidate} on {dataset!r}" + (
                "" if segment == "all" else f" in segment {segment!r}"
            )
        rp, rc = by_key[(dataset, release.production)], by_key[(dataset, release.candidate)]
        measure = guard.measure
        if version and not REGISTRY.definition(measure).is_system(measure):
            of_production, of_candidate = runs[(dataset, release.production)], runs[(dataset, release.candidate)]
            if rp.people is not None and rc.people is not None:  # a judged dataset: people's labels correct the judge's
                from harness.comparison.judged import corrects

                if not corrects(measure):
                    return f"{measure} is not a mean over users, so people's labels cannot correct the judge's values of it"
                where = None if segment == "all" else segment
                return seeded_judged(of_production, of_candidate, measure, where, segment_map(of_production[0]))
            return seeded_pair(
                tables_of(of_production),
                tables_of(of_candidate),
                measure,
                None if segment == "all" else segment,
                segment_map(of_production[0]),
            )
        if version:  # one value per run: resampled over users and seeds
            of_production, of_candidate = runs[(dataset, release.production)], runs[(dataset, release.candidate)]
            if any(r.lists is None or measure not in r.system_measures for r in (*of_production, *of_candidate)):
                return f"{measure} was not computed from every run's lists"
            return ResampledValues(*version_replicates(of_production, of_candidate, (measure,), segment, settings)[measure])
        if REGISTRY.definition(measure).is_system(measure):
            if rp.lists is None or rc.lists is None or measure not in rp.system_measures or measure not in rc.system_measures:
                return f"{measure} was not computed from both runs' lists"
            prod, cand, reps_p, reps_c, n = system_replicates(rp, rc, measure, segment, settings)
            return ResampledValues(prod, cand, reps_p, reps_c, n)
        if rp.people is not None and rc.people is not None:  # a judged dataset: people's labels correct the judge's
            return corrected_values(rp, rc, measure, dict(rp.segment_masks()).get(segment), dict(rc.segment_masks()).get(segment))
        row = _pair_row(comparisons, dataset, segment, str(measure), release.production, release.candidate)
        if row is not None and shifts_only(guard) and release.bound == "t":  # the comparison's moments decide it
            return row
        return paired_values(
            rp.per_query, rc.per_query, measure, dict(rp.segment_masks()).get(segment), dict(rc.segment_masks()).get(segment)
        )

    guarded = expand(release, available)
    checks = [(g, d, s, values(g, d, s)) for g, d, s in guarded]
    sweep = [(g, d, s, values(g, d, s)) for g, d, s in sweep_of(release, guarded, available)]
    seeds = (
        max((len(runs[k]) for k in runs if k[1] == release.production), default=1),
        max((len(runs[k]) for k in runs if k[1] == release.candidate), default=1),
    )
    decision = decide_arrays(
        checks,
        release.production,
        release.candidate,
        settings.alpha,
        release.power,
        release.on_inconclusive,
        release.bound,
        sweep,
        look,
        gate_key(release, settings.claim),
        claim=settings.claim,
        seeds=seeds,
        min_affected=release.min_affected,
    )
    reused = [str(r.diagnostics["source"]) for r in results if r.system == release.production and r.diagnostics.get("source")]
    by_dataset = tuple((d, len(runs[(d, release.production)]), len(runs[(d, release.candidate)])) for d in both)
    return dataclasses.replace(
        decision,
        production_evidence="; ".join(dict.fromkeys(reused)),
        seeds_by_dataset=by_dataset if settings.claim == "version" else (),
        seed_warnings=missing_seeds(runs, (release.production, release.candidate), both),
    )


def missing_seeds(
    runs: dict[tuple[str, str], list[RunResult]], systems: Sequence[str], datasets: Sequence[str]
) -> tuple[str, ...]:
    """A sentence for each system with fewer runs (seeds) on a dataset than on another: its version is then decided
    there over fewer seeds. Counted, not matched by label: a dataset's run files may be named its own way.

    >>> from types import SimpleNamespace as R
    >>> runs = {("a", "v2"): [R(seed="s1"), R(seed="s2")], ("b", "v2"): [R(seed="s1")]}
    >>> missing_seeds(runs, ["v2"], ["a", "b"])
    ("v2 has 1 run on dataset 'b' (s1) and 2 on 'a'",)
    """
    out = []
    for system in systems:
        counts = {d: len(runs.get((d, system), [])) for d in datasets}
        most = max(counts.values(), default=0)
        fullest = next((d for d in datasets if counts[d] == most), "")
        for dataset in datasets:
            if 0 < counts[dataset] < most:
                labels = ", ".join(r.seed for r in runs[(dataset, system)] if r.seed)
                noun = "run" if counts[dataset] == 1 else "runs"
                out.append(
                    f"{system} has {counts[dataset]} {noun} on dataset {dataset!r}{f' ({labels})' if labels else ''} "
                    f"and {most} on {fullest!r}"
                )
    return tuple(out)


def _pair_row(
    comparisons: Comparisons | None, dataset: str, segment: str, measure: str, production: str, candidate: str
) -> PairedMoments | None:
    """The comparison of candidate against production on a measure, as the moments of candidate - production."""
    found = None if comparisons is None else comparisons.find(dataset, segment, measure, production, candidate)
    if found is None or not math.isfinite(found.sd_difference):
        return None
    return PairedMoments(found.mean_a, found.mean_b, found.n_queries, found.mean_difference, found.sd_difference)


def paired_values(
    production: PerQuery | None,
    candidate: PerQuery | None,
    measure: Measure,
    mask_production: np.ndarray | None = None,
    mask_candidate: np.ndarray | None = None,
) -> Values:
    """Both systems' values of ``measure`` on the users both were evaluated on (within the masks), NaN pairs left out.

    >>> from harness.measures.spec import Measure
    >>> a = PerQuery("a", np.array(["u1", "u2", "u3"], dtype=object), (Measure("AP"),), np.array([[0.1], [0.2], [0.3]]),
    ...              np.ones(3, dtype=bool))
    >>> b = PerQuery("b", np.array(["u2", "u3"], dtype=object), (Measure("AP"),), np.array([[0.5], [np.nan]]),
    ...              np.ones(2, dtype=bool))
    >>> v = paired_values(a, b, Measure("AP"))
    >>> v.production.tolist(), v.candidate.tolist()
    ([0.2], [0.5])
    """
    found = _paired(production, candidate, measure, mask_production, mask_candidate)
    return found if isinstance(found, str) else PairedValues(found[1], found[2])


def _paired(
    production: PerQuery | None,
    candidate: PerQuery | None,
    measure: Measure,
    mask_production: np.ndarray | None = None,
    mask_candidate: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | str:
    """:func:`paired_values` as (the users' ids in sorted order, production's values, candidate's, each user's row in
    production's table), or why there are none."""
    if production is None or candidate is None:
        return "no per-query values"
    if measure not in production.measures or measure not in candidate.measures:
        return f"{measure} was not computed for both systems"
    keep_p = np.ones(production.query_ids.size, dtype=bool) if mask_production is None else mask_production
    keep_c = np.ones(candidate.query_ids.size, dtype=bool) if mask_candidate is None else mask_candidate
    if same_queries(production, candidate):  # the usual case: the intersection by position, no search by id
        rows = np.flatnonzero(keep_p & keep_c)
        both, rows_c = production.query_ids[rows].astype(str), rows
    else:
        ids_p, ids_c = production.query_ids.astype(str), candidate.query_ids.astype(str)
        both, at_p, at_c = np.intersect1d(ids_p[keep_p], ids_c[keep_c], assume_unique=True, return_indices=True)
        rows, rows_c = np.flatnonzero(keep_p)[at_p], np.flatnonzero(keep_c)[at_c]
    prod = production.column(measure)[rows]
    cand = candidate.column(measure)[rows_c]
    defined = ~np.isnan(prod) & ~np.isnan(cand)  # a measure undefined for a user (beyond accuracy) leaves that pair out
    return both[defined], prod[defined], cand[defined], rows[defined]


def corrected_values(
    production: RunResult,
    candidate: RunResult,
    measure: Measure,
    mask_production: np.ndarray | None = None,
    mask_candidate: np.ndarray | None = None,
) -> Values:
    """A judged dataset's values of ``measure`` for both systems (:class:`~harness.decision.guard.CorrectedValues`):
    the judge's on the users both have (within the masks), people's on those people judged; or why a guard on it
    cannot be corrected (a measure that is not a mean over users)."""
    from harness.comparison.judged import corrects

    if not corrects(measure):
        return (
            f"{measure} is not a mean over users, so people's labels cannot correct the judge's values of it: make "
            "this guard descriptive, or guard a mean"
        )
    judge = _paired(production.per_query, candidate.per_query, measure, mask_production, mask_candidate)
    if isinstance(judge, str):
        return judge
    people = _paired(production.people, candidate.people, measure)
    if isinstance(people, str):
        return people
    users, prod, cand, rows = judge
    people_ids, people_p, people_c, _ = people
    inside = np.isin(people_ids, users)  # people's users among the guard's (its segment's)
    strata = None if production.strata is None else production.strata[rows]
    return CorrectedValues(
        prod, cand, people_p[inside], people_c[inside], np.isin(users, people_ids), strata, production.judge or "judge"
    )


__all__ = [
    "EACH",
    "corrected_values",
    "decide_arrays",
    "decide_release",
    "expand",
    "gate_key",
    "gate_keys",
    "missing_seeds",
    "paired_values",
    "sweep_of",
]
