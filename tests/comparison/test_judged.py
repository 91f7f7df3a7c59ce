"""A dataset with a model judge (``judge:``): its means and differences corrected by people's labels on a sample of
the queries (prediction-powered), checked by hand; the datasets without a judge unchanged, bit for bit; what cannot
be corrected refused with the query and the fix; a folder's gate computed again as ``harness run`` decided it."""

from __future__ import annotations

import io
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import yaml
from scipy import stats

import harness
from harness.cli import main
from harness.config.load import load_config
from harness.pipeline.experiment import run_experiment
from harness.pipeline.folders import _disagreement, recompute_gate
from harness.records.store import read_results

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning")

QUERIES, DOCS, PEOPLE = 40, 8, 14
WEB_GATE = {"production": "prod", "candidate": "cand", "guards": [{"measure": "P@3", "max_drop": 0.05, "dataset": "web"}]}


def _write(folder: Path, seed: int = 3) -> dict[str, Any]:
    """People's graded labels of every query (``truth.txt``, for reference), people's on the first PEOPLE queries
    (``people.txt``), a lenient judge's of every query that favours what ``cand`` ranks first (``judge.txt``), the
    two runs, and a second, unjudged dataset (``other.txt``)."""
    rng = np.random.default_rng(seed)
    truth, people, judge, prod, cand, other = [], [], [], [], [], []
    for q in range(QUERIES):
        query = f"q{q:02d}"
        grades = rng.choice([0, 0, 1, 2], DOCS)
        order_p, order_c = rng.permutation(DOCS), rng.permutation(DOCS)
        for d in range(DOCS):
            favour = d == order_c[0] or (d in order_c[1:3] and rng.random() < 0.5)
            judged = min(2, grades[d] + (1 if favour or rng.random() < 0.2 else 0))
            line = f"{query} 0 d{d} {grades[d]}\n"
            truth.append(line)
            other.append(line)
            judge.append(f"{query} 0 d{d} {judged}\n")
            if q < PEOPLE:
                people.append(line)
        prod += [f"{query} Q0 d{d} {r + 1} {DOCS - r} p\n" for r, d in enumerate(order_p)]
        cand += [f"{query} Q0 d{d} {r + 1} {DOCS - r} c\n" for r, d in enumerate(order_c)]
    files = {"truth.txt": truth, "people.txt": people, "judge.txt": judge, "prod.run": prod, "cand.run": cand, "other.txt": other}
    for name, lines in files.items():
        (folder / name).write_text("".join(lines))
    return {
        "experiment": "judged",
        "datasets": [
            {"name": "web", "qrels": "people.txt", "judge": {"qrels": "judge.txt", "name": "llm"}},
            {"name": "other", "qrels": "other.txt"},
        ],
        "systems": [
            {"name": "prod", "runs": {"web": "prod.run", "other": "prod.run"}},
            {"name": "cand", "runs": {"web": "cand.run", "other": "cand.run"}},
        ],
        "measures": ["P@3"],
        "baseline": "prod",
        "stats": {"permutations": 500, "resamples": 500},
        "tracking": {"enabled": False},
        "report": {"enabled": False},
        "output": {"path": "out"},
    }


def _run(folder: Path, config: dict[str, Any]) -> Any:
    path = folder / "config.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return run_experiment(load_config(path))


def _by_hand(y: np.ndarray, f: np.ndarray, rest: np.ndarray) -> tuple[float, float, float, float]:
    """PPI++ as the issue states it, with numpy and scipy alone: (lambda, estimate, 95% half-width, p of 0)."""
    n, big = y.size, rest.size
    every = np.concatenate([f, rest])
    lam = min(1.0, max(0.0, float(np.cov(y, f)[0, 1]) / ((1 + n / big) * float(every.var(ddof=1)))))
    estimate = lam * rest.mean() + (y - lam * f).mean()
    se = math.sqrt((y - lam * f).var(ddof=1) / n + lam**2 * rest.var(ddof=1) / big)
    return lam, estimate, float(stats.t.ppf(0.975, n - 1)) * se, float(2 * stats.t.sf(abs(estimate) / se, n - 1))


def _per_query(folder: Path, qrels: str, run: str, measure: str = "P@3") -> pd.Series:
    table = harness.evaluate(harness.read_qrels(folder / qrels), harness.read_run(folder / run), [measure])
    return pd.Series(table.values[:, 0], index=table.query_ids.astype(str))


def test_the_corrected_means_and_difference_by_hand(tmp_path: Path) -> None:
    outcome = _run(tmp_path, _write(tmp_path))
    summary, comparisons = outcome.summary, outcome.comparisons
    people = {s: _per_query(tmp_path, "people.txt", f"{s}.run") for s in ("prod", "cand")}
    judge = {s: _per_query(tmp_path, "judge.txt", f"{s}.run") for s in ("prod", "cand")}
    sample = people["prod"].index
    rest = judge["prod"].index.difference(sample)
    for system in ("prod", "cand"):
        lam, estimate, half, _ = _by_hand(
            people[system].to_numpy(), judge[system][sample].to_numpy(), judge[system][rest].to_numpy()
        )
        row = summary[(summary["dataset"] == "web") & (summary["system"] == system)].iloc[0]
        assert row["estimator"] == "ppi" and (row["n_human"], row["n_judge"]) == (PEOPLE, QUERIES)
        assert row["lambda"] == pytest.approx(lam, abs=1e-12)
        assert row["mean"] == pytest.approx(estimate, abs=1e-12)
        assert (row["ci_low"], row["ci_high"]) == pytest.approx((estimate - half, estimate + half), abs=1e-12)
        assert row["judge_mean"] == pytest.approx(judge[system].mean(), abs=1e-12)
    diff_people, diff_judge = people["cand"] - people["prod"], judge["cand"] - judge["prod"]
    lam, estimate, half, p = _by_hand(diff_people.to_numpy(), diff_judge[sample].to_numpy(), diff_judge[rest].to_numpy())
    row = comparisons[comparisons["dataset"] == "web"].iloc[0]
    assert (row["estimator"], row["primary_test"]) == ("ppi", "ppi")
    assert row["lambda"] == pytest.approx(lam, abs=1e-12)  # tuned on the differences, not on either system
    assert row["delta"] == pytest.approx(estimate, abs=1e-12)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((estimate - half, estimate + half), abs=1e-12)
    assert row["p_ppi"] == pytest.approx(p, abs=1e-12)
    assert row["judge_delta"] == pytest.approx(diff_judge.mean(), abs=1e-12)
    # the tests of the judge's values alone are its own columns, never the row's p
    assert "p_wilcoxon" not in comparisons.columns or math.isnan(row["p_wilcoxon"])
    assert row["judge_p_wilcoxon"] == row["judge_p_wilcoxon"]
    assert row["wins"] + row["ties"] + row["losses"] == PEOPLE  # counted on people's values


def test_a_dataset_without_a_judge_is_unchanged_bit_for_bit(tmp_path: Path) -> None:
    config = _write(tmp_path)
    both = _run(tmp_path, config)
    systems = [{**s, "runs": {"other": s["runs"]["other"]}} for s in config["systems"]]
    alone = _run(tmp_path, {**config, "datasets": config["datasets"][1:], "systems": systems, "output": {"path": "alone"}})
    for table in ("comparisons", "summary"):
        theirs = getattr(alone, table).reset_index(drop=True)
        mine = getattr(both, table)
        mine = mine[mine["dataset"] == "other"].reset_index(drop=True)[theirs.columns]
        pd.testing.assert_frame_equal(mine, theirs, check_dtype=False, check_exact=True)
    assert "estimator" not in alone.comparisons.columns and "estimator" not in alone.summary.columns
    assert (both.results_dir / "per_query_people.parquet").exists()
    assert not (alone.results_dir / "per_query_people.parquet").exists()


def test_a_folders_gate_is_computed_again_with_peoples_values(tmp_path: Path) -> None:
    config = _write(tmp_path)
    config["release"] = WEB_GATE
    outcome = _run(tmp_path, config)
    assert outcome.decision.guards[0].method.startswith("one-sided prediction-powered t")
    assert f"{PEOPLE} queries judged by people, {QUERIES} by the judge llm" in outcome.decision.headline()
    saved = read_results(outcome.results_dir)
    recomputed = recompute_gate(saved)
    assert saved.verdict is not None and _disagreement(recomputed, saved.verdict) is None
    assert recomputed.guards[0].drop_high == outcome.decision.guards[0].drop_high


def _error(tmp_path: Path, config: dict[str, Any]) -> str:
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    err = io.StringIO()
    assert main(["run", str(path)], io.StringIO(), err) == 2
    return err.getvalue()


def test_what_cannot_be_corrected_is_refused_naming_the_query_and_the_fix(tmp_path: Path) -> None:
    config = _write(tmp_path)
    judge = (tmp_path / "judge.txt").read_text().splitlines(keepends=True)
    (tmp_path / "short-judge.txt").write_text("".join(line for line in judge if not line.startswith("q03 ")))
    config["datasets"][0]["judge"]["qrels"] = "short-judge.txt"
    message = _error(tmp_path, config)
    assert "query 'q03' is judged by people" in message and "not by the judge" in message and "Fix:" in message

    (tmp_path / "wide-judge.txt").write_text(
        "".join(judge).replace("q05 0 d1 ", "q05 0 d1 3 #").replace(" 3 #2", " 3").replace(" 3 #1", " 3").replace(" 3 #0", " 3")
    )
    config["datasets"][0]["judge"]["qrels"] = "wide-judge.txt"
    message = _error(tmp_path, config)
    assert "query 'q05', document 'd1': the judge's grade 3 is one people never give" in message
    assert "grades: {3:" in message
    config["datasets"][0]["judge"]["grades"] = {3: 2}
    path = tmp_path / "mapped.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    assert main(["run", str(path)], io.StringIO(), io.StringIO()) == 0  # mapped onto people's scale

    config["datasets"][0]["judge"] = {"qrels": "judge.txt"}
    (tmp_path / "one.txt").write_text(
        "".join(line for line in (tmp_path / "people.txt").read_text().splitlines(True) if line.startswith("q00 "))
    )
    config["datasets"][0]["qrels"] = "one.txt"
    message = _error(tmp_path, config)
    assert "people judged 1 query of dataset 'web'" in message and "Fix:" in message

    config["datasets"][0]["qrels"] = "people.txt"
    (tmp_path / "strata.csv").write_text(
        "query,stratum\n" + "".join(f"q{q:02d},{'a' if q % 2 else 'b'}\n" for q in range(QUERIES - 1))
    )
    config["datasets"][0]["judge"] = {"qrels": "judge.txt", "sample": "stratified", "strata": "strata.csv"}
    message = _error(tmp_path, config)
    assert f"query 'q{QUERIES - 1}' is labelled by the judge" in message and "has no stratum" in message

    config["datasets"][0]["judge"] = {"qrels": "judge.txt", "strata": "strata.csv"}
    assert "which draw was it?" in _error(tmp_path, config)
    config["datasets"][0]["judge"] = {"qrels": "judge.txt", "sample": "stratified"}
    assert "sample: stratified needs each query's stratum" in _error(tmp_path, config)
    config["datasets"][0]["judge"] = {"qrels": "people.txt"}
    assert "the judge's labels and people's must be two files" in _error(tmp_path, config)


def test_a_segment_people_judged_too_few_queries_of_is_not_decided(tmp_path: Path) -> None:
    config = _write(tmp_path)
    (tmp_path / "segments.csv").write_text(
        "query,segment\n" + "".join(f"q{q:02d},{'rare' if q in (0, 20, 21, 22) else 'common'}\n" for q in range(QUERIES))
    )
    config["datasets"][0]["segments"] = "segments.csv"
    config["release"] = {
        "production": "prod",
        "candidate": "cand",
        "guards": [{"measure": "P@3", "max_drop": 0.05, "dataset": "web", "segment": "rare"}],
    }
    outcome = _run(tmp_path, config)
    guard = outcome.decision.guards[0]
    assert guard.verdict == "FAIL" and not guard.evaluated  # a guard that cannot be evaluated never passes
    assert "people judged 1 of the 4 queries, and a correction needs 2 or more" in guard.reason
    row = outcome.comparisons[(outcome.comparisons["dataset"] == "web") & (outcome.comparisons["segment"] == "rare")].iloc[0]
    assert math.isnan(row["delta"]) and not row["significant"] and "people judged 1" in row["estimator_note"]


def test_harness_plan_counts_the_queries_people_would_judge(tmp_path: Path) -> None:
    """On a judged dataset the plan is people's queries (the judge labelling every one): the fewest n at which the
    prediction-powered t's reach, lambda tuned again at n, is within the margin, recomputed here by hand."""
    from harness.pipeline.plan import plan_from_results

    outcome = _run(tmp_path, _write(tmp_path))
    plan = plan_from_results(outcome.results_dir, "P@3", 0.2, systems=["prod", "cand"], dataset="web")
    assert (plan.n_now, plan.judge_queries) == (PEOPLE, QUERIES)
    assert "queries judged by people, the judge labelling all 40" in plan.line()
    people = {s: _per_query(tmp_path, "people.txt", f"{s}.run") for s in ("prod", "cand")}
    judge = {s: _per_query(tmp_path, "judge.txt", f"{s}.run") for s in ("prod", "cand")}
    y = (people["cand"] - people["prod"]).to_numpy()
    f_all = (judge["cand"] - judge["prod"]).to_numpy()
    f = f_all[:PEOPLE]  # people judged the first PEOPLE queries, in the same (sorted) order

    def reach(n: int) -> float:  # one-sided 0.05 (two-sided 0.1) + 80% power, at n people's queries
        rest = QUERIES - n
        lam = 0.0
        if rest:
            lam = min(1.0, max(0.0, np.cov(y, f)[0, 1] / ((1 + n / rest) * f_all.var(ddof=1))))
        variance = (y.var(ddof=1) - 2 * lam * np.cov(y, f)[0, 1] + lam**2 * f.var(ddof=1)) / n
        variance += lam**2 * f_all.var(ddof=1) / rest if rest else 0.0
        return float((stats.t.ppf(0.95, n - 1) + stats.t.ppf(0.8, n - 1)) * math.sqrt(variance))

    assert plan.n_queries is not None
    assert reach(plan.n_queries) <= 0.2 < reach(plan.n_queries - 1)


def test_the_tutorials_judged_gate_on_the_demo_data(tmp_path: Path) -> None:
    """docs/tutorials.md, tutorial 5: configs/trec-judged.yaml FAILs dense against hybrid on the demo judge's labels
    corrected by people's 40 queries, as people's labels of every query do; the judge's alone do not FAIL it."""
    from harness.demo import trec

    trec(tmp_path / "runs" / "trec-demo")
    (tmp_path / "configs").mkdir()
    config = tmp_path / "configs" / "trec-judged.yaml"
    config.write_text((Path(__file__).parents[2] / "configs" / "trec-judged.yaml").read_text())
    text = " ".join((Path(__file__).parents[2] / "docs" / "tutorials.md").read_text().split())
    argv = ["run", str(config), "--output", str(tmp_path / "out"), "--set", "tracking.enabled=false"]
    out = io.StringIO()
    assert main(argv, out, io.StringIO()) == 3  # FAIL
    shown = [line for line in out.getvalue().splitlines() if line.startswith(("release gate", "  guard", "  nDCG@10"))]
    assert shown and all(" ".join(line.split()) in text for line in shown)
    alone = ["--set", "datasets.0.qrels=../runs/trec-demo/judge.txt", "--set", "datasets.0.judge=null"]
    out = io.StringIO()
    assert main([*argv, *alone, "--set", "experiment=trec-judge-only"], out, io.StringIO()) == 6  # INCONCLUSIVE
    assert "0.6015 -> 0.6213" in out.getvalue() and "0.6015 -> 0.6213" in text
    people = {
        name: harness.evaluate(
            harness.read_qrels(tmp_path / "runs" / "trec-demo" / "qrels.txt"),
            harness.read_run(tmp_path / "runs" / "trec-demo" / f"{name}.run"),
            ["nDCG@10"],
        ).values.mean()
        for name in ("hybrid", "dense")
    }
    assert f"{people['hybrid']:.4f} -> {people['dense']:.4f}" in text


def test_the_judge_is_audited_as_harness_agree_audits_it(tmp_path: Path) -> None:
    """agreement.json holds, for each judged dataset, what ``harness agree`` prints for the same files, from the
    values the run computed; the report gets a labels section and summary.md warns that the judge favours the
    candidate; MLflow's parent run has the agreement as metrics."""
    import json

    from mlflow.tracking import MlflowClient

    config = _write(tmp_path)
    config["release"] = WEB_GATE
    config["tracking"] = {"enabled": True}
    config["report"] = {"enabled": True}
    outcome = _run(tmp_path, config)
    saved = json.loads((outcome.results_dir / "agreement.json").read_text())
    assert list(saved) == ["web"]
    out = io.StringIO()
    runs = [f"{s}={tmp_path / f'{s}.run'}" for s in ("prod", "cand")]
    assert (
        main(
            ["agree", str(tmp_path / "people.txt"), str(tmp_path / "judge.txt"), *runs, "-m", "P@3", "--json"], out, io.StringIO()
        )
        == 0
    )
    expected = json.loads(out.getvalue())
    assert saved["web"]["labels"] == expected["labels"]
    for mine, theirs in zip(saved["web"]["systems"], expected["systems"], strict=True):
        assert mine.keys() == theirs.keys()
        assert all(
            mine[k] == pytest.approx(theirs[k], abs=1e-12) if isinstance(theirs[k], float) else mine[k] == theirs[k]
            for k in theirs
        )
    cand = next(s for s in saved["web"]["systems"] if s["name"] == "cand")
    assert cand["favoured"] == "favoured"  # the judge lifts what cand ranks first
    summary = (outcome.results_dir / "summary.md").read_text()
    assert "**Warning: the judge on web**" in summary and "the judge llm favours the candidate cand on P@3" in summary
    report = (outcome.results_dir / "report.html").read_text()
    assert "Labels: the judge llm against people" in report and "Cohen&#39;s kappa" in report
    client = MlflowClient(outcome.tracking_uri)
    metrics = client.get_run(outcome.mlflow_run_id).data.metrics
    assert metrics["judge.web.cohen_kappa"] == pytest.approx(expected["labels"]["cohen_kappa"], abs=1e-12)
    assert metrics["judge.web.p_at_3.cand.favoured"] == 1.0
    assert metrics["judge.web.p_at_3.cand.bias"] == pytest.approx(cand["bias"], abs=1e-12)
    assert "estimator ppi" in client.get_run(outcome.mlflow_run_id).data.tags["judge.web"]


def test_validate_checks_the_judge_as_run_does(tmp_path: Path) -> None:
    config = _write(tmp_path)
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    out = io.StringIO()
    assert main(["validate", str(path), "--quiet"], out, io.StringIO()) == 0
    assert f"the judge llm labels them; people judged {PEOPLE} of the queries (a random sample)" in out.getvalue()
    assert f"dataset web: {QUERIES * DOCS} judgments over {QUERIES} queries" in out.getvalue()
    (tmp_path / "short-judge.txt").write_text(
        "".join(line for line in (tmp_path / "judge.txt").read_text().splitlines(True) if not line.startswith("q03 "))
    )
    config["datasets"][0]["judge"]["qrels"] = "short-judge.txt"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    err = io.StringIO()
    assert main(["validate", str(path), "--quiet"], io.StringIO(), err) == 2
    assert "query 'q03' is judged by people" in err.getvalue()


def test_a_stratified_sample_is_corrected_stratum_by_stratum(tmp_path: Path) -> None:
    """sample: stratified: each system's mean is the strata's corrected means weighted by their shares of the queries
    (ppi_stratified over each stratum's own values), and its gate is decided the same way."""
    from harness.stats.ppi import ppi_stratified

    config = _write(tmp_path)
    stratum = {f"q{q:02d}": "head" if q % 2 else "tail" for q in range(QUERIES)}
    (tmp_path / "strata.csv").write_text("query,stratum\n" + "".join(f"{q},{s}\n" for q, s in stratum.items()))
    config["datasets"][0]["judge"].update(sample="stratified", strata="strata.csv")
    config["release"] = WEB_GATE
    outcome = _run(tmp_path, config)
    people = _per_query(tmp_path, "people.txt", "cand.run")
    judge = _per_query(tmp_path, "judge.txt", "cand.run")
    parts, weights = [], []
    for name in ("head", "tail"):
        mine = [q for q in judge.index if stratum[q] == name]
        sample = [q for q in mine if q in people.index]
        rest = [q for q in mine if q not in people.index]
        parts.append((people[sample].to_numpy(), judge[sample].to_numpy(), judge[rest].to_numpy()))
        weights.append(len(mine) / QUERIES)
    expected = ppi_stratified(parts, weights)
    row = outcome.summary[(outcome.summary["dataset"] == "web") & (outcome.summary["system"] == "cand")].iloc[0]
    assert (row["mean"], row["ci_low"], row["ci_high"]) == pytest.approx(
        (expected.estimate, expected.low, expected.high), abs=1e-12
    )
    assert outcome.decision.guards[0].method.startswith("one-sided prediction-powered t")


def _seeded_config() -> dict[str, Any]:
    """hybrid against dense over their three runs (seeds) each, on the demo's judge corrected by people's sample."""
    return {
        "experiment": "judged-seeds",
        "datasets": [{"name": "trec", "qrels": "people-sample.txt", "judge": {"qrels": "judge.txt", "name": "llm"}}],
        "systems": [{"name": s, "runs": f"seeds/{s}-seed*.run"} for s in ("hybrid", "dense")],
        "measures": ["nDCG@10"],
        "baseline": "hybrid",
        "stats": {"permutations": 200, "resamples": 200},
        "release": {"production": "hybrid", "candidate": "dense", "guards": [{"measure": "nDCG@10", "max_drop": 0.02}]},
        "tracking": {"enabled": False},
        "report": {"enabled": False},
    }


def test_versions_over_seeds_on_a_judged_dataset(tmp_path: Path) -> None:
    """claim: version with a judge: each version's mean and the versions' difference over users and seeds, corrected
    by people's labels (the crossed test on the seed-averaged values, its seed terms from people's tables); the gate
    decides on them, and a folder's gate is computed again with people's values of every run."""
    from harness.demo import trec
    from harness.stats.seeds import crossed_corrected

    trec(tmp_path, n_queries=60, sample=20)
    config = _seeded_config()
    outcome = _run(tmp_path, config)
    row = outcome.comparisons.iloc[0]
    assert (row["estimator"], row["primary_test"], row["n_human"], row["n_queries"]) == ("ppi", "version", 20, 60)
    tables = {}
    for system in ("hybrid", "dense"):
        runs = sorted((tmp_path / "seeds").glob(f"{system}-seed*.run"))
        people = [_per_query(tmp_path, "people-sample.txt", str(r.relative_to(tmp_path)), "nDCG@10") for r in runs]
        judge = [_per_query(tmp_path, "judge.txt", str(r.relative_to(tmp_path)), "nDCG@10") for r in runs]
        tables[system] = (np.array([p.to_numpy() for p in people]), np.array([j.to_numpy() for j in judge]))
    sampled = np.isin(judge[0].index, people[0].index)
    found = crossed_corrected(
        [(tables["hybrid"][0], -1.0), (tables["dense"][0], 1.0)], [tables["hybrid"][1], tables["dense"][1]], sampled
    )
    assert row["delta"] == pytest.approx(found.estimate, abs=1e-12)
    half = stats.t.ppf(0.975, found.df) * math.sqrt(found.variance)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((found.estimate - half, found.estimate + half), abs=1e-12)
    version = outcome.summary[(outcome.summary["seed"] == "all") & (outcome.summary["system"] == "dense")].iloc[0]
    assert version["estimator"] == "ppi" and version["n_human"] == 20
    assert outcome.decision.guards[0].method.startswith("one-sided t over users and seeds")
    assert "20 queries judged by people, 60 by the judge llm" in outcome.decision.headline()
    saved = read_results(outcome.results_dir)
    assert saved.verdict is not None and _disagreement(recompute_gate(saved), saved.verdict) is None


def test_plans_on_a_judged_dataset_count_peoples_queries(tmp_path: Path) -> None:
    """harness plan --gate counts a judged gate's needs in queries judged by people; the seeds' plan of versions is
    refused on a judged dataset, naming what does plan it."""
    from harness.demo import trec

    trec(tmp_path, n_queries=60, sample=20)
    config = _seeded_config()
    folder = str(_run(tmp_path, config).results_dir)
    out = io.StringIO()
    assert main(["plan", folder, "--gate"], out, io.StringIO()) == 0
    assert "queries judged by people" in out.getvalue() and "20 queries judged by people, 60 by the judge llm" in out.getvalue()
    err = io.StringIO()
    assert main(["plan", folder, "--measure", "nDCG@10", "--margin", "0.02"], io.StringIO(), err) == 2
    assert "not built" in err.getvalue() and "--gate" in err.getvalue()


def test_a_family_of_judged_and_other_rows_is_corrected_together(tmp_path: Path) -> None:
    """stats.family: grid puts the judged dataset's row and the other dataset's in one family: each row's p_adj is
    Holm's over both rows' primary p (the prediction-powered t's, the randomisation test's), by hand."""
    config = _write(tmp_path)
    config["stats"] = {**config["stats"], "family": "grid"}
    rows = _run(tmp_path, config).comparisons.set_index("dataset")
    p = [rows.loc["web", "p_ppi"], rows.loc["other", "p_randomization"]]
    low, high = sorted(p)
    holm = {low: min(1.0, 2 * low), high: max(min(1.0, 2 * low), high)}
    assert rows.loc["web", "p_adj"] == pytest.approx(holm[p[0]], abs=1e-15)
    assert rows.loc["other", "p_adj"] == pytest.approx(holm[p[1]], abs=1e-15)
    assert (rows.loc["web", "primary_test"], rows.loc["other", "primary_test"]) == ("ppi", "randomization")


def test_the_verdicts_claim_is_about_peoples_labels(tmp_path: Path) -> None:
    """A gate on a judged dataset claims people's labels, estimated from the judge's corrected by people's: its
    claim sentence (the report's verdict box, summary.md, gate.json's errors) says so, with both counts."""
    config = _write(tmp_path)
    config["release"] = WEB_GATE
    outcome = _run(tmp_path, config)
    assert outcome.decision is not None
    claim = outcome.decision.claim_text
    assert claim.endswith(
        f"about people's labels, estimated as the judge's corrected by theirs: {PEOPLE} queries judged by people, "
        f"{QUERIES} by the judge llm (prediction-powered)"
    )
    assert claim in (outcome.results_dir / "gate.json").read_text()


def test_provenance_records_the_judges_labels_and_the_strata(tmp_path: Path) -> None:
    """The judge's labels and the strata are inputs of a judged dataset's values: provenance.json records each with
    its sha256 (hashlib's, here), as it records the qrels."""
    import hashlib
    import json

    config = _write(tmp_path)
    (tmp_path / "strata.csv").write_text("query,stratum\n" + "".join(f"q{q:02d},{'ab'[q % 2]}\n" for q in range(QUERIES)))
    config["datasets"][0]["judge"].update(sample="stratified", strata="strata.csv")
    outcome = _run(tmp_path, config)
    inputs = {i["role"]: i for i in json.loads((outcome.results_dir / "provenance.json").read_text())["inputs"]}
    for role, name in (("qrels:web", "people.txt"), ("judge:web", "judge.txt"), ("strata:web", "strata.csv")):
        assert inputs[role]["sha256"] == hashlib.sha256((tmp_path / name).read_bytes()).hexdigest(), role
