"""harness.decide and harness plan (issue 24): the API validates like the config, plans match the exact noncentral-t
sample size, and run, compare and the API give one p-value for one seed."""

from __future__ import annotations

import io
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

import harness
from harness.cli import main
from harness.errors import HarnessError
from harness.stats.power import minimum_detectable_effect, sample_size

pytestmark = pytest.mark.filterwarnings(
    "ignore::DeprecationWarning", "ignore::PendingDeprecationWarning", "ignore::FutureWarning"
)


@pytest.mark.parametrize("sided", ["one", "two"])
@pytest.mark.parametrize(("effect", "sd"), [(0.5, 1.0), (0.01, 0.23), (0.05, 0.2), (0.3, 0.3), (0.002, 0.15)])
def test_sample_size_is_the_exact_noncentral_t_one(effect: float, sd: float, sided: str) -> None:
    from statsmodels.stats.power import TTestPower

    alternative = "larger" if sided == "one" else "two-sided"
    exact = TTestPower().solve_power(effect / sd, alpha=0.05, power=0.8, alternative=alternative)
    assert sample_size(effect, sd, 0.05, 0.8, sided) == math.ceil(exact)  # type: ignore[arg-type]
    n = math.ceil(exact)
    mde = minimum_detectable_effect(n, sd, 0.05, 0.8, sided)  # type: ignore[arg-type]
    # exactly 80% power by statsmodels' own power function; its solver stops within about 1e-4 of it
    assert TTestPower().power(mde / sd, nobs=n, alpha=0.05, alternative=alternative) == pytest.approx(0.8, abs=1e-9)
    assert mde == pytest.approx(TTestPower().solve_power(nobs=n, alpha=0.05, power=0.8, alternative=alternative) * sd, rel=1e-3)


def test_published_sample_sizes() -> None:
    # G*Power 3, "Means: difference from constant (one sample case)", d = 0.5, alpha 0.05, power 0.8: 27 and 34
    assert sample_size(0.5, 1.0, 0.05, 0.8, "one") == 27 and sample_size(0.5, 1.0, 0.05, 0.8, "two") == 34


def test_harness_plan_without_a_folder() -> None:
    out = io.StringIO()
    assert main(["plan", "--sd", "0.23", "--margin", "0.01", "--power", "0.8", "--format", "json"], out, io.StringIO()) == 0
    from statsmodels.stats.power import TTestPower

    expected = math.ceil(TTestPower().solve_power(0.01 / 0.23, alpha=0.05, power=0.8, alternative="larger"))
    assert json.loads(out.getvalue())["n_queries"] == expected


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["plan", "--margin", "0.01"], "give either a results folder or --sd"),
        (["plan", "--sd", "0.2", "--margin", "0"], "the margin must be a number above 0"),
        (["plan", "--sd", "-1", "--margin", "0.01"], "the standard deviation must be a finite number >= 0"),
    ],
)
def test_harness_plan_mistakes(argv: list[str], message: str) -> None:
    err = io.StringIO()
    assert main(argv, io.StringIO(), err) == 2
    assert message in err.getvalue() and err.getvalue().count("\n") == 1


def _tables(n: int = 40, seed: int = 3) -> dict[str, harness.PerQuery]:
    rng = np.random.default_rng(seed)
    ids = np.array([f"q{i:03d}" for i in range(n)], dtype=object)
    measures = (harness.parse_measure("AP"), harness.parse_measure("nDCG@10"))
    a = rng.uniform(0.2, 0.6, size=(n, 2))
    b = a + rng.normal(0.0, 0.05, size=(n, 2))
    return {name: harness.PerQuery(name, ids, measures, v, np.ones(n, dtype=bool)) for name, v in (("a", a), ("b", b))}


API_MISTAKES = [
    ({"production": "x"}, "production 'x' is not among the runs"),
    ({"guards": []}, "guards must be a non-empty list"),
    ({"guards": [{"measure": "AP"}]}, "guard 1: the guard on AP states no margin"),
    ({"guards": [{"measure": "AP", "max_drop": 0.1, "significant": True}]}, "guard 1: 'significant' was removed"),
    ({"guards": [{"measure": "P@5", "max_drop": 0.1}]}, "guard 1: 'P@5' is not among the measures the tables hold"),
    ({"guards": [{"measure": "AP", "max_dorp": 0.1}]}, "guard 1: unknown key 'max_dorp'"),
    ({"guards": [{"measure": "AP", "max_drop": "a lot"}]}, "guard 1: max_drop must be a finite number"),
    ({"guards": [{"measure": "AP", "max_drop": 0.1, "segment": "new"}]}, "guard 1: segment 'new' is not a segment"),
    ({"alpha": 1.5}, "alpha must be above 0 and at most 0.5"),
    ({"on_inconclusive": "shrug"}, "release.on_inconclusive must be one of"),
    ({"power": 0.3}, "release.power must lie in [0.5, 1), got 0.3"),
]


@pytest.mark.parametrize(("change", "message"), API_MISTAKES)
def test_decide_validates_like_the_config(change: dict[str, object], message: str) -> None:
    arguments: dict[str, object] = {"production": "a", "candidate": "b", "guards": [{"measure": "AP", "max_drop": 0.1}]}
    arguments.update(change)
    with pytest.raises(HarnessError, match=re.escape(message)):
        harness.decide(_tables(), **arguments)  # type: ignore[arg-type]


def test_decide_on_a_segment_uses_only_its_users() -> None:
    tables = _tables()
    segments = {q: ("head" if i < 10 else "tail") for i, q in enumerate(tables["a"].query_ids.tolist())}
    decision = harness.decide(tables, "a", "b", [{"measure": "AP", "max_drop": 0.1, "segment": "head"}], segments=segments)
    (guard,) = decision.guards
    a, b = tables["a"].column("AP")[:10], tables["b"].column("AP")[:10]
    assert guard.n_queries == 10 and guard.drop == pytest.approx(a.mean() - b.mean(), abs=1e-12)


def test_run_compare_and_the_api_give_one_p_for_one_seed(tmp_path: Path) -> None:
    """A config's one unnamed dataset is "default", the name harness compare and harness.compare key their draws by."""
    rng = np.random.default_rng(9)
    qrels = "".join(f"q{q} 0 d{d} {int(rng.integers(0, 3))}\n" for q in range(30) for d in range(8))
    (tmp_path / "qrels.txt").write_text(qrels)
    for name in ("a", "b"):
        lines = [f"q{q} Q0 d{d} {r + 1} {8 - r} {name}\n" for q in range(30) for r, d in enumerate(rng.permutation(8))]
        (tmp_path / f"{name}.run").write_text("".join(lines))
    (tmp_path / "exp.yaml").write_text(
        "experiment: one-p\ndatasets: [{qrels: qrels.txt}]\nsystems:\n  - {name: a, runs: {default: a.run}}\n"
        "  - {name: b, runs: {default: b.run}}\nmeasures: [AP@10, nDCG@10]\nbaseline: a\n"
        "stats: {permutations: 1000, resamples: 1000, seed: 7}\ntracking: {enabled: false}\nreport: {enabled: false}\n"
        "output: out\n"
    )
    out = io.StringIO()
    assert main(["run", str(tmp_path / "exp.yaml"), "--json", "--quiet"], out, io.StringIO()) == 0
    import pandas as pd

    ran = pd.read_parquet(Path(json.loads(out.getvalue())["results_dir"]) / "comparisons.parquet")
    ran = ran[ran["segment"] == "all"].set_index("measure")
    out = io.StringIO()
    assert (
        main(
            [
                "compare",
                str(tmp_path / "qrels.txt"),
                f"a={tmp_path / 'a.run'}",
                f"b={tmp_path / 'b.run'}",
                "-m",
                "AP@10,nDCG@10",
                "--permutations",
                "1000",
                "--seed",
                "7",
                "--format",
                "json",
            ],
            out,
            io.StringIO(),
        )
        == 0
    )
    compared = {r["measure"]: r for r in json.loads(out.getvalue())}
    qrels_api = harness.read_qrels(tmp_path / "qrels.txt")
    tables = [harness.evaluate(qrels_api, harness.read_run(tmp_path / f"{n}.run", name=n), ["AP@10", "nDCG@10"]) for n in "ab"]
    api = harness.compare(tables, baseline="a", seed=7, permutations=1000, resamples=1000).set_index("measure")
    for measure in ("AP@10", "nDCG@10"):
        for column in ("p_randomization", "p_bootstrap", "p_t", "p_wilcoxon"):
            assert ran.loc[measure, column] == compared[measure][column] == api.loc[measure, column], (measure, column)


def test_comparisons_carry_the_smallest_difference_they_detect_and_the_users_the_observed_one_needs() -> None:
    from statsmodels.stats.power import TTestPower

    tables = _tables(n=60, seed=4)
    row = harness.compare(tables, baseline="a", seed=1, permutations=200, resamples=200).set_index("measure").loc["AP"]
    d = tables["b"].column("AP") - tables["a"].column("AP")
    sd = d.std(ddof=1)
    assert TTestPower().power(row["mde"] / sd, nobs=60, alpha=0.05, alternative="two-sided") == pytest.approx(0.8, abs=1e-6)
    observed = TTestPower().solve_power(abs(d.mean()) / sd, alpha=0.05, power=0.8, alternative="two-sided")
    assert row["n_needed"] == math.ceil(observed)


def test_compare_refuses_a_primary_test_it_is_not_asked_to_run() -> None:
    with pytest.raises(HarnessError, match=r"the primary test 'randomization' is not among tests=\('t',\)"):
        harness.compare(_tables(), baseline="a", tests=("t",))
    table = harness.compare(_tables(), baseline="a", tests=("t",), primary="t")
    d = _tables()["b"].column("AP") - _tables()["a"].column("AP")
    from scipy import stats

    assert table.set_index("measure").loc["AP", "p_t"] == pytest.approx(stats.ttest_1samp(d, 0.0).pvalue, rel=1e-9)


@pytest.mark.slow
def test_the_effect_size_interval_covers_the_true_d_z() -> None:
    """Normal differences with d_z = 0.3 over 25 users: the exact interval covers it 95% of the time (1,500 trials)."""
    from harness.stats.paired import paired_t
    from harness.stats.power import effect_size_interval

    rng = np.random.default_rng(21)
    trials, covered = 1500, 0
    for _ in range(trials):
        d = rng.normal(0.3, 1.0, 25)
        low, high = effect_size_interval(25, float(paired_t(d).statistic[0]))
        covered += low <= 0.3 <= high
    assert abs(covered / trials - 0.95) <= 3 * math.sqrt(0.95 * 0.05 / trials)


@pytest.mark.parametrize(("n", "statistic"), [(20, 2.0), (300, -5.0), (8, 0.4)])
def test_the_effect_size_interval_solves_the_noncentral_t_equations(n: int, statistic: float) -> None:
    """The bounds are the noncentralities (over sqrt(n)) at which scipy's noncentral t puts the statistic at 0.975 and
    0.025."""
    from scipy import stats

    from harness.stats.power import effect_size_interval

    low, high = effect_size_interval(n, statistic)
    assert stats.nct.cdf(statistic, n - 1, low * math.sqrt(n)) == pytest.approx(0.975, abs=1e-9)
    assert stats.nct.cdf(statistic, n - 1, high * math.sqrt(n)) == pytest.approx(0.025, abs=1e-9)


def test_the_fail_side_is_holm_corrected_across_the_guards() -> None:
    """Each guard's p_fail_adj is Holm's step-down of the guards' raw p_fail, worked by hand; a guard FAILs exactly
    when its corrected p is below alpha, and a guard beyond its margin alone but not after the correction says so."""
    from harness.measures.parse import parse_measure

    rng = np.random.default_rng(17)
    n, measures = 60, tuple(parse_measure(m) for m in ("AP", "RR", "P@10"))
    ids = np.array([f"u{i:03d}" for i in range(n)], dtype=object)
    production = rng.uniform(0.3, 0.7, size=(n, 3))
    candidate = production - np.array([0.008, 0.006, 0.06]) + rng.normal(0, 0.1, size=(n, 3))
    tables = {
        name: harness.PerQuery(name, ids, measures, values, np.ones(n, dtype=bool))
        for name, values in (("prod", production), ("cand", candidate))
    }
    guards = [{"measure": m, "max_drop": 0.01} for m in ("AP", "RR", "P@10")]
    decision = harness.decide(tables, "prod", "cand", guards, bound="t")
    raw = [g.p_fail for g in decision.guards]
    order = sorted(range(3), key=lambda i: raw[i])
    expected, running = [0.0] * 3, 0.0
    for step, i in enumerate(order):  # Holm: (k - step) p, never below the step before, at most 1
        running = max(running, min(1.0, (3 - step) * raw[i]))
        expected[i] = running
    assert [g.p_fail_adj for g in decision.guards] == pytest.approx(expected, rel=1e-12)
    for g in decision.guards:
        assert (g.verdict == "FAIL") == (g.p_fail_adj < 0.05)
        if g.p_fail < 0.05 <= g.p_fail_adj:
            assert "but not after Holm's correction across the 3 guards" in g.reason
    # this case has one of each: AP beyond its margin alone (p 0.035) but not after the correction (0.070), P@10 FAILs
    assert [g.verdict for g in decision.guards] == ["INCONCLUSIVE", "INCONCLUSIVE", "FAIL"]
    assert decision.guards[0].p_fail < 0.05 <= decision.guards[0].p_fail_adj
