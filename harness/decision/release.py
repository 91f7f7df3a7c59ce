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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any, Literal, NamedTuple

import numpy as np

from harness.comparison.compare import CompareSettings, system_replicates, version_replicates
from harness.comparison.rows import Comparisons
from harness.comparison.versions import SeededValues, runs_by_system, seeded_pair, segment_map, tables_of
from harness.config.defaults import DEFAULT_POWER
from harness.config.schema import Guard, Release
from harness.errors import HarnessError
from harness.evaluation.results import MIN_GEO_MEAN, PerQuery, RunResult, aggregate_values
from harness.measures.registry import REGISTRY
from harness.measures.spec import Measure
from harness.stats import bounds, paired, power
from harness.stats.bounds import BoundChoice
from harness.stats.correction import correct
from harness.stats.looks import Look
from harness.stats.power import Sided

Label = Literal["PASS", "FAIL", "INCONCLUSIVE"]
GuardLabel = Literal["PASS", "FAIL", "INCONCLUSIVE", "DESCRIPTIVE"]
T_TEST = "one-sided paired t-test over users"
BETTING = "one-sided betting bound over users (exact in the measure's range)"
UNDECIDED = "no bound could be trusted"
BOOTSTRAP = "bootstrap over users (approximate)"
VERSION = "one-sided t over users and seeds (crossed design, Satterthwaite df; approximate)"
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


Values = PairedValues | PairedMoments | ResampledValues | SeededValues | str  # a str: why it cannot be evaluated


@dataclass(frozen=True)
class GuardResult:
    """One guard on one dataset (and segment): its verdict, the numbers behind it and what would decide it.

    ``drop`` is production - candidate in the measure's direction (positive: worse), on the
    aggregate's scale; ``margin`` the drop the guard allows; ``drop_low`` and ``drop_high`` the
    drop's one-sided (1 - alpha) bounds. ``p_pass`` tests "drop >= margin" (PASS below alpha),
    ``p_fail`` "drop <= margin" and ``p_fail_adj`` is it Holm-corrected across the gate's
    guards (FAIL below alpha). ``mde``: the smallest distance between the true drop and the
    margin these ``n_queries`` users detect with the planned power; ``n_needed``: the users
    that would decide the guard with that power for the case ``planned_for`` names.
    """

    guard: str
    verdict: GuardLabel
    reason: str
    measure: str = ""
    dataset: str = ""
    segment: str = "all"
    condition: str = ""
    threshold: float | None = None
    descriptive: bool = False
    method: str = ""
    evaluated: bool = True
    production: float | None = None
    candidate: float | None = None
    difference: float | None = None  # candidate - production
    drop: float | None = None
    margin: float | None = None
    drop_low: float | None = None
    drop_high: float | None = None
    p_pass: float | None = None
    p_fail: float | None = None
    p_fail_adj: float | None = None
    n_queries: int = 0
    n_changed: int | None = None  # users whose value changed (candidate != production)
    sd: float | None = None  # per user, of the excess drop on the test's scale
    mde: float | None = None
    n_needed: int | None = None
    planned_for: str = ""
    # the users that would decide the guard if the true difference were the one observed (None: none would, or it is
    # what n_needed already plans for), beside n_needed's equal candidate: two plans, each labelled
    n_needed_observed: int | None = None
    n_needed_gate: int | None = None  # this guard's users for the whole gate's plan (Decision.gate_planned_for)

    def __repr__(self) -> str:
        """One line: the guard, its verdict and the numbers that decided it.

        >>> GuardResult("RR@10 on trec: drop <= 0.02", "INCONCLUSIVE", "", drop=-0.0003, margin=0.02, n_queries=150)
        GuardResult(RR@10 on trec: drop <= 0.02: INCONCLUSIVE, drop -0.0003 against a margin of 0.0200, 150 users)
        """
        numbers = (
            f", drop {self.drop:.4f} against a margin of {self.margin:.4f}"
            if self.drop is not None and self.margin is not None
            else ""
        )
        return f"GuardResult({self.guard}: {self.verdict}{numbers}, {self.n_queries} users)"

    def _repr_html_(self) -> str:
        return _guards_html((self,))


@dataclass(frozen=True)
class Decision:
    """The release decision: ``verdict`` (PASS, FAIL or INCONCLUSIVE) and every guard's result in ``guards``.

    ``errors`` says which error the verdict controls and at what rate; ``outcome`` is the
    verdict after ``on_inconclusive`` (``release.on_inconclusive``) maps an INCONCLUSIVE one.
    """

    production: str
    candidate: str
    guards: tuple[GuardResult, ...]
    alpha: float = 0.05
    power: float = DEFAULT_POWER
    on_inconclusive: str = "inconclusive"
    bound: str = "auto"
    # the segment sweep: unguarded segments significantly beyond a guard's margin (Holm within the sweep). They never
    # change the verdict; they are named beside it, so a PASS cannot hide a large segment's loss
    warnings: tuple[GuardResult, ...] = ()
    # a gate planned for several looks as users accrue (release.looks): this is look ``look`` of ``looks``, and its
    # guards were tested at ``level``, its share of alpha (harness.stats.looks); alpha is then the rate over all looks
    look: int = 1
    looks: int = 1
    level: float | None = None  # None: alpha itself (one look)
    key: str = ""  # the gate's identity (gate_key): the earlier looks of the same gate carry the same
    # the users the whole gate needs to decide an equal candidate with the planned power (_gate_plan), and that case
    n_needed_gate: int | None = None
    gate_planned_for: str = ""
    # what the verdict is about: "model" (these trained runs, one per system, on these users) or "version" (the
    # training procedures, over their runs: users and seeds both random); seeds: (production's runs, candidate's)
    claim: str = "model"
    seeds: tuple[int, int] = (1, 1)

    @property
    def claim_text(self) -> str:
        """The claim the verdict makes, as a sentence."""
        if self.claim == "version":
            return (
                f"The claim: the version (the training procedure) of {self.candidate} against that of "
                f"{self.production}, over their runs ({self.seeds[1]} and {self.seeds[0]} seeds), with users and "
                "seeds both random"
            )
        return (
            f"The claim: these trained runs of {self.candidate} and {self.production} (one each), on these users; "
            "a retrained model may differ by its seed"
        )

    @property
    def tested_at(self) -> float:
        """The level each guard was tested at: alpha for one look, this look's share of it otherwise."""
        return self.alpha if self.level is None else self.level

    def _over_looks(self) -> str:
        """Where the stated rate holds over several planned looks, which look this is and at what level it tested."""
        if self.looks == 1:
            return ""
        return (
            f" over the gate's {self.looks} planned looks (this is look {self.look}; its guards are tested at "
            f"{self.tested_at:.3g}, its share of {self.alpha:g} by alpha spending)"
        )

    @property
    def deciding(self) -> tuple[GuardResult, ...]:
        return tuple(g for g in self.guards if not g.descriptive)

    @property
    def verdict(self) -> Label:
        labels = [g.verdict for g in self.deciding]
        if "FAIL" in labels:
            return "FAIL"
        return "PASS" if labels and all(label == "PASS" for label in labels) else "INCONCLUSIVE"

    @property
    def outcome(self) -> Label:
        """What the gate exits as: the verdict, with INCONCLUSIVE mapped by ``on_inconclusive`` when it says so."""
        if self.verdict == "INCONCLUSIVE" and self.on_inconclusive in ("fail", "pass"):
            return "FAIL" if self.on_inconclusive == "fail" else "PASS"
        return self.verdict

    @property
    def errors(self) -> str:
        """Which error this verdict controls, and at what rate."""
        a, k = f"{self.alpha:g}", len(self.deciding)
        caveat = self._caveat() + self._over_looks()
        level = f"{self.tested_at:.3g}"
        if self.verdict == "PASS":
            text = (
                f"PASS controls the false-PASS rate: a candidate worse than any guard's margin passes with probability "
                f"at most {a}{caveat} (each of the {k} guards is a one-sided test at {level}; the gate passes only when "
                f"every guard does, so no correction across guards is needed)"
            )
        elif self.verdict == "FAIL":
            unevaluated = any(not g.evaluated for g in self.deciding)
            text = (
                f"FAIL controls the false-FAIL rate: a candidate within every margin fails with probability at most {a}"
                f"{caveat} (each guard's test of exceeding its margin, Holm-corrected across the {k} guards)"
                + ("; a guard that could not be evaluated fails the gate as well" if unevaluated else "")
            )
        else:
            kinds = {g.condition for g in self.deciding if g.verdict == "INCONCLUSIVE"}
            evidence = (
                "of no gain"
                if kinds == {"min_gain"}
                else "of no drop (nor, for a min_gain guard, of no gain)"
                if "min_gain" in kinds
                else "of no drop"
            )
            text = (
                f"INCONCLUSIVE: no guard is shown worse than its margin, and not every guard is shown within it, at "
                f"{level}. This is not evidence {evidence}, and neither error is risked; each undecided guard says how "
                "many users would decide it" + self._gate_plan_text() + ". "
            )
            if self.looks == 1:
                text += (
                    "Decide that number before collecting them and run the gate once then: re-running it as users "
                    "accrue until it passes is many looks at one alpha (20 daily looks pass a candidate at its margin "
                    "about 0.22 of the time, not 0.05); release.looks plans several looks"
                )
            elif self.look < self.looks:
                text += (
                    f"This was look {self.look} of the {self.looks} planned: the gate may be run again as users "
                    f"accrue, up to look {self.looks}, with the false-PASS and false-FAIL rates at most {a} over all "
                    f"of them (this look tested at {level}; alpha spending)"
                )
            else:
                text += (
                    f"This was the last of the {self.looks} planned looks (tested at {level}): the gate's alpha is "
                    "spent, and a further look would exceed it; plan a new gate for a new decision"
                )
            if self.on_inconclusive == "fail":
                text += ". Treated as FAIL (release.on_inconclusive: fail)"
            elif self.on_inconclusive == "pass":
                text += ". Treated as PASS (release.on_inconclusive: pass): the false-PASS rate is then NOT controlled"
        return f"{text}. {self.claim_text}"

    @property
    def controls(self) -> str:
        """The error the verdict controls, as a field beside the sentence: "false PASS", "false FAIL" or "none"."""
        return {"PASS": "false PASS", "FAIL": "false FAIL"}.get(self.verdict, "none")

    @property
    def approximate(self) -> bool:
        """Whether the stated rate rests on an approximation (a t-test's normal one, the bootstrap's) for some guard
        that decided; False where every deciding guard was decided by the exact betting bound (or none decided)."""
        return any(g.method in (T_TEST, BOOTSTRAP, VERSION) for g in self.deciding if g.evaluated)

    def _caveat(self) -> str:
        """What the stated rate rests on, where a guard was decided by an approximation."""
        methods = {g.method for g in self.deciding if g.evaluated}
        notes = []
        if T_TEST in methods:
            where = {
                "auto": ", used only where the users' skewness puts its error within a tenth of alpha of it",
                "t": ", used wherever the users' differences spread, as release.bound: t asks",
                "betting": ", used for the measures with no known range",
            }.get(self.bound, "")
            notes.append(f"the t-tests' normal approximation{where}")
        if BOOTSTRAP in methods:
            notes.append("the bootstrap over users, approximate")
        if VERSION in methods:
            notes.append("the crossed t over users and seeds, with Satterthwaite's degrees of freedom")
        if not notes:
            return (
                " (exactly: every guard is decided by the betting bound, valid for any values in the measure's range)"
                if BETTING in methods
                else ""
            )
        return (
            f" (up to {' and '.join(notes)}; exactly for the guards decided by the betting bound)"
            if BETTING in methods
            else f" (up to {' and '.join(notes)})"
        )

    def __repr__(self) -> str:
        """The verdict and its claim, in one line (``line()`` for the whole sentence; ``guards`` for the numbers)."""
        return (
            f"Decision({self.verdict}: {self.candidate} against {self.production}, {len(self.deciding)} guard(s); "
            f"controls {self.controls}{f' at {self.alpha:g}' if self.controls != 'none' else ''})"
        )

    def _repr_html_(self) -> str:
        """A notebook's view: the verdict box (the report's colours), the error it controls, and the guards' table."""
        colour = {"PASS": "#1a7f37", "FAIL": "#cf222e"}.get(self.verdict, "#9a6700")
        treated = f" (treated as {self.outcome})" if self.outcome != self.verdict else ""
        warnings = "".join(f"<li>{escape(w.reason or w.guard)}</li>" for w in self.warnings)
        return (
            f'<div style="border-left:6px solid {colour};padding:6px 12px;margin:4px 0">'
            f'<div style="font-size:1.3em;font-weight:bold;color:{colour}">Release gate: {self.verdict}{treated}</div>'
            f"<div>{escape(self.candidate)} against {escape(self.production)}</div>"
            f'<div style="margin-top:4px">{escape(self.errors)}</div>'
            + (f"<div><b>Segments beyond a margin</b><ul>{warnings}</ul></div>" if warnings else "")
            + f"</div>{_guards_html(self.guards)}"
        )

    def line(self) -> str:
        """One line for a terminal or a CI log."""
        head = f"release gate {self.verdict}"
        if self.outcome != self.verdict:
            head += f" (treated as {self.outcome})"
        if self.verdict == "PASS":
            return (
                f"{head}: {self.candidate} is within all {len(self.deciding)} guards' margins against {self.production} "
                f"(false-PASS rate <= {self.alpha:g}{self._looks_short()})"
            ) + self.warning_text()
        shown = (
            [g for g in self.deciding if g.verdict == self.verdict]
            if self.verdict == "FAIL"
            else [g for g in self.deciding if g.verdict != "PASS"]
        )
        rate = f" (false-FAIL rate <= {self.alpha:g}{self._looks_short()})" if self.verdict == "FAIL" else ""
        return (
            f"{head}: {self.candidate} against {self.production}: "
            + "; ".join(g.reason for g in shown)
            + rate
            + self.warning_text()
        )

    def _gate_plan_text(self) -> str:
        """The whole gate's plan, as a clause (empty without one): one number when every guard is on the same users,
        else each guard's users on its own dataset and segment."""
        if self.n_needed_gate is not None:
            return f", and the whole gate about {self.n_needed_gate:,} users {self.gate_planned_for}"
        shares = [f"{g.guard}: {g.n_needed_gate:,}" for g in self.deciding if g.n_needed_gate is not None]
        if not shares:
            return ""
        return f", and the whole gate, {self.gate_planned_for}, each guard's users ({'; '.join(shares)})"

    def _looks_short(self) -> str:
        return "" if self.looks == 1 else f" over {self.looks} looks; look {self.look} at {self.tested_at:.3g}"

    @property
    def warning_heading(self) -> tuple[str, str]:
        """What the segment sweep's warnings are, and on what they rest: the verdict line, summary.md and the report
        each say these two phrases."""
        return (
            f"{len(self.warnings)} unguarded segment(s) significantly beyond a guard's margin",
            f"Holm across the segments swept, at {self.alpha:g}; the verdict does not count them",
        )

    def warning_text(self) -> str:
        """The segment sweep's warnings as a sentence (empty without any)."""
        if not self.warnings:
            return ""
        what, basis = self.warning_heading
        return f". WARNING: {what} ({basis}): " + "; ".join(g.reason for g in self.warnings)

    def to_dict(self) -> dict[str, Any]:
        """What ``gate.json`` holds: the verdict, the errors it controls, then every guard's result."""
        return {
            "verdict": self.verdict,
            "outcome": self.outcome,
            "errors": self.errors,
            "controls": self.controls,
            "alpha": self.alpha,
            "approximate": self.approximate,
            "look": self.look,
            "looks": self.looks,
            "level": self.tested_at,
            "key": self.key,
            "n_needed_gate": self.n_needed_gate,
            "gate_planned_for": self.gate_planned_for,
            "claim": self.claim,
            "seeds": list(self.seeds),
            "power": self.power,
            "on_inconclusive": self.on_inconclusive,
            "bound": self.bound,
            "production": self.production,
            "candidate": self.candidate,
            "line": self.line(),
            "guards": [dataclasses.asdict(g) for g in self.guards],
            "segment_warnings": [dataclasses.asdict(g) for g in self.warnings],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Decision:
        names = {f.name for f in dataclasses.fields(GuardResult)}

        def result(g: dict[str, Any]) -> GuardResult:
            if "verdict" not in g:  # a gate.json written before guards were tests: its pass/fail as it was decided
                g = {
                    "guard": g["guard"],
                    "verdict": "PASS" if g.get("passed") else "FAIL",
                    "reason": g["reason"],
                    "measure": g.get("measure", ""),
                    "dataset": g.get("dataset", ""),
                    "segment": g.get("segment", "all"),
                    "production": g.get("production"),
                    "candidate": g.get("candidate"),
                    "difference": g.get("delta"),
                    "drop": g.get("drop"),
                    "method": "point estimates (before one-sided guards)",
                }
            return GuardResult(**{k: v for k, v in g.items() if k in names})

        # a gate.json without a bound was decided by t
        return cls(
            data["production"],
            data["candidate"],
            tuple(map(result, data["guards"])),
            data.get("alpha", 0.05),
            data.get("power", DEFAULT_POWER),
            data.get("on_inconclusive", "inconclusive"),
            data.get("bound", "t"),
            tuple(map(result, data.get("segment_warnings", []))),
            data.get("look", 1),
            data.get("looks", 1),
            data.get("level"),
            data.get("key", ""),
            data.get("n_needed_gate"),
            data.get("gate_planned_for", ""),
            data.get("claim", "model"),
            tuple(data.get("seeds", (1, 1))),
        )


def describe(guard: Guard) -> str:
    """The guard in words.

    >>> from harness.measures.spec import Measure
    >>> describe(Guard(Measure("nDCG", cutoff=10), "max_drop_pct", 1.0, segment="new"))
    'nDCG@10 on new: drop <= 1% of production'
    >>> describe(Guard(Measure("P", cutoff=10), "min_gain", 0.002, descriptive=True))
    'P@10: gain >= 0.002 (descriptive)'
    """
    where = " / ".join(x for x in (guard.dataset, guard.segment) if x)
    condition = {
        "max_drop": f"drop <= {guard.threshold:g}",
        "max_drop_pct": f"drop <= {guard.threshold:g}% of production",
        "min_gain": f"gain >= {guard.threshold:g}",
    }[guard.condition]
    return f"{guard.measure}{' on ' + where if where else ''}: {condition}" + (" (descriptive)" if guard.descriptive else "")


@dataclass(frozen=True)
class _Tested:
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

    @classmethod
    def nothing_decided(
        cls, production: float, candidate: float, drop: float, margin: float, n: int, sd: float, changed: int | None, reason: str
    ) -> _Tested:
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
) -> Decision:
    """The decision from each guard's values on each dataset and segment it applies to: ``(guard, dataset, segment,
    values)``, values as :class:`PairedValues`, :class:`ResampledValues`, or the reason they could not be had;
    ``bound`` says how a guard on a mean is bounded (:mod:`harness.stats.bounds`). ``sweep``: the same for the
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
    decision = _decide(checks, production, candidate, level, power_target, on_inconclusive, bound)
    decision = _gate_plan(decision, checks, level, power_target, bound)
    if look is not None and look.planned > 1:
        decision = dataclasses.replace(decision, alpha=alpha, look=look.number, looks=look.planned, level=level)
    decision = dataclasses.replace(decision, key=key, claim=claim, seeds=seeds)
    swept = [(g, d, s, _test(g, v, alpha, power_target, bound)) for g, d, s, v in sweep if not isinstance(v, str)]
    tested = [(g, d, s, t) for g, d, s, t in swept if isinstance(t, _Tested)]
    adjusted = correct(np.array([t.p_fail for *_, t in tested], dtype=np.float64), "holm")
    warnings = []
    for (guard, dataset, segment, t), p_adj in zip(tested, adjusted.tolist(), strict=True):
        if p_adj < alpha:
            found = _result(guard, dataset, segment, t, p_adj, alpha, power_target, len(tested))
            warnings.append(dataclasses.replace(found, guard=found.guard + " (segment sweep)"))
    return dataclasses.replace(decision, warnings=tuple(warnings))


def _gate_plan(
    decision: Decision, checks: Sequence[tuple[Guard, str, str, Values]], level: float, target: float, bound: BoundChoice
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
    tested = {i: _test(checks[i][0], checks[i][3], at, power_each, bound) for i in planned}  # type: ignore[arg-type]
    if any(
        not isinstance(t, _Tested) or t.n_needed is None or not t.planned_for.startswith("for an equal") for t in tested.values()
    ):
        return decision
    needed = {i: int(t.n_needed) for i, t in tested.items() if isinstance(t, _Tested) and t.n_needed is not None}
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
) -> Decision:
    tested = [
        _test(guard, values, alpha, power_target, bound) if not isinstance(values, str) else values
        for guard, _, _, values in checks
    ]
    deciding = [i for i, t in enumerate(tested) if isinstance(t, _Tested) and not checks[i][0].descriptive]
    adjusted = correct(np.array([tested[i].p_fail for i in deciding], dtype=np.float64), "holm")  # type: ignore[union-attr]
    p_fail_adj = dict(zip(deciding, adjusted.tolist(), strict=True))
    results = []
    for i, ((guard, dataset, segment, _), t) in enumerate(zip(checks, tested, strict=True)):
        results.append(_result(guard, dataset, segment, t, p_fail_adj.get(i), alpha, power_target, len(deciding)))
    return Decision(production, candidate, tuple(results), alpha, power_target, on_inconclusive, bound)


def _higher(guard: Guard) -> bool:
    return REGISTRY.definition(guard.measure).higher(guard.measure)


def _aggregate(guard: Guard) -> str:
    aggregate = REGISTRY.definition(guard.measure).guard_aggregate(guard.measure)
    return "system" if aggregate == "catalogue" else aggregate


def _test(
    guard: Guard,
    values: PairedValues | PairedMoments | ResampledValues | SeededValues,
    alpha: float,
    target: float,
    bound: BoundChoice,
) -> _Tested | str:
    if isinstance(values, ResampledValues):
        return _test_resampled(guard, values, alpha, target)
    if isinstance(values, SeededValues):
        return _test_version(guard, values, alpha, target)
    if isinstance(values, PairedMoments):  # moments alone: the t-test is all they allow (release.bound: t)
        tested = _test_interval(guard, values, alpha, target)
        if isinstance(tested, _Tested) and tested.undecided:  # sd 0: every user changed by the mean, or none did
            changed = 0 if values.mean == 0 else tested.n
            return _settle(tested, changed, bounds.no_spread(tested.n, changed))
        return tested
    terms = _excess_terms(guard, values)
    if isinstance(terms, str):
        return terms
    changed = bounds.changed_count(terms.drops)
    if bound != "t":
        chosen = _bounded(guard, terms, changed, alpha, target, bound)
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
    return dataclasses.replace(tested, changed=changed)


def _settle(tested: _Tested, changed: int, reason: str) -> _Tested:
    """The t-test's result, undecided for ``reason``."""
    return _Tested.nothing_decided(
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
    aggregate, sign = _aggregate(guard), 1.0 if _higher(guard) else -1.0
    prod, cand = np.asarray(values.production, dtype=np.float64), np.asarray(values.candidate, dtype=np.float64)
    n = int(prod.size)
    if n < 2:
        return f"{n} user(s) with values for both systems: a paired test needs 2 or more"
    r = guard.threshold / 100
    if aggregate == "gmean":  # ratios of geometric means: differences of logs (relative margins only, see guards.py)
        lp, lc = np.log(np.maximum(prod, MIN_GEO_MEAN)), np.log(np.maximum(cand, MIN_GEO_MEAN))
        return _Terms(prod, cand, sign * (lp - lc), np.full(n, -math.log1p(-r) if sign > 0 else math.log1p(r)))
    per_user = n if aggregate in ("sum", "count") else 1  # a margin on a sum is n times a margin on the mean
    margins = {
        "max_drop": np.full(n, guard.threshold / per_user),
        "min_gain": np.full(n, -guard.threshold / per_user),
        "max_drop_pct": r * prod,
    }[guard.condition]
    return _Terms(prod, cand, sign * (prod - cand), margins)


def _bounded(guard: Guard, terms: _Terms, changed: int, alpha: float, target: float, bound: BoundChoice) -> _Tested | None:
    """A guard on a mean (or geometric mean) bounded as ``bound`` says: None where that is the t-test (decided by the
    exact sums, as the comparisons decide it), else the betting bound's test or why nothing decides. ``changed``: the
    users whose drop is not 0."""
    aggregate, sign = _aggregate(guard), 1.0 if _higher(guard) else -1.0
    prod, cand, drops, margins = terms
    n = int(prod.size)
    # a geometric mean is tested on log ratios, which have no range
    value_range = None if aggregate == "gmean" else REGISTRY.definition(guard.measure).range_of(guard.measure)
    if value_range is not None and not (
        value_range[0] <= min(prod.min(), cand.min()) and max(prod.max(), cand.max()) <= value_range[1]
    ):
        value_range = None  # values outside the registry's range (custom gains, a judgment beyond the scale)
    low, high = _excess_range(guard, sign, value_range) if value_range is not None else (None, None)
    found = bounds.mean_bound(drops - margins, low, high, alpha, bound, changed=changed)
    if found.method == "t":
        return None
    p_value, c_value = aggregate_values(guard.measure, prod), aggregate_values(guard.measure, cand)
    scale = _to_drop(aggregate, sign, n, p_value)
    mean_margin = float(margins.mean())
    drop = sign * (p_value - c_value)
    if found.method == "none":
        return _Tested.nothing_decided(p_value, c_value, drop, scale(mean_margin), n, found.sd, changed, found.reason)
    distance, planned_for = _planned(guard, mean_margin, found.mean)
    mde, n_needed = bounds.betting_plan(n, found.sd, low, high, alpha, target, distance)  # type: ignore[arg-type]
    return _Tested(
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


def _excess_range(guard: Guard, sign: float, value_range: tuple[float, float]) -> tuple[float, float]:
    """The interval a user's excess drop (drop - margin) lies in when both values lie in ``value_range``: its extremes
    are at the corners, the excess being linear in both values.

    >>> from harness.measures.spec import Measure
    >>> _excess_range(Guard(Measure("AP"), "max_drop", 0.01), 1.0, (0.0, 1.0))
    (-1.01, 0.99)
    >>> _excess_range(Guard(Measure("AP"), "max_drop_pct", 10.0), 1.0, (0.0, 1.0))
    (-1.0, 0.9)
    """
    r = guard.threshold / 100
    corners = []
    for prod in value_range:
        for cand in value_range:
            margin = {"max_drop": guard.threshold, "min_gain": -guard.threshold}.get(guard.condition, r * prod)
            corners.append(sign * (prod - cand) - margin)
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


def _test_interval(guard: Guard, values: PairedMoments, alpha: float, target: float) -> _Tested | str:
    """A mean with an absolute margin: the one-sided t-test of the excess drop, from the differences' t interval."""
    n = values.n
    if n < 2 or not (math.isfinite(values.mean) and math.isfinite(values.sd)):
        return f"{n} user(s) with values for both systems: a paired test needs 2 or more"
    sign = 1.0 if _higher(guard) else -1.0
    margin = guard.threshold if guard.condition == "max_drop" else -guard.threshold
    excess = -sign * values.mean - margin  # the mean drop beyond the margin
    return _one_sided(guard, n, excess, values.sd, margin, values.production, values.candidate, sign, lambda x: x, alpha, target)


def _test_paired(guard: Guard, terms: _Terms, alpha: float, target: float) -> _Tested:
    """The one-sided paired t-test of a measure with a value per user, on the per-user excess drop."""
    aggregate, sign = _aggregate(guard), 1.0 if _higher(guard) else -1.0
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
) -> _Tested:
    """Both one-sided t-tests of a guard from the mean excess drop over its margin and the per-user sd (the tests'
    scale, :func:`~harness.stats.bounds.t_moments`), with the bounds, the minimum detectable effect and the users needed
    (:mod:`harness.stats.power`) carried to the aggregate's by ``scale``."""
    if not sd > 0:  # equal differences (up to rounding): no spread to bound the mean by, so nothing is decided
        return _Tested.nothing_decided(
            production, candidate, sign * (production - candidate), scale(margin), n, sd, None, "no spread"
        )
    drop_low, drop_high, p_pass, p_fail = bounds.t_moments(n, excess, sd, alpha, offset=margin)
    distance, planned_for = _planned(guard, margin, excess)
    return _Tested(
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


def _test_version(guard: Guard, values: SeededValues, alpha: float, target: float) -> _Tested | str:
    """A guard on a mean for the version claim: the excess drop of the procedures' means, users and seeds both
    random (:mod:`harness.stats.seeds`). One run of a system leaves the seed variance unknown: nothing is decided."""

    from harness.stats.seeds import crossed_difference

    aggregate, sign = _aggregate(guard), 1.0 if _higher(guard) else -1.0
    if aggregate != "mean":
        return f"the version claim is tested on means, and {guard.measure} is a {aggregate}: decide it with claim: model"
    prod, cand = np.asarray(values.production, dtype=np.float64), np.asarray(values.candidate, dtype=np.float64)
    (r_prod, n), r_cand = prod.shape, cand.shape[0]
    p_value, c_value = float(prod.mean()), float(cand.mean())
    drop = sign * (p_value - c_value)
    relative = guard.condition == "max_drop_pct"
    margin = (
        guard.threshold / 100 * p_value
        if relative
        else {"max_drop": guard.threshold, "min_gain": -guard.threshold}[guard.condition]
    )
    seeds = f"{r_cand} run(s) of the candidate against {r_prod} of production"
    if n < 2:
        return f"{n} user(s) in every run of both systems: a test needs 2 or more"
    if min(r_prod, r_cand) < 2:
        return _Tested.nothing_decided(
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
    # the excess drop, drop - margin, as w_p mean_p + w_c mean_c + constant
    weight_p = sign - guard.threshold / 100 if relative else sign
    constant = 0.0 if relative else -margin
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
    )
    return _Tested(
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
    )


def _test_resampled(guard: Guard, values: ResampledValues, alpha: float, target: float) -> _Tested | str:
    """A measure with one value per run: the centred bootstrap over users (the comparisons' resamples)."""
    sign = 1.0 if _higher(guard) else -1.0
    r = guard.threshold / 100
    # a measure with a target (BiasDisparity's BD at 0): the drop is how much farther from it the candidate is, from
    # either side, and a max_drop_pct margin is a share of production's distance from it
    best_at = REGISTRY.definition(guard.measure).target_of(guard.measure)

    def drop(prod: np.ndarray | float, cand: np.ndarray | float) -> np.ndarray | float:
        return np.abs(cand - best_at) - np.abs(prod - best_at) if best_at is not None else sign * (prod - cand)

    def excess(prod: np.ndarray | float, cand: np.ndarray | float) -> np.ndarray | float:
        margin = {"max_drop": guard.threshold, "min_gain": -guard.threshold}.get(guard.condition)
        scale = np.abs(prod - best_at) if best_at is not None else prod
        return drop(prod, cand) - (r * scale if margin is None else margin)

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
    return _Tested(
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


def _result(
    guard: Guard,
    dataset: str,
    segment: str,
    tested: _Tested | str,
    p_fail_adj: float | None,
    alpha: float,
    target: float,
    family: int = 1,
) -> GuardResult:
    # the label names the dataset (and segment) it was decided on: a guard without dataset: expands over every
    # dataset, and each copy must be told apart in gate.json, MLflow and the report
    text = describe(dataclasses.replace(guard, dataset=dataset or guard.dataset))
    where = f"{guard.measure} on {dataset}" + ("" if segment == "all" else f" / {segment}")
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
        verdict: GuardLabel = "DESCRIPTIVE" if guard.descriptive else "FAIL"
        return dataclasses.replace(base, verdict=verdict, reason=f"{where}: cannot be evaluated ({tested})", evaluated=False)
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
    )
    level = f"{1 - alpha:.0%}"
    gain = guard.condition == "min_gain"
    # in the guard's own terms: a drop against its allowance, or a gain against the one required
    value, bound_low, bound_high, limit = (
        (-t.drop, -t.drop_high, -t.drop_low, -t.margin) if gain else (t.drop, t.drop_low, t.drop_high, t.margin)
    )
    noun = "gain" if gain else "drop"
    values = f"{t.production:.4f} -> {t.candidate:.4f}, {noun} {value:+.4f}"
    changed = "" if t.changed is None else f" ({t.changed:,} of {t.n:,} users changed)"
    changed += f" ({t.note})" if t.note else ""
    if t.undecided and not guard.descriptive:
        reason = (
            f"{where}: {values}{changed}; not decided: {t.undecided}. A candidate is never passed on a difference it cannot bound"
        )
        return dataclasses.replace(base, verdict="INCONCLUSIVE", reason=reason)
    if guard.descriptive:
        holds = value >= limit if gain else value <= limit
        verdict = "DESCRIPTIVE"
        reason = (
            f"{where}: {values}, {'within' if holds else 'beyond'} the {limit:.4f} it names "
            "(point estimates only: descriptive, does not decide the gate)"
        )
    elif t.p_pass < alpha:
        verdict = "PASS"
        bound = f"lower bound {bound_low:+.4f} > {limit:.4f}" if gain else f"upper bound {bound_high:+.4f} < {limit:.4f}"
        reason = f"{where}: {values}{changed}; one-sided {level} {bound} (p {_p(t.p_pass)}, {_by(t.method)})"
    elif p_fail_adj is not None and p_fail_adj < alpha:
        verdict = "FAIL"
        bound = f"upper bound {bound_high:+.4f} < {limit:.4f}" if gain else f"lower bound {bound_low:+.4f} > {limit:.4f}"
        reason = f"{where}: {values}{changed}; one-sided {level} {bound} (Holm-corrected p {_p(p_fail_adj)}, {_by(t.method)})"
    else:
        verdict = "INCONCLUSIVE"
        needed = (
            f"about {t.n_needed:,} users would decide it {t.planned_for}"
            if t.n_needed
            else "no number of users would decide it at the observed difference"
        )
        observed = _needed_at_observed(t)
        if observed is not None:
            base = dataclasses.replace(base, n_needed_observed=observed)
            needed = (
                f"at the observed difference ({abs(t.margin - t.drop):.4f} from it) about {observed:,} users "
                f"would decide it; {needed}"
            )
        beyond = (t.p_fail < alpha) if p_fail_adj is not None else False
        if beyond:  # shown beyond the margin alone, but not after Holm's correction across the guards
            bound = f"upper bound {bound_high:+.4f} < {limit:.4f}" if gain else f"lower bound {bound_low:+.4f} > {limit:.4f}"
            shown = (
                f"one-sided {level} {bound} for this guard alone, but not after Holm's correction across the "
                f"{family} guards (Holm-corrected p {_p(p_fail_adj or 1.0)})"
            )
        else:
            # each bound is one-sided: written as two statements, never as an interval that reads as two-sided
            shown = (
                f"neither one-sided {level} bound ({noun} >= {bound_low:+.4f}, {noun} <= {bound_high:+.4f}) "
                f"excludes the {limit:.4f} it names"
            )
        reason = (
            f"{where}: {values}{changed}; {shown} ({_by(t.method)}). {t.n:,} users detect a distance of "
            f"{t.mde:.4f} from it with {target:.0%} power; {needed}"
        )
    return dataclasses.replace(base, verdict=verdict, reason=reason)


def _needed_at_observed(t: _Tested) -> int | None:
    """The users that would decide a guard if the true difference were the observed one: the minimum detectable
    effect shrinks as 1 / sqrt(n), so ``n (mde / distance)^2``. None where the observed distance from the margin is
    0, nothing was planned, or that is already what ``n_needed`` plans for."""
    distance = abs(t.margin - t.drop)
    if (
        t.planned_for == "if the true difference is the one observed"
        or not distance
        or not math.isfinite(t.mde)
        or not t.n_needed
    ):
        return None
    return math.ceil(t.n * (t.mde / distance) ** 2)


def _by(method: str) -> str:
    """The test in a few words, for a guard's reason."""
    return {T_TEST: "t-test", BETTING: "betting bound", BOOTSTRAP: "bootstrap", VERSION: "t over users and seeds"}.get(
        method, method
    )


def _p(p: float) -> str:
    """``= 0.0123`` or ``< 0.0001``, after "p"."""
    return f"= {p:.3g}" if p >= 1e-4 else "< 0.0001"


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
    """The segment sweep: every deciding guard over all users, on every other segment of its dataset that no guard
    of that measure covers, as that guard would test it there (its margin, its condition).

    >>> from harness.config.schema import Release
    >>> from harness.measures.spec import Measure
    >>> guard = Guard(Measure("AP"), "max_drop", 0.01)
    >>> [(d, s) for _, d, s in sweep_of(Release("p", "c", (guard,)), [(guard, "d", "all")],
    ...                                  [("d", "all"), ("d", "new"), ("d", "old")])]
    [('d', 'new'), ('d', 'old')]
    """
    covered = {(str(g.measure), d, s) for g, d, s in guarded}
    out = []
    for guard, dataset, segment in guarded:
        if guard.descriptive or segment != "all" or not dataset:
            continue
        for d, s in available:
            if d == dataset and s != "all" and (str(guard.measure), d, s) not in covered:
                covered.add((str(guard.measure), d, s))
                out.append((dataclasses.replace(guard, dataset=d, segment=s), d, s))
    return out


def gate_key(release: Release, claim: str = "model") -> str:
    """A gate's identity across runs: the two systems, the guards and the claim (not the data, which grows between
    looks, nor alpha or the plan). The earlier looks of a gate are the results folders whose gate.json carries the
    same key; a gate on the versions is another gate than one on two trained runs.

    >>> from harness.config.schema import Release
    >>> gate_key(Release("v1", "v2")) == gate_key(Release("v1", "v2", looks=20)), len(gate_key(Release("v1", "v2")))
    (True, 16)
    >>> gate_key(Release("v1", "v2")) == gate_key(Release("v1", "v2"), claim="version")
    False
    """
    identity = [
        release.production,
        release.candidate,
        sorted([str(g.measure), g.condition, g.threshold, g.dataset, g.segment, g.descriptive] for g in release.guards),
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
    return decide_arrays(
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
    )


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
    if production is None or candidate is None:
        return "no per-query values"
    if measure not in production.measures or measure not in candidate.measures:
        return f"{measure} was not computed for both systems"
    ids_p, ids_c = production.query_ids.astype(str), candidate.query_ids.astype(str)
    keep_p = np.ones(ids_p.size, dtype=bool) if mask_production is None else mask_production
    keep_c = np.ones(ids_c.size, dtype=bool) if mask_candidate is None else mask_candidate
    _, at_p, at_c = np.intersect1d(ids_p[keep_p], ids_c[keep_c], assume_unique=True, return_indices=True)
    prod = production.column(measure)[np.flatnonzero(keep_p)[at_p]]
    cand = candidate.column(measure)[np.flatnonzero(keep_c)[at_c]]
    defined = ~np.isnan(prod) & ~np.isnan(cand)  # a measure undefined for a user (beyond accuracy) leaves that pair out
    return PairedValues(prod[defined], cand[defined])


SD_CONFIDENCE = 0.9  # how sure a plan from a pilot's sd is of reaching its power (Plan.sd_upper)


@dataclass(frozen=True)
class Plan:
    """How many users a paired t-test needs (Sakai's topic-set-size design): ``n_queries`` for ``power`` to resolve a
    true distance ``margin`` from the tested value, when the per-user differences have standard deviation ``sd``.

    For a ``max_drop: m`` guard (one-sided) that is the users an equal candidate needs to PASS
    with that probability; two-sided, the users a comparison needs to detect a difference of m.

    >>> Plan.of(sd=0.23, margin=0.01, sided="two").n_queries
    4154
    """

    n_queries: int | None
    sd: float
    margin: float
    alpha: float = 0.05
    power: float = DEFAULT_POWER
    sided: str = "one"
    source: str = "given"
    n_now: int | None = None
    power_now: float | None = None
    mde_now: float | None = None
    method: str = T_TEST  # the test planned for: the paired t-test, or the gate's bootstrap over users (BOOTSTRAP)
    # an sd estimated from the n_now users of a pilot is itself uncertain: its one-sided upper confidence limit at
    # SD_CONFIDENCE (chi-square, n_now - 1 df), and the users planned with it; a plan from that limit reaches the
    # power with probability at least SD_CONFIDENCE over pilots (Browne 1995, on pilot samples for sample sizes)
    sd_upper: float | None = None
    n_queries_upper: int | None = None

    @classmethod
    def of(
        cls,
        sd: float,
        margin: float,
        alpha: float = 0.05,
        target: float = 0.8,
        sided: Sided = "one",
        source: str = "given",
        n_now: int | None = None,
    ) -> Plan:
        if not math.isfinite(sd) or sd < 0:
            raise HarnessError(f"the standard deviation must be a finite number >= 0, got {sd}", hint="--sd 0.23")
        if not math.isfinite(margin) or margin <= 0:
            raise HarnessError(f"the margin must be a number above 0, got {margin}", hint="--margin 0.01")
        if not 0 < alpha < 1 or not 0 < target < 1:
            raise HarnessError("alpha and power must lie between 0 and 1", hint="--alpha 0.05 --power 0.8")
        n = power.sample_size(margin, sd, alpha, target, sided)
        now: dict[str, Any] = (
            {}
            if n_now is None
            else {
                "n_now": n_now,
                "power_now": power.power(n_now, margin, sd, alpha, sided),
                "mde_now": power.minimum_detectable_effect(n_now, sd, alpha, target, sided),
            }
        )
        if n_now is not None and n_now > 1 and sd > 0:
            upper = power.sd_upper_limit(sd, n_now, SD_CONFIDENCE)
            now |= {"sd_upper": upper, "n_queries_upper": power.sample_size(margin, upper, alpha, target, sided)}
        return cls(n, sd, margin, alpha, target, sided, source, **now)  # type: ignore[arg-type]

    @classmethod
    def resampled(
        cls, guard: GuardResult, margin: float, alpha: float = 0.05, target: float = 0.8, source: str = "the gate"
    ) -> Plan:
        """What the gate plans for a guard on a measure with one value per run (decided by the bootstrap over users):
        the users that bring the normal bound's half-width ``(z_alpha + z_power) se`` down to ``margin``, with the
        guard's own bootstrap sd; the gate's "users needed" for that margin, to the user.

        >>> g = GuardResult("REO@10", "INCONCLUSIVE", "", "REO@10", "d", "all", sd=0.5, n_queries=100)
        >>> Plan.resampled(g, 0.1).n_queries
        155
        """
        if guard.sd is None or not guard.n_queries or not math.isfinite(guard.sd):
            raise HarnessError(
                f"the gate's guard on {guard.measure} has no bootstrap sd to plan from",
                hint="a guard that was evaluated has one: check the dataset and segment",
            )
        if not math.isfinite(margin) or margin <= 0:
            raise HarnessError(f"the margin must be a number above 0, got {margin}", hint="--margin 0.01")
        n, se = guard.n_queries, guard.sd / math.sqrt(guard.n_queries)
        mde, needed = power.bootstrap_plan(n, se, margin, alpha, target)
        power_now = power.bootstrap_power(margin, se, alpha)
        return cls(needed, guard.sd, margin, alpha, target, "one", source, n, power_now, mde, BOOTSTRAP)

    def __repr__(self) -> str:
        return f"Plan({self.line()})"

    def _repr_html_(self) -> str:
        """A notebook's view: the plan's sentence."""
        return f"<p>{escape(self.line())}</p>"

    def line(self) -> str:
        if self.method == BOOTSTRAP:  # Plan.resampled: the gate's bound on a measure with one value per run
            needed = f"{self.n_queries:,} users" if self.n_queries else "any number of users"
            test, spread = "the gate's bootstrap bound", "the per-user sd is"
        else:
            needed = f"{self.n_queries:,} users" if self.n_queries else "more than 10^9 users"
            test = "a one-sided paired t-test (a max_drop guard)" if self.sided == "one" else "a two-sided paired t-test"
            spread = "the per-user differences have sd"
        text = (
            f"{needed}: {test} at alpha {self.alpha:g} has {self.power:.0%} power to resolve a true distance of "
            f"{self.margin:g} when {spread} {self.sd:.4f} ({self.source})"
        )
        if self.n_now is not None:
            text += (
                f". With the {self.n_now:,} users there: power {self.power_now:.0%}, minimum detectable effect {self.mde_now:.4f}"
            )
        if self.sd_upper is not None:
            upper = f"{self.n_queries_upper:,} users" if self.n_queries_upper else "more than 10^9 users"
            text += (
                f". That sd is estimated from {self.n_now:,} users: at its one-sided {SD_CONFIDENCE:.0%} upper "
                f"confidence limit, {self.sd_upper:.4f}, the plan is {upper}, which reaches {self.power:.0%} power "
                f"in at least {SD_CONFIDENCE:.0%} of such estimates"
            )
        return text

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _guards_html(guards: Sequence[GuardResult]) -> str:
    """The guards as an HTML table (a notebook's view): each one's verdict, values, drop, margin, bounds and users."""

    def number(value: float | None) -> str:
        return "" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.4f}"

    rows = "".join(
        f"<tr><td>{escape(g.guard)}</td><td><b>{g.verdict}</b></td><td>{number(g.production)}</td>"
        f"<td>{number(g.candidate)}</td><td>{number(g.drop)}</td><td>{number(g.margin)}</td>"
        f"<td>{number(g.drop_low)} .. {number(g.drop_high)}</td><td>{g.n_queries}</td>"
        f"<td>{escape(g.reason)}</td></tr>"
        for g in guards
    )
    head = "".join(
        f"<th>{h}</th>"
        for h in ("guard", "verdict", "production", "candidate", "drop", "margin", "one-sided bounds", "users", "why")
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"


__all__ = [
    "Decision",
    "GuardResult",
    "PairedMoments",
    "PairedValues",
    "Plan",
    "ResampledValues",
    "decide_arrays",
    "decide_release",
    "describe",
    "expand",
    "moments_of",
    "paired_values",
    "shifts_only",
]
