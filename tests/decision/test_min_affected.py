"""``release.min_affected`` (issue 62): auto's t-test decides a measure with a known range only where a rare harm
cannot all be missing from the sample.

Most users gain a little and a few lose a lot: a sample that holds none of the few shows no harm and no skew, so no
check on it can see them, and t PASSes a candidate whose true drop is at the margin about (1 - p)^n of the time. With
``min_affected: p`` t decides only from the n where that is at most alpha / 10; below, the betting bound, exact for
any values in the range, decides.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

import harness
from harness.config.load import load_config
from harness.config.schema import Guard
from harness.decision.guard import PairedValues, one_sided
from harness.errors import ConfigError, HarnessError
from harness.measures.spec import Measure
from harness.stats import bounds

GUARD = Guard(Measure("AP"), "max_drop", 0.005)


def test_t_decides_from_the_users_a_rare_harm_cannot_all_miss() -> None:
    for share, alpha in ((0.01, 0.05), (0.05, 0.05), (0.02, 0.01), (0.2, 0.05)):
        n = bounds.t_trusted_from(share, alpha)
        # by hand: the least n with (1 - share)^n <= alpha / 10
        assert (1 - share) ** n <= alpha / 10 < (1 - share) ** (n - 1), (share, alpha, n)
    assert bounds.t_trusted_from(0.01, 0.05) == 528  # the default's number, as the docs state it
    assert bounds.t_trusted_from(None, 0.05) == 0
    assert bounds.t_trusted_from(0.0, 0.05) > 10**15


def test_below_those_users_the_betting_bound_decides_a_bounded_measure_and_t_an_unbounded_one() -> None:
    spread = np.random.default_rng(3).normal(-0.02, 0.05, 600)  # every user changed: t is trusted on its skew
    for n, method in ((527, "betting"), (528, "t")):
        assert bounds.mean_bound(spread[:n], -1.005, 0.995, 0.05, min_affected=0.01).method == method
    assert bounds.mean_bound(spread[:527], None, None, 0.05, min_affected=0.01).method == "t"  # no exact alternative
    assert bounds.mean_bound(spread, -1.005, 0.995, 0.05, min_affected=0.0).method == "betting"
    assert bounds.mean_bound(spread, -1.005, 0.995, 0.05, "t", min_affected=0.01).method == "t"  # asked for


def _rare_harm(rng: np.random.Generator, n: int, share: float) -> PairedValues:
    """AP of n users where a ``share`` of the population loses 0.4 and the rest gain just enough that the true mean
    drop is exactly the guard's margin: every PASS is a false PASS."""
    rare = rng.random(n) < share
    production = rng.uniform(0.55, 0.9, n)
    gain = (share * 0.4 - GUARD.threshold) / (1 - share)
    drop = np.where(rare, 0.4, -gain + rng.uniform(-0.05, 0.05, n))
    return PairedValues(production, production - drop)


@pytest.mark.parametrize(("n", "share", "before"), [(30, 0.03, 0.25), (100, 0.02, 0.1), (1000, 0.01, None)])
def test_a_rare_harm_at_the_margin_passes_at_most_alpha_of_the_time(n: int, share: float, before: float | None) -> None:
    """400 trials a cell (the rate's standard error at 0.05 is 0.011): at most alpha + 3 standard errors with the
    default, where t without the rule passed a quarter of them at 30 users and 3% harmed."""
    rng = np.random.default_rng([62, n])
    trials = 400
    passes = {"default": 0, "none": 0}
    for _ in range(trials):
        values = _rare_harm(rng, n, share)
        for rule, share_rule in (("default", 0.01), ("none", None)):
            tested = one_sided(GUARD, values, 0.05, 0.8, "auto", share_rule)
            assert not isinstance(tested, str)
            passes[rule] += tested.p_pass < 0.05
    limit = 0.05 + 3 * math.sqrt(0.05 * 0.95 / trials)
    assert passes["default"] / trials <= limit, passes
    if before is not None:  # the case the rule is for: without it, t is fooled
        assert passes["none"] / trials > before, passes


def _t_users(distance: float, sd: float, alpha: float, target: float) -> int:
    """The fewest users whose one-sided paired t-test at alpha resolves ``distance`` with ``target`` power (scipy)."""
    n = 2
    while 1 - stats.nct.cdf(stats.t.ppf(1 - alpha, n - 1), n - 1, distance * math.sqrt(n) / sd) < target:
        n += 1
    return n


@pytest.mark.parametrize(("n", "sd"), [(300, 0.05), (300, 0.12), (2000, 0.05)])
def test_users_needed_are_those_of_the_bound_that_will_decide_there(n: int, sd: float) -> None:
    """An equal candidate's plan under auto: t's users raised to 528 (below, t does not decide), or the betting
    bound's users where fewer, whichever bound decides the sample now."""
    rng = np.random.default_rng([7, n, int(sd * 100)])
    production = rng.uniform(0.3, 0.7, n)
    values = PairedValues(production, production + rng.normal(0, sd, n))
    tested = one_sided(GUARD, values, 0.05, 0.8, "auto", 0.01)
    assert not isinstance(tested, str) and tested.n_needed is not None
    t_users = _t_users(GUARD.threshold, tested.sd, 0.05, 0.8)
    z = float(stats.norm.ppf(0.8))
    betting_users = bounds.betting_sample_size(GUARD.threshold, tested.sd, -1.005, 0.995, 0.05, z)
    expected = min(max(t_users, 528), betting_users or math.inf)
    assert tested.n_needed == expected, (tested.n_needed, t_users, betting_users)
    if expected == betting_users:
        assert "betting bound" in tested.planned_for
    elif t_users < 528:
        assert "decides from 528 users" in tested.planned_for


def ap_tables(n: int, seed: int, shift: float, sd: float) -> list[harness.PerQuery]:
    """AP of n users: production ~ U(0.3, 0.7), the candidate production + N(shift, sd)."""
    rng = np.random.default_rng(seed)
    ids = np.array([f"u{i:04d}" for i in range(n)], dtype=object)
    production = rng.uniform(0.3, 0.7, n)
    return [
        harness.PerQuery(name, ids, (Measure("AP"),), values[:, None], np.ones((n, 1), dtype=bool))
        for name, values in (("prod", production), ("cand", production + rng.normal(shift, sd, n)))
    ]


def test_the_verdict_states_the_rule_and_the_api_and_config_take_it() -> None:
    tables = ap_tables(600, 11, 0.01, 0.05)
    guards = [{"measure": "AP", "max_drop": 0.01}]
    decision = harness.decide(tables, "prod", "cand", guards)
    assert decision.guards[0].method.startswith("one-sided paired t")
    assert "from 528 users on, where a harm to 1% of the users is missing from the sample" in decision.errors
    assert decision.to_dict()["min_affected"] == 0.01
    strict = harness.decide(tables, "prod", "cand", guards, min_affected=0.0)
    assert "betting" in strict.guards[0].method
    with pytest.raises(HarnessError, match=r"min_affected must be a share of users in \[0, 1\)"):
        harness.decide(tables, "prod", "cand", guards, min_affected=1.0)
    with pytest.raises(HarnessError, match="min_affected must be a number"):
        harness.decide(tables, "prod", "cand", guards, min_affected="1%")  # type: ignore[arg-type]


def test_a_config_gives_min_affected_and_a_bad_one_is_refused_at_its_line(tmp_path: Path) -> None:
    folder = tmp_path
    (folder / "q.txt").write_text("q1 0 d1 1\n")
    (folder / "a.run").write_text("q1 Q0 d1 1 1 a\n")
    text = (
        "experiment: e\ndatasets: [{name: d, qrels: q.txt}]\n"
        "systems: [{name: a, runs: {d: a.run}}, {name: b, runs: {d: a.run}}]\nmeasures: [AP]\n"
        "release:\n  production: a\n  candidate: b\n  min_affected: SHARE\n  guards: [{measure: AP, max_drop: 0.01}]\n"
    )
    config = folder / "c.yaml"
    config.write_text(text.replace("SHARE", "0.05"))
    release = load_config(config).release
    assert release is not None and release.min_affected == 0.05
    config.write_text(text.replace("  min_affected: SHARE\n", ""))
    release = load_config(config).release
    assert release is not None and release.min_affected == 0.01
    config.write_text(text.replace("SHARE", "1.5"))
    with pytest.raises(ConfigError, match=r"line 8: release.min_affected must be a share of users in \[0, 1\)"):
        load_config(config)


def test_users_needed_at_the_observed_difference_follow_the_same_rule() -> None:
    """An INCONCLUSIVE decided by the betting bound for want of users: at the observed difference t's users (scipy),
    raised to 528, where the betting bound's scaled plan would be more."""
    n = 300
    tables = ap_tables(n, 1, 0.0, 0.05)
    (guard,) = harness.decide(tables, "prod", "cand", [{"measure": "AP", "max_drop": 0.01}]).guards
    assert guard.verdict == "INCONCLUSIVE" and guard.method.startswith("one-sided betting")
    distance = abs(guard.margin - guard.drop)
    betting_scaled = math.ceil(n * (guard.mde / distance) ** 2)
    expected = max(_t_users(distance, guard.sd, 0.05, 0.8), 528)
    assert expected < betting_scaled and guard.n_needed_observed == expected, (guard.n_needed_observed, expected)
    assert f"at the observed difference ({distance:.4f} from it) about {expected:,} users" in guard.reason


@pytest.mark.parametrize("shape", ["normal", "ten_percent_changed_both_ways", "five_percent_dropped"])
def test_the_skewness_standard_error_is_the_sample_skewnesss_spread(shape: str) -> None:
    """skewness_se against the spread of the sample skewness over 4,000 samples of 400 (scipy's skew): within 12%
    (the Monte Carlo sd's own error is about 1%, the estimate's from one sample's moments the rest), where the
    normal sqrt(6/n) is off by 2-3x for the zero-inflated shapes."""
    rng = np.random.default_rng([3, len(shape)])
    n, samples = 400, 4000

    def draw(size: tuple[int, ...]) -> np.ndarray:
        if shape == "normal":
            return rng.normal(0, 1, size)
        u = rng.random(size)
        if shape == "ten_percent_changed_both_ways":
            return np.where(u < 0.05, 1.0, np.where(u < 0.1, -1.0, 0.0)) + rng.normal(0, 0.01, size)
        return np.where(u < 0.05, 1.0, 0.0) + rng.normal(0, 0.01, size)

    spread = float(np.std(stats.skew(draw((samples, n)), axis=1), ddof=1))
    estimates = [bounds.skewness_se(draw((n,))) for _ in range(200)]
    assert abs(float(np.median(estimates)) / spread - 1) < 0.12, (float(np.median(estimates)), spread)
    if shape != "normal":
        assert spread > 2 * math.sqrt(6 / n), spread  # the normal one is far too small here


def test_the_skewness_standard_error_of_a_bernoulli_sample_by_its_central_moments() -> None:
    """3 users of 100 at 10, the rest 0: a Bernoulli(0.03)'s central moments (mu_k = pq (q^(k-1) + (-1)^k p^(k-1)),
    written out) in the delta method give n Var(g) = 295.2, an se of 1.718."""
    x = np.zeros(100)
    x[[7, 40, 91]] = 10.0
    p, q = 0.03, 0.97
    mu2, mu3, mu4 = p * q, p * q * (q - p), p * q * (1 - 3 * p * q)
    mu5, mu6 = p * q * (q - p) * (1 - 2 * p * q), p * q * (1 - 5 * p * q + 5 * p * p * q * q)
    n_var = (
        (mu6 - mu3**2 - 6 * mu4 * mu2 + 9 * mu2**3) / mu2**3
        - 3 * mu3 * (mu5 - 4 * mu3 * mu2) / mu2**4
        + 2.25 * mu3**2 * (mu4 - mu2**2) / mu2**5
    )
    assert bounds.skewness_se(x) == pytest.approx(math.sqrt(n_var / 100), rel=1e-9)
    assert bounds.skewness_se(x) == pytest.approx(1.718, abs=5e-4)
