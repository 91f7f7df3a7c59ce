"""Resampling in bounded memory, on any number of threads, with the same bits.

``paired.run_tests`` and ``anova.run`` take their rows (comparisons, measures) a block
at a time, sized by a byte budget; each block keeps the whole's bound on the sums, so
its limbs, and every bit of its results, are the whole call's. The draws are split over
``HARNESS_THREADS`` threads, each writing its own replicates.
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from harness.errors import InputFormatError
from harness.kernels._parallel import threads
from harness.stats import anova, keyed, paired
from tests.stats.test_exact import _differences, _same


def _masked_block(rows: int, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    d = np.concatenate([_differences(rng, n) for _ in range(-(-rows // 7))])[:rows]
    mask = rng.random(d.shape) < 0.85
    mask[3] = np.arange(n) < 6  # too few queries for the bootstrap
    mask[5] = False  # none at all
    return d, mask


def test_blocks_of_rows_give_the_whole_calls_bits(monkeypatch: pytest.MonkeyPatch) -> None:
    d, mask = _masked_block(23, 80, 1)
    keys = keyed.numbered_keys(4, d.shape[1])
    whole = paired.run_tests(d, keys, paired.TESTS, 3000, 2000, mask=mask)
    plan = paired.Plan.of(paired.scan(d, mask), paired.TESTS, 3000, 2000)
    assert plan.rows_at_a_time(d.shape[1]) >= d.shape[0], "the whole call is one block"
    for budget in (1, 2_000_000):  # a row at a time; a few rows at a time, the last block shorter
        monkeypatch.setattr(paired, "ROWS_BUDGET", budget)
        assert plan.rows_at_a_time(d.shape[1]) < d.shape[0]
        _same(paired.run_tests(d, keys, paired.TESTS, 3000, 2000, mask=mask), whole)


def test_blocks_of_measures_give_the_whole_calls_bits(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(2)
    x = rng.normal(0.5, 0.2, size=(9, 4, 60)) * np.array([1, 1e-6, 1e6, 1, 1, 1, 1, 1, 1])[:, None, None]
    mask = rng.random((9, 60)) < 0.9
    keys = keyed.numbered_keys(8, 60)
    whole_anova, whole_tukey = anova.run(x, keys, 1500, mask=mask)
    monkeypatch.setattr(anova, "MEASURES_BUDGET", 1)
    blocked_anova, blocked_tukey = anova.run(x, keys, 1500, mask=mask)
    assert blocked_anova == whole_anova
    assert whole_tukey is not None and blocked_tukey is not None
    np.testing.assert_array_equal(blocked_tukey, whole_tukey, strict=True)


def _peak_bytes(call: object) -> int:
    tracemalloc.start()  # numpy reports its buffers to tracemalloc
    try:
        call()  # type: ignore[operator]
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_the_resampling_memory_does_not_grow_with_the_rows() -> None:
    """At 4,000 resamples one row's bootstrap and randomisation arrays take about 1 MB: 3,000 rows at once held
    about 1.4 GB; in blocks the peak is a block's, the same for 600 rows as for 3,000."""
    keys = keyed.numbered_keys(5, 50)
    rng = np.random.default_rng(3)
    peaks = {}
    for rows in (600, 3000):
        d = rng.normal(0.01, 0.2, size=(rows, 50))
        peaks[rows] = _peak_bytes(lambda d=d: paired.run_tests(d, keys, paired.TESTS, 4000, 4000))
    assert peaks[3000] < 1.2 * peaks[600], peaks
    assert peaks[3000] < 2 * paired.ROWS_BUDGET, peaks


def test_the_tukey_memory_does_not_grow_with_the_measures(monkeypatch: pytest.MonkeyPatch) -> None:
    """With a 32 MiB budget, 40 measures are a few blocks and 160 many: the peak is a block's for both."""
    monkeypatch.setattr(anova, "MEASURES_BUDGET", 32 << 20)
    keys = keyed.numbered_keys(6, 40)
    rng = np.random.default_rng(4)
    peaks = {}
    for measures in (40, 160):
        x = rng.normal(0.5, 0.2, size=(measures, 10, 40))
        peaks[measures] = _peak_bytes(lambda x=x: anova.run(x, keys, 4000))
    assert peaks[160] < 1.3 * peaks[40], peaks
    assert peaks[160] < 2 * anova.MEASURES_BUDGET, peaks


def test_one_two_and_four_threads_give_the_same_values(monkeypatch: pytest.MonkeyPatch) -> None:
    d, mask = _masked_block(14, 3000, 5)  # enough replicates and queries for every kernel to split
    ids = np.array([f"u{i}" for i in range(d.shape[1])], dtype=object)
    x = np.random.default_rng(6).normal(0.5, 0.2, size=(3, 5, d.shape[1]))
    results = []
    for count in (1, 2, 4):
        monkeypatch.setenv("HARNESS_THREADS", str(count))
        assert threads() == count
        keys = keyed.query_keys(9, ("ratings", "all"), ids)
        results.append((keys, paired.run_tests(d, keys, paired.TESTS, 5000, 5000, mask=mask), anova.run(x, keys, 3000)))
    for keys, tested, (f_tests, tukey) in results[1:]:
        np.testing.assert_array_equal(keys, results[0][0], strict=True)
        _same(tested, results[0][1])
        assert f_tests == results[0][2][0]
        np.testing.assert_array_equal(tukey, results[0][2][1], strict=True)


@pytest.mark.parametrize("text", ["0", "two", "-1", ""])
def test_a_bad_thread_count_is_refused_with_its_variable(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    monkeypatch.setenv("HARNESS_THREADS", text)
    with pytest.raises(InputFormatError, match="HARNESS_THREADS"):
        threads()
