"""``harness plan``: how many users a decision needs, from the per-user differences in a results folder."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from harness.config.defaults import DEFAULT_MIN_AFFECTED
from harness.config.guards import release_min_affected
from harness.config.schema import Guard
from harness.decision.guard import excess_range
from harness.decision.plan import SD_CONFIDENCE, Plan
from harness.errors import GuardSpecError, HarnessError
from harness.measures.registry import REGISTRY
from harness.measures.spec import Measure
from harness.records.store import SavedResults, read_results
from harness.stats import paired
from harness.stats.power import Sided
from harness.stats.seeds import Components, VersionPlan, components, seed_sd_upper, version_plan


def gate_plan_lines(folder: str | Path | SavedResults) -> list[str]:
    """``harness plan FOLDER --gate``: the users the folder's whole gate needs to decide an equal candidate with the
    gate's power, then each deciding guard's own plan, as the gate computed them."""
    saved = folder if isinstance(folder, SavedResults) else read_results(folder)
    decision = saved.verdict
    if decision is None:
        raise HarnessError(f"{saved.folder} has no release gate", hint="give a folder of a run with a release: gate")
    deciding = decision.deciding
    whole = "queries judged by people" if any(g.judged for g in deciding) else "users"  # a judged dataset's
    if decision.n_needed_gate is not None:
        lines = [f"the whole gate: {decision.n_needed_gate:,} {whole} {decision.gate_planned_for}"]
    elif decision.gate_planned_for:
        lines = [f"the whole gate, {decision.gate_planned_for}: each guard's users on its own dataset and segment"]
    elif len(deciding) == 1:
        lines = ["the whole gate is its one guard"]
    else:
        lines = ["the whole gate: no plan (a guard has none for an equal candidate: see its own below)"]
    for g in deciding:
        unit = "queries judged by people" if g.judged else "users"  # a judged dataset: people's queries, judge's on all
        share = f"{g.n_needed_gate:,} {unit} for the gate; " if g.n_needed_gate is not None else ""
        alone = f"{g.n_needed:,} {unit}" if g.n_needed else f"no number of {unit}"
        now = g.judged or f"now {g.n_queries:,}"
        lines.append(f"  {g.guard}: {share}alone {alone} {g.planned_for} ({now}; {g.verdict})")
    return lines


def _users(plan: VersionPlan, short: bool = False) -> str:
    if plan.users is not None:
        return f"{plan.users:,} users"
    if short:
        return f"none (at most {plan.power_at:.0%} power)"
    return (
        f"no number of users (at most {plan.power_at:.0%} power: the seeds' variance alone is too large; "
        "more seeds, not more users)"
    )


@dataclass(frozen=True)
class SeedsPlan:
    """``harness plan FOLDER`` where both systems have several runs: the components estimated there, and the users
    each number of runs per system needs (:func:`~harness.stats.seeds.version_plan`)."""

    components: Components
    plans: tuple[VersionPlan, ...]
    source: str  # what the components were estimated from
    seeds: tuple[int, int]
    users: int
    # the seed sd's one-sided SD_CONFIDENCE upper limit (few runs estimate it loosely), and the plans with it
    seed_sd_upper: float | None = None
    plans_upper: tuple[VersionPlan, ...] = ()

    def lines(self, margin: float, alpha: float, target: float) -> list[str]:
        c = self.components
        out = [
            f"components {self.source} ({self.seeds[0]} and {self.seeds[1]} runs, {self.users:,} users): seed sd "
            f"{c.seed_sd:.3g}, system x user sd {c.interaction_sd:.3g}, residual sd {c.residual_sd:.3g}",
            f"users to resolve {margin:g} between the versions at alpha {alpha:g} with {target:.0%} power:",
        ]
        if self.seed_sd_upper is not None:
            out[0] += (
                f"; the seed sd's {SD_CONFIDENCE:.0%} upper confidence limit {self.seed_sd_upper:.3g} "
                f"({self.seeds[0] + self.seeds[1] - 2} degrees of freedom)"
            )
        upper = {p.seeds: p for p in self.plans_upper}
        for p in self.plans:
            line = f"  {p.seeds} runs each: " + _users(p)
            if p.seeds in upper:
                line += f"; at the seed sd's upper limit, {_users(upper[p.seeds], short=True)}"
            out.append(line)
        return out

    def to_dict(self) -> dict[str, object]:
        return {
            "components": asdict(self.components),
            "plans": [asdict(p) for p in self.plans],
            "seed_sd_upper": self.seed_sd_upper,
            "seed_sd_confidence": SD_CONFIDENCE,
            "plans_upper": [asdict(p) for p in self.plans_upper],
            "source": self.source,
            "seeds": list(self.seeds),
            "users": self.users,
        }


def seeds_of(folder: str | Path | SavedResults, systems: Sequence[str] | None = None, dataset: str | None = None) -> bool:
    """Whether the folder holds several runs (seeds) of both systems planned (production and candidate by default)."""
    saved = folder if isinstance(folder, SavedResults) else read_results(folder)
    seeds = saved.seed_summary
    if seeds is None:
        return False
    pair = _pair(saved, systems)
    mine = seeds if dataset is None else seeds[seeds["dataset"] == dataset]
    return all(mine[mine["system"] == s]["seed"].nunique() >= 2 for s in pair)


def plan_seeds_from_results(
    folder: str | Path | SavedResults,
    measure: str,
    margin: float,
    systems: Sequence[str] | None = None,
    dataset: str | None = None,
    segment: str = "all",
    alpha: float = 0.05,
    target: float = 0.8,
    seeds: Sequence[int] = (2, 3, 5, 10),
) -> SeedsPlan:
    """The seeds and users a version comparison needs, from the components of two systems' runs in a results folder
    (users and seeds both random: :func:`~harness.stats.seeds.components`)."""
    saved = folder if isinstance(folder, SavedResults) else read_results(folder)
    pair = _pair(saved, systems)
    dataset, parsed = _dataset_and_measure(saved, dataset, measure)
    if _judge_name(saved, dataset) is not None:
        raise _SEEDS_JUDGED
    if REGISTRY.definition(parsed).aggregate != "mean" or REGISTRY.definition(parsed).is_system(parsed):
        raise HarnessError(
            f"{measure} is not averaged over users: the version plan is for means",
            hint="plan a measure averaged over users (nDCG, AP, P, R, ...)",
        )
    tables = []
    for system in pair:
        rows = _rows_of(saved, dataset, system, parsed, segment)
        wide = rows.pivot_table(index="seed", columns="query_id", values="value", sort=True)
        if len(wide) < 2:
            raise HarnessError(
                f"{system!r} has {len(wide)} run(s) on {dataset!r} in {saved.folder.name}: a version "
                "plan estimates the seeds' spread from 2 or more",
                hint="give several runs (seeds) of each system, or plan with --seed-sd, --interaction-sd and --residual-sd",
            )
        tables.append(wide)
    shared = tables[0].columns.intersection(tables[1].columns)
    a, b = (t[shared].to_numpy(dtype=np.float64) for t in tables)
    finite = np.isfinite(a).all(axis=0) & np.isfinite(b).all(axis=0)
    if finite.sum() < 2:
        raise HarnessError("fewer than 2 users with values in every run of both systems", hint="check the segment")
    found = components(a[:, finite], b[:, finite])
    plans = tuple(version_plan(margin, found.seed_sd, found.interaction_sd, found.residual_sd, alpha, target, tuple(seeds)))
    upper = seed_sd_upper(a[:, finite], b[:, finite], SD_CONFIDENCE)
    plans_upper = tuple(version_plan(margin, upper, found.interaction_sd, found.residual_sd, alpha, target, tuple(seeds)))
    where = f"{pair[1]} against {pair[0]} on {dataset}" + ("" if segment == "all" else f" / {segment}")
    source = f"estimated from {where} in {saved.folder.name}"
    return SeedsPlan(found, plans, source, (len(a), len(b)), int(finite.sum()), upper, plans_upper)


def _rows_of(saved: SavedResults, dataset: str, system: str, measure: Measure, segment: str) -> Any:
    """A system's per-query rows of ``measure`` on ``dataset`` (within ``segment``); a HarnessError when there are none."""
    rows = saved.per_query_of(dataset, system, str(measure))
    if segment != "all":
        rows = rows[rows["segment"] == segment]
    if rows.empty:
        raise HarnessError(
            f"no per-query values of {system!r} for {measure} on {dataset!r}"
            + ("" if segment == "all" else f" in segment {segment!r}"),
            hint="check the system, dataset and segment names",
        )
    return rows


def _pair(saved: SavedResults, systems: Sequence[str] | None) -> list[str]:
    release = saved.recorded.release
    pair = list(systems) if systems else [release.production, release.candidate] if release else []
    if len(pair) != 2:
        raise HarnessError(
            f"{saved.folder} has no release gate to take production and candidate from",
            hint="name the two systems: --systems A B",
        )
    return pair


def _dataset_and_measure(saved: SavedResults, dataset: str | None, measure: str) -> tuple[str, Measure]:
    recorded = saved.recorded
    datasets = sorted(recorded.datasets)
    if dataset is None:
        if len(datasets) != 1:
            raise HarnessError(f"{saved.folder} has {len(datasets)} datasets", hint=f"name one: --dataset {datasets[0]}")
        dataset = datasets[0]
    elif dataset not in datasets:
        raise HarnessError(f"dataset {dataset!r} is not in {saved.folder}", hint=f"use one of {', '.join(datasets)}")
    parsed = recorded.measure(measure)
    if parsed is None:
        names = list(dict.fromkeys([recorded.label(m) for m in recorded.measures] + [str(m) for m in recorded.measures]))
        close = difflib.get_close_matches(measure, names, n=3, cutoff=0.4)
        raise HarnessError(
            f"measure {measure!r} was not computed in {saved.folder}",
            hint=f"did you mean {', '.join(map(repr, close))}?" if close else "harness validate lists them",
        )
    return dataset, parsed


def plan_from_results(
    folder: str | Path | SavedResults,
    measure: str,
    margin: float,
    systems: Sequence[str] | None = None,
    dataset: str | None = None,
    segment: str = "all",
    alpha: float = 0.05,
    target: float = 0.8,
    sided: Sided = "one",
    min_affected: float | None = None,
) -> Plan:
    """A :class:`Plan` whose sd is that of the per-user differences between two systems in a results folder
    (production and candidate of its release gate unless ``systems`` names two); one-sided on a measure with a known
    range, also the plan of the bound ``bound: auto`` decides by (``min_affected``: by default the folder's gate's,
    else the default)."""
    min_affected = checked_min_affected(min_affected)
    saved = folder if isinstance(folder, SavedResults) else read_results(folder)
    pair = _pair(saved, systems)
    dataset, parsed = _dataset_and_measure(saved, dataset, measure)
    definition = REGISTRY.definition(parsed)
    if definition.is_system(parsed):  # its sd comes from resampling the users' lists, which the gate did
        return _plan_from_gate(saved, parsed, margin, dataset, segment, alpha, target, sided)
    if definition.aggregate != "mean":
        raise HarnessError(
            f"{measure} is not averaged over users: a paired t-test plan does not describe it",
            hint="plan a measure averaged over users (nDCG, AP, P, R, ...)",
        )
    judge = _judge_name(saved, dataset)
    if judge is not None:
        return _judged_plan(saved, pair, dataset, parsed, segment, margin, alpha, target, sided, judge)
    columns = [_rows_of(saved, dataset, system, parsed, segment).set_index("query_id")["value"] for system in pair]
    joined = columns[0].to_frame("a").join(columns[1].to_frame("b"), how="inner").dropna()
    if len(joined) < 2:
        raise HarnessError("fewer than 2 users with values for both systems", hint="check the segment and systems")
    differences = (joined["b"] - joined["a"]).to_numpy(dtype=np.float64)
    sd = float(paired.run_tests(differences, None, ("t",)).t.sd[0])  # from exact sums, as the tests compute it
    where = f"{pair[1]} against {pair[0]} on {dataset}" + ("" if segment == "all" else f" / {segment}")
    plan = Plan.of(sd, margin, alpha, target, sided, f"estimated from {where} in {saved.folder.name}", len(differences))
    if min_affected is None:
        recorded = None if saved.verdict is None else saved.verdict.min_affected
        min_affected = DEFAULT_MIN_AFFECTED if recorded is None else recorded
    return with_auto(plan, parsed, min_affected)


_SEEDS_JUDGED = HarnessError(
    "a plan of seeds and people's queries for versions on a judged dataset is not built",
    hint="harness plan FOLDER --gate gives the people's queries each guard needs at these seeds",
)


def _judge_name(saved: SavedResults, dataset: str) -> str | None:
    """The judge's name where ``dataset`` has one, else None."""
    for entry in saved.config.get("datasets") or []:
        if entry.get("name") == dataset and entry.get("judge"):
            return str(entry["judge"].get("name") or "judge")
    return None


def _judged_plan(
    saved: SavedResults,
    pair: list[str],
    dataset: str,
    measure: Measure,
    segment: str,
    margin: float,
    alpha: float,
    target: float,
    sided: Sided,
    judge: str,
) -> Plan:
    """A judged dataset's plan: the queries people would judge for the prediction-powered t (the judge labelling
    every query), from the two systems' differences under each labelling."""
    if saved.per_query_people is None:
        raise HarnessError(f"{saved.folder} has no people's values of {dataset!r}", hint="give the folder harness run wrote")
    if "seed" in saved.per_query_people.columns:
        raise _SEEDS_JUDGED
    judged = [_rows_of(saved, dataset, system, measure, segment).set_index("query_id")["value"] for system in pair]
    people = []
    for system in pair:
        rows = saved.per_query_people
        rows = rows[(rows["dataset"] == dataset) & (rows["system"] == system) & (rows["measure"] == str(measure))]
        people.append((rows if segment == "all" else rows[rows["segment"] == segment]).set_index("query_id")["value"])
    f_all = (judged[1] - judged[0]).dropna().sort_index()
    y = (people[1] - people[0]).dropna()
    y = y[y.index.isin(f_all.index)].sort_index()
    sampled = f_all.index.isin(y.index)
    if int(sampled.sum()) < 2:
        raise HarnessError(
            f"people judged {int(sampled.sum())} of the {len(f_all):,} queries here: a plan needs 2 or more",
            hint="check the segment, or have people judge a random sample of the queries",
        )
    from harness.stats.ppi import people_plan

    found = people_plan(y.to_numpy(np.float64), f_all.to_numpy(np.float64), sampled, margin, alpha, target, sided)
    where = f"{pair[1]} against {pair[0]} on {dataset}" + ("" if segment == "all" else f" / {segment}")
    return Plan.judged(found, margin, alpha, target, sided, f"estimated from {where} in {saved.folder.name}, judge {judge}")


def checked_min_affected(value: object) -> float | None:
    """A plan's ``min_affected`` (None: the gate's, or the default), checked as ``release.min_affected`` is."""
    if value is None:
        return None
    try:
        return release_min_affected(value)
    except GuardSpecError as exc:
        raise HarnessError(exc.message, hint=exc.hint) from None


def with_auto(plan: Plan, measure: Measure, min_affected: float) -> Plan:
    """``plan`` with what ``bound: auto`` needs for a guard on ``measure``, where its per-user values have a known
    range (the registry's); ``plan`` itself otherwise."""
    value_range = REGISTRY.definition(measure).range_of(measure)
    if value_range is None:
        return plan
    guard = Guard(measure, "max_drop", plan.margin)
    return plan.with_auto(excess_range(guard, guard.sign, value_range), min_affected)


def _plan_from_gate(
    saved: SavedResults, measure: Measure, margin: float, dataset: str, segment: str, alpha: float, target: float, sided: Sided
) -> Plan:
    """A measure with one value per run: what the gate planned, from the bootstrap sd of its guard on that measure,
    dataset and segment (gate.json); a system measure has no per-user values a t-test plan could read."""
    guards = [] if saved.verdict is None else [*saved.verdict.guards, *saved.verdict.warnings]
    found = next(
        (g for g in guards if g.measure == str(measure) and g.dataset == dataset and g.segment == segment and g.sd is not None),
        None,
    )
    if found is None:
        raise HarnessError(
            f"{measure} has one value per run: its per-user sd comes from the gate's bootstrap over "
            f"the users' lists, and {saved.folder.name} has no guard on it on {dataset!r}"
            + ("" if segment == "all" else f" / {segment!r}"),
            hint="guard it in release.guards (descriptive: true is enough) and run again; "
            "harness plan then plans what the gate plans",
        )
    if sided != "one":
        raise HarnessError("the gate's bootstrap plan is one-sided", hint="drop --two-sided")
    where = f"{dataset}" + ("" if segment == "all" else f" / {segment}")
    return Plan.resampled(
        found, margin, alpha, target, f"the bootstrap over users of the gate's guard on {where} in {saved.folder.name}"
    )
