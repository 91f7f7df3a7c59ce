"""The prediction-powered mean (issue 61): exact values by hand, the classical limits, and coverage where a judge is
noisy and biased towards one system."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from harness.stats.ppi import ppi_mean, ppi_stratified, tuned_lambda


def test_the_estimate_its_lambda_and_its_interval_by_hand() -> None:
    y = [0.2, 0.5, 0.9, 0.4, 0.7]  # people's values on 5 queries
    f = [0.3, 0.5, 1.0, 0.6, 0.8]  # the judge's on them: a little generous
    rest = [0.6, 0.9, 0.4, 0.5, 0.7, 0.8, 0.3, 0.6]  # the judge's on 8 more
    n, big = 5, 8
    my, mf = sum(y) / n, sum(f) / n
    cov = sum((a - my) * (b - mf) for a, b in zip(y, f, strict=True)) / (n - 1)
    every = f + rest
    me = sum(every) / len(every)
    var_every = sum((v - me) ** 2 for v in every) / (len(every) - 1)
    lam = min(1.0, max(0.0, cov / ((1 + n / big) * var_every)))
    residual = [a - lam * b for a, b in zip(y, f, strict=True)]
    mr = sum(residual) / n
    mrest = sum(rest) / big
    estimate = lam * mrest + mr
    se = math.sqrt(
        sum((r - mr) ** 2 for r in residual) / (n - 1) / n + lam**2 * sum((v - mrest) ** 2 for v in rest) / (big - 1) / big
    )
    t = stats.t.ppf(0.975, n - 1)
    found = ppi_mean(np.array(y), np.array(f), np.array(rest))
    assert found.lam == pytest.approx(lam, rel=1e-12) and 0 < lam < 1
    assert found.estimate == pytest.approx(estimate, rel=1e-12)
    assert found.se == pytest.approx(se, rel=1e-12)
    assert (found.low, found.high) == pytest.approx((estimate - t * se, estimate + t * se), rel=1e-12)
    assert found.p == pytest.approx(2 * stats.t.sf(abs(estimate / se), n - 1), rel=1e-12)
    assert (found.n, found.N, found.df) == (5, 8, 4)
    low, high = found.one_sided(0.05)
    assert high == pytest.approx(estimate + stats.t.ppf(0.95, n - 1) * se, rel=1e-12) and low < estimate < high


def test_lambda_zero_is_peoples_sample_alone_and_one_is_plain_ppi() -> None:
    rng = np.random.default_rng(1)
    y, f, rest = rng.random(30), rng.random(30), rng.random(200)
    alone = ppi_mean(y, f, rest, lam=0.0)
    ci = stats.ttest_1samp(y, 0.0).confidence_interval(0.95)
    assert alone.estimate == pytest.approx(y.mean()) and (alone.low, alone.high) == pytest.approx((ci.low, ci.high))
    plain = ppi_mean(y, f, rest, lam=1.0)
    assert plain.estimate == pytest.approx(rest.mean() + (y - f).mean(), rel=1e-12)  # ppi_py's point estimate at 1
    assert tuned_lambda(y, np.full(30, 0.5), np.full(200, 0.5)) == 0.0  # a judge that says nothing: people alone


def test_a_sample_without_spread_bounds_nothing() -> None:
    """People gave all 12 judged queries 0 and the judge says nothing useful (lambda 0): the estimate is 0, with no
    interval and no p, never a significant [0, 0]."""
    found = ppi_mean(np.zeros(12), np.full(12, 0.5), np.random.default_rng(2).random(30))
    assert found.estimate == 0.0 and found.lam == 0.0
    assert math.isnan(found.low) and math.isnan(found.high) and math.isnan(found.p)


def test_refused_where_nothing_can_be_corrected() -> None:
    with pytest.raises(ValueError, match="people judged 1 query"):
        ppi_mean(np.array([1.0]), np.array([1.0]), np.ones(5))
    with pytest.raises(ValueError, match="must pair up"):
        ppi_mean(np.ones(3), np.ones(4), np.ones(5))


def _judged(rng: np.random.Generator, total: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """People's values of systems A and B on ``total`` queries, and a judge's: noisy, and 0.1 too generous to B (it
    favours B's documents)."""
    truth_a = rng.beta(2, 3, total)
    truth_b = np.clip(truth_a + rng.normal(0.02, 0.1, total), 0, 1)
    return truth_a, truth_b, truth_a + rng.normal(0, 0.08, total), truth_b + 0.1 + rng.normal(0, 0.08, total)


def test_corrected_intervals_cover_the_mean_where_a_biased_judges_do_not() -> None:
    """Queries drawn afresh each trial (people judge 150 of 2,000 at random): the corrected 95% intervals of A's
    mean and of B - A cover their expectations (0.4 and about 0.02) at 0.95 +- 3 standard errors over 2,000 trials;
    the judge-only interval of B - A, off by the judge's 0.1, almost never does; and the corrected interval is
    narrower than people's sample alone."""
    rng = np.random.default_rng(61)
    trials, total, judged = 2000, 2000, 150
    expected_b = np.clip(rng.beta(2, 3, 400_000) + rng.normal(0.02, 0.1, 400_000), 0, 1).mean()  # B's expectation
    covered = {"mean": 0, "difference": 0, "judge only": 0}
    widths = {"ppi": 0.0, "people": 0.0}
    for _ in range(trials):
        truth_a, truth_b, judge_a, judge_b = _judged(rng, total)
        people, rest = np.arange(judged), np.arange(judged, total)  # the queries are iid: the first 150 are random
        a = ppi_mean(truth_a[people], judge_a[people], judge_a[rest])
        covered["mean"] += a.low <= 0.4 <= a.high
        d_true, d_judge = truth_b - truth_a, judge_b - judge_a
        d = ppi_mean(d_true[people], d_judge[people], d_judge[rest])
        covered["difference"] += d.low <= expected_b - 0.4 <= d.high
        only = stats.ttest_1samp(d_judge, 0.0).confidence_interval(0.95)
        covered["judge only"] += only.low <= expected_b - 0.4 <= only.high
        widths["ppi"] += d.high - d.low
        alone = ppi_mean(d_true[people], d_judge[people], d_judge[rest], lam=0.0)
        widths["people"] += alone.high - alone.low
    band = 3 * math.sqrt(0.05 * 0.95 / trials) + 0.003  # and the expectation's own Monte Carlo error
    assert abs(covered["mean"] / trials - 0.95) <= band, covered
    assert abs(covered["difference"] / trials - 0.95) <= band, covered
    assert covered["judge only"] / trials < 0.05, covered
    assert widths["ppi"] < widths["people"], widths


def test_over_a_fixed_set_of_queries_the_interval_is_conservative() -> None:
    """One set of 2,000 queries, people judging a random 150 of them each trial: the truth is the mean of people's
    values over all 2,000. PPI++ treats the judge-only queries as a sample of more, so it covers more than 95%."""
    rng = np.random.default_rng(62)
    trials, total, judged = 2000, 2000, 150
    truth_a, truth_b, judge_a, judge_b = _judged(rng, total)
    d_true, d_judge = truth_b - truth_a, judge_b - judge_a
    covered = 0
    for _ in range(trials):
        sample = rng.permutation(total)
        d = ppi_mean(d_true[sample[:judged]], d_judge[sample[:judged]], d_judge[sample[judged:]])
        covered += d.low <= d_true.mean() <= d.high
    assert covered / trials >= 0.95 - 3 * math.sqrt(0.05 * 0.95 / trials), covered


def test_a_stratified_estimate_by_hand() -> None:
    """Two strata, each corrected with its own lambda (cov_n(y, f) / ((1 + n / N) var(f over the stratum))), weighted
    by its share of the queries; se^2 the weighted sum of the strata's; Satterthwaite's df over them; written out
    here with numpy and scipy apart from harness's code."""
    rng = np.random.default_rng(7)
    parts = []
    for n, big, shift in ((6, 30, 0.1), (9, 15, -0.05)):
        y = rng.random(n)
        f = np.clip(y + shift + rng.normal(0, 0.2, n), 0, 1)
        parts.append((y, f, np.clip(rng.random(big) + shift, 0, 1)))
    weights = [36 / 60, 24 / 60]
    found = ppi_stratified(parts, weights)
    estimates, terms, dfs = [], [], []
    for (y, f, rest), w in zip(parts, weights, strict=True):
        n, big = y.size, rest.size
        lam = min(1.0, max(0.0, np.cov(y, f)[0, 1] / ((1 + n / big) * np.concatenate([f, rest]).var(ddof=1))))
        estimates.append(w * (lam * rest.mean() + (y - lam * f).mean()))
        terms.append(w * w * ((y - lam * f).var(ddof=1) / n + lam * lam * rest.var(ddof=1) / big))
        dfs.append(n - 1)
    variance = sum(terms)
    df = variance**2 / sum(t * t / d for t, d in zip(terms, dfs, strict=True))
    half = stats.t.ppf(0.975, df) * math.sqrt(variance)
    assert found.estimate == pytest.approx(sum(estimates), rel=1e-12)
    assert (found.low, found.high) == pytest.approx((sum(estimates) - half, sum(estimates) + half), rel=1e-12)
    assert found.df == pytest.approx(df, rel=1e-12) and (found.n, found.N) == (15, 45)
    with pytest.raises(ValueError, match="summing to 1"):
        ppi_stratified(parts, [0.5, 0.6])


def test_a_stratified_sample_corrected_as_one_covers_the_mean_and_taken_as_random_does_not() -> None:
    """People judge 40 of a rare stratum's 200 queries (where the judge is kind: +0.2) and 40 of the common one's
    1,800 (where it is fair): 2,000 trials. Corrected stratum by stratum, the 95% interval covers the mean over all
    2,000 queries at 0.95 +- 3 standard errors; pooled as if the 80 were a random sample, the rare stratum weighs
    ten times its share and the interval misses."""
    rng = np.random.default_rng(62)
    trials, covered, pooled = 2000, 0, 0
    for _ in range(trials):
        rare_y, common_y = rng.beta(2, 5, 200), rng.beta(5, 2, 1800)
        rare_f = np.clip(rare_y + 0.2 + rng.normal(0, 0.1, 200), 0, 1)
        common_f = np.clip(common_y + rng.normal(0, 0.1, 1800), 0, 1)
        truth = (rare_y.sum() + common_y.sum()) / 2000
        rare, common = rng.permutation(200), rng.permutation(1800)
        strata = [
            (rare_y[rare[:40]], rare_f[rare[:40]], rare_f[rare[40:]]),
            (common_y[common[:40]], common_f[common[:40]], common_f[common[40:]]),
        ]
        found = ppi_stratified(strata, [0.1, 0.9])
        covered += found.low <= truth <= found.high
        as_random = ppi_mean(
            np.concatenate([s[0] for s in strata]), np.concatenate([s[1] for s in strata]), np.concatenate([s[2] for s in strata])
        )
        pooled += as_random.low <= truth <= as_random.high
    assert abs(covered / trials - 0.95) <= 3 * math.sqrt(0.05 * 0.95 / trials), covered
    assert pooled / trials < 0.5, pooled
