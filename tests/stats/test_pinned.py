"""Every formula of the gate's newest statistics pinned by a value computed apart from harness (issue 62).

A bound can be valid and still wrong: a betting bound whose running mean lost its +1, or whose threshold is
log(2/alpha) instead of log(1/alpha), keeps its error rate (it is only wider) and passes every simulation. So each
formula is computed here again in plain Python, from its definition, and compared to the last digits:

* the hedged-capital betting bound (Waudby-Smith and Ramdas, JRSS B 2024, the predictable plug-in for one look at n);
* the crossed variance of a version difference with a relative margin's weights (w^2, not |w|);
* a planned look's level from what the earlier looks spent, not from the plan;
* the gate plan of min_gain guards at level / k with the full power;
* the segment sweep's Holm correction (statsmodels) and its leaving out descriptive guards.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

import harness
from harness.config.schema import Guard, Release
from harness.decision.guard import PairedValues, one_sided
from harness.decision.release import decide_arrays, sweep_of
from harness.errors import HarnessError
from harness.measures.spec import Measure
from harness.stats import bounds, seeds
from harness.stats.looks import Look
from tests.decision.test_min_affected import ap_tables


def _wsr_log_wealth(y: list[float], m: float, alpha: float, upper: bool) -> float:
    """log of the capital of a bettor against "the mean is at least m" on values in [0, 1] (for the lower bound, on
    the mirrored values 1 - y), with Waudby-Smith and Ramdas' predictable plug-in bets for one look at n values,
    each capped so that no value loses more than three quarters of the capital."""
    n = len(y)
    values = y if upper else [1 - v for v in y]
    total, squares, log_wealth = 0.0, 0.0, 0.0
    for i, v in enumerate(values, start=1):
        variance = (0.25 + squares) / i  # sigma^2_{i-1}: 1/4 and the squares of the values before this one, over i
        bet = math.sqrt(2 * math.log(1 / alpha) / (n * variance))
        cap = 0.75 / (1 - m) if m < 1 else math.inf  # a value of 1 loses 1 - m per unit bet
        log_wealth += math.log1p(min(bet, cap) * (m - v))
        total += v
        mean = (0.5 + total) / (i + 1)  # mu_i: 1/2 and the values so far, over i + 1
        squares += (v - mean) ** 2
    return log_wealth


def _wsr_upper(y: list[float], alpha: float, upper: bool = True) -> float:
    """The least m in [mean, 1] whose capital reaches 1 / alpha, by 200 bisections."""
    low, high = (sum(y) / len(y)) if upper else (1 - sum(y) / len(y)), 1.0
    if _wsr_log_wealth(y, high, alpha, upper) < math.log(1 / alpha):
        return high
    for _ in range(200):
        middle = (low + high) / 2
        low, high = (low, middle) if _wsr_log_wealth(y, middle, alpha, upper) >= math.log(1 / alpha) else (middle, high)
    return high


def test_the_betting_bound_is_waudby_smith_and_ramdas_plug_in_computed_apart() -> None:
    rng = np.random.default_rng(62)
    x = np.round(np.clip(rng.normal(0.1, 0.3, 25), -0.95, 0.95), 3)  # on [-1, 1]
    found = bounds.betting_bound(x, -1.0, 1.0, 0.05)
    y = [(v + 1) / 2 for v in x.tolist()]
    upper = -1.0 + 2 * _wsr_upper(y, 0.05)
    lower = -1.0 + 2 * (1 - _wsr_upper(y, 0.05, upper=False))
    assert found.high == pytest.approx(upper, abs=2**-47)  # harness bisects 48 times on [0, 1]
    assert found.low == pytest.approx(lower, abs=2**-47)
    # the p-value of "mean >= 0": one over the capital of a bettor against it, at m = 1/2 on [0, 1]
    assert found.p_below == pytest.approx(min(1.0, math.exp(-_wsr_log_wealth(y, 0.5, 0.05, True))), rel=1e-12)
    # and the mutants it tells apart: the threshold log(2/alpha) would sit further out
    assert found.high < -1.0 + 2 * _wsr_upper(y, 0.025) - 1e-6


def test_the_crossed_variance_weights_each_systems_seed_term_by_w_squared() -> None:
    """A 5% relative margin: w_a = -0.95, w_b = 1. The variance's formula, term by term in plain Python."""
    users = np.array([0.50, 0.62, 0.31, 0.44])
    a = (
        users
        + np.array([[0.03], [-0.02], [0.0]])
        + np.array([[0.01, -0.01, 0.0, 0.005], [0.0, 0.01, -0.005, 0.0], [0.0, 0.0, 0.01, -0.01]])
    )
    b = users + np.array([[0.05], [-0.04]]) + np.array([[0.0, 0.01, -0.01, 0.005], [0.005, 0.0, 0.0, -0.01]])
    wa, wb = -0.95, 1.0
    found = seeds.crossed_difference(a, b, wa, wb)
    n = 4

    def ms(table: list[list[float]]) -> tuple[float, float]:
        r = len(table)
        grand = sum(map(sum, table)) / (r * n)
        seed_means = [sum(row) / n for row in table]
        user_means = [sum(table[k][u] for k in range(r)) / r for u in range(n)]
        ms_seed = n * sum((s - grand) ** 2 for s in seed_means) / (r - 1)
        resid = sum((table[k][u] - seed_means[k] - user_means[u] + grand) ** 2 for k in range(r) for u in range(n)) / (
            (r - 1) * (n - 1)
        )
        return ms_seed, resid

    d = [wa * sum(a[k][u] for k in range(3)) / 3 + wb * sum(b[k][u] for k in range(2)) / 2 for u in range(n)]
    mean_d = sum(d) / n
    user_part = sum((v - mean_d) ** 2 for v in d) / (n - 1) / n
    seed_part = sum(w * w * (s - e) / (n * r) for w, r, (s, e) in ((wa, 3, ms(a.tolist())), (wb, 2, ms(b.tolist()))))
    assert found.estimate == pytest.approx(mean_d, rel=1e-12)
    assert found.user_variance == pytest.approx(user_part, rel=1e-12)
    assert found.seed_variance == pytest.approx(max(0.0, seed_part), rel=1e-12)
    assert seed_part > 0 and abs(wa) != wa * wa  # the case where w^2 and |w| differ, with a seed term to weigh


def test_a_looks_level_is_the_plans_spending_less_what_the_earlier_looks_spent() -> None:
    assert Look(3, 4, 0.01).level(0.05) == pytest.approx(0.05 * 27 / 64 - 0.01, rel=1e-15)
    assert Look(2, 4, 0.05 / 8).level(0.05) == 0.0  # a first look run as one of 2 spent what this plan gives by 2


def test_a_gate_replanned_for_more_looks_spends_only_what_is_left(tmp_path: Path) -> None:
    """Look 1 of a gate planned for 2 spent 0.05 (1/2)^3; planned again for 4, look 2 has 0.05 (2/4)^3 less that: 0,
    and is refused, where the plan's own spending (0.05/64 before it) would have tested it at 0.0055."""
    tables = ap_tables(300, 5, 0.0, 0.05)
    guards = [{"measure": "AP", "max_drop": 0.01}]
    first = harness.decide(tables, "prod", "cand", guards, looks=2, ledger=tmp_path)
    assert first.tested_at == pytest.approx(0.05 / 8, rel=1e-12)
    with pytest.raises(HarnessError, match=r"alpha .* is spent"):
        harness.decide(tables, "prod", "cand", guards, looks=4, ledger=tmp_path)


def _t_users(distance: float, sd: float, alpha: float, target: float) -> int:
    n = 2
    while 1 - stats.nct.cdf(stats.t.ppf(1 - alpha, n - 1), n - 1, distance * math.sqrt(n) / sd) < target:
        n += 1
    return n


def test_min_gain_guards_plan_the_gate_at_level_over_k_with_the_full_power() -> None:
    """An equal candidate should FAIL a min_gain gate: one guard failing suffices, and Holm's first step tests it at
    alpha / k, so each plans for that level with the stated power (not its k-th root)."""
    n = 2000
    rng = np.random.default_rng(8)
    ids = np.array([f"u{i}" for i in range(n)], dtype=object)
    production = rng.uniform(0.3, 0.7, (n, 2))
    candidate = production + rng.normal(0, [0.05, 0.08], (n, 2))
    measures = (Measure("AP"), Measure("RR"))
    tables = [
        harness.PerQuery(name, ids, measures, values, np.ones((n, 2), dtype=bool))
        for name, values in (("prod", production), ("cand", candidate))
    ]
    guards = [{"measure": "AP", "min_gain": 0.01}, {"measure": "RR", "min_gain": 0.01}]
    decision = harness.decide(tables, "prod", "cand", guards, min_affected=0.2)
    sds = (candidate - production).std(axis=0, ddof=1)
    expected = [_t_users(0.01, sd, 0.05 / 2, 0.8) for sd in sds]
    assert [g.n_needed_gate for g in decision.guards] == expected
    assert "a min_gain guard at 0.025, Holm's first step across the 2 guards" in decision.gate_planned_for


def test_the_sweep_is_holm_corrected_within_itself_and_skips_descriptive_guards() -> None:
    rng = np.random.default_rng(9)
    guard = Guard(Measure("AP"), "max_drop", 0.01)
    segments = ["s1", "s2", "s3", "s4"]
    checks, sweep = [], []
    production = rng.uniform(0.3, 0.7, 800)
    drops = {"s1": 0.03, "s2": 0.0155, "s3": 0.0, "s4": 0.021}  # some beyond the margin, by different amounts
    for s in segments:
        prod = production[:200] + rng.normal(0, 0.01, 200)
        values = PairedValues(prod, prod - drops[s] + rng.normal(0, 0.04, 200))
        sweep.append((guard, "d", s, values))
    everyone = PairedValues(production, production + rng.normal(0.0, 0.04, 800))
    checks.append((guard, "d", "all", everyone))
    decision = decide_arrays(checks, "p", "c", sweep=sweep, min_affected=0.2)
    raw = [one_sided(guard, v, 0.05, 0.8, "auto", 0.2) for *_, v in sweep]
    p_fail = [t.p_fail for t in raw if not isinstance(t, str)]
    adjusted = multipletests(p_fail, method="holm")[1]
    named = {w.segment: w.p_fail_adj for w in decision.warnings}
    expected = {s: float(p) for s, p in zip(segments, adjusted, strict=True) if p < 0.05}
    assert named.keys() == expected.keys() and named, (named, expected, p_fail)
    for s, p in expected.items():
        assert named[s] == pytest.approx(p, rel=1e-12)
    assert any(raw_p < 0.05 <= adj for raw_p, adj in zip(p_fail, adjusted, strict=True)), "Holm changes a verdict"
    shown = Guard(Measure("AP"), "max_drop", 0.01, descriptive=True)
    assert sweep_of(Release("p", "c", (shown,)), [(shown, "d", "all")], [("d", "all"), ("d", "s1")]) == []


@pytest.mark.parametrize("n", [100, 300, 1_000])
def test_the_betting_bound_sits_near_the_floor_no_exact_bound_can_beat(n: int) -> None:
    """No bound exact for every distribution on [-1, 1] lies nearer a sample of n zeros than (1 - 0) log(1/alpha) / n:
    a harm of 1 to that share of the users is missing from the sample with a chance of alpha. With the bets capped at
    3/4 of the wealth the bound sits about 1.35-1.38x that floor (capped at 1/2: about 2x)."""
    found = bounds.betting_bound(np.zeros(n), -1.0, 1.0, 0.05)
    floor = math.log(20) / n
    assert floor < found.high < 1.4 * floor


def test_a_bettor_ruined_over_many_users_shows_nothing_rather_than_overflowing() -> None:
    """200,000 users all well above 0: the bettor against "mean >= 0" loses on every one, her log wealth far below
    what exp holds (found by make bench's 200,000-user run): that p is 1, and the other side's is 0 to the last bit."""
    found = bounds.betting_bound(np.full(200_000, 0.5), -1.0, 1.0, 0.05)
    assert found.p_below == 1.0 and found.p_above == 0.0
