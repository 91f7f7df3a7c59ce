"""The gate and the comparisons on a judged dataset, simulated: a noisy judge that favours the candidate's documents,
people's labels on a random sample of the queries. Judge-only values PASS a candidate that is worse for people;
corrected by people's labels, the false-PASS rate stays at alpha and the intervals of the differences cover the
truth (people's labels on every query) at their level."""

from __future__ import annotations

import math

import numpy as np
import pytest

from harness.comparison.judged import corrected_difference
from harness.comparison.versions import SeededValues
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


def _seeded_world(rng: np.random.Generator, drop: float, favour: float, runs: int = 3) -> SeededValues:
    """Two training procedures' runs (seeds) on 300 users, people's labels on 60 of them: a run's mean moves with its
    seed (sd 0.01), the candidate's procedure is ``drop`` worse for people, and the judge, noisy and lenient, is
    ``favour`` kinder to the candidate's runs."""
    users = rng.beta(2, 3, 300)
    truth_p = users + rng.normal(0, 0.01, (runs, 1)) + rng.normal(0, 0.05, (runs, 300))
    truth_c = users - drop + rng.normal(0, 0.01, (runs, 1)) + rng.normal(0, 0.05, (runs, 300))
    judge_p = truth_p + 0.1 + rng.normal(0, 0.1, (runs, 300))
    judge_c = truth_c + 0.1 + favour + rng.normal(0, 0.1, (runs, 300))
    sampled = np.zeros(300, dtype=bool)
    sampled[rng.choice(300, 60, replace=False)] = True
    return SeededValues(judge_p, judge_c, truth_p[:, sampled], truth_c[:, sampled], sampled, None, "llm")


@pytest.mark.parametrize("sims", [pytest.param(300, id="fast"), pytest.param(3000, id="many", marks=pytest.mark.slow)])
def test_a_version_at_the_margin_passes_at_most_alpha_when_corrected(sims: int) -> None:
    """The version claim on a judged dataset: the procedures' difference over users and seeds, corrected by people's
    labels. At the margin (the candidate's procedure 0.02 worse), it PASSes within alpha (+3 Monte Carlo sd); on the
    judge's values alone, which favour the candidate, almost always."""
    rng = np.random.default_rng(9)
    guard = Guard(AP, "max_drop", 0.02)
    corrected = judge_only = 0
    for _ in range(sims):
        values = _seeded_world(rng, 0.02, 0.06)
        found = one_sided(guard, values, ALPHA, 0.8, "t")
        assert not isinstance(found, str)
        corrected += found.p_pass < ALPHA
        alone = one_sided(guard, SeededValues(values.production, values.candidate), ALPHA, 0.8, "t")
        judge_only += alone.p_pass < ALPHA  # type: ignore[union-attr]
    assert corrected / sims <= ALPHA + 3 * math.sqrt(ALPHA * (1 - ALPHA) / sims)
    assert judge_only / sims >= 0.9


def test_a_corrected_version_difference_by_hand() -> None:
    """crossed_corrected: the estimate is PPI++ on the users' seed-averaged differences, and the variance its squared
    standard error plus each system's seed term from people's tables, ``(MS_seed - MS_residual) / (n r)``, computed
    here with numpy alone; the degrees of freedom Satterthwaite's over the terms, the seed terms at their 80% upper
    limits (scipy's chi-square)."""
    from scipy import stats

    from harness.stats.seeds import crossed_corrected

    rng = np.random.default_rng(2)
    values = _seeded_world(rng, 0.01, 0.05)
    assert values.people_production is not None and values.people_candidate is not None and values.sampled is not None
    found = crossed_corrected(
        [(values.people_production, -1.0), (values.people_candidate, 1.0)], [values.production, values.candidate], values.sampled
    )
    y = values.people_candidate.mean(axis=0) - values.people_production.mean(axis=0)
    f_all = values.candidate.mean(axis=0) - values.production.mean(axis=0)
    f, rest = f_all[values.sampled], f_all[~values.sampled]
    n, big = y.size, rest.size
    lam = min(1.0, max(0.0, np.cov(y, f)[0, 1] / ((1 + n / big) * f_all.var(ddof=1))))
    estimate = lam * rest.mean() + (y - lam * f).mean()
    user = (y - lam * f).var(ddof=1) / n + lam**2 * rest.var(ddof=1) / big
    seed_terms, upper = [], []
    for table in (values.people_production, values.people_candidate):
        r = table.shape[0]
        seeds, users, grand = table.mean(axis=1), table.mean(axis=0), table.mean()
        ms_seed = n * ((seeds - grand) ** 2).sum() / (r - 1)
        ms_residual = ((table - seeds[:, None] - users[None, :] + grand) ** 2).sum() / ((r - 1) * (n - 1))
        seed_terms.append((ms_seed - ms_residual) / (n * r))
        upper.append((ms_seed * (r - 1) / stats.chi2.ppf(0.2, r - 1) / (n * r), r - 1))
    assert found.estimate == pytest.approx(estimate, abs=1e-12) and found.lam == pytest.approx(lam, abs=1e-12)
    assert found.variance == pytest.approx(user + max(0.0, sum(seed_terms)), rel=1e-10)
    total = user + sum(u for u, _ in upper)
    df = total**2 / (user**2 / (n - 1) + sum(u**2 / k for u, k in upper))
    assert found.df == pytest.approx(df, rel=1e-10)
