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
from dataclasses import dataclass
from typing import Any, Literal

from harness.config.defaults import DEFAULT_POWER
from harness.decision import wording
from harness.decision.wording import BETTING, BOOTSTRAP, PPI, T_TEST, UNDECIDED, VERSION

Label = Literal["PASS", "FAIL", "INCONCLUSIVE"]
GuardLabel = Literal["PASS", "FAIL", "INCONCLUSIVE", "DESCRIPTIVE"]


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
    judged: str = ""  # on a judged dataset: the queries people and the judge labelled (gate.json omits it elsewhere)

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
        return wording.guards_html((self,))


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
        return wording.claim_sentence(self)

    @property
    def tested_at(self) -> float:
        """The level each guard was tested at: alpha for one look, this look's share of it otherwise."""
        return self.alpha if self.level is None else self.level

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
        """Which error this verdict controls, and at what rate (:func:`~harness.decision.wording.errors_sentence`)."""
        return wording.errors_sentence(self)

    @property
    def controls(self) -> str:
        """The error the verdict controls, as a field beside the sentence: "false PASS", "false FAIL" or "none"."""
        return {"PASS": "false PASS", "FAIL": "false FAIL"}.get(self.verdict, "none")

    @property
    def approximate(self) -> bool:
        """Whether the stated rate rests on an approximation (a t-test's normal one, the bootstrap's) for some guard
        that decided; False where every deciding guard was decided by the exact betting bound (or none decided)."""
        return any(g.method in (T_TEST, BOOTSTRAP, VERSION, PPI) for g in self.deciding if g.evaluated)

    @property
    def t_trusted_from(self) -> int | None:
        """Under ``bound: auto``, from how many users t decides a measure with a known range (None: never, with
        ``min_affected: 0``, or no such rule, as gates were decided before it)."""
        from harness.stats import bounds

        if self.min_affected is None or not self.min_affected > 0:
            return None
        return bounds.t_trusted_from(self.min_affected, self.tested_at)

    @property
    def rare_harm_missed(self) -> float:
        """The chance, at most, that a harm to ``min_affected`` of the users is missing from t's sample."""
        from harness.stats import bounds

        return bounds.EXCESS_TOLERANCE * self.tested_at

    def __repr__(self) -> str:
        """The verdict and its claim, in one line (``line()`` for the whole sentence; ``guards`` for the numbers)."""
        return (
            f"Decision({self.verdict}: {self.candidate} against {self.production}, {len(self.deciding)} guard(s); "
            f"controls {self.controls}{f' at {self.alpha:g}' if self.controls != 'none' else ''})"
        )

    def _repr_html_(self) -> str:
        """A notebook's view: the verdict box (the report's colours), the error it controls, and the guards' table."""
        return wording.html(self)

    def headline(self) -> str:
        """The verdict in one short line, first in a terminal or CI log: what decided it, the error it controls and,
        when undecided, the users that would decide it (each guard's numbers follow in :meth:`guard_table`; the
        reasoning in :meth:`line` and :attr:`errors`).

        >>> g = GuardResult("AP on d: drop <= 0.01", "INCONCLUSIVE", "...", n_needed=1200)
        >>> Decision("v1", "v2", (g, dataclasses.replace(g, guard="RR on d", verdict="PASS", n_needed=None))).headline()
        'release gate INCONCLUSIVE: v2 against v1: 1 of 2 guards undecided (AP on d); about 1,200 users would decide it'
        """
        return wording.headline(self)

    def guard_table(self) -> list[str]:
        """Each guard's numbers as an aligned text table: verdict, values, drop, the bound that decided it, the allowed
        drop, users and users needed."""
        return wording.guard_table(self)

    def line(self) -> str:
        """One line for a terminal or a CI log."""
        return wording.line(self)

    @property
    def warning_heading(self) -> tuple[str, str]:
        """What the segment sweep's warnings are, and on what they rest: the verdict line, summary.md and the report
        each say these two phrases."""
        return wording.warning_heading(self)

    def warning_text(self) -> str:
        """The segment sweep's warnings and the seeds a system lacks on a dataset, as sentences (empty without any)."""
        return wording.warning_text(self)

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
            "guards": [_record(g) for g in self.guards],
            "segment_warnings": [_record(g) for g in self.warnings],
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


def _record(result: GuardResult) -> dict[str, Any]:
    """A guard's result as gate.json holds it: ``judged`` only on a judged dataset."""
    out = dataclasses.asdict(result)
    if not out["judged"]:
        del out["judged"]
    return out


__all__ = ["BETTING", "BOOTSTRAP", "PPI", "T_TEST", "UNDECIDED", "VERSION", "Decision", "GuardLabel", "GuardResult", "Label"]
