"""What the gate says: every sentence of a verdict and of each guard's result, written from their numbers.

:mod:`harness.decision.guard` tests each guard and :class:`~harness.decision.verdict.Decision` composes the verdict
(its label, the error it controls, the level each guard was tested at); this module only words what they found, so
a sentence can change without touching a rule, and a rule without a sentence. The terminal, ``gate.json``,
``summary.md``, the report and MLflow all read these sentences.

>>> p_text(0.0123), p_text(1e-7)
('= 0.0123', '< 0.0001')
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape
from typing import Protocol

from harness.config.schema import Guard

# a guard's test, as gate.json's "method" names it
T_TEST = "one-sided paired t-test over users"
BETTING = "one-sided betting bound over users (exact in the measure's range)"
UNDECIDED = "no bound could be trusted"
BOOTSTRAP = "bootstrap over users (approximate)"
VERSION = "one-sided t over users and seeds (crossed design, Satterthwaite df; approximate)"
PPI = "one-sided prediction-powered t over users (people's labels correct the judge's; approximate)"


class GuardView(Protocol):
    """What a guard's sentences read of its result (:class:`~harness.decision.verdict.GuardResult`)."""

    @property
    def guard(self) -> str: ...
    @property
    def verdict(self) -> str: ...
    @property
    def reason(self) -> str: ...
    @property
    def condition(self) -> str: ...
    @property
    def method(self) -> str: ...
    @property
    def evaluated(self) -> bool: ...
    @property
    def production(self) -> float | None: ...
    @property
    def candidate(self) -> float | None: ...
    @property
    def drop(self) -> float | None: ...
    @property
    def margin(self) -> float | None: ...
    @property
    def drop_low(self) -> float | None: ...
    @property
    def drop_high(self) -> float | None: ...
    @property
    def p_pass(self) -> float | None: ...
    @property
    def p_fail_adj(self) -> float | None: ...
    @property
    def n_queries(self) -> int: ...
    @property
    def n_changed(self) -> int | None: ...
    @property
    def mde(self) -> float | None: ...
    @property
    def n_needed(self) -> int | None: ...
    @property
    def planned_for(self) -> str: ...
    @property
    def n_needed_observed(self) -> int | None: ...
    @property
    def n_needed_gate(self) -> int | None: ...
    @property
    def judged(self) -> str: ...


class GateView(Protocol):
    """What the verdict's sentences read of the decision (:class:`~harness.decision.verdict.Decision`)."""

    @property
    def production(self) -> str: ...
    @property
    def candidate(self) -> str: ...
    @property
    def verdict(self) -> str: ...
    @property
    def outcome(self) -> str: ...
    @property
    def alpha(self) -> float: ...
    @property
    def tested_at(self) -> float: ...
    @property
    def look(self) -> int: ...
    @property
    def looks(self) -> int: ...
    @property
    def bound(self) -> str: ...
    @property
    def claim(self) -> str: ...
    @property
    def seeds(self) -> tuple[int, int]: ...
    @property
    def on_inconclusive(self) -> str: ...
    @property
    def min_affected(self) -> float | None: ...
    @property
    def t_trusted_from(self) -> int | None: ...
    @property
    def rare_harm_missed(self) -> float: ...
    @property
    def n_needed_gate(self) -> int | None: ...
    @property
    def gate_planned_for(self) -> str: ...
    @property
    def guards(self) -> Sequence[GuardView]: ...
    @property
    def deciding(self) -> Sequence[GuardView]: ...
    @property
    def warnings(self) -> Sequence[GuardView]: ...
    @property
    def seed_warnings(self) -> Sequence[str]: ...


def headline(gate: GateView) -> str:
    """The verdict in one short line, first in a terminal or CI log: what decided it, the error it controls and,
    when undecided, the users that would decide it (each guard's numbers follow in :func:`guard_table`; the
    reasoning in :func:`line` and :func:`errors_sentence`)."""
    head = f"release gate {gate.verdict}" + (f" (treated as {gate.outcome})" if gate.outcome != gate.verdict else "")
    k = len(gate.deciding)
    if gate.verdict == "PASS":
        what = f"all {k} guard(s) within their margins (false-PASS rate <= {gate.alpha:g}{_looks_short(gate)})"
    elif gate.verdict == "FAIL":
        failed = list(dict.fromkeys(g.guard.split(":")[0] for g in gate.deciding if g.verdict == "FAIL"))
        what = f"{', '.join(failed)} worse than the margin (false-FAIL rate <= {gate.alpha:g}{_looks_short(gate)})"
    else:
        open_ = [g for g in gate.deciding if g.verdict != "PASS"]
        names = list(dict.fromkeys(g.guard.split(":")[0] for g in open_))
        named = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        what = f"{len(open_)} of {k} guards undecided ({named})"
        needed = gate.n_needed_gate or max((g.n_needed or 0 for g in open_), default=0)
        planned = gate.gate_planned_for if gate.n_needed_gate else next((g.planned_for for g in open_ if g.n_needed), "")
        if needed:
            unit = "queries judged by people" if any(g.judged for g in open_) else "users"
            what += f"; about {needed:,} {unit} would decide it" + (f" ({planned})" if planned else "")
    judged = list(dict.fromkeys(g.judged for g in gate.deciding if g.judged))
    if judged:
        what += f"; {'; '.join(judged)}"
    notes = len(gate.warnings) + len(gate.seed_warnings)
    return f"{head}: {gate.candidate} against {gate.production}: {what}" + (f"; {notes} WARNING(s) below" if notes else "")


def line(gate: GateView) -> str:
    """One line for a terminal or a CI log."""
    head = f"release gate {gate.verdict}"
    if gate.outcome != gate.verdict:
        head += f" (treated as {gate.outcome})"
    if gate.verdict == "PASS":
        return (
            f"{head}: {gate.candidate} is within all {len(gate.deciding)} guards' margins against {gate.production} "
            f"(false-PASS rate <= {gate.alpha:g}{_looks_short(gate)})"
        ) + warning_text(gate)
    shown = (
        [g for g in gate.deciding if g.verdict == gate.verdict]
        if gate.verdict == "FAIL"
        else [g for g in gate.deciding if g.verdict != "PASS"]
    )
    rate = f" (false-FAIL rate <= {gate.alpha:g}{_looks_short(gate)})" if gate.verdict == "FAIL" else ""
    return (
        f"{head}: {gate.candidate} against {gate.production}: " + "; ".join(g.reason for g in shown) + rate + warning_text(gate)
    )


def errors_sentence(gate: GateView) -> str:
    """Which error this verdict controls, and at what rate."""
    a, k = f"{gate.alpha:g}", len(gate.deciding)
    caveat = _caveat(gate) + _over_looks(gate)
    level = f"{gate.tested_at:.3g}"
    if gate.verdict == "PASS":
        text = (
            f"PASS controls the false-PASS rate: a candidate worse than any guard's margin passes with probability "
            f"at most {a}{caveat} (each of the {k} guards is a one-sided test at {level}; the gate passes only when "
            f"every guard does, so no correction across guards is needed)"
        )
    elif gate.verdict == "FAIL":
        unevaluated = any(not g.evaluated for g in gate.deciding)
        text = (
            f"FAIL controls the false-FAIL rate: a candidate within every margin fails with probability at most {a}"
            f"{caveat} (each guard's test of exceeding its margin, Holm-corrected across the {k} guards)"
            + ("; a guard that could not be evaluated fails the gate as well" if unevaluated else "")
        )
    else:
        kinds = {g.condition for g in gate.deciding if g.verdict == "INCONCLUSIVE"}
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
            "many users would decide it" + _gate_plan_text(gate) + ". "
        )
        if gate.looks == 1:
            text += (
                "Decide that number before collecting them and run the gate once then: re-running it as users "
                "accrue until it passes is many looks at one alpha (20 daily looks pass a candidate at its margin "
                "about 0.21 of the time, not 0.05); release.looks plans several looks"
            )
        elif gate.look < gate.looks:
            text += (
                f"This was look {gate.look} of the {gate.looks} planned: the gate may be run again as users "
                f"accrue, up to look {gate.looks}, with the false-PASS and false-FAIL rates at most {a} over all "
                f"of them (this look tested at {level}; alpha spending)"
            )
        else:
            text += (
                f"This was the last of the {gate.looks} planned looks (tested at {level}): the gate's alpha is "
                "spent, and a further look would exceed it; plan a new gate for a new decision"
            )
        if gate.on_inconclusive == "fail":
            text += ". Treated as FAIL (release.on_inconclusive: fail)"
        elif gate.on_inconclusive == "pass":
            text += ". Treated as PASS (release.on_inconclusive: pass): the false-PASS rate is then NOT controlled"
    return f"{text}. {claim_sentence(gate)}"


def claim_sentence(gate: GateView) -> str:
    """The claim the verdict makes, as a sentence: on a judged dataset, about people's labels, which correct the
    judge's."""
    judged = list(dict.fromkeys(g.judged for g in gate.deciding if g.judged))
    labels = f"; about people's labels, estimated as the judge's corrected by theirs: {'; '.join(judged)}" if judged else ""
    return _claim(gate) + labels


def _claim(gate: GateView) -> str:
    if gate.claim == "version":
        return (
            f"The claim: the version (the training procedure) of {gate.candidate} against that of "
            f"{gate.production}, over their runs ({gate.seeds[1]} and {gate.seeds[0]} seeds), with users and "
            "seeds both random"
        )
    return (
        f"The claim: these trained runs of {gate.candidate} and {gate.production} (one each), on these users; "
        "a retrained model may differ by its seed"
    )


def _over_looks(gate: GateView) -> str:
    """Where the stated rate holds over several planned looks, which look this is and at what level it tested."""
    if gate.looks == 1:
        return ""
    return (
        f" over the gate's {gate.looks} planned looks (this is look {gate.look}; its guards are tested at "
        f"{gate.tested_at:.3g}, its share of {gate.alpha:g} by alpha spending)"
    )


def _caveat(gate: GateView) -> str:
    """What the stated rate rests on, where a guard was decided by an approximation."""
    methods = {g.method for g in gate.deciding if g.evaluated}
    notes = []
    if T_TEST in methods:
        where = {
            "auto": ", used only where the users' skewness puts its error within a tenth of alpha of it" + _t_from(gate),
            "t": ", used wherever the users' differences spread, as release.bound: t asks",
            "betting": ", used for the measures with no known range",
        }.get(gate.bound, "")
        notes.append(f"the t-tests' normal approximation{where}")
    if BOOTSTRAP in methods:
        notes.append("the bootstrap over users, approximate")
    if VERSION in methods:
        notes.append("the crossed t over users and seeds, with Satterthwaite's degrees of freedom")
    if PPI in methods:
        notes.append("the prediction-powered t over the queries people judged, unbiased whatever the judge's bias")
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


def _t_from(gate: GateView) -> str:
    """Under auto, from how many users t decides a measure with a known range, and why."""
    if gate.min_affected is None:
        return ""
    if gate.t_trusted_from is None:
        return " and never for a measure with a known range, as release.min_affected: 0 asks"
    return (
        f" and, for a measure with a known range, from {gate.t_trusted_from:,} users on, where a harm to "
        f"{gate.min_affected * 100:g}% of the users is missing from the sample with a chance of at most "
        f"{gate.rare_harm_missed:.2g}, as release.min_affected asks"
    )


def _gate_plan_text(gate: GateView) -> str:
    """The whole gate's plan, as a clause (empty without one): one number when every guard is on the same users,
    else each guard's users on its own dataset and segment."""
    if gate.n_needed_gate is not None:
        return f", and the whole gate about {gate.n_needed_gate:,} users {gate.gate_planned_for}"
    shares = [f"{g.guard}: {g.n_needed_gate:,}" for g in gate.deciding if g.n_needed_gate is not None]
    if not shares:
        return ""
    return f", and the whole gate, {gate.gate_planned_for}, each guard's users ({'; '.join(shares)})"


def _looks_short(gate: GateView) -> str:
    return "" if gate.looks == 1 else f" over {gate.looks} looks; look {gate.look} at {gate.tested_at:.3g}"


def warning_heading(gate: GateView) -> tuple[str, str]:
    """What the segment sweep's warnings are, and on what they rest: the verdict line, summary.md and the report
    each say these two phrases."""
    return (
        f"{len(gate.warnings)} unguarded segment(s) significantly beyond a guard's margin",
        f"Holm across the segments swept, at {gate.alpha:g}; the verdict does not count them",
    )


def warning_text(gate: GateView) -> str:
    """The segment sweep's warnings and the seeds a system lacks on a dataset, as sentences (empty without any)."""
    text = "".join(f". WARNING: {w}" for w in gate.seed_warnings)
    if not gate.warnings:
        return text
    what, basis = warning_heading(gate)
    return f"{text}. WARNING: {what} ({basis}): " + "; ".join(g.reason for g in gate.warnings)


def guard_table(gate: GateView) -> list[str]:
    """Each guard's numbers as an aligned text table: verdict, values, drop, the bound that decided it, the allowed
    drop, users and users needed."""

    def number(value: float | None, signed: bool = False) -> str:
        return "" if value is None or value != value else (f"{value:+.4f}" if signed else f"{value:.4f}")

    rows = [("guard", "verdict", "production -> candidate", "drop", "bound", "allowed", "users", "needed")]
    for g in gate.guards:
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


def html(gate: GateView) -> str:
    """A notebook's view: the verdict box (the report's colours), the error it controls, and the guards' table."""
    colour = {"PASS": "#1a7f37", "FAIL": "#cf222e"}.get(gate.verdict, "#9a6700")
    treated = f" (treated as {gate.outcome})" if gate.outcome != gate.verdict else ""
    warnings = "".join(f"<li>{escape(w.reason or w.guard)}</li>" for w in gate.warnings)
    return (
        f'<div style="border-left:6px solid {colour};padding:6px 12px;margin:4px 0">'
        f'<div style="font-size:1.3em;font-weight:bold;color:{colour}">Release gate: {gate.verdict}{treated}</div>'
        f"<div>{escape(gate.candidate)} against {escape(gate.production)}</div>"
        f'<div style="margin-top:4px">{escape(errors_sentence(gate))}</div>'
        + (f"<div><b>Segments beyond a margin</b><ul>{warnings}</ul></div>" if warnings else "")
        + f"</div>{guards_html(gate.guards)}"
    )


def guards_html(guards: Sequence[GuardView]) -> str:
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


def where_decided(measure: object, dataset: str, segment: str) -> str:
    """What a guard's reason starts with: the measure, and the dataset (and segment) it was decided on.

    >>> where_decided("AP", "trec", "all"), where_decided("AP", "ml", "new")
    ('AP on trec', 'AP on ml / new')
    """
    return f"{measure} on {dataset}" + ("" if segment == "all" else f" / {segment}")


def unevaluated_reason(where: str, why: str) -> str:
    """The reason of a guard that could not be evaluated."""
    return f"{where}: cannot be evaluated ({why})"


def guard_reason(
    result: GuardView,
    where: str,
    alpha: float,
    target: float,
    *,
    undecided: str = "",
    note: str = "",
    beyond_alone: bool = False,
    family: int = 1,
) -> str:
    """Why a tested guard has its verdict: its values, the one-sided bound that decided it (or the two that did not)
    against its margin, in its own terms (a drop against its allowance, a gain against the one required), and when
    undecided, the users that would decide it.

    ``undecided``: why no bound decides; ``note``: what else the values need said (a version's seeds);
    ``beyond_alone``: an undecided guard shown beyond its margin alone, but not after Holm's correction across the
    ``family`` guards.
    """
    drop, margin = _number(result.drop), _number(result.margin)
    drop_low, drop_high = _number(result.drop_low), _number(result.drop_high)
    level = f"{1 - alpha:.0%}"
    gain = result.condition == "min_gain"
    value, bound_low, bound_high, limit = (-drop, -drop_high, -drop_low, -margin) if gain else (drop, drop_low, drop_high, margin)
    noun = "gain" if gain else "drop"
    values = f"{_number(result.production):.4f} -> {_number(result.candidate):.4f}, {noun} {value:+.4f}"
    n = result.n_queries
    changed = "" if result.n_changed is None else f" ({result.n_changed:,} of {n:,} users changed)"
    changed += f" ({note})" if note else ""
    below = f"upper bound {bound_high:+.4f} < {limit:.4f}"
    above = f"lower bound {bound_low:+.4f} > {limit:.4f}"
    if undecided and result.verdict == "INCONCLUSIVE":
        return (
            f"{where}: {values}{changed}; not decided: {undecided}. A candidate is never passed on a difference it cannot bound"
        )
    if result.verdict == "DESCRIPTIVE":
        holds = value >= limit if gain else value <= limit
        return (
            f"{where}: {values}, {'within' if holds else 'beyond'} the {limit:.4f} it names "
            "(point estimates only: descriptive, does not decide the gate)"
        )
    if result.verdict == "PASS":
        return (
            f"{where}: {values}{changed}; one-sided {level} {above if gain else below} "
            f"(p {p_text(_number(result.p_pass))}, {by_method(result.method)})"
        )
    if result.verdict == "FAIL":
        return (
            f"{where}: {values}{changed}; one-sided {level} {below if gain else above} "
            f"(Holm-corrected p {p_text(_number(result.p_fail_adj))}, {by_method(result.method)})"
        )
    needed = (
        f"about {result.n_needed:,} users would decide it {result.planned_for}"
        if result.n_needed
        else "no number of users would decide it at the observed difference"
    )
    if result.n_needed_observed is not None:
        needed = (
            f"at the observed difference ({abs(margin - drop):.4f} from it) about {result.n_needed_observed:,} users "
            f"would decide it; {needed}"
        )
    if beyond_alone:
        shown = (
            f"one-sided {level} {below if gain else above} for this guard alone, but not after Holm's correction "
            f"across the {family} guards (Holm-corrected p {p_text(result.p_fail_adj or 1.0)})"
        )
    else:
        # each bound is one-sided: written as two statements, never as an interval that reads as two-sided
        shown = (
            f"neither one-sided {level} bound ({noun} >= {bound_low:+.4f}, {noun} <= {bound_high:+.4f}) "
            f"excludes the {limit:.4f} it names"
        )
    return (
        f"{where}: {values}{changed}; {shown} ({by_method(result.method)}). {n:,} users detect a distance of "
        f"{_number(result.mde):.4f} from it with {target:.0%} power; {needed}"
    )


def _number(value: float | None) -> float:
    """A tested guard's number (None only before it is tested: NaN then)."""
    return math.nan if value is None else value


def by_method(method: str) -> str:
    """The test in a few words, for a guard's reason.

    >>> by_method(T_TEST), by_method(VERSION)
    ('t-test', 't over users and seeds')
    """
    return {
        T_TEST: "t-test",
        BETTING: "betting bound",
        BOOTSTRAP: "bootstrap",
        VERSION: "t over users and seeds",
        PPI: "prediction-powered t",
    }.get(method, method)


def p_text(p: float) -> str:
    """``= 0.0123`` or ``< 0.0001``, after "p"."""
    return f"= {p:.3g}" if p >= 1e-4 else "< 0.0001"


__all__ = [
    "BETTING",
    "BOOTSTRAP",
    "T_TEST",
    "UNDECIDED",
    "VERSION",
    "GateView",
    "GuardView",
    "by_method",
    "claim_sentence",
    "describe",
    "errors_sentence",
    "guard_reason",
    "guard_table",
    "guards_html",
    "headline",
    "html",
    "line",
    "p_text",
    "unevaluated_reason",
    "warning_heading",
    "warning_text",
    "where_decided",
]
