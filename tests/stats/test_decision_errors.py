"""The release gate's stated error rates hold (issue 24), simulated through the public API.

Each trial draws per-user values for production and a candidate whose true drop is known,
and asks ``harness.decide``. Over many trials:

* a candidate exactly at a guard's margin PASSes at most alpha of the time (false PASS), and
  FAILs at most alpha of the time (it is within the margin: a false FAIL);
* an equal candidate, at the number of users ``harness plan`` gives, PASSes a ``max_drop``
  guard (FAILs a ``min_gain`` guard) with the planned power;
* too few users give INCONCLUSIVE, not FAIL;
* a gate of five guards: one guard at its margin among four easy ones still passes at most
  alpha of the time (intersection-union), and a candidate at every margin fails at most alpha
  of the time (Holm across guards; uncorrected it would be about 1 - 0.95^5 = 0.23).

Rates are checked against alpha plus three Monte Carlo standard errors.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import harness
from harness.decision.release import Plan
from harness.measures.spec import Measure

pytestmark = pytest.mark.slow

ALPHA, POWER, SD = 0.05, 0.8, 0.1  # SD: of the per-user differences
MEASURES = tuple(Measure(name) for name in ("AP", "RR", "Rprec", "Bpref", "infAP"))


def _mc(rate: float, trials: int) -> float:
    return 3 * math.sqrt(rate * (1 - rate) / trials)


def _tables(rng: np.random.Generator, n: int, drops: list[float], relative: bool = False) -> dict[str, harness.PerQuery]:
    """Production ~ U(0.2, 0.6) per user and measure; the candidate = production - drop + N(0, SD) (a drop in the measure's
    units, or with ``relative`` a fraction r: candidate = (1 - r) production + N(0, SD))."""
    ids = np.array([f"u{i:05d}" for i in range(n)], dtype=object)
    production = rng.uniform(0.2, 0.6, size=(n, len(drops)))
    noise = rng.normal(0.0, SD, size=(n, len(drops)))
    candidate = (1 - np.array(drops)) * production + noise if relative else production - np.array(drops) + noise
    measures = MEASURES[: len(drops)]
    return {name: harness.PerQuery(name, ids, measures, values, np.ones(n, dtype=bool))
            for name, values in (("production", production), ("candidate", candidate))}  # fmt: skip


def _verdicts(trials: int, n: int, drop: float, guard: dict[str, object], seed: int, relative: bool = False) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    counts = {"PASS": 0, "FAIL": 0, "INCONCLUSIVE": 0}
    for _ in range(trials):
        decision = harness.decide(_tables(rng, n, [drop], relative), "production", "candidate", [{"measure": "AP", **guard}],
                                  alpha=ALPHA, power=POWER)  # fmt: skip
        counts[decision.verdict] += 1
    return {k: v / trials for k, v in counts.items()}


GUARDS = [  # (guard, the true drop at its margin, relative)
    ({"max_drop": 0.02}, 0.02, False),
    ({"max_drop_pct": 5}, 0.05, True),
    ({"min_gain": 0.02}, -0.02, False),
]


@pytest.mark.parametrize(("guard", "at_margin", "relative"), GUARDS, ids=[next(iter(g[0])) for g in GUARDS])
def test_a_candidate_at_the_margin_passes_and_fails_at_most_alpha_of_the_time(guard: dict[str, object], at_margin: float,
                                                                             relative: bool) -> None:  # fmt: skip
    trials = 2000
    rates = _verdicts(trials, 60, at_margin, guard, seed=11, relative=relative)
    assert rates["PASS"] <= ALPHA + _mc(ALPHA, trials), rates
    assert rates["FAIL"] <= ALPHA + _mc(ALPHA, trials), rates
    assert rates["PASS"] >= ALPHA - _mc(ALPHA, trials), rates  # and not far below: the test is exact at the margin


@pytest.mark.parametrize(("guard", "verdict"), [({"max_drop": 0.02}, "PASS"), ({"min_gain": 0.02}, "FAIL")])
def test_an_equal_candidate_at_the_planned_number_of_users_is_decided_with_the_planned_power(guard: dict[str, object],
                                                                                            verdict: str) -> None:  # fmt: skip
    n = Plan.of(sd=SD, margin=0.02, alpha=ALPHA, target=POWER).n_queries  # harness plan --sd 0.1 --margin 0.02
    assert n is not None
    trials = 1500
    rates = _verdicts(trials, n, 0.0, guard, seed=12)
    assert abs(rates[verdict] - POWER) <= _mc(POWER, trials), (n, rates)


def test_too_few_users_give_inconclusive_not_fail() -> None:
    trials = 1500
    rates = _verdicts(trials, 15, 0.0, {"max_drop": 0.02}, seed=13)  # an equal candidate: within the margin
    assert rates["FAIL"] <= ALPHA + _mc(ALPHA, trials), rates
    assert rates["INCONCLUSIVE"] >= 0.6, rates  # 15 users resolve about 0.07 here, far more than 0.02


def _gate(trials: int, drops: list[float], margins: list[float], seed: int) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    guards = [{"measure": str(m), "max_drop": margin} for m, margin in zip(MEASURES, margins, strict=True)]
    counts = {"PASS": 0, "FAIL": 0, "INCONCLUSIVE": 0}
    for _ in range(trials):
        counts[harness.decide(_tables(rng, 80, drops), "production", "candidate", guards, alpha=ALPHA).verdict] += 1
    return {k: v / trials for k, v in counts.items()}


def test_a_gate_passes_a_candidate_beyond_one_margin_at_most_alpha_of_the_time() -> None:
    trials = 1500
    rates = _gate(trials, [0.02, 0.0, 0.0, 0.0, 0.0], [0.02, 0.2, 0.2, 0.2, 0.2], seed=14)  # guard 1 at its margin
    assert rates["PASS"] <= ALPHA + _mc(ALPHA, trials), rates


def test_a_gate_fails_a_candidate_within_every_margin_at_most_alpha_of_the_time() -> None:
    trials = 1500
    rates = _gate(trials, [0.02] * 5, [0.02] * 5, seed=15)  # every guard exactly at its margin: within it
    assert rates["FAIL"] <= ALPHA + _mc(ALPHA, trials), rates
