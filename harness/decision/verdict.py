"""A release decision and each guard's result: the verdicts, the numbers behind them, the errors they control.

:class:`Decision` is the gate's answer (PASS, FAIL or INCONCLUSIVE) with the claim and the error rates it states;
each :class:`GuardResult` is one guard on one dataset and segment. Both are plain values: ``gate.json``, MLflow,
the report and the terminal read them, and :meth:`Decision.from_dict` reads a saved one back.

>>> result = GuardResult("AP: drop <= 0.05", "PASS", "why", "AP", "d", "all")
>>> Decision("prod", "cand", (result,), 0.05, 0.8, "inconclusive", "auto").verdict
'PASS'
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from typing import Any, Literal

from harness.config.defaults import DEFAULT_POWER

Label = Literal["PASS", "FAIL", "INCONCLUSIVE"]
GuardLabel = Literal["PASS", "FAIL", "INCONCLUSIVE", "DESCRIPTIVE"]
T_TEST = "one-sided paired t-test over users"
BETTING = "one-sided betting bound over users (exact in the measure's range)"
UNDECIDED = "no bound could be trusted"
BOOTSTRAP = "bootstrap over users (approximate)"
VERSION = "one-sided t over users and seeds (crossed design, Satterthwaite df; approximate)"


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
    # where production's values came from when they were reused rather than evaluated (previous:): the evaluation that
    # stood for it, as the terminal, gate.json, summary.md and the report name it
    production_evidence: str = ""
    look_id: str = ""  # the look's id in the gate's records (harness.records.looks): each look is counted once
    # each dataset's runs (production's, candidate's), and a sentence per seed a system lacks on some dataset
    seeds_by_dataset: tuple[tuple[str, int, int], ...] = ()
    seed_warnings: tuple[str, ...] = ()
    promotion: str = ""  # what release.promote did once the results were logged ("" before, or without it)
    # release.min_affected: auto's t decides a measure with a known range only from t_trusted_from(it) users on (None:
    # no such rule, as gates were decided before it)
    min_affected: float | None = None

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
                    "about 0.21 of the time, not 0.05); release.looks plans several looks"
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
                "auto": ", used only where the users' skewness puts its error within a tenth of alpha of it" + self._t_from(),
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

    def _t_from(self) -> str:
        """Under auto, from how many users t decides a measure with a known range, and why."""
        from harness.stats import bounds

        if self.min_affected is None:
            return ""
        if not self.min_affected > 0:
            return " and never for a measure with a known range, as release.min_affected: 0 asks"
        n_min = bounds.t_trusted_from(self.min_affected, self.tested_at)
        return (
            f" and, for a measure with a known range, from {n_min:,} users on, where a harm to "
            f"{self.min_affected * 100:g}% of the users is missing from the sample with a chance of at most "
            f"{bounds.EXCESS_TOLERANCE * self.tested_at:.2g}, as release.min_affected asks"
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

    def headline(self) -> str:
        """The verdict in one short line, first in a terminal or CI log: what decided it, the error it controls and,
        when undecided, the users that would decide it (each guard's numbers follow in :meth:`guard_table`; the
        reasoning in :meth:`line` and :attr:`errors`).

        >>> g = GuardResult("AP on d: drop <= 0.01", "INCONCLUSIVE", "...", n_needed=1200)
        >>> Decision("v1", "v2", (g, dataclasses.replace(g, guard="RR on d", verdict="PASS", n_needed=None))).headline()
        'release gate INCONCLUSIVE: v2 against v1: 1 of 2 guards undecided (AP on d); about 1,200 users would decide it'
        """
        head = f"release gate {self.verdict}" + (f" (treated as {self.outcome})" if self.outcome != self.verdict else "")
        k = len(self.deciding)
        if self.verdict == "PASS":
            what = f"all {k} guard(s) within their margins (false-PASS rate <= {self.alpha:g}{self._looks_short()})"
        elif self.verdict == "FAIL":
            failed = list(dict.fromkeys(g.guard.split(":")[0] for g in self.deciding if g.verdict == "FAIL"))
            what = f"{', '.join(failed)} worse than the margin (false-FAIL rate <= {self.alpha:g}{self._looks_short()})"
        else:
            open_ = [g for g in self.deciding if g.verdict != "PASS"]
            names = list(dict.fromkeys(g.guard.split(":")[0] for g in open_))
            named = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
            what = f"{len(open_)} of {k} guards undecided ({named})"
            needed = self.n_needed_gate or max((g.n_needed or 0 for g in open_), default=0)
            planned = self.gate_planned_for if self.n_needed_gate else next((g.planned_for for g in open_ if g.n_needed), "")
            if needed:
                what += f"; about {needed:,} users would decide it" + (f" ({planned})" if planned else "")
        notes = len(self.warnings) + len(self.seed_warnings)
        return f"{head}: {self.candidate} against {self.production}: {what}" + (f"; {notes} WARNING(s) below" if notes else "")

    def guard_table(self) -> list[str]:
        """Each guard's numbers as an aligned text table: verdict, values, drop, the bound that decided it, the allowed
        drop, users and users needed."""

        def number(value: float | None, signed: bool = False) -> str:
            return "" if value is None or value != value else (f"{value:+.4f}" if signed else f"{value:.4f}")

        rows = [("guard", "verdict", "production -> candidate", "drop", "bound", "allowed", "users", "needed")]
        for g in self.guards:
            bound = (
                (f">= {number(g.drop_low, True)}" if g.verdict == "FAIL" else f"<= {number(g.drop_high, True)}")
                if g.drop_low is not None
                else ""
            )
            values = f"{number(g.production)} -> {number(g.candidate)}" if g.production is not None else ""
            rows.append(
                (
                    g.guard,
                    g.verdict,
                    values,
                    number(g.drop, True),
                    bound,
                    number(g.margin, True),
                    f"{g.n_queries:,}",
                    f"{g.n_needed:,}" if g.verdict == "INCONCLUSIVE" and g.n_needed else "",
                )
            )
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]

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
        """The segment sweep's warnings and the seeds a system lacks on a dataset, as sentences (empty without any)."""
        text = "".join(f". WARNING: {w}" for w in self.seed_warnings)
        if not self.warnings:
            return text
        what, basis = self.warning_heading
        return f"{text}. WARNING: {what} ({basis}): " + "; ".join(g.reason for g in self.warnings)

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
            "min_affected": self.min_affected,
            "production": self.production,
            "candidate": self.candidate,
            "production_evidence": self.production_evidence,
            "look_id": self.look_id,
            "seeds_by_dataset": {d: [p, c] for d, p, c in self.seeds_by_dataset},
            "seed_warnings": list(self.seed_warnings),
            "promotion": self.promotion,
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
            str(data.get("production_evidence") or ""),
            str(data.get("look_id") or ""),
            tuple((str(d), int(pc[0]), int(pc[1])) for d, pc in (data.get("seeds_by_dataset") or {}).items()),
            tuple(str(w) for w in data.get("seed_warnings") or ()),
            str(data.get("promotion") or ""),
            data.get("min_affected"),
        )


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


__all__ = ["BETTING", "BOOTSTRAP", "T_TEST", "UNDECIDED", "VERSION", "Decision", "GuardLabel", "GuardResult", "Label"]
