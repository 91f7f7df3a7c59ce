"""``stats.resampling: auto``: the randomization test and the bootstrap run only on comparisons where the t-test
cannot be trusted, t deciding the others. The rule is checked against its formula written out with scipy, the rows
still resampled against ``always`` bit for bit, the joint correction of a family decided by two tests against
statsmodels, and the error rates of what auto decides by simulation, on the shapes changes take."""

from __future__ import annotations

import io
import math

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

import harness
from harness.cli import main
from harness.comparison.compare import CompareSettings, compare, resampled_rows, t_trusted_from
from harness.errors import HarnessError
from harness.evaluation.results import PerQuery, RunResult
from harness.measures.parse import parse_measure
from harness.stats import bounds, keyed, paired

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _result(system: str, values: dict[str, np.ndarray]) -> RunResult:
    measures = tuple(parse_measure(m) for m in values)
    matrix = np.array(list(values.values())).T
    n = matrix.shape[0]
    ids = np.array([f"u{i:05d}" for i in range(n)], dtype=object)
    return RunResult("d", system, PerQuery(system, ids, measures, matrix, np.ones(n, bool)), np.full(n, "", object), {})


def _expected_trust(x: np.ndarray, alpha: float) -> bool:
    """The rule written out: each tail at alpha / 2, the skewness (scipy's) less its delta-method standard error, the
    first Edgeworth term within a tenth of alpha / 2, some value changed and a spread; at least 597 values."""
    n = x.size
    if n < 597 or np.count_nonzero(np.abs(x) > 1e-12 * np.abs(x).max()) == 0 or x.std(ddof=1) <= 1e-12 * np.abs(x).max():
        return False
    mu = {k: stats.moment(x, k) for k in (2, 3, 4, 5, 6)}
    var_g = (
        (mu[6] - mu[3] ** 2 - 6 * mu[4] * mu[2] + 9 * mu[2] ** 3) / mu[2] ** 3
        - 3 * mu[3] * (mu[5] - 4 * mu[3] * mu[2]) / mu[2] ** 4
        + 9 / 4 * mu[3] ** 2 * (mu[4] - mu[2] ** 2) / mu[2] ** 5
    )
    se = max(math.sqrt(6 / n), math.sqrt(max(var_g, 0) / n))
    g = max(0.0, abs(stats.skew(x, bias=True)) - se)
    z = stats.norm.ppf(1 - alpha / 2)
    excess = g * (2 * z * z + 1) * stats.norm.pdf(z) / (6 * math.sqrt(n))
    return bool(excess <= 0.1 * alpha / 2)


def test_the_rule_is_its_formula_row_by_row() -> None:
    rng = np.random.default_rng(11)
    n = 800
    rows = [
        rng.normal(0.01, 0.1, n),  # spread: trusted
        rng.gamma(30.0, 1.0, n) - 30.0,  # a little skewed
        rng.gamma(3.0, 1.0, n) - 3.0,  # skewed
        rng.exponential(1.0, n) - 1.0,  # skewed, near the limit
        np.where(rng.random(n) < 0.02, 0.5, 0.0),  # a change that touches 2% of the users
        np.where(rng.random(n) < 0.3, rng.normal(0, 0.2, n), 0.0),  # 30% changed, symmetric
        np.zeros(n),  # nothing changed
        np.full(n, 0.1),  # constant: no spread
    ]
    diffs = np.stack(rows)
    mask = np.ones(diffs.shape, dtype=bool)
    mask[1, 250:] = False  # 250 users: too few
    got = bounds.t_trusted_rows(diffs, mask, 0.05, t_trusted_from(0.05))
    expected = [_expected_trust(d[m], 0.05) for d, m in zip(diffs, mask, strict=True)]
    assert got.tolist() == expected
    assert expected[0] and not expected[1] and not expected[4] and not expected[6] and not expected[7]
    # each row's answer is its own: alone, reversed, or among others
    for i in range(len(rows)):
        alone = bounds.t_trusted_rows(diffs[i : i + 1], mask[i : i + 1], 0.05, t_trusted_from(0.05))
        assert alone.tolist() == [expected[i]]
    assert t_trusted_from(0.05) == math.ceil(math.log(0.1 * 0.025) / math.log(0.99))  # 597


def test_rows_left_out_of_resampling_leave_every_other_row_bit_for_bit() -> None:
    rng = np.random.default_rng(5)
    n = 300
    d = np.vstack(
        [
            rng.normal(0.01, 0.1, n),
            np.zeros(n),
            np.full(n, 0.1),
            np.where(rng.random(n) < 0.05, rng.normal(0, 1, n), 0),
            rng.normal(0, 1, n),
        ]
    )
    mask = np.ones(d.shape, dtype=bool)
    mask[4, 8:] = False  # 8 queries: no bootstrap
    keys = keyed.query_keys(3, ("x",), np.array([f"q{i}" for i in range(n)], dtype=object))
    every = paired.run_tests(d, keys, permutations=2000, resamples=2000, mask=mask)
    resample = np.array([False, True, True, True, False])
    some = paired.run_tests(d, keys, permutations=2000, resamples=2000, mask=mask, resample=resample)
    for field in ("p", "ci_low", "ci_high"):
        np.testing.assert_array_equal(getattr(some.t, field), getattr(every.t, field))
    np.testing.assert_array_equal(some.wilcoxon, every.wilcoxon)
    for got, full in (
        (some.randomization, every.randomization),
        (some.bootstrap.p, every.bootstrap.p),
        (some.bootstrap.ci_low, every.bootstrap.ci_low),
        (some.bootstrap.ci_high, every.bootstrap.ci_high),
    ):
        np.testing.assert_array_equal(got[resample], full[resample])
        assert np.isnan(got[~resample]).all()
    # every difference 0 needs no draws: p 1 and the interval [0, 0], as the draws give
    assert (some.bootstrap.p[1], some.bootstrap.ci_low[1], some.bootstrap.ci_high[1]) == (1.0, 0.0, 0.0)
    assert some.randomization[1] == 1.0


def _systems(n: int, seed: int) -> list[RunResult]:
    """A baseline, a change spread over the users (t is trusted on it) and one that touches 1% of them (it is not)."""
    rng = np.random.default_rng(seed)
    base = rng.random(n)
    spread = base + rng.normal(0.01, 0.1, n)
    rare = base + np.where(rng.random(n) < 0.01, 0.4, 0.0)
    return [_result(name, {"AP": values}) for name, values in (("a", base), ("spread", spread), ("rare", rare))]


def test_auto_lets_t_decide_where_it_is_trusted_and_resamples_elsewhere() -> None:
    results = _systems(2000, 1)
    measures = results[0].per_query.measures
    settings = {"baseline": "a", "mode": "baseline", "permutations": 2000, "resamples": 2000}
    auto = [r.to_record() for r in compare(results, measures, CompareSettings(**settings))]  # type: ignore[arg-type]
    always = [r.to_record() for r in compare(results, measures, CompareSettings(resampling="always", **settings))]  # type: ignore[arg-type]
    by_t, resampled = auto
    assert (by_t["primary_test"], by_t["resampled"], resampled["primary_test"], resampled["resampled"]) == (
        "t",
        False,
        "randomization",
        True,
    )
    assert all(r["resampled"] and r["primary_test"] == "randomization" for r in always)
    assert math.isnan(by_t["p_randomization"]) and math.isnan(by_t["p_bootstrap"]) and math.isnan(by_t["ci_low_bootstrap"])
    assert by_t["p_floor"] == 0.0 and not by_t["resolution_limited"]
    # the row still resampled, and every t, Wilcoxon and interval column: as always gives them, bit for bit
    for key, value in always[1].items():
        if not key.endswith("_adj") and key != "significant":  # corrected over a family that now holds t's p too
            assert resampled[key] == value or (value != value and resampled[key] != resampled[key]), key
    for key in ("p_t", "p_wilcoxon", "ci_low", "ci_high", "ci_low_t", "ci_high_t", "delta", "mde", "effect_size"):
        assert by_t[key] == always[0][key], key
    # one family (AP's two pairs), two tests: each row's own p, Holm-corrected together
    joint = multipletests([by_t["p_t"], resampled["p_randomization"]], method="holm")[1]
    assert [by_t["p_adj"], resampled["p_adj"]] == pytest.approx(joint.tolist(), abs=1e-15)
    # t's own p by hand
    a, b = (r.per_query.values[:, 0] for r in results[:2])
    assert by_t["p_t"] == pytest.approx(stats.ttest_rel(b, a).pvalue, rel=1e-9)
    d = b - a
    assert not resampled_rows(d[None, :], np.ones((1, d.size), bool), CompareSettings())[0]


def test_the_api_and_the_command_line_say_which_test_decided(tmp_path) -> None:  # type: ignore[no-untyped-def]
    tables = {r.system: r.per_query for r in _systems(1500, 3)}
    table = harness.compare(tables, baseline="a", permutations=500, resamples=500).full
    assert table["primary_test"].tolist() == ["t", "randomization"]
    table = harness.compare(tables, baseline="a", permutations=500, resamples=500, resampling="always").full
    assert table["primary_test"].tolist() == ["randomization", "randomization"]
    with pytest.raises(HarnessError, match="resampling"):
        harness.compare(tables, baseline="a", resampling="sometimes")  # type: ignore[arg-type]
    # the command line: 700 users, each with one relevant item that the second run moves by a rank or none
    qrels = tmp_path / "qrels"
    qrels.write_text("".join(f"u{u} 0 rel 1\n" for u in range(700)))
    rng = np.random.default_rng(6)
    base = rng.integers(1, 6, 700)
    paths = []
    for name, ranks in (("base", base), ("moved", np.clip(base + rng.integers(-1, 2, base.size), 1, 5))):
        lines = []
        for u, rank in enumerate(ranks.tolist()):
            docs = [f"d{k}" for k in range(1, 6)]
            docs.insert(rank - 1, "rel")
            lines += [f"u{u} Q0 {d} {r + 1} {10 - r} {name}\n" for r, d in enumerate(docs)]
        (tmp_path / f"{name}.run").write_text("".join(lines))
        paths.append(str(tmp_path / f"{name}.run"))
    out, err = io.StringIO(), io.StringIO()
    assert main(["compare", str(qrels), *paths, "-m", "P@1", "--permutations", "500"], out, err) == 0, err.getvalue()
    assert "the t-test, trusted on every comparison (--resampling always: randomization on every one)" in out.getvalue()
    out = io.StringIO()
    assert main(["compare", str(qrels), *paths, "-m", "P@1", "--permutations", "500", "--resampling", "always"], out, err) == 0
    assert "\nrandomization test, 500 permutations" in out.getvalue()


SHAPES = {  # each a population of differences whose mean is 0
    "normal": lambda rng, n: rng.normal(0.0, 0.1, n),
    "a little skewed": lambda rng, n: (rng.gamma(20.0, 1.0, n) - 20.0) / 20,
    "skewed": lambda rng, n: rng.exponential(0.1, n) - 0.1,
    "2% of users changed, either way": lambda rng, n: np.where(rng.random(n) < 0.02, rng.choice([-0.5, 0.5], n), 0.0),
    "2% of users changed, one way": lambda rng, n: np.where(rng.random(n) < 0.02, 0.5, 0.0) - 0.01,
    "few users": lambda rng, n: rng.exponential(0.1, n)[: n // 20] - 0.1,
}


@pytest.mark.parametrize("shape", list(SHAPES))
def test_auto_errs_no_more_than_resampling_every_row_and_keeps_the_power(shape: str) -> None:
    """A/A trials at 800 users (40 for the few), and the same trials shifted by 0.1 sd. What auto decides by (t where
    it is trusted, the sign-flip test elsewhere) rejects in each direction no more often than the sign-flip test on
    every trial does, or than alpha / 2 and a tenth of it, up to the Monte Carlo error; and it detects the shift as
    often. t decides nearly every trial of the two shapes t can be trusted on, and hardly any of the skewed ones."""
    rng = np.random.default_rng(sorted(SHAPES).index(shape))
    trials, alpha = 1500, 0.05
    null = np.stack([SHAPES[shape](rng, 800) for _ in range(trials)])
    keys = keyed.numbered_keys(7, null.shape[1])
    settings = CompareSettings(permutations=1000)
    mc = 3 * math.sqrt(alpha / 2 * (1 - alpha / 2) / trials)
    for name, d in (("null", null), ("shifted", null + 0.1 * null.std())):
        mask = np.ones(d.shape, dtype=bool)
        resample = resampled_rows(d, mask, settings)
        assert resample is not None
        tested = paired.run_tests(d, keys, ("t", "randomization"), 1000, mask=mask, resample=resample)
        always = paired.run_tests(d, keys, ("randomization",), 1000, mask=mask).randomization
        np.testing.assert_array_equal(tested.randomization[resample], always[resample])
        auto = np.where(resample, tested.randomization, tested.t.p)
        up = d.mean(axis=1) > 0
        rates = {
            test: (((p < alpha) & up).mean(), ((p < alpha) & ~up).mean()) for test, p in (("auto", auto), ("always", always))
        }
        if name == "null":
            for tail in (0, 1):
                assert rates["auto"][tail] <= max(alpha / 2 * 1.1, rates["always"][tail]) + mc, (shape, rates)
        else:
            assert sum(rates["auto"]) >= sum(rates["always"]) - 3 * math.sqrt(0.25 / trials), (shape, rates)
    share = resample.mean()
    if shape in ("normal", "a little skewed"):
        assert share < 0.05, share
    elif shape != "2% of users changed, either way":  # symmetric: no skew for t to err by, and t often decides
        assert share > 0.9, share


def test_a_run_says_which_test_decided_in_its_tables_summary_and_report(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """harness run on 800 users: comparisons.csv states each row's test and whether it was resampled, and summary.md
    and the report say how many comparisons the t-test decided."""
    import pandas as pd
    import yaml

    rng = np.random.default_rng(8)
    users, docs = 800, 6
    qrels, base, moved = [], [], []
    for u in range(users):
        grades = rng.integers(0, 3, docs)
        qrels += [f"u{u} 0 d{d} {grades[d]}\n" for d in range(docs)]
        order = rng.permutation(docs)
        other = order.copy()
        if rng.random() < 0.5:  # half the users see two items swapped
            i, j = rng.choice(docs, 2, replace=False)
            other[[i, j]] = other[[j, i]]
        base += [f"u{u} Q0 d{d} {r + 1} {docs - r} base\n" for r, d in enumerate(order)]
        moved += [f"u{u} Q0 d{d} {r + 1} {docs - r} moved\n" for r, d in enumerate(other)]
    for name, lines in (("qrels", qrels), ("base.run", base), ("moved.run", moved)):
        (tmp_path / name).write_text("".join(lines))
    config = {
        "experiment": "auto",
        "datasets": [{"name": "d", "qrels": "qrels"}],
        "systems": [{"name": "base", "runs": "base.run"}, {"name": "moved", "runs": "moved.run"}],
        "baseline": "base",
        "measures": ["nDCG@3", "P@1"],
        "stats": {"permutations": 500, "resamples": 500},
        "tracking": {"enabled": False},
    }
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    out, err = io.StringIO(), io.StringIO()
    assert main(["run", str(tmp_path / "config.yaml"), "--quiet", "--output", str(tmp_path / "out")], out, err) == 0, (
        err.getvalue()
    )
    folder = next((tmp_path / "out").rglob("comparisons.csv")).parent
    table = pd.read_csv(folder / "comparisons.csv")
    assert table["primary_test"].tolist() == ["t", "t"] and not table["resampled"].any()
    assert table["p_randomization"].isna().all() and (table["p_adj"] == table["p_t_adj"]).all()
    said = "by the randomization test (the t-test on the 2 of 2 comparisons where it can be trusted"
    assert said in (folder / "summary.md").read_text()
    assert said in (folder / "report.html").read_text()
    assert "t interval (not resampled: the t-test can be trusted here)" in (folder / "report.html").read_text()
