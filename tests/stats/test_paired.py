"""Each test against scipy.stats on small inputs; corrections against hand-computed examples."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from harness.stats import paired
from harness.stats.anova import randomized_tukey_hsd, two_way_anova
from harness.stats.correction import benjamini_hochberg, bonferroni, correct, holm
from harness.stats.keyed import numbered_keys, poisson_matrix


@pytest.fixture
def pairs() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(3)
    a = rng.random((6, 30))
    b = a + rng.normal(0.03, 0.1, size=a.shape)
    return a, b


def test_t_test_agrees_with_ttest_rel(pairs: tuple[np.ndarray, np.ndarray]) -> None:
    a, b = pairs
    ours = paired.paired_t(b - a)
    ref = stats.ttest_rel(b, a, axis=1)
    np.testing.assert_allclose(ours.statistic, ref.statistic, rtol=1e-12)
    np.testing.assert_allclose(ours.p, ref.pvalue, rtol=1e-10)
    ci = ref.confidence_interval(0.95)
    np.testing.assert_allclose(ours.ci_low, ci.low, rtol=1e-10)
    np.testing.assert_allclose(ours.ci_high, ci.high, rtol=1e-10)


def test_wilcoxon_agrees_with_scipy(pairs: tuple[np.ndarray, np.ndarray]) -> None:
    a, b = pairs
    ref = [stats.wilcoxon(b[i], a[i]).pvalue for i in range(len(a))]
    np.testing.assert_allclose(paired.wilcoxon(b - a), ref, rtol=1e-12)


def test_randomization_agrees_with_exact_permutation_test() -> None:
    """For 10 queries scipy enumerates all 2^10 sign flips; ours samples 20,000 of them."""
    rng = np.random.default_rng(11)
    a = rng.random((4, 10))
    b = a + rng.normal([[0.0], [0.05], [0.1], [0.2]], 0.1, size=a.shape)
    ours = paired.randomization(b - a, numbered_keys(1, np.shape(b - a)[-1]), permutations=20_000)
    for i in range(4):
        ref = stats.permutation_test(
            (b[i], a[i]), lambda x, y: np.mean(x - y), permutation_type="samples", n_resamples=np.inf, alternative="two-sided"
        )
        tolerance = 4 * np.sqrt(ref.pvalue * (1 - ref.pvalue) / 20_000) + 2 / 20_001
        assert abs(ours[i] - ref.pvalue) <= tolerance, (i, ours[i], ref.pvalue)


def _slow_studentised_bootstrap(d: np.ndarray, keys: np.ndarray, resamples: int) -> tuple[float, float, float]:
    """The textbook bootstrap-t (Efron & Tibshirani 1993, ch. 12.5), symmetric form, one resample at a time, each
    resample built as a sample: query q repeated w_qr times, w_qr its keyed Poisson(1) weight."""
    n = d.size
    mean, se = d.mean(), d.std(ddof=1) / np.sqrt(n)
    t_star = []
    for r in range(resamples):
        sample = np.repeat(d, poisson_matrix(keys, r, 1)[0].astype(np.int64))
        t_star.append(abs(sample.mean() - mean) / (sample.std(ddof=1) / np.sqrt(sample.size)))
    t_arr = np.array(t_star)
    p = (1 + np.sum(t_arr >= abs(mean) / se - 1e-12)) / (resamples + 1)
    q = np.sort(t_arr)[int(np.ceil(0.95 * (resamples - 1)))]
    return float(p), float(mean - q * se), float(mean + q * se)


def test_bootstrap_agrees_with_the_textbook_studentised_bootstrap(pairs: tuple[np.ndarray, np.ndarray]) -> None:
    a, b = pairs
    d = b - a
    keys = numbered_keys(2, d.shape[1])
    ours = paired.bootstrap(d, keys, resamples=3000)
    for i in range(len(a)):
        p, low, high = _slow_studentised_bootstrap(d[i], keys, 3000)
        assert ours.p[i] == pytest.approx(p, abs=1e-12)
        assert ours.ci_low[i] == pytest.approx(low, rel=1e-9) and ours.ci_high[i] == pytest.approx(high, rel=1e-9)


def test_resampling_is_reproducible_and_seeded(pairs: tuple[np.ndarray, np.ndarray]) -> None:
    a, b = pairs
    one = paired.randomization(b - a, numbered_keys(7, np.shape(b - a)[-1]), 2000)
    two = paired.randomization(b - a, numbered_keys(7, np.shape(b - a)[-1]), 2000)
    other = paired.randomization(b - a, numbered_keys(8, np.shape(b - a)[-1]), 2000)
    np.testing.assert_array_equal(one, two)
    assert not np.array_equal(one, other)
    assert (one >= 1 / 2001).all()  # (b + 1) / (B + 1): never 0


def test_identical_systems() -> None:
    d = np.zeros((3, 20))
    assert (paired.paired_t(d).p == 1).all()
    assert (paired.wilcoxon(d) == 1).all()
    assert (paired.randomization(d, numbered_keys(0, np.shape(d)[-1]), 500) == 1).all()
    boot = paired.bootstrap(d, numbered_keys(0, np.shape(d)[-1]), 500)
    assert (boot.p == 1).all() and (boot.ci_low == 0).all() and (boot.ci_high == 0).all()
    assert (paired.effect_size(d) == 0).all()


def test_one_query_and_zero_variance() -> None:
    assert np.isnan(paired.paired_t(np.array([[0.5]])).p).all()
    constant = np.full((1, 10), 0.1)
    assert paired.paired_t(constant).p[0] == 0.0
    assert np.isnan(paired.effect_size(constant)[0])


def test_effect_size_and_win_tie_loss() -> None:
    d = np.array([[0.2, -0.1, 0.0, 0.3]])
    assert paired.effect_size(d)[0] == pytest.approx(d.mean() / d.std(ddof=1))
    tested = paired.run_tests(d, None, ("t",))  # wins, ties, losses: positive, n - nonzero, nonzero - positive
    wins, ties = int(tested.positive[0]), int(tested.n[0] - tested.nonzero[0])
    assert [wins, ties, int(tested.nonzero[0] - tested.positive[0])] == [2, 1, 1]


def test_corrections_hand_computed() -> None:
    p = np.array([0.01, 0.04, 0.03, 0.005])
    # Holm: sorted 0.005*4=0.02, 0.01*3=0.03, 0.03*2=0.06, 0.04*1=0.04 -> monotone 0.06
    np.testing.assert_allclose(holm(p), [0.03, 0.06, 0.06, 0.02])
    np.testing.assert_allclose(bonferroni(p), [0.04, 0.16, 0.12, 0.02])
    # BH: sorted 0.005*4/1=0.02, 0.01*4/2=0.02, 0.03*4/3=0.04, 0.04*4/4=0.04
    np.testing.assert_allclose(benjamini_hochberg(p), [0.02, 0.04, 0.04, 0.02])
    np.testing.assert_allclose(benjamini_hochberg(p), stats.false_discovery_control(p))
    out = correct(np.array([0.02, np.nan, 0.03]), "holm")  # NaN stays out of the family
    np.testing.assert_allclose(out, [0.04, np.nan, 0.04])
    np.testing.assert_allclose(holm(np.array([0.5, 0.9])), [1.0, 1.0])


def _slow_anova(x: np.ndarray) -> tuple[float, float]:
    m, n = x.shape
    grand = sum(sum(r) for r in x) / (m * n)
    rows = [sum(r) / n for r in x]
    cols = [sum(x[i][j] for i in range(m)) / m for j in range(n)]
    ss_a = n * sum((r - grand) ** 2 for r in rows)
    ss_e = sum((x[i][j] - rows[i] - cols[j] + grand) ** 2 for i in range(m) for j in range(n))
    f = (ss_a / (m - 1)) / (ss_e / ((m - 1) * (n - 1)))
    return f, float(stats.f.sf(f, m - 1, (m - 1) * (n - 1)))


def test_two_way_anova_against_the_textbook_formula() -> None:
    x = np.random.default_rng(4).random((4, 12))
    result = two_way_anova(x)
    f, p = _slow_anova(x)
    assert result.f == pytest.approx(f, rel=1e-12) and result.p == pytest.approx(p, rel=1e-10)


def test_randomized_tukey_against_exact_enumeration() -> None:
    """3 systems x 4 queries: all 6^4 = 1296 shuffles enumerated give the exact p-values."""
    x = np.array([[0.1, 0.5, 0.3, 0.9], [0.4, 0.6, 0.2, 0.8], [0.7, 0.9, 0.6, 1.0]])
    means = x.mean(axis=1)
    perms = list(itertools.permutations(range(3)))
    ranges = []
    for choice in itertools.product(perms, repeat=4):
        shuffled = np.array([[x[choice[q][i], q] for q in range(4)] for i in range(3)]).mean(axis=1)
        ranges.append(shuffled.max() - shuffled.min())
    ranges_arr = np.array(ranges)
    ours = randomized_tukey_hsd(x, numbered_keys(0, 4), trials=40_000)
    for i, j in [(0, 1), (0, 2), (1, 2)]:
        exact = np.mean(ranges_arr >= abs(means[i] - means[j]) - 1e-12)
        assert abs(ours[i, j] - exact) < 4 * np.sqrt(exact * (1 - exact) / 40_000) + 1e-4, (i, j, ours[i, j], exact)
    assert ours[0, 1] == ours[1, 0]


def test_the_randomization_p_counts_the_observed_statistic() -> None:
    """(b + 1) / (B + 1), exactly: 30 users all better by the same amount. A sign-flip draw reaches the observed
    |mean| only when every sign is the same (2 in 2^30), so none of 2,000 draws does, b = 0 and p = 1 / 2001; a p
    without the +1 would be 0, one over B 1 / 2000."""
    d = np.full((1, 30), 0.1)
    p = paired.randomization(d, numbered_keys(3, 30), 2000)
    assert p[0] == 1 / 2001
