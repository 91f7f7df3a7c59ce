"""A/A calibration, family-wise error and power: deterministic, seeded simulations (issues 4 and 10).

The audit's four per-query shapes (nDCG-like continuous, P@10, RR, binary success) at
n = 25, 50 and 200 queries, 10,000 A/A trials each: the standard error of a 5%
rejection rate is then 0.0022, so [0.04, 0.06] is a band of about 4.5 standard errors
that a miscalibrated test (the old percentile bootstrap: 0.066 at n = 25) fails.
Binary differences take few values, so the exact tests (randomisation, Wilcoxon) may
be conservative there: only their upper bound is checked.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from harness.stats import paired
from harness.stats.correction import holm
from harness.stats.keyed import numbered_keys
from tests.stats.simulate import per_query_scores

TRIALS = 10_000


def _rejection_rates(d: np.ndarray, seed: int) -> dict[str, float]:
    return {
        "t": float((paired.paired_t(d).p < 0.05).mean()),
        "wilcoxon": float((paired.wilcoxon(d) < 0.05).mean()),
        "randomization": float((paired.randomization(d, numbered_keys([seed, 1], np.shape(d)[-1]), 1000) < 0.05).mean()),
        "bootstrap": float((paired.bootstrap(d, numbered_keys([seed, 2], np.shape(d)[-1]), 1000).p < 0.05).mean()),
    }


@pytest.mark.slow
@pytest.mark.parametrize("n", [25, 50, 200])
@pytest.mark.parametrize("shape", ["continuous", "precision", "rr", "binary"])
def test_a_a_size_and_interval_coverage(shape: str, n: int) -> None:
    rng = np.random.default_rng([1, n, len(shape)])
    x = per_query_scores(shape, rng, TRIALS, n)
    d = x[1] - x[0]  # A/A: the true mean difference is 0
    rates = _rejection_rates(d, seed=n)
    for test, rate in rates.items():
        conservative_ok = shape == "binary" and test in ("randomization", "wilcoxon")
        assert (0.0 if conservative_ok else 0.04) <= rate <= 0.06, (shape, n, test, rate)
    t = paired.paired_t(d)
    boot = paired.bootstrap(d, numbered_keys([n, 3], np.shape(d)[-1]), 1000)
    for name, low, high in (("t", t.ci_low, t.ci_high), ("bootstrap", boot.ci_low, boot.ci_high)):
        coverage = float(((low <= 0) & (high >= 0)).mean())
        assert 0.94 <= coverage <= 0.96, (shape, n, name, coverage)


@pytest.mark.slow
def test_a_a_comparisons_at_5000_queries() -> None:
    rng = np.random.default_rng([1, 5000, 10])
    x = per_query_scores("continuous", rng, 2000, 5000)
    for test, rate in _rejection_rates(x[1] - x[0], seed=5000).items():
        assert 0.035 <= rate <= 0.065, (test, rate)


def _in_chunks(test: Callable[[np.ndarray], np.ndarray], flat: np.ndarray, rows: int) -> np.ndarray:
    """``test`` over ``rows`` rows at a time: a row's p depends on its own values and the queries' keys only, so the
    p-values are the whole call's, bit for bit, and the resampling's memory is the chunk's (rows x resamples)."""
    return np.concatenate([test(flat[start : start + rows]) for start in range(0, len(flat), rows)])


def _grid_tests(n: int) -> dict[str, Callable[[np.ndarray], np.ndarray]]:
    # 4,000 resamples: the smallest p, 1/4001, can pass Holm's first step (0.05/90); 1,000 could not.
    return {
        "t": lambda d: paired.paired_t(d).p,
        "randomization": lambda d: paired.randomization(d, numbered_keys(5, n), 4000),
        "bootstrap": lambda d: paired.bootstrap(d, numbered_keys(6, n), 4000).p,
        "wilcoxon": paired.wilcoxon,
    }


def test_the_grid_s_p_values_in_chunks_are_the_whole_call_s_bit_for_bit() -> None:
    """What lets the grid below run in chunks of rows: the same p-values as one call over every row."""
    d = np.random.default_rng(78).normal(0.02, 0.2, size=(300, 50))
    for test in _grid_tests(50).values():
        assert np.array_equal(_in_chunks(test, d, 70), test(d), equal_nan=True)


@pytest.mark.slow
def test_family_wise_error_over_a_10_system_by_10_measure_grid() -> None:
    """9 systems against a baseline on 10 correlated measures, all truly equal: Holm keeps FWER <= 0.05."""
    experiments, n, systems, measures = 300, 50, 10, 10
    rng = np.random.default_rng(77)
    difficulty = rng.normal(size=(experiments, 1, 1, n))
    quality = difficulty + 0.8 * rng.normal(size=(experiments, systems, 1, n))
    # measures: the same latent quality seen through different noise and links (correlated)
    values = 1 / (1 + np.exp(-(quality + 0.3 * rng.normal(size=(experiments, systems, measures, n)))))
    diffs = (values[:, 1:] - values[:, :1]).reshape(experiments, (systems - 1) * measures, n)
    flat = diffs.reshape(-1, n)
    # 27,000 rows in one call: the tests take them a block at a time (once 15 arrays of 27,000 x 4,000, 13 GB)
    p_values = {name: test(flat) for name, test in _grid_tests(n).items()}
    for test, p in p_values.items():
        per_experiment = p.reshape(experiments, -1)
        any_rejection = np.array([(holm(row) < 0.05).any() for row in per_experiment])
        uncorrected = (per_experiment < 0.05).any(axis=1).mean()
        assert any_rejection.mean() <= 0.05, (test, any_rejection.mean())
        assert uncorrected > 0.5, "without correction the family-wise error is far above 5%"
    assert 0.05 / diffs.shape[1] > 1 / 4001, "the resampling tests could reject after correction: the check means something"


@pytest.mark.parametrize("shape", ["continuous", "precision"])
def test_an_injected_difference_is_detected(shape: str) -> None:
    rng = np.random.default_rng([9, len(shape)])
    x = per_query_scores(shape, rng, 500, 50, shift=0.5)
    rates = _rejection_rates(x[1] - x[0], seed=3)
    for test, power in rates.items():
        assert power > 0.6, (shape, test, power)
