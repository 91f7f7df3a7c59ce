"""The gate and the comparisons on a judged dataset, simulated: a noisy judge that favours the candidate's documents,
people's labels on a random sample of the queries. Judge-only values PASS a candidate that is worse for people;
corrected by people's labels, the false-PASS rate stays at alpha and the intervals of the differences cover the
truth (people's labels on every query) at their level."""

from __future__ import annotations

import math

import numpy as np
import pytest

from harness.comparison.judged import corrected_difference
from harness.config.schema import Guard
from harness.decision.guard import CorrectedValues, PairedValues, guard_result, one_sided
from harness.evaluation.results import PerQuery, RunResult
from harness.measures.spec import Measure

ALPHA = 0.05
AP = Measure("AP")


def _world(rng: np.random.Generator, queries: int, people: int, drop: float, favour: float) -> tuple[np.ndarray, ...]:
    """People's values of production and candidate on every query (the candidate ``drop`` worse on average), the
    judge's (noisy, lenient, and ``favour`` kinder to the candidate), and which queries people judged."""
    truth_p = rng.beta(2, 3, queries)
    truth_c = truth_p - drop + rng.normal(0, 0.08, queries)
    judge_p = truth_p + 0.1 + rng.normal(0, 0.1, queries)
    judge_c = truth_c + 0.1 + favour + rng.normal(0, 0.1, queries)
    sampled = np.zeros(queries, dtype=bool)
    sampled[rng.choice(queries, people, replace=False)] = True
    return truth_p, truth_c, judge_p, judge_c, sampled


def _pass_rates(guard: Guard, sims: int, drop: float, seed: int = 7) -> tuple[float, float]:
    """(the corrected gate's PASS rate, the judge-only gate's) over ``sims`` worlds."""
    rng = np.random.default_rng(seed)
    corrected = judge_only = 0
    for _ in range(sims):
        truth_p, truth_c, judge_p, judge_c, sampled = _world(rng, 400, 60, drop, 0.06)
        values = CorrectedValues(judge_p, judge_c, truth_p[sampled], truth_c[sampled], sampled)
        found = one_sided(guard, values, ALPHA, 0.8, "t")
        corrected += guard_result(guard, "d", "all", found, found.p_fail, ALPHA, 0.8).verdict == "PASS"  # type: ignore[union-attr]
        alone = one_sided(guard, PairedValues(judge_p, judge_c), ALPHA, 0.8, "t")
        judge_only += alone.p_pass < ALPHA  # type: ignore[union-attr]
    return corrected / sims, judge_only / sims


@pytest.mark.parametrize("guard", [Guard(AP, "max_drop", 0.02), Guard(AP, "max_drop_pct", 5.0)], ids=["absolute", "relative"])
def test_a_candidate_at_the_margin_passes_at_most_alpha_when_corrected(guard: Guard) -> None:
    """At the margin (the true mean drop equals the allowance), any PASS is false: corrected it stays within alpha
    (+3 Monte Carlo sd), where the judge, which favours the candidate, passes it almost always."""
    sims = 400
    # the relative margin is 5% of production's true mean (beta(2, 3): 0.4), 0.02 as the absolute one
    corrected, judge_only = _pass_rates(guard, sims, drop=0.02)
    assert corrected <= ALPHA + 3 * math.sqrt(ALPHA * (1 - ALPHA) / sims)
    assert judge_only >= 0.9


@pytest.mark.slow
def test_the_false_pass_rate_over_many_worlds() -> None:
    sims = 4000
    corrected, judge_only = _pass_rates(Guard(AP, "max_drop", 0.02), sims, drop=0.02, seed=11)
    assert corrected <= ALPHA + 3 * math.sqrt(ALPHA * (1 - ALPHA) / sims)
    assert corrected >= ALPHA - 4 * math.sqrt(ALPHA * (1 - ALPHA) / sims)  # at the margin: near alpha, not far below
    assert judge_only >= 0.95


def _result(name: str, judge: np.ndarray, people: np.ndarray, sampled: np.ndarray) -> RunResult:
    ids = np.array([f"q{i:04d}" for i in range(judge.size)], dtype=object)
    table = PerQuery(name, ids, (AP,), judge[:, None], np.ones(judge.size, dtype=bool))
    human = PerQuery(name, ids[sampled], (AP,), people[:, None], np.ones(int(sampled.sum()), dtype=bool))
    return RunResult("d", name, table, np.full(judge.size, "", dtype=object), {}, people=human, judge="llm")


@pytest.mark.parametrize("sims", [pytest.param(300, id="fast"), pytest.param(3000, id="many", marks=pytest.mark.slow)])
def test_the_intervals_of_a_difference_cover_peoples_truth(sims: int) -> None:
    """The 95% interval of the corrected difference covers people's difference over every query at its level
    (finite population: at least it, up to Monte Carlo error); the judge-only t interval, biased, rarely does."""
    rng = np.random.default_rng(5)
    covered = judge_covered = 0
    for _ in range(sims):
        truth_p, truth_c, judge_p, judge_c, sampled = _world(rng, 300, 50, 0.0, 0.06)
        a, b = _result("a", judge_p, truth_p[sampled], sampled), _result("b", judge_c, truth_c[sampled], sampled)
        found, _ = corrected_difference(a, b, a.per_query.query_ids.astype(str), AP)
        truth = float((truth_c - truth_p).mean())
        covered += found.low <= truth <= found.high  # type: ignore[union-attr]
        d = judge_c - judge_p
        half = 1.96 * d.std(ddof=1) / math.sqrt(d.size)
        judge_covered += d.mean() - half <= truth <= d.mean() + half
    sd = math.sqrt(0.95 * 0.05 / sims)
    assert covered / sims >= 0.95 - 3 * sd
    assert judge_covered / sims <= 0.2
