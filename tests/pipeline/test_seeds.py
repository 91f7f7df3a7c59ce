"""Several runs per system (training seeds) through ``harness run`` (issue 42): each run's values are pytrec_eval's
for its file, the version's mean is the mean over its runs, a comparison of versions is the crossed t computed here
from the textbook sums of squares, and the gate decides as ``harness.decide`` does on the same tables."""

from __future__ import annotations

import dataclasses
import io
import json
import math
from pathlib import Path

import mlflow
import numpy as np
import pandas as pd
import pytest
import pytrec_eval
from scipy import stats

import harness
from harness.cli import main
from harness.config.load import load_config
from harness.errors import ConfigError
from harness.measures.parse import parse_measure
from harness.stats.seeds import components, version_plan

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning")

USERS, DOCS, SEEDS = 80, 25, 3
GUARDS = [{"measure": "nDCG@10", "max_drop": 0.03}, {"measure": "P@5", "max_drop": 0.05, "segment": "new"}]


def _write(folder: Path, seeds: int = SEEDS, candidate_gain: float = 0.0) -> None:
    """Graded judgments; each system's run per seed ranks by a user's true relevance plus the system's noise plus
    the seed's own shift of every document's score (so seeds differ as wholes, not only per user)."""
    rng = np.random.default_rng(42)
    grades = rng.choice([0, 0, 0, 1, 2], size=(USERS, DOCS))
    (folder / "qrels").write_text("".join(f"u{u:03d} 0 d{d} {grades[u, d]}\n" for u in range(USERS) for d in range(DOCS)))
    (folder / "segments.csv").write_text(
        "query,segment\n" + "".join(f"u{u:03d},{'new' if u < 30 else 'old'}\n" for u in range(USERS))
    )
    for system, noise in (("prod", 1.2), ("cand", 1.2 - candidate_gain)):
        for k in range(seeds):
            seed_shift = rng.normal(0, 1.5, DOCS)  # this training's taste: the same for every user
            lines = []
            for u in range(USERS):
                score = grades[u] + rng.normal(0, noise, DOCS) + seed_shift
                for r, d in enumerate(np.argsort(-score, kind="stable")):
                    lines.append(f"u{u:03d} Q0 d{d} {r + 1} {DOCS - r} {system}\n")
            (folder / f"{system}-s{k + 1}.run").write_text("".join(lines))


def _config(
    folder: Path,
    runs: dict[str, str],
    stats_extra: str = "",
    systems_extra: str = "",
    guards: list[dict[str, object]] | None = None,
    tracking: bool = False,
) -> Path:
    config = folder / "exp.yaml"
    config.write_text(
        "experiment: seeds\ndatasets: [{name: d, qrels: qrels, segments: {path: segments.csv}}]\n"
        f"systems:\n  - {{name: prod, runs: {{d: {runs['prod']}}}{systems_extra}}}\n"
        f"  - {{name: cand, runs: {{d: {runs['cand']}}}}}\n"
        f"measures: [nDCG@10, P@5]\nbaseline: prod\nstats: {{permutations: 200, resamples: 200{stats_extra}}}\n"
        f"tracking: {{enabled: {str(tracking).lower()}}}\n"
        f"report:\n  enabled: false\nrelease: {{production: prod, candidate: cand, guards: {json.dumps(guards or GUARDS)}}}\n"
        "output: out\n"
    )
    return config


def _decided(folder: Path) -> dict[str, object]:
    """A folder's gate.json without what differs between two runs of one decision: the look's random id, and where
    production's values came from."""
    gate = json.loads((folder / "gate.json").read_text())
    return {k: v for k, v in gate.items() if k not in ("look_id", "production_evidence")}


def _run(config: Path, *extra: str) -> Path:
    out = io.StringIO()
    main(["run", str(config), "--json", "--quiet", *extra], out, io.StringIO())
    return Path(json.loads(out.getvalue())["results_dir"])


def _pytrec(folder: Path, run: str) -> dict[str, dict[str, float]]:
    """pytrec_eval's nDCG@10 and P@5 per user of one run file (every user is retrieved: no -c needed)."""
    qrels: dict[str, dict[str, int]] = {}
    for line in (folder / "qrels").read_text().split("\n"):
        if line:
            q, _, d, g = line.split()
            qrels.setdefault(q, {})[d] = int(g)
    ranked: dict[str, dict[str, float]] = {}
    for line in (folder / run).read_text().split("\n"):
        if line:
            q, _, d, _, score, _ = line.split()
            ranked.setdefault(q, {})[d] = float(score)
    found = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "P.5"}).evaluate(ranked)
    return {q: {"nDCG@10": v["ndcg_cut_10"], "P@5": v["P_5"]} for q, v in found.items()}


def _crossed(a: np.ndarray, b: np.ndarray) -> tuple[float, float, float]:
    """(mean_b - mean_a, its variance, its df) from the sums of squares of the crossed design, written from their
    definitions: seeds nested in systems, both crossed with users; each system's seed and residual mean squares apart
    (their df: r - 1 and (r - 1)(n - 1)), the users' term from the interaction of system and user. The df is
    Satterthwaite's over the users' term and each seed term at its 80% upper confidence limit (chi-square)."""
    r_a, n = a.shape
    r_b = b.shape[0]
    d = b.mean(axis=0) - a.mean(axis=0)
    users = float(np.sum((d - d.mean()) ** 2)) / (n - 1) / n
    terms, seed_part = [(users, n - 1)], 0.0
    for table in (a, b):
        r = table.shape[0]
        seed_means, user_means, grand = table.mean(axis=1), table.mean(axis=0), table.mean()
        ms_seed = n * float(np.sum((seed_means - grand) ** 2)) / (r - 1)
        ms_residual = float(np.sum((table - seed_means[:, None] - user_means[None, :] + grand) ** 2)) / ((r - 1) * (n - 1))
        seed_part += (ms_seed - ms_residual) / (n * r)
        terms.append((ms_seed * (r - 1) / stats.chi2.ppf(0.2, r - 1) / (n * r), r - 1))
    assert seed_part > 0, "the generated seeds must differ as wholes for this check"
    variance = users + seed_part
    df = sum(t for t, _ in terms) ** 2 / sum(t * t / f for t, f in terms)
    assert (r_a, r_b) == (SEEDS, SEEDS)
    return float(d.mean()), variance, df


def test_a_list_a_glob_and_the_claim_they_imply(tmp_path: Path) -> None:
    _write(tmp_path)
    listed = load_config(_config(tmp_path, {"prod": "[prod-s1.run, prod-s2.run, prod-s3.run]", "cand": '"cand-s*.run"'}))
    assert listed.stats.claim == "version"
    assert [label for label, _ in listed.system("cand").runs_of("d")] == ["cand-s1", "cand-s2", "cand-s3"]
    assert [p.name for _, p in listed.system("prod").runs_of("d")] == ["prod-s1.run", "prod-s2.run", "prod-s3.run"]
    single = load_config(_config(tmp_path, {"prod": "prod-s1.run", "cand": "cand-s1.run"}))
    assert single.stats.claim == "model" and single.system("prod").runs_of("d")[0][0] == ""
    picked = load_config(_config(tmp_path, {"prod": '"prod-s*.run"', "cand": "cand-s2.run"}, ", claim: model", ", seed: prod-s3"))
    assert [p.name for _, p in picked.system("prod").runs_of("d")] == ["prod-s3.run"]


@pytest.mark.parametrize(
    ("runs", "stats_extra", "systems_extra", "expected", "line"),
    [
        (
            {"prod": '"prod-s*.run"', "cand": "cand-s1.run"},
            ", claim: model",
            "",
            "claim: model decides one trained run of each system, and 'prod' has several (prod-s1, prod-s2, prod-s3)",
            4,
        ),
        ({"prod": '"prod-s*.run"', "cand": '"cand-s*.run"'}, "", ", seed: prod-s3", "claim: version decides over every run", 4),
        (
            {"prod": '"prod-s*.run"', "cand": "cand-s1.run"},
            ", claim: model",
            ", seed: prod-s9",
            "system 'prod' has no run 'prod-s9' (its runs: prod-s1, prod-s2, prod-s3)",
            4,
        ),
        ({"prod": '"nothing-*.run"', "cand": "cand-s1.run"}, "", "", "no file matches", 4),
        ({"prod": "[prod-s1.run, missing.run]", "cand": "cand-s1.run"}, "", "", "runs.d[1]: file not found", 4),
    ],
)
def test_a_config_with_seeds_is_refused_where_it_is_wrong(
    tmp_path: Path, runs: dict[str, str], stats_extra: str, systems_extra: str, expected: str, line: int
) -> None:
    _write(tmp_path)
    with pytest.raises(ConfigError) as raised:
        load_config(_config(tmp_path, runs, stats_extra, systems_extra))
    assert expected in str(raised.value) and raised.value.line == line, str(raised.value)


def test_harness_run_over_seeds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _write(tmp_path)
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path / 'mlflow.db'}")
    folder = _run(_config(tmp_path, {"prod": '"prod-s*.run"', "cand": "[cand-s1.run, cand-s2.run, cand-s3.run]"}, tracking=True))
    per_query = pd.read_parquet(folder / "per_query.parquet")
    assert list(per_query.columns[:3]) == ["dataset", "system", "seed"]
    # each run's values are pytrec_eval's for its own file
    tables: dict[str, list[harness.PerQuery]] = {"prod": [], "cand": []}
    arrays: dict[tuple[str, str], np.ndarray] = {}
    for system in ("prod", "cand"):
        for k in range(1, SEEDS + 1):
            label = f"{system}-s{k}"
            reference = _pytrec(tmp_path, f"{label}.run")
            rows = per_query[(per_query["system"] == system) & (per_query["seed"] == label)]
            wide = rows.pivot_table(index="query_id", columns="measure", values="value").sort_index()
            for measure in ("nDCG@10", "P@5"):
                expected = np.array([reference[q][measure] for q in wide.index])
                np.testing.assert_allclose(wide[measure].to_numpy(), expected, rtol=0, atol=1e-12)
                arrays[(label, measure)] = expected
            tables[system].append(
                harness.PerQuery(
                    system,
                    wide.index.to_numpy(dtype=object),
                    tuple(parse_measure(m) for m in wide.columns),
                    wide.to_numpy(dtype=np.float64),
                    np.ones(len(wide), dtype=bool),
                )
            )
    # the version's value is the mean over its runs; each run's row is its own mean
    summary = pd.read_csv(folder / "summary.csv", keep_default_na=False)
    for system in ("prod", "cand"):
        mine = summary[(summary["system"] == system) & (summary["segment"] == "all") & (summary["measure"] == "nDCG@10")]
        runs = [arrays[(f"{system}-s{k}", "nDCG@10")] for k in range(1, SEEDS + 1)]
        assert mine[mine["seed"] == "all"]["value"].item() == pytest.approx(float(np.mean(runs)), abs=1e-12)
        assert sorted(mine[mine["seed"] != "all"]["value"]) == pytest.approx(sorted(float(r.mean()) for r in runs), abs=1e-12)
        # the version's interval, users and seeds both random: (MS_user + MS_seed - MS_residual) / (r n), from the sums
        # of squares of its runs x users table, with Satterthwaite's df over the users' term and the seed term at its
        # 80% upper limit, MS_seed (r - 1) / chi2_0.2(r - 1)
        table = np.array(runs)
        r, n = table.shape
        seed_means, user_means, grand = table.mean(axis=1), table.mean(axis=0), table.mean()
        ms_user = r * float(np.sum((user_means - grand) ** 2)) / (n - 1)
        ms_seed = n * float(np.sum((seed_means - grand) ** 2)) / (r - 1)
        ms_res = float(np.sum((table - seed_means[:, None] - user_means[None, :] + grand) ** 2)) / ((r - 1) * (n - 1))
        assert ms_seed > ms_res, "the generated seeds must differ as wholes for this check"
        total = ms_user + ms_seed - ms_res
        seed_upper = ms_seed * (r - 1) / stats.chi2.ppf(0.2, r - 1)
        df = (ms_user + seed_upper) ** 2 / (ms_user**2 / (n - 1) + seed_upper**2 / (r - 1))
        reach = stats.t.ppf(0.975, df) * math.sqrt(total / (r * n))
        version = mine[mine["seed"] == "all"]
        assert (version["ci_low"].item(), version["ci_high"].item()) == pytest.approx((grand - reach, grand + reach), abs=1e-12)
    # a comparison of versions: the crossed t from the sums of squares, two-sided, and its 95% interval
    comparisons = pd.read_csv(folder / "comparisons.csv")
    row = comparisons[(comparisons["segment"] == "all") & (comparisons["measure"] == "nDCG@10")].iloc[0]
    a = np.array([arrays[(f"prod-s{k}", "nDCG@10")] for k in range(1, SEEDS + 1)])
    b = np.array([arrays[(f"cand-s{k}", "nDCG@10")] for k in range(1, SEEDS + 1)])
    estimate, variance, df = _crossed(a, b)
    assert row["primary_test"] == "version" and "p_t" not in comparisons.columns
    assert row["delta"] == pytest.approx(estimate, abs=1e-12)
    assert row["p_version"] == pytest.approx(2 * stats.t.sf(abs(estimate) / math.sqrt(variance), df), rel=1e-9)
    reach = stats.t.ppf(0.975, df) * math.sqrt(variance)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((estimate - reach, estimate + reach), abs=1e-12)
    # the smallest true difference it detects with 80% power, two-sided at 0.05 (the shifted central t)
    assert row["mde"] == pytest.approx((stats.t.ppf(0.975, df) + stats.t.ppf(0.8, df)) * math.sqrt(variance), rel=1e-12)
    # harness.compare on the same tables, a list per system: the same comparisons of versions
    compared = harness.compare(tables, baseline="prod", dataset="d")
    for _, expected in comparisons[comparisons["segment"] == "all"].iterrows():
        found = compared[compared["measure"] == expected["measure"]].iloc[0]
        for column in ("delta", "p_version", "p_version_adj", "ci_low", "ci_high"):
            assert found[column] == pytest.approx(expected[column], rel=1e-12, abs=1e-15), column
    # the gate: as harness.decide on the same tables, and it says which claim it decided
    gate = json.loads((folder / "gate.json").read_text())
    segments = dict(line.split(",") for line in (tmp_path / "segments.csv").read_text().split()[1:])
    decision = harness.decide(tables, "prod", "cand", GUARDS, segments=segments, dataset="d")
    assert gate["claim"] == decision.claim == "version" and gate["seeds"] == [SEEDS, SEEDS]
    assert gate["verdict"] == decision.verdict
    for logged, decided in zip(gate["guards"], decision.guards, strict=True):
        assert logged["verdict"] == decided.verdict
        for field in ("drop", "drop_low", "drop_high", "p_pass"):
            assert logged[field] == pytest.approx(getattr(decided, field), rel=1e-12, abs=1e-15), field
    assert gate["errors"].endswith("over their runs (3 and 3 seeds), with users and seeds both random")
    # harness plan: the components of these runs (REML's, tests/stats/test_seeds.py) and the users each number of
    # seeds needs at them
    out = io.StringIO()
    assert (
        main(
            ["plan", str(folder), "--measure", "nDCG@10", "--margin", "0.05", "--seeds", "3", "10", "--json"], out, io.StringIO()
        )
        == 0
    )
    planned = json.loads(out.getvalue())
    found = components(a, b)
    assert planned["components"] == pytest.approx(dataclasses.asdict(found), rel=1e-9)
    expected = version_plan(0.05, found.seed_sd, found.interaction_sd, found.residual_sd, seeds=(3, 10))
    assert [(p["seeds"], p["users"]) for p in planned["plans"]] == [(p.seeds, p.users) for p in expected]
    # and the seed sd's 90% upper limit: the pooled seed mean square over its chi-square, less the residual one
    r, n = a.shape
    seed_ms = [n * float(((t.mean(axis=1) - t.mean()) ** 2).sum()) / (r - 1) for t in (a, b)]
    resid = [
        float(((t - t.mean(axis=1)[:, None] - t.mean(axis=0)[None, :] + t.mean()) ** 2).sum()) / ((r - 1) * (n - 1))
        for t in (a, b)
    ]
    df = 2 * (r - 1)
    upper = math.sqrt(max(0.0, (sum(seed_ms) / 2 * df / stats.chi2.ppf(0.1, df) - sum(resid) / 2) / n))
    assert planned["seed_sd_upper"] == pytest.approx(upper, rel=1e-9)
    at_limit = version_plan(0.05, upper, found.interaction_sd, found.residual_sd, seeds=(3, 10))
    assert [(p["seeds"], p["users"]) for p in planned["plans_upper"]] == [(p.seeds, p.users) for p in at_limit]
    # MLflow: a child run per system (its version) and one per run, tagged with its seed
    children = mlflow.search_runs(search_all_experiments=True, filter_string="tags.`harness.kind` = 'run'")
    assert sorted(children["tags.seed"]) == sorted(f"{s}-s{k}" for s in ("prod", "cand") for k in range(1, SEEDS + 1))
    versions = mlflow.search_runs(search_all_experiments=True, filter_string="tags.`harness.kind` = 'system'")
    assert len(versions) == 2
    parent = mlflow.search_runs(search_all_experiments=True, filter_string="tags.`harness.kind` = 'experiment'")
    assert parent["tags.release.claim"].item() == "version" and parent["tags.release.seeds"].item() == "3 against 3"
    assert parent["tags.release.errors"].item() == gate["errors"]


def test_claim_model_picks_one_run_and_is_todays_test(tmp_path: Path) -> None:
    _write(tmp_path)
    picked = _run(_config(tmp_path, {"prod": '"prod-s*.run"', "cand": "cand-s2.run"}, ", claim: model", ", seed: prod-s3"))
    alone = _run(_config(tmp_path, {"prod": "prod-s3.run", "cand": "cand-s2.run"}))
    for table in ("per_query", "comparisons"):
        assert pd.read_parquet(picked / f"{table}.parquet").equals(pd.read_parquet(alone / f"{table}.parquet")), table
    gate = json.loads((picked / "gate.json").read_text())
    assert gate["claim"] == "model" and _decided(picked) == _decided(alone)


def test_the_version_claim_with_one_run_each_decides_nothing(tmp_path: Path) -> None:
    _write(tmp_path, candidate_gain=1.0)  # a candidate much better: still no verdict on the version from one run
    folder = _run(_config(tmp_path, {"prod": "prod-s1.run", "cand": "cand-s1.run"}, ", claim: version"))
    gate = json.loads((folder / "gate.json").read_text())
    assert gate["verdict"] == "INCONCLUSIVE" and gate["claim"] == "version"
    assert all("seed variance cannot be estimated" in g["reason"] for g in gate["guards"]), gate["guards"]
    comparisons = pd.read_csv(folder / "comparisons.csv")
    assert comparisons["p_version"].isna().all() and not comparisons["significant"].any()
    assert comparisons["version_note"].str.contains("seed variance cannot be estimated").all()


@pytest.mark.slow
def test_seeds_on_a_dask_cluster_are_the_local_numbers(tmp_path: Path) -> None:
    _write(tmp_path)
    config = _config(tmp_path, {"prod": '"prod-s*.run"', "cand": '"cand-s*.run"'})
    local = _run(config)
    cluster = _run(config, "--set", "engine.name=dask", "--set", "engine.n_workers=2", "--set", "engine.partitions=3")
    for table in ("per_query", "summary", "comparisons", "diagnostics"):
        expected, found = pd.read_parquet(local / f"{table}.parquet"), pd.read_parquet(cluster / f"{table}.parquet")
        pd.testing.assert_frame_equal(found, expected, check_exact=True, obj=table)
    assert _decided(local) == _decided(cluster)


def test_a_previous_folders_seeds_are_reused_as_runs(tmp_path: Path) -> None:
    _write(tmp_path)
    earlier = _run(_config(tmp_path, {"prod": '"prod-s*.run"', "cand": '"cand-s*.run"'}))
    again = tmp_path / "again.yaml"
    again.write_text(
        _config(tmp_path, {"prod": '"prod-s*.run"', "cand": '"cand-s*.run"'})
        .read_text()
        .replace('{name: prod, runs: {d: "prod-s*.run"}}', f"{{name: prod, previous: {{results: {earlier}}}}}")
    )
    assert "previous" in again.read_text()
    reused = _run(again)
    for table in ("comparisons", "summary"):
        expected, found = pd.read_parquet(earlier / f"{table}.parquet"), pd.read_parquet(reused / f"{table}.parquet")
        pd.testing.assert_frame_equal(found, expected, check_exact=True, obj=table)
    per_query = pd.read_parquet(reused / "per_query.parquet")
    assert sorted(per_query[per_query["system"] == "prod"]["seed"].unique()) == ["prod-s1", "prod-s2", "prod-s3"]
    gate = json.loads((reused / "gate.json").read_text())
    assert _decided(reused) == _decided(earlier) and gate["seeds"] == [SEEDS, SEEDS]
    # claim: model cannot take one of three reused runs for the system
    out, err = io.StringIO(), io.StringIO()
    one = tmp_path / "one.yaml"
    one.write_text(again.read_text().replace('"cand-s*.run"', "cand-s1.run"))
    assert main(["run", str(one), "--quiet"], out, err) == 2
    assert "it holds 3 runs (seeds) of 'prod' on 'd', and claim: model decides one trained run" in err.getvalue()


@pytest.mark.parametrize(
    ("make", "runs", "expected"),
    [
        (lambda f: (f / "prod-s4.run").symlink_to(f / "gone.run"), '"prod-s*.run"', "prod-s4.run is a link to nothing"),
        (lambda f: __import__("os").mkfifo(f / "prod-s4.run"), '"prod-s*.run"', "prod-s4.run is not a regular file"),
        (lambda f: (f / "prod-s4.run").symlink_to(f / "prod-s2.run"), '"prod-s*.run"', "are one file"),
        (
            lambda f: (f / "prod-s4.run").write_bytes((f / "prod-s1.run").read_bytes()),
            '"prod-s*.run"',
            "prod-s1.run and",
        ),
        (
            lambda f: (f / "prod-s1.run.gz").write_bytes(__import__("gzip").compress((f / "prod-s1.run").read_bytes())),
            '"prod-s1.run*"',
            "two runs are labelled 'prod-s1'",
        ),
    ],
)
def test_seeds_that_vanish_or_double_are_refused(tmp_path: Path, make: object, runs: str, expected: str) -> None:
    """A match that is not a run file is refused, not dropped; one run given twice (a link, a copy, the same run
    compressed) is refused, not counted as two seeds."""
    _write(tmp_path)
    make(tmp_path)  # type: ignore[operator]
    with pytest.raises(ConfigError) as raised:
        load_config(_config(tmp_path, {"prod": runs, "cand": '"cand-s*.run"'}))
    assert expected in str(raised.value) and raised.value.line == 4, str(raised.value)
    if "same run" in str(raised.value):
        assert "sha256" in str(raised.value)


def test_a_path_that_exists_is_taken_as_it_is(tmp_path: Path) -> None:
    _write(tmp_path)
    (tmp_path / "prod-s1.run").rename(tmp_path / "prod[1].run")
    config = load_config(_config(tmp_path, {"prod": '"prod[1].run"', "cand": "cand-s1.run"}))
    assert [p.name for _, p in config.system("prod").runs_of("d")] == ["prod[1].run"]


def test_a_seed_missing_on_one_dataset_is_a_warning_in_the_verdict(tmp_path: Path) -> None:
    _write(tmp_path)
    config = _config(tmp_path, {"prod": '"prod-s*.run"', "cand": '"cand-s*.run"'})
    text = config.read_text().replace(
        "datasets: [{name: d, qrels: qrels, segments: {path: segments.csv}}]",
        "datasets: [{name: d, qrels: qrels, segments: {path: segments.csv}}, {name: e, qrels: qrels}]",
    )
    text = text.replace('runs: {d: "cand-s*.run"}', 'runs: {d: "cand-s*.run", e: [cand-s1.run, cand-s2.run]}')
    text = text.replace('runs: {d: "prod-s*.run"}', 'runs: {d: "prod-s*.run", e: "prod-s*.run"}')
    config.write_text(text)
    folder = _run(config)
    gate = json.loads((folder / "gate.json").read_text())
    assert gate["seeds_by_dataset"] == {"d": [3, 3], "e": [3, 2]}
    assert gate["seed_warnings"] == ["cand has 2 runs on dataset 'e' (cand-s1, cand-s2) and 3 on 'd'"]
    assert "WARNING: cand has 2 runs on dataset 'e'" in gate["line"]
