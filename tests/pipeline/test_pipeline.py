"""harness run end to end: values, layout, provenance, and each profile against the tool it names."""

from __future__ import annotations

import hashlib
import io
import json
import math
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from harness import Qrels, Run, aggregate, evaluate
from harness.cli import main


def _run_config(path: Path, *extra: str) -> dict[str, object]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["run", str(path), "--json", "--quiet", *extra], out, err)
    assert code == 0, err.getvalue()
    return json.loads(out.getvalue())  # type: ignore[no-any-return]


def _write(path: Path, text: str) -> Path:
    path.write_text(textwrap.dedent(text))
    return path


@pytest.fixture
def recsys(tmp_path: Path) -> Path:
    # u1 likes i1 (5) and i2 (4); u2 likes i3 (5); u3 is judged but gets no recommendations.
    _write(tmp_path / "ratings.csv", "user,item,rating\nu1,i1,5\nu1,i2,4\nu1,i9,1\nu2,i3,5\nu3,i4,4\n")
    _write(tmp_path / "a.csv", "user,item,score\nu1,i2,0.9\nu1,i5,0.8\nu1,i1,0.7\nu2,i7,0.9\nu2,i3,0.5\n")
    _write(tmp_path / "b.csv", "user,item,score\nu1,i1,0.9\nu1,i2,0.8\nu2,i3,0.9\nu3,i4,0.9\n")
    _write(tmp_path / "segments.csv", "user,segment\nu1,returning\nu2,new\nu3,new\n")
    return _write(
        tmp_path / "exp.yaml",
        """\
        experiment: rec
        datasets:
          - name: r
            qrels: ratings.csv
            columns: {query: user, doc: item, relevance: rating}
            run_columns: {query: user, doc: item, score: score}
            relevance_level: 4
            segments: {path: segments.csv, query: user, segment: segment}
        systems:
          - name: a
            runs: {r: a.csv}
          - name: b
            runs: {r: b.csv}
        measures: [P, RR, nDCG]
        cutoffs: [2]
        baseline: a
        tracking: {enabled: false}
        report: {enabled: false}
        output: out
        """,
    )


def test_output_csv_writes_the_per_query_table_as_csv_too(recsys: Path) -> None:
    recsys.write_text(recsys.read_text().replace("output: out", "output: {path: out, csv: true}"))
    folder = Path(str(_run_config(recsys)["results_dir"]))
    written = pd.read_csv(folder / "per_query.csv", dtype={"query_id": str})
    record = pd.read_parquet(folder / "per_query.parquet")
    assert len(written) == len(record) == 2 * 3 * 3  # systems x measures x judged users
    assert written["query_id"].tolist() == record["query_id"].astype(str).tolist()
    assert written["value"].tolist() == record["value"].tolist()
    assert yaml.safe_load((folder / "config.resolved.yaml").read_text())["per_query_csv"] is True


def test_values_are_hand_computed_and_match_the_core(recsys: Path) -> None:
    outcome = _run_config(recsys)
    folder = Path(str(outcome["results_dir"]))
    assert folder.parent == recsys.parent / "out" / "rec"
    expected_files = {"per_query.parquet", "summary.parquet", "summary.csv", "diagnostics.csv"}
    assert {p.name for p in folder.iterdir()} >= expected_files | {"config.resolved.yaml", "provenance.json"}
    assert not (folder / "per_query.csv").exists()  # the per-query table's CSV only when asked (output: {csv: true})
    assert (folder.parent / "latest").resolve() == folder.resolve()
    summary = pd.read_parquet(folder / "summary.parquet")

    def value(system, segment, measure):
        return float(summary.query("system == @system and segment == @segment and measure == @measure")["value"].iloc[0])

    # a: u1 ranks i2 (4), i5, i1 (5) -> P@2 1/2, RR 1; u2: i7, i3 (5) -> P@2 1/2, RR 1/2; u3: nothing -> 0
    assert value("a", "all", "P@2") == pytest.approx((0.5 + 0.5 + 0) / 3)
    assert value("a", "all", "RR@2") == pytest.approx((1 + 0.5 + 0) / 3)
    assert value("a", "new", "RR@2") == pytest.approx((0.5 + 0) / 2)
    assert value("a", "returning", "P@2") == pytest.approx(0.5)
    ndcg_u1 = (4 / math.log2(2) + 0) / (5 + 4 / math.log2(3))
    ndcg_u2 = (5 / math.log2(3)) / 5
    assert value("a", "all", "nDCG@2") == pytest.approx((ndcg_u1 + ndcg_u2) / 3)
    assert value("b", "all", "P@2") == pytest.approx((1 + 0.5 + 0.5) / 3)
    ci = summary.query("system == 'a' and segment == 'all' and measure == 'P@2'").iloc[0]
    assert ci["ci_low"] < ci["mean"] < ci["ci_high"] and ci["n_queries"] == 3
    # per-query values equal the core API's on the same inputs
    per_query = pd.read_parquet(folder / "per_query.parquet")
    qrels = Qrels.from_records([("u1", "i1", 5), ("u1", "i2", 4), ("u1", "i9", 1), ("u2", "i3", 5), ("u3", "i4", 4)])
    run = Run.from_records([("u1", "i2", 0.9), ("u1", "i5", 0.8), ("u1", "i1", 0.7), ("u2", "i7", 0.9), ("u2", "i3", 0.5)])
    from harness import Conventions

    core = evaluate(qrels, run, ["P@2", "RR@2", "nDCG@2"], Conventions(relevance_level=4)).to_frame()
    ours = per_query.query("system == 'a'")[["query_id", "measure", "value"]].reset_index(drop=True)
    pd.testing.assert_frame_equal(ours, core[["query_id", "measure", "value"]].reset_index(drop=True))
    diagnostics = pd.read_csv(folder / "diagnostics.csv").set_index("system")
    assert diagnostics.loc["a", "judged_queries_missing_from_run"] == 1
    assert diagnostics.loc["b", "judged_queries_missing_from_run"] == 0


def test_provenance_and_resolved_config(recsys: Path) -> None:
    folder = Path(str(_run_config(recsys)["results_dir"]))
    prov = json.loads((folder / "provenance.json").read_text())
    by_role = {entry["role"]: entry for entry in prov["inputs"]}
    ratings = recsys.parent / "ratings.csv"
    assert by_role["qrels:r"]["sha256"] == hashlib.sha256(ratings.read_bytes()).hexdigest()
    assert by_role["qrels:r"]["bytes"] == ratings.stat().st_size
    assert {"config", "qrels:r", "segments:r", "run:a:r", "run:b:r"} <= set(by_role)
    assert prov["versions"]["harness"] and prov["versions"]["numpy"] and prov["command"][:2] == ["harness", "run"]
    assert prov["started"] <= prov["finished"]
    import yaml

    resolved = yaml.safe_load((folder / "config.resolved.yaml").read_text())
    assert resolved["measures"] == ["P@2", "RR@2", "nDCG@2"]
    assert resolved["conventions"]["ties"] == "trec_eval"


def test_json_output_and_quiet(recsys: Path) -> None:
    outcome = _run_config(recsys)
    assert set(outcome) >= {"results_dir", "report", "tracking_uri", "mlflow_run_id", "gate"}
    assert outcome["gate"] == "none" and outcome["mlflow_run_id"] is None


def test_cli_override_of_a_convention(recsys: Path) -> None:
    folder = Path(str(_run_config(recsys, "--set", "queries=intersection")["results_dir"]))
    summary = pd.read_parquet(folder / "summary.parquet")
    row = summary.query("system == 'a' and segment == 'all' and measure == 'RR@2'").iloc[0]
    assert row["n_queries"] == 2 and row["value"] == pytest.approx(0.75)


# ---- profiles: each reproduces the tool it names ---------------------------------------


def _trec_files(tmp_path: Path, seed: int) -> tuple[dict, dict]:  # type: ignore[type-arg]
    from tests.generated import adversarial

    qrels, run = adversarial(seed)
    (tmp_path / "qrels.txt").write_text("".join(f"{q} 0 {d} {r}\n" for q, docs in qrels.items() for d, r in docs.items()))
    (tmp_path / "a.run").write_text("".join(f"{q} Q0 {d} 0 {s} a\n" for q, docs in run.items() for d, s in docs.items()))
    return qrels, run


@pytest.mark.parametrize("seed", [1, 2])
def test_trec_eval_profile_matches_pytrec_eval(tmp_path: Path, seed: int) -> None:
    import pytrec_eval

    qrels, run = _trec_files(tmp_path, seed)
    _write(
        tmp_path / "exp.yaml",
        """\
        experiment: p
        datasets: [{name: d, qrels: qrels.txt}]
        systems: [{name: a, runs: {d: a.run}}]
        measures: [nDCG@10, P@5, {measure: AP, cutoffs: []}, RR, Bpref]
        profile: trec_eval
        tracking: {enabled: false}
        report: {enabled: false}
        output: out
        """,
    )
    folder = Path(str(_run_config(tmp_path / "exp.yaml")["results_dir"]))
    ours = pd.read_parquet(folder / "per_query.parquet").set_index(["query_id", "measure"])["value"]
    peer = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "P.5", "map", "recip_rank", "bpref"}).evaluate(run)
    names = {"ndcg_cut_10": "nDCG@10", "P_5": "P@5", "map": "AP", "recip_rank": "RR", "bpref": "Bpref"}
    for qid, values in peer.items():
        for key, name in names.items():
            assert ours[(qid, name)] == pytest.approx(values[key], abs=1e-12), (qid, name)


def test_sklearn_profile_matches_ndcg_score(tmp_path: Path) -> None:
    from sklearn.metrics import ndcg_score

    rng = np.random.default_rng(5)
    truth, preds, expected = [], [], {}
    for u in range(40):
        n = int(rng.integers(3, 12))
        labels = rng.integers(0, 5, size=n)
        scores = np.round(rng.random(n) * 4) / 4  # ties
        for i in range(n):
            truth.append(f"u{u},i{i},{labels[i]}")
            preds.append(f"u{u},i{i},{scores[i]}")
        expected[f"u{u}"] = (ndcg_score(labels[None], scores[None], k=5), ndcg_score(labels[None], scores[None]))
    (tmp_path / "truth.csv").write_text("user,item,rating\n" + "\n".join(truth) + "\n")
    (tmp_path / "pred.csv").write_text("user,item,score\n" + "\n".join(preds) + "\n")
    _write(
        tmp_path / "exp.yaml",
        """\
        experiment: s
        datasets:
          - name: d
            qrels: truth.csv
            columns: {query: user, doc: item, relevance: rating}
            run_columns: {query: user, doc: item}
        systems: [{name: a, runs: {d: pred.csv}}]
        measures: [nDCG@5, {measure: nDCG, cutoffs: []}]
        profile: sklearn
        tracking: {enabled: false}
        report: {enabled: false}
        output: out
        """,
    )
    folder = Path(str(_run_config(tmp_path / "exp.yaml")["results_dir"]))
    ours = pd.read_parquet(folder / "per_query.parquet").set_index(["query_id", "measure"])["value"]
    for user, (at5, full) in expected.items():
        assert ours[(user, "nDCG@5")] == pytest.approx(at5, abs=1e-12)
        assert ours[(user, "nDCG")] == pytest.approx(full, abs=1e-12)


def _msrec_reference(truth: pd.DataFrame, pred: pd.DataFrame, k: int) -> dict[str, dict[str, float]]:
    """Microsoft Recommenders' formulas (semantics.md section 2 and 4), written out slowly.

    Users in both frames only, but for nDCG every truth user (ndcg_at_k's outer merge
    with the truth keeps those without predictions, at 0, in its mean); the top k by
    prediction, ties kept in input order (pandas nlargest keep='first'); every truth
    row is relevant; nDCG with the raw rating as gain and IDCG from the user's best k
    ratings; MAP@k over min(R, k).
    """
    out: dict[str, dict[str, float]] = {user: {f"nDCG@{k}": 0.0} for user in sorted(set(truth.user) - set(pred.user))}
    for user in sorted(set(truth.user) & set(pred.user)):
        t = truth[truth.user == user].set_index("item")["rating"]
        p = pred[pred.user == user].nlargest(k, "score", keep="first")
        hits = [item in t.index for item in p.item]
        gains = [float(t.get(item, 0.0)) for item in p.item]
        dcg = sum(g / math.log2(i + 2) for i, g in enumerate(gains))
        ideal = sorted(t.values, reverse=True)[:k]
        idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
        running, ap = 0, 0.0
        for i, hit in enumerate(hits):
            if hit:
                running += 1
                ap += running / (i + 1)
        out[user] = {
            f"P@{k}": sum(hits) / k,
            f"R@{k}": sum(hits) / len(t),
            f"nDCG@{k}": dcg / idcg,
            f"AP@{k}": ap / min(len(t), k),
        }
    return out


def test_msrec_profile_matches_microsoft_recommenders_formulas(tmp_path: Path) -> None:
    rng = np.random.default_rng(9)
    truth_rows, pred_rows = [], []
    for u in range(60):
        liked = rng.choice(40, size=int(rng.integers(1, 8)), replace=False)
        truth_rows += [(f"u{u}", f"i{i}", int(rng.integers(1, 6))) for i in liked]
        if u % 6 != 0:  # some users get no predictions: msrec leaves them out
            shown = rng.choice(40, size=15, replace=False)
            pred_rows += [(f"u{u}", f"i{i}", float(np.round(rng.random() * 3) / 3)) for i in shown]  # ties
    for u in range(60, 64):  # and some predicted users have no truth
        pred_rows += [(f"u{u}", "i1", 1.0)]
    truth = pd.DataFrame(truth_rows, columns=["user", "item", "rating"])
    pred = pd.DataFrame(pred_rows, columns=["user", "item", "score"])
    truth.to_csv(tmp_path / "truth.csv", index=False)
    pred.to_csv(tmp_path / "pred.csv", index=False)
    _write(
        tmp_path / "exp.yaml",
        """\
        experiment: m
        datasets:
          - name: d
            qrels: truth.csv
            columns: {query: user, doc: item, relevance: rating}
            run_columns: {query: user, doc: item}
        systems: [{name: a, runs: {d: pred.csv}}]
        measures: [P, R, nDCG, AP]
        cutoffs: [5]
        profile: msrec
        tracking: {enabled: false}
        report: {enabled: false}
        output: out
        """,
    )
    folder = Path(str(_run_config(tmp_path / "exp.yaml")["results_dir"]))
    ours = pd.read_parquet(folder / "per_query.parquet").set_index(["query_id", "measure"])["value"]
    expected = _msrec_reference(truth, pred, 5)
    assert sorted({q for q, _ in ours.index}) == sorted(expected)
    assert {q for q, m in ours.index if m == "P@5"} == set(truth.user) & set(pred.user)  # the others: both frames
    for user, values in expected.items():
        for name, value in values.items():
            assert ours[(user, name)] == pytest.approx(value, abs=1e-12), (user, name)
    means = aggregate(evaluate(Qrels.from_records(truth_rows), Run.from_records(pred_rows), ["P@5"]))
    assert len(means) == 1


def test_runs_evaluated_in_parallel_give_the_serial_values(tmp_path: Path) -> None:
    """engine.workers: threads evaluate the runs at once; every value and p-value equals the serial path's."""
    import json

    from tests.records.test_previous import _many_queries

    config = _many_queries(tmp_path, "{measure: AP, max_drop: 1}", extra_system=True)
    folders = []
    for workers in (1, 3):
        out = io.StringIO()
        assert main(["run", str(config), "--quiet", "--json", "--set", f"engine.workers={workers}"], out, io.StringIO()) == 0
        folders.append(Path(json.loads(out.getvalue())["results_dir"]))
    for table in ("per_query", "summary", "comparisons", "diagnostics"):
        pd.testing.assert_frame_equal(
            pd.read_parquet(folders[0] / f"{table}.parquet"), pd.read_parquet(folders[1] / f"{table}.parquet")
        )
    out, err = io.StringIO(), io.StringIO()
    assert main(["run", str(config), "--quiet", "--set", "engine.workers=0"], out, err) == 2
    assert "workers must be at least 1, got 0" in err.getvalue()


def test_subtopic_judgments_in_a_config_and_on_the_command_line(tmp_path: Path) -> None:
    """format: ndeval in a config, --qrels-format ndeval for harness eval: the intent-aware measures from the subtopics,
    the others from each document's largest judgment, the same values either way and as the evaluator gives them
    (tests/engines/test_dask.py: the same on the cluster)."""
    from harness.data.load import load_run
    from harness.data.trec import read_subtopic_qrels
    from harness.evaluation.evaluator import Evaluator
    from tests.conftest import FAIRNESS

    qrels, run = FAIRNESS / "div_qrels.txt", FAIRNESS / "div_run.txt"
    measures = ["alpha_nDCG@20", "ERR_IA@10", "nNRBP", "StRecall@10", "nDCG@10"]
    config = _write(
        tmp_path / "config.yaml",
        f"""\
        experiment: diversity
        datasets: [{{name: web, qrels: {qrels}, format: ndeval}}]
        systems: [{{name: divrun, runs: {{web: {run}}}}}]
        measures: [{", ".join(repr(m) for m in measures)}]
        tracking: {{enabled: false}}
        output: {tmp_path / "out"}
    """,
    )
    folder = Path(str(_run_config(config)["results_dir"]))
    summary = pd.read_csv(folder / "summary.csv")
    overall = summary[summary["segment"] == "all"].set_index("measure")["value"]
    expected = Evaluator(read_subtopic_qrels(qrels), measures).evaluate(load_run(run))
    for j, m in enumerate(expected.measures):
        assert math.isclose(overall[str(m)], float(expected.values[:, j].mean()), rel_tol=1e-12), m
    out, err = io.StringIO(), io.StringIO()
    assert (
        main(["eval", "--qrels-format", "ndeval", "--format", "json", "-m", ",".join(measures), str(qrels), str(run)], out, err)
        == 0
    ), err.getvalue()
    printed = {r["measure"]: r["value"] for r in json.loads(out.getvalue())["results"] if r["query_id"] == "all"}
    assert printed.keys() == set(measures)
    for m in measures:
        assert math.isclose(printed[m], overall[m], rel_tol=1e-12), m


def test_a_release_gate_on_a_fairness_measure(tmp_path: Path) -> None:
    """A guard on REO@10, a system measure summed over users: the candidate reorders each user's top 10 and keeps its
    items, so REO@10 is the same in the run and in every resample of the users (the drop is exactly 0 in each): PASS,
    with the one-sided bound at 0."""
    from tests.engines.test_dask import _fairness_config

    config = _fairness_config(tmp_path)
    text = config.read_text().replace(
        "guards: [{measure: 'REO(group=provider)@10', max_drop: 0.05}, {measure: 'PSP@5', max_drop: 0.1}]",
        "guards: [{measure: 'REO(group=provider)@10', max_drop: 0.05}]",
    )
    assert text != config.read_text()
    config.write_text(text.replace("output: out", f"output: {tmp_path / 'out'}"))
    outcome = _run_config(config)
    assert outcome["gate"] == "PASS"
    gate = json.loads((Path(str(outcome["results_dir"])) / "gate.json").read_text())
    (guard,) = gate["guards"]
    assert guard["verdict"] == "PASS" and guard["drop"] == 0.0 and guard["drop_high"] == 0.0, guard
    # the per-group values behind REO: Elliot's P_g per provider for the peers' run, the same for the rerank (its items
    # are the same); drawn in the report, one bar per system and provider
    from tests.conftest import FAIRNESS

    folder = Path(str(outcome["results_dir"]))
    elliot = next(
        e
        for e in json.loads((FAIRNESS / "expected.json").read_text())["values"]
        if e["id"] == "elliot.REO.provider@10" and e["ties"] == "trec_eval"
    )
    groups = pd.read_csv(folder / "groups.csv", dtype={"group": str})
    reo = groups[groups["measure"] == "REO(group='provider')@10"]
    for system in ("peers", "rerank"):
        got = reo[reo["system"] == system].set_index("group")["value"].to_dict()
        assert got.keys() == elliot["per_group"].keys(), got
        assert all(math.isclose(got[g], want, rel_tol=0, abs_tol=1e-12) for g, want in elliot["per_group"].items()), got
    assert set(groups["measure"]) >= {"RSP(group='provider')@5", "PopREO@10", "ItemMAD(gain='rating',group='popgroup')@5"}
    report = (folder / "report.html").read_text()
    assert "REO(group=&#39;provider&#39;)@10: each group" in report
    assert report.count('<rect class="bar"') == len(groups)  # every value a bar (none is NaN here)


def test_expected_exposure_of_a_stochastic_run_in_a_release_gate(tmp_path: Path) -> None:
    """EE_L per query, paired-tested and guarded: the candidate rotates each sampled ranking, spreading exposure, so
    EE_L falls and the guard passes. The values are expeval's (its golden mean for gerr, relevant documents, raw),
    and nDCG@10 reads each query's first sample, as the sample-0 lines alone evaluate."""
    from harness.data.load import load_qrels
    from harness.evaluation.evaluator import Evaluator
    from tests.conftest import FAIRNESS
    from tests.engines.test_dask import _exposure_config

    config = _exposure_config(tmp_path)
    config.write_text(config.read_text().replace("output: out", f"output: {tmp_path / 'out'}"))
    outcome = _run_config(config)
    assert outcome["gate"] == "PASS"
    folder = Path(str(outcome["results_dir"]))
    summary = pd.read_csv(folder / "summary.csv")
    ppl = summary[(summary["system"] == "ppl") & (summary["segment"] == "all")].set_index("measure")["value"]
    golden = json.loads((FAIRNESS / "expected.json").read_text())["values"]
    want = next(e for e in golden if e["id"] == "expeval.EE-L.gerr.doc.incomplete.raw")
    assert math.isclose(ppl["EE_L"], want["value"], abs_tol=1e-9)
    lines = [line for line in (FAIRNESS / "ee_run.txt").read_text().splitlines() if line.split()[1] == "0"]
    first = Run.from_records([(f[0], f[2], float(f[4])) for f in (line.split() for line in lines)])
    qrels = load_qrels(FAIRNESS / "ee_qrels.txt")
    assert math.isclose(ppl["nDCG@10"], float(Evaluator(qrels, ["nDCG@10"]).evaluate(first).values.mean()), rel_tol=1e-12)
    (guard,) = json.loads((folder / "gate.json").read_text())["guards"]
    assert guard["verdict"] == "PASS" and guard["drop"] < 0 and guard["drop_high"] < 0.05, guard
