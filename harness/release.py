"""Release gate: does the candidate keep every guard against production?

A guard names a measure and, optionally, a dataset and a segment. It fails when the
candidate's value drops by more than ``max_drop`` (in the measure's direction: a
drop of nDCG is a decrease, a drop of Unj an increase), or, with ``significant``,
when the drop is statistically significant after correction. A guard that cannot
be evaluated (no such segment, no comparison) fails: a gate never passes by default.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

EPSILON = 1e-12  # differences below this are rounding, not drops


@dataclass(frozen=True)
class GuardOutcome:
    guard: str  # human-readable: "nDCG@10 on ratings / new: drop <= 0.005, not significant"
    passed: bool
    reason: str
    production: float | None = None
    candidate: float | None = None
    drop: float | None = None
    p_adj: float | None = None


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


def describe(guard: dict[str, Any]) -> str:
    where = " / ".join(x for x in (guard.get("dataset"), guard.get("segment")) if x)
    text = f"{guard['measure']}{' on ' + where if where else ''}: drop <= {guard.get('max_drop', 0.0):g}"
    return text + (", and no significant drop" if guard.get("significant") else "")


def evaluate_gate(release: dict[str, Any], summary: Any, comparisons: Any | None, higher_is_better: dict[str, bool]) -> Verdict:
    """``release``: the resolved config's report.release; frames as written in the results folder."""
    production, candidate = release["production"], release["candidate"]
    outcomes = []
    for guard in release.get("guards", []):
        measure, segment = guard["measure"], guard.get("segment") or "all"
        text = describe(guard)
        if guard.get("dataset"):
            datasets = [guard["dataset"]]
        else:  # every dataset, or for a segment guard every dataset that has the segment
            having = summary[summary["segment"] == segment]["dataset"].unique()
            datasets = sorted(having)
            if not datasets:
                outcomes.append(
                    GuardOutcome(text, False, f"{measure} / {segment}: cannot be evaluated (no dataset has segment {segment!r})")
                )
                continue
        for dataset in datasets:
            where = f"{measure} on {dataset}" + ("" if segment == "all" else f" / {segment}")
            rows = summary[(summary["dataset"] == dataset) & (summary["segment"] == segment) & (summary["measure"] == measure)]
            values = dict(zip(rows["system"], rows["value"], strict=True))
            if production not in values or candidate not in values:
                outcomes.append(GuardOutcome(text, False, f"{where}: cannot be evaluated (no values for both systems)"))
                continue
            prod, cand = float(values[production]), float(values[candidate])
            drop = (prod - cand) if higher_is_better.get(measure, True) else (cand - prod)
            if drop > guard.get("max_drop", 0.0) + EPSILON:
                reason = f"{where} dropped by {drop:.4f} ({prod:.4f} -> {cand:.4f}), more than {guard.get('max_drop', 0.0):g}"
                outcomes.append(GuardOutcome(text, False, reason, prod, cand, drop))
                continue
            p_adj = None
            if guard.get("significant"):
                match = None
                if comparisons is not None and len(comparisons):
                    pair = comparisons[
                        (comparisons["dataset"] == dataset)
                        & (comparisons["segment"] == segment)
                        & (comparisons["measure"] == measure)
                    ]
                    forward = pair[(pair["system_a"] == production) & (pair["system_b"] == candidate)]
                    backward = pair[(pair["system_a"] == candidate) & (pair["system_b"] == production)]
                    match = forward if len(forward) else backward
                if match is None or not len(match):
                    outcomes.append(
                        GuardOutcome(text, False, f"{where}: no significance test between the two systems", prod, cand, drop)
                    )
                    continue
                row = match.iloc[0]
                p_adj = float(row["p_adj"])
                if bool(row["significant"]) and drop > EPSILON:
                    reason = f"{where} dropped significantly by {drop:.4f} (corrected p = {p_adj:.3g})"
                    outcomes.append(GuardOutcome(text, False, reason, prod, cand, drop, p_adj))
                    continue
            outcomes.append(GuardOutcome(text, True, f"{where}: {prod:.4f} -> {cand:.4f}", prod, cand, drop, p_adj))
    return Verdict(production, candidate, tuple(outcomes))
