"""Release gate: does the candidate keep every guard against production?

A guard names a measure and, optionally, a dataset and a segment (without a dataset it
applies to every dataset, or for a segment to every dataset that has it). Its
conditions, each in the measure's direction (a drop of nDCG is a decrease, of Unj an
increase; ``drop = production - candidate`` for higher-is-better measures):

``max_drop: x``          drop <= x (the default is 0 when no other condition is given)
``max_drop_pct: x``      drop <= x% of production's value
``min_gain: x``          -drop >= x: the candidate must improve by at least x
``significant: true``    no significant drop (the primary test)
``non_inferiority: m``   a one-sided paired t-test must show the candidate is not worse
                         by m or more: H0 d <= -m against H1 d > -m (mean measures only)

The p-values behind ``significant`` and ``non_inferiority`` are corrected (with the
experiment's correction) within the family of guarded comparisons only, so adding
systems or measures to the experiment never weakens the gate. A guard that cannot be
evaluated (no such values, no comparison) fails: a gate never passes by default.

>>> g = GuardOutcome("AP: drop <= 0.01", True, "AP on d: 0.3000 -> 0.2950", 0.3, 0.295, 0.005)
>>> Verdict("prod", "cand", (g,)).line()
'release gate PASS: cand keeps all 1 guards against prod'
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from harness.config.schema import Guard, Release
from harness.stats.correction import correct

EPSILON = 1e-12  # differences below this are rounding, not drops


@dataclass(frozen=True)
class GuardOutcome:
    guard: str  # human-readable: "nDCG@10 on ratings / new: drop <= 0.005, and no significant drop"
    passed: bool
    reason: str
    production: float | None = None
    candidate: float | None = None
    drop: float | None = None
    p_adj: float | None = None
    measure: str = ""
    dataset: str = ""
    segment: str = "all"
    delta: float | None = None  # candidate - production, on the aggregate's scale
    ci_low: float | None = None  # the t interval of delta
    ci_high: float | None = None
    p: float | None = None  # the raw p-value the guard used (primary test, or the non-inferiority test)


@dataclass(frozen=True)
class Verdict:
    production: str
    candidate: str
    outcomes: tuple[GuardOutcome, ...]

    @property
    def passed(self) -> bool:
        return all(o.passed for o in self.outcomes)

    @property
    def label(self) -> str:
        return "PASS" if self.passed else "FAIL"

    def to_dict(self) -> dict[str, Any]:
        """What ``gate.json`` holds: the verdict, then every guard's outcome."""
        return {
            "verdict": self.label,
            "production": self.production,
            "candidate": self.candidate,
            "line": self.line(),
            "guards": [dataclasses.asdict(o) for o in self.outcomes],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Verdict:
        return cls(data["production"], data["candidate"], tuple(GuardOutcome(**o) for o in data["guards"]))

    def line(self) -> str:
        failed = [o for o in self.outcomes if not o.passed]
        if not failed:
            return f"release gate PASS: {self.candidate} keeps all {len(self.outcomes)} guards against {self.production}"
        return f"release gate FAIL: {self.candidate} against {self.production}: " + "; ".join(o.reason for o in failed)


def describe(guard: Guard) -> str:
    """The guard in words.

    >>> from harness.measures.parse import parse_measure
    >>> describe(Guard(parse_measure("nDCG@10"), segment="new", max_drop_pct=1.0, significant=True))
    'nDCG@10 on new: drop <= 1% of production, and no significant drop'
    """
    where = " / ".join(x for x in (guard.dataset, guard.segment) if x)
    conditions = []
    if guard.max_drop is not None:
        conditions.append(f"drop <= {guard.max_drop:g}")
    if guard.max_drop_pct is not None:
        conditions.append(f"drop <= {guard.max_drop_pct:g}% of production")
    if guard.min_gain is not None:
        conditions.append(f"gain >= {guard.min_gain:g}")
    if guard.non_inferiority is not None:
        conditions.append(f"non-inferior within {guard.non_inferiority:g}")
    text = f"{guard.measure}{' on ' + where if where else ''}: {', '.join(conditions)}"
    return text + (", and no significant drop" if guard.significant else "")


@dataclass
class _Check:
    """One guard on one dataset, while the gate is being decided."""

    guard: Guard
    dataset: str
    where: str
    row: Any  # the comparisons row of (production, candidate), or None
    production: float
    candidate: float
    drop: float
    sign: float  # +1 when b - a is candidate - production, -1 when the pair was tested the other way
    reason: str | None = None  # a failed condition that needs no p-value
    p_sig: float | None = None  # raw p of the primary test, when the guard asks for no significant drop
    p_ni: float | None = None  # raw one-sided p of the non-inferiority test


def evaluate_gate(
    release: Release,
    summary: Any,
    comparisons: Any | None,
    higher_is_better: dict[str, bool],
    correction: str = "holm",
    alpha: float = 0.05,
) -> Verdict:
    """The verdict, from the summary and comparisons tables (as written in the results folder)."""
    production, candidate = release.production, release.candidate
    outcomes: list[GuardOutcome | None] = []
    checks: list[tuple[int, _Check]] = []
    for guard in release.guards:
        measure, segment = str(guard.measure), guard.segment or "all"
        text = describe(guard)
        if guard.dataset:
            datasets = [guard.dataset]
        else:  # every dataset, or for a segment guard every dataset that has the segment
            datasets = sorted(summary[summary["segment"] == segment]["dataset"].unique())
            if not datasets:
                reason = f"{measure} / {segment}: cannot be evaluated (no dataset has segment {segment!r})"
                outcomes.append(GuardOutcome(text, False, reason, measure=measure, segment=segment))
                continue
        for dataset in datasets:
            where = f"{measure} on {dataset}" + ("" if segment == "all" else f" / {segment}")
            rows = summary[(summary["dataset"] == dataset) & (summary["segment"] == segment) & (summary["measure"] == measure)]
            values = dict(zip(rows["system"], rows["value"], strict=True))
            if production not in values or candidate not in values:
                reason = f"{where}: cannot be evaluated (no values for both systems)"
                outcomes.append(GuardOutcome(text, False, reason, measure=measure, dataset=dataset, segment=segment))
                continue
            prod, cand = float(values[production]), float(values[candidate])
            higher = higher_is_better.get(measure, True)
            drop = (prod - cand) if higher else (cand - prod)
            row, sign = _comparison(comparisons, dataset, segment, measure, production, candidate)
            check = _Check(guard, dataset, where, row, prod, cand, drop, sign)
            check.reason = _plain_conditions(guard, where, prod, cand, drop)
            needs_p = guard.significant or guard.non_inferiority is not None
            if needs_p and row is None:
                check.reason = check.reason or f"{where}: no significance test between the two systems"
            elif guard.significant:
                check.p_sig = float(row[f"p_{row['primary_test']}"])
            if guard.non_inferiority is not None and row is not None:
                check.p_ni = _non_inferiority_p(row, sign, higher, guard.non_inferiority)
            outcomes.append(None)
            checks.append((len(outcomes) - 1, check))
    # one family: every p-value a guard relies on
    raw = [p for _, c in checks for p in (c.p_sig, c.p_ni) if p is not None]
    adjusted = iter(correct(np.array(raw, dtype=np.float64), correction).tolist()) if raw else iter(())
    for index, check in checks:
        p_sig_adj = next(adjusted) if check.p_sig is not None else None
        p_ni_adj = next(adjusted) if check.p_ni is not None else None
        outcomes[index] = _decide(check, p_sig_adj, p_ni_adj, alpha)
    return Verdict(production, candidate, tuple(o for o in outcomes if o is not None))


def _comparison(
    comparisons: Any | None, dataset: str, segment: str, measure: str, production: str, candidate: str
) -> tuple[Any, float]:
    if comparisons is None or not len(comparisons):
        return None, 1.0
    pair = comparisons[
        (comparisons["dataset"] == dataset) & (comparisons["segment"] == segment) & (comparisons["measure"] == measure)
    ]
    forward = pair[(pair["system_a"] == production) & (pair["system_b"] == candidate)]
    if len(forward):
        return forward.iloc[0], 1.0
    backward = pair[(pair["system_a"] == candidate) & (pair["system_b"] == production)]
    return (backward.iloc[0], -1.0) if len(backward) else (None, 1.0)


def _plain_conditions(guard: Guard, where: str, prod: float, cand: float, drop: float) -> str | None:
    """The first failed condition that needs no test, in words; None when all hold."""
    if guard.max_drop is not None and drop > guard.max_drop + EPSILON:
        return f"{where} dropped by {drop:.4f} ({prod:.4f} -> {cand:.4f}), more than {guard.max_drop:g}"
    if guard.max_drop_pct is not None and drop > guard.max_drop_pct / 100 * abs(prod) + EPSILON:
        share = 100 * drop / abs(prod) if prod else float("inf")
        return f"{where} dropped by {share:.2f}% ({prod:.4f} -> {cand:.4f}), more than {guard.max_drop_pct:g}%"
    if guard.min_gain is not None and -drop < guard.min_gain - EPSILON:
        return f"{where} gained {-drop:.4f} ({prod:.4f} -> {cand:.4f}), less than the required {guard.min_gain:g}"
    return None


def _non_inferiority_p(row: Any, sign: float, higher: bool, margin: float) -> float:
    """One-sided paired t-test of H0: improvement <= -margin, from the comparison's mean difference and t interval."""
    from scipy import special

    n = int(row["n_queries"])
    if n < 2:
        return float("nan")
    improvement = float(row["delta"]) * sign * (1.0 if higher else -1.0)
    half = (float(row["ci_high_t"]) - float(row["ci_low_t"])) / 2
    se = half / float(special.stdtrit(n - 1, 0.975))
    if se <= 0:
        return 0.0 if improvement + margin > 0 else 1.0
    return float(special.stdtr(n - 1, -(improvement + margin) / se))  # upper tail of Student's t


def _decide(check: _Check, p_sig_adj: float | None, p_ni_adj: float | None, alpha: float) -> GuardOutcome:
    row, sign, guard, where = check.row, check.sign, check.guard, check.where
    delta = check.candidate - check.production
    ci_low = ci_high = None
    if row is not None:
        low, high = float(row["ci_low"]) * sign, float(row["ci_high"]) * sign
        ci_low, ci_high = min(low, high), max(low, high)
    shown_p = p_ni_adj if p_ni_adj is not None else p_sig_adj
    details: dict[str, Any] = {
        "production": check.production, "candidate": check.candidate, "drop": check.drop, "p_adj": shown_p,
        "measure": str(guard.measure), "dataset": check.dataset, "segment": guard.segment or "all", "delta": delta,
        "ci_low": ci_low, "ci_high": ci_high, "p": check.p_ni if check.p_ni is not None else check.p_sig,
    }  # fmt: skip
    text = describe(guard)
    summary = f"{check.production:.4f} -> {check.candidate:.4f}, difference {delta:+.4f}" + (
        f" [95% CI {ci_low:+.4f}, {ci_high:+.4f}]" if ci_low is not None else ""
    )
    p_text = "" if shown_p is None or shown_p != shown_p else f", corrected p = {shown_p:.3g}"
    if check.reason is not None:
        detail = f" ({summary[summary.index('difference') :]}{p_text})" if ci_low is not None else ""
        return GuardOutcome(text, False, check.reason + detail, **details)
    if p_sig_adj is not None and p_sig_adj == p_sig_adj and p_sig_adj < alpha and check.drop > EPSILON:
        ci = f" [95% CI {ci_low:+.4f}, {ci_high:+.4f}]" if ci_low is not None else ""
        reason = f"{where} dropped significantly by {check.drop:.4f}{ci} (corrected p = {p_sig_adj:.3g})"
        return GuardOutcome(text, False, reason, **details)
    if guard.non_inferiority is not None and not (p_ni_adj is not None and p_ni_adj == p_ni_adj and p_ni_adj < alpha):
        p_text = "n/a" if p_ni_adj is None or p_ni_adj != p_ni_adj else f"{p_ni_adj:.3g}"
        reason = f"{where}: not shown non-inferior within {guard.non_inferiority:g} ({summary}, one-sided corrected p = {p_text})"
        return GuardOutcome(text, False, reason, **details)
    if guard.significant and (p_sig_adj is None or p_sig_adj != p_sig_adj):  # say so: the test could not be run
        p_text = " (no significance test possible: too few queries for the primary test)"
    return GuardOutcome(text, True, f"{where}: {summary}{p_text}", **details)
