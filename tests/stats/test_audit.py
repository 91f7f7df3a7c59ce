"""One test per finding of the statistics audit (issue 10), each on the audit's counter-example."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from harness.comparison.compare import CompareSettings, compare
from harness.errors import ComparisonError
from harness.evaluation.results import PerQuery, RunResult
from harness.measures.parse import parse_measure
from harness.stats import paired
from harness.stats.keyed import numbered_keys


def _result(system: str, values: dict[str, list[float]], dataset: str = "d", ids: list[str] | None = None) -> RunResult:
    measures = tuple(parse_measure(m) for m in values)
    matrix = np.array(list(values.values()), dtype=np.float64).T
    n = matrix.shape[0]
    qids = np.array(ids or [f"q{i:03d}" for i in range(n)], dtype=object)
    return RunResult(
        dataset, system, PerQuery(system, qids, measures, matrix, np.ones(n, bool)), np.full(n, "", dtype=object), {}
    )


def _compare(results: list[RunResult], **settings: object) -> list[dict[str, object]]:
    measures = results[0].per_query.measures
    settings = {"permutations": 2000, "resamples": 2000, **settings}
    return [r.to_record() for r in compare(results, measures, CompareSettings(**settings))]  # type: ignore[arg-type]


# 1. NaN is an error (or, with nan: drop, the query leaves that comparison), never a p-value


def test_nan_is_refused_by_every_test() -> None:
    d = np.array([[0.1, np.nan, 0.2, 0.3] * 5])
    for test in (
        lambda: paired.paired_t(d),
        lambda: paired.wilcoxon(d),
        lambda: paired.randomization(d, numbered_keys(0, np.shape(d)[-1]), 100),
        lambda: paired.bootstrap(d, numbered_keys(0, np.shape(d)[-1]), 100),
    ):
        with pytest.raises(ValueError, match="NaN"):
            test()


def test_nan_in_a_comparison_names_the_system_measure_and_query() -> None:
    rng = np.random.default_rng(0)
    a = list(rng.random(30))
    b = [*a[:7], float("nan"), *a[8:]]  # the audit's case: one NaN made the resampling p-values 1/(B+1)
    with pytest.raises(ComparisonError, match=r"b has no value \(NaN\) for AP on query 'q007'.*stats.nan: drop"):
        _compare([_result("a", {"AP": a}), _result("b", {"AP": b})], mode="all_pairs")


def test_nan_drop_leaves_the_query_out_of_that_comparison_only() -> None:
    rng = np.random.default_rng(0)
    a, p5 = rng.random(30), rng.random(30)
    b = a + 0.05
    b[7] = np.nan
    rows = _compare(
        [_result("a", {"AP": list(a), "P@5": list(p5)}), _result("b", {"AP": list(b), "P@5": list(p5)})],
        mode="all_pairs",
        nan="drop",
    )
    ap, p = rows
    assert (ap["n_queries"], ap["n_dropped_nan"]) == (29, 1) and (p["n_queries"], p["n_dropped_nan"]) == (30, 0)
    assert ap["delta"] == pytest.approx(0.05) and ap["p_randomization"] < 0.01  # a real difference, tested on 29 queries
    assert p["p_randomization"] == 1.0  # identical on P@5


# 2. GMAP and GMBpref are compared on the geometric mean


def test_gmap_is_compared_on_the_geometric_mean() -> None:
    # b has the higher arithmetic mean (0.55 vs 0.40) but three near-zero APs: its GMAP is lower.
    a = [0.4] * 30
    b = [0.001] * 3 + [0.6] * 27
    (row,) = _compare([_result("a", {"GMAP": a}), _result("b", {"GMAP": b})], mode="all_pairs")
    gm_a, gm_b = 0.4, float(np.exp((3 * np.log(0.001) + 27 * np.log(0.6)) / 30))
    assert row["mean_a"] == pytest.approx(gm_a) and row["mean_b"] == pytest.approx(gm_b)
    assert row["delta"] == pytest.approx(gm_b - gm_a) and row["delta"] < 0
    log_diffs = np.log(np.array(b)) - np.log(np.array(a))
    assert row["p_t"] == pytest.approx(stats.ttest_1samp(log_diffs, 0).pvalue, rel=1e-10)
    assert row["ci_low_t"] <= row["delta"] <= row["ci_high_t"]
    assert row["wins"] == 27 and row["losses"] == 3


def test_sum_aggregates_compare_sums() -> None:
    a, b = [10.0, 20.0, 30.0, 40.0], [12.0, 21.0, 33.0, 44.0]
    (row,) = _compare([_result("a", {"NumRet": a}), _result("b", {"NumRet": b})], mode="all_pairs")
    assert (row["mean_a"], row["mean_b"], row["delta"]) == (100.0, 110.0, 10.0)
    t = stats.ttest_rel(b, a).confidence_interval()
    assert row["ci_low_t"] == pytest.approx(4 * t.low) and row["ci_high_t"] == pytest.approx(4 * t.high)


# 3. The bootstrap holds its level; below 10 queries it is not computed


def test_few_same_sign_differences_are_not_significant() -> None:
    d = np.array([[0.1, 0.2, 0.3]])  # the audit's example: exactly 2 of 8 sign assignments are as extreme
    assert paired.randomization(d, numbered_keys(0, np.shape(d)[-1]), 10_000)[0] == 0.25
    assert paired.wilcoxon(d)[0] == 0.25
    boot = paired.bootstrap(d, numbered_keys(0, np.shape(d)[-1]), 10_000)
    assert np.isnan(boot.p[0]) and np.isnan(boot.ci_low[0])  # refused, not 1/(B+1)
    for k in range(2, 6):
        rows = _compare([_result("a", {"AP": [0.1] * k}), _result("b", {"AP": [0.5] * k})], mode="all_pairs", primary="bootstrap")
        assert not rows[0]["significant"] and rows[0]["few_queries"]


# 4. Wilcoxon decides its method per comparison


def test_wilcoxon_of_a_pair_does_not_depend_on_other_rows() -> None:
    rng = np.random.default_rng(12)
    untouched = rng.normal(0.1, 1, size=20)
    tied = np.round(rng.normal(0, 1, size=20), 1)  # ties: scipy's block-wide choice switched methods here
    alone = paired.wilcoxon(untouched[None])[0]
    assert paired.wilcoxon(np.vstack([untouched, tied]))[0] == alone
    assert alone == pytest.approx(stats.wilcoxon(untouched, method="exact").pvalue, rel=1e-12)


def _exact_signed_rank(d: np.ndarray) -> float:
    """Brute force: every sign assignment of the non-zero |d| mid-ranks."""
    nz = d[d != 0]
    ranks = stats.rankdata(np.abs(nz))
    w = ranks[nz > 0].sum()
    total = ranks.sum()
    sums = np.array([np.dot(signs, ranks) for signs in itertools.product((0, 1), repeat=nz.size)])
    low = min(w, total - w)
    return float(min(1.0, 2 * np.mean(sums <= low + 1e-9)))


@pytest.mark.parametrize("seed", range(4))
def test_wilcoxon_with_ties_and_zeros_is_exact(seed: int) -> None:
    d = np.random.default_rng(seed).integers(-3, 4, size=13) / 10  # zeros dropped, |d| tied
    assert paired.wilcoxon(d)[0] == pytest.approx(_exact_signed_rank(d), rel=1e-12)


def test_wilcoxon_above_the_exact_range_is_scipys_normal_approximation() -> None:
    d = np.round(np.random.default_rng(5).normal(0.1, 1, size=200), 1)
    assert paired.wilcoxon(d)[0] == pytest.approx(stats.wilcoxon(d, method="approx").pvalue, rel=1e-10)


def test_wilcoxon_cost_is_bounded_with_ties() -> None:
    d = np.random.default_rng(6).integers(-2, 3, size=(200, 50)) / 10  # 200 comparisons, exact with ties
    import time

    start = time.perf_counter()
    paired.wilcoxon(d)
    assert time.perf_counter() - start < 5.0  # scipy's permutation method took about 1.5 s per comparison at n <= 13


# 5. A comparison's random stream comes from its identity


def test_p_values_do_not_depend_on_other_systems_or_datasets() -> None:
    rng = np.random.default_rng(7)
    base, other = rng.random(40), rng.random(40)
    a = {"AP": list(base), "P@5": list(rng.random(40))}
    b = {"AP": list(base + rng.normal(0.02, 0.1, 40)), "P@5": list(rng.random(40))}
    alone = _compare([_result("a", a), _result("b", b)], mode="all_pairs")
    crowded = _compare(
        [
            _result("z", {"AP": list(other), "P@5": list(other)}, dataset="first"),
            _result("y", {"AP": list(base), "P@5": list(other)}, dataset="first"),
            _result("c", {"AP": list(other), "P@5": list(other)}),
            _result("a", a),
            _result("b", b),
        ],
        mode="all_pairs",
    )
    crowded = [r for r in crowded if (r["dataset"], r["system_a"], r["system_b"]) == ("d", "a", "b")]
    for one, two in zip(alone, crowded, strict=True):
        for key in ("p_randomization", "p_bootstrap", "ci_low_bootstrap", "ci_high_bootstrap", "p_wilcoxon", "p_t"):
            assert one[key] == two[key], key


# 6. Degenerate effect size


def test_constant_non_zero_difference_has_nan_effect_size() -> None:
    a = np.random.default_rng(8).random(30)
    b = a + 0.1  # constant up to rounding: d_z was 7e15
    (row,) = _compare([_result("a", {"AP": list(a)}), _result("b", {"AP": list(b)})], mode="all_pairs")
    assert np.isnan(row["effect_size"]) and row["p_t"] == 0.0 and row["delta"] == pytest.approx(0.1)


# 7. resolution_limited knows the exact sign-flip floor


@pytest.mark.parametrize("n", [5, 6, 7])
def test_small_samples_are_flagged_when_the_exact_test_cannot_reach_alpha(n: int) -> None:
    # one comparison, no correction: the exact randomisation p is at least 2 / 2^n, which is 0.031 at n = 5
    a, b = [0.2] * n, [0.9] * n
    (row,) = _compare([_result("a", {"AP": a}), _result("b", {"AP": b})], mode="all_pairs", correction="none")
    assert row["p_randomization"] == pytest.approx(2 / 2**n)
    assert row["resolution_limited"] == (2 / 2**n >= 0.05)
    rows = _compare(
        [_result(s, {"AP": v}) for s, v in (("a", a), ("b", b), ("c", [0.8] * n), ("e", [0.7] * n))],
        baseline="a",
        mode="baseline",
    )
    floor = 2 / 2**n
    assert all(r["resolution_limited"] == (floor * 3 >= 0.05) for r in rows)  # Holm over 3 pairs: n = 5, 6 flagged


def test_bootstrap_floor_is_flagged() -> None:
    rng = np.random.default_rng(9)
    results = [_result(s, {f"P@{k}": list(rng.random(30)) for k in range(1, 7)}) for s in "ab"]
    rows = _compare(results, mode="all_pairs", primary="bootstrap", resamples=100, family="grid")
    assert all(r["resolution_limited"] for r in rows)  # 6 x 1/101 >= 0.05


# 8. Tukey HSD states its queries


def test_tukey_reports_the_queries_every_system_shares() -> None:
    rng = np.random.default_rng(10)
    ids = [f"q{i:03d}" for i in range(30)]
    results = [
        _result("a", {"AP": list(rng.random(30))}, ids=ids),
        _result("b", {"AP": list(rng.random(30))}, ids=ids),
        _result("c", {"AP": list(rng.random(25))}, ids=ids[:25]),  # answered 25 queries only (queries: intersection)
    ]
    rows = _compare(results, mode="all_pairs")
    ab = next(r for r in rows if (r["system_a"], r["system_b"]) == ("a", "b"))
    assert ab["n_queries"] == 30 and ab["n_queries_tukey"] == 25 and not np.isnan(ab["p_tukey_hsd"])
