"""harness explain and --match: each peer's value against an independent computation of that peer's definitions.

pytrec_eval and scikit-learn are run themselves (test-only cross-checks). RecBole, Elliot and
Microsoft Recommenders are not installable here (torch; the registry has no Elliot), so their
formulas are written out below from their source, one loop per user, independently of harness's
kernels: recbole/evaluator/metrics.py (NDCG, MAP, Precision, Recall, MRR, Hit);
elliot/evaluation/metrics/accuracy/ (nDCG with relevance.py's 2^(r - t + 1) - 1 gains, Precision,
Recall, MRR); recommenders/evaluation/python_evaluation.py (ndcg_at_k with binary relevance,
map_at_k over min(R, k), users in both frames).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import pytrec_eval

from harness import Conventions, Evaluator, Qrels, Run, explain
from harness.cli import main
from harness.evaluation.explain import explain as explain_measures
from harness.evaluation.explain import match, search_space
from harness.evaluation.results import aggregate_values
from harness.measures.conventions import Conventions as Conv
from harness.measures.parse import parse_measure
from harness.measures.peers import PEERS, USED_BY
from harness.measures.registry import REGISTRY
from tests.generated import adversarial, to_harness

K = 5


def _recsys_case(seed: int) -> tuple[list[tuple[str, str, int]], list[tuple[str, str, float]]]:
    """Users with graded test items (some users' items all rated 0), runs of 8 items in file order with tied scores
    whose file order differs from trec_eval's docno order."""
    rng = np.random.default_rng(seed)
    qrels, run = [], []
    for u in range(30):
        user = f"u{u:02d}"
        items = [f"i{int(i):03d}" for i in rng.choice(60, size=14, replace=False)]
        truth = items[: int(rng.integers(1, 7))]
        zero = u % 6 == 5  # a user whose test items are all rated 0: not a test user for RecBole, Elliot
        qrels += [(user, i, 0 if zero else int(rng.integers(1, 4))) for i in truth]
        listed = list(rng.permutation(items))[:8]
        scores = np.sort(np.round(rng.random(8) * 3))[::-1]  # coarse: ties
        run += [(user, i, float(s)) for i, s in zip(listed, scores, strict=True)]
    return qrels, run


def _lists(qrels: list[Any], run: list[Any]) -> tuple[dict[str, dict[str, int]], dict[str, list[str]]]:
    truth: dict[str, dict[str, int]] = {}
    for u, i, r in qrels:
        truth.setdefault(u, {})[i] = r
    ranked: dict[str, list[tuple[str, float]]] = {}
    for u, i, s in run:
        ranked.setdefault(u, []).append((i, s))
    # by score, ties in file order (a stable sort): RecBole's given top-k, Elliot's sorted(), msrec's input order
    return truth, {u: [i for i, _ in sorted(rows, key=lambda x: -x[1])] for u, rows in ranked.items()}


def _recbole(truth: dict[str, dict[str, int]], lists: dict[str, list[str]]) -> dict[str, float]:
    """RecBole's top-k metrics: pos_index over the top k, pos_len the user's positives; users with a positive."""
    out: dict[str, list[float]] = {"nDCG": [], "AP": [], "P": [], "R": [], "RR": [], "Success": []}
    for user, rated in truth.items():
        positives = {i for i, r in rated.items() if r >= 1}
        if not positives:
            continue
        hits = [1.0 if i in positives else 0.0 for i in lists.get(user, [])[:K]] + [0.0] * K
        hits = hits[:K]
        dcg = sum(h / math.log2(r + 2) for r, h in enumerate(hits))
        idcg = sum(1 / math.log2(r + 2) for r in range(min(len(positives), K)))
        out["nDCG"].append(dcg / idcg)
        precisions = [sum(hits[: r + 1]) / (r + 1) for r in range(K)]
        out["AP"].append(sum(p * h for p, h in zip(precisions, hits, strict=True)) / min(len(positives), K))
        out["P"].append(sum(hits) / K)
        out["R"].append(sum(hits) / len(positives))
        out["RR"].append(next((1 / (r + 1) for r, h in enumerate(hits) if h), 0.0))
        out["Success"].append(float(any(hits)))
    return {m: float(np.mean(v)) for m, v in out.items()}


def _elliot(truth: dict[str, dict[str, int]], lists: dict[str, list[str]], threshold: int = 1) -> dict[str, float]:
    """Elliot's nDCG (gains 2^(r - t + 1) - 1 from the relevance threshold t, ideal from the user's gains), Precision,
    Recall and MRR, over the users with a relevant item."""
    out: dict[str, list[float]] = {"nDCG": [], "P": [], "R": [], "RR": []}
    for user, rated in truth.items():
        gains = {i: 2.0 ** (r - threshold + 1) - 1 for i, r in rated.items() if r >= threshold}
        if not gains:
            continue
        top = lists.get(user, [])[:K]
        dcg = sum(gains.get(i, 0.0) / math.log2(r + 2) for r, i in enumerate(top))
        ideal = sorted(gains.values(), reverse=True)[:K]
        idcg = sum(g / math.log2(r + 2) for r, g in enumerate(ideal))
        out["nDCG"].append(dcg / idcg if dcg > 0 else 0.0)
        hits = [1.0 if i in gains else 0.0 for i in top]
        out["P"].append(sum(hits) / K)
        out["R"].append(sum(hits) / len(gains))
        out["RR"].append(next((1 / (r + 1) for r, h in enumerate(hits) if h), 0.0))
    return {m: float(np.mean(v)) for m, v in out.items()}


def _msrec(truth: dict[str, dict[str, int]], lists: dict[str, list[str]]) -> dict[str, float]:
    """Microsoft Recommenders' map_at_k (over min(R, k)), precision_at_k and recall_at_k over the users in both frames;
    ndcg_at_k (binary relevance) over every truth user, as its outer merge with the truth keeps the users without
    predictions (their DCG sums to 0). Here every truth row is rated 1 or more, so every one is relevant."""
    out: dict[str, list[float]] = {"nDCG": [], "AP": [], "P": [], "R": []}
    for user, rated in truth.items():
        relevant = set(rated)
        if user not in lists:
            out["nDCG"].append(0.0)
            continue
        hits = [1.0 if i in relevant else 0.0 for i in lists[user][:K]]
        dcg = sum(h / math.log2(r + 2) for r, h in enumerate(hits))
        idcg = sum(1 / math.log2(r + 2) for r in range(min(len(relevant), K)))
        out["nDCG"].append(dcg / idcg)
        precisions = [sum(hits[: r + 1]) / (r + 1) for r in range(len(hits))]
        out["AP"].append(sum(p * h for p, h in zip(precisions, hits, strict=True)) / min(len(relevant), K))
        out["P"].append(sum(hits) / K)
        out["R"].append(sum(hits) / len(relevant))
    return {m: float(np.mean(v)) for m, v in out.items()}


def _peer_values(qrels: list[Any], run: list[Any], peer: str, names: list[str], level: int = 1) -> dict[str, float]:
    found = explain_measures(
        Qrels.from_records(qrels), Run.from_records(run), [f"{n}@{K}" for n in names], Conv(relevance_level=level), peers=[peer]
    )
    out = {}
    for explanation in found:
        (value,) = explanation.peers
        assert value.value is not None, value.note
        out[explanation.measure.name] = value.value
    return out


@pytest.mark.parametrize("seed", range(3))
def test_recbole_profile_gives_recboles_formulas(seed: int) -> None:
    qrels, run = _recsys_case(seed)
    names = ["nDCG", "AP", "P", "R", "RR", "Success"]
    ours = _peer_values(qrels, run, "recbole", names)
    theirs = _recbole(*_lists(qrels, run))
    for name in names:
        assert ours[name] == pytest.approx(theirs[name], abs=1e-12), name
    # the default conventions do not: trec_eval breaks these ties by docno and AP@k divides by R
    default = Evaluator(Qrels.from_records(qrels), [f"AP@{K}"]).evaluate(Run.from_records(run))
    assert abs(aggregate_values(parse_measure(f"AP@{K}"), default.values[:, 0]) - theirs["AP"]) > 1e-3


@pytest.mark.parametrize("threshold", [1, 2])
@pytest.mark.parametrize("seed", range(3))
def test_elliot_profile_gives_elliots_formulas(seed: int, threshold: int) -> None:
    """Elliot's relevance threshold is harness's relevance level; at 2 its gains are no longer 2^r - 1."""
    qrels, run = _recsys_case(seed)
    names = ["nDCG", "P", "R", "RR"]
    theirs = _elliot(*_lists(qrels, run), threshold=threshold)
    assert _peer_values(qrels, run, "elliot", names, level=threshold) == pytest.approx(theirs, abs=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_msrec_profile_gives_microsoft_recommenders_formulas(seed: int) -> None:
    qrels, run = _recsys_case(seed)
    qrels = [(u, i, r) for u, i, r in qrels if r >= 1]  # msrec counts every truth row: give it only relevant ones
    run = [row for row in run if row[0] != "u03"] + [("u99", "i001", 1.0)]  # a user missing, a user unjudged
    names = ["nDCG", "AP", "P", "R"]
    assert _peer_values(qrels, run, "msrec", names) == pytest.approx(_msrec(*_lists(qrels, run)), abs=1e-12)


def test_elliot_map_and_sklearn_precision_are_said_to_be_out_of_reach() -> None:
    qrels, run = _recsys_case(0)
    found = explain_measures(Qrels.from_records(qrels), Run.from_records(run), [f"AP@{K}", f"P@{K}"], peers=["elliot", "sklearn"])
    notes = {(e.measure.name, p.peer.name): (p.value, p.note) for e in found for p in e.peers}
    assert notes["AP", "elliot"][0] is None and "mean of P@1" in notes["AP", "elliot"][1]
    assert notes["P", "sklearn"][0] is None and "ndcg_score" in notes["P", "sklearn"][1]
    assert notes["P", "elliot"][0] is not None


@pytest.mark.parametrize("seed", range(4))
def test_pytrec_eval_row_is_pytrec_evals_mean(seed: int) -> None:
    """pytrec_eval averages over the queries both dicts have; harness's row for it says the same."""
    qrels_dict, run_dict = adversarial(seed)
    qrels, run = to_harness(qrels_dict, run_dict)
    peer = pytrec_eval.RelevanceEvaluator(qrels_dict, {"ndcg_cut", "map_cut", "P", "recip_rank"}).evaluate(run_dict)
    names = {"nDCG@10": "ndcg_cut_10", "AP@10": "map_cut_10", "P@10": "P_10", "RR": "recip_rank"}
    for explanation in explain_measures(qrels, run, list(names), peers=["pytrec_eval"]):
        expected = float(np.mean([v[names[str(explanation.measure)]] for v in peer.values()]))
        assert explanation.peers[0].value == pytest.approx(expected, abs=1e-12), explanation.measure


@pytest.mark.parametrize("seed", range(4))
def test_ir_measures_row_is_ir_measures_own_value(seed: int) -> None:
    """ir_measures' own aggregates on tied and negative-labelled data: pytrec_eval's trec_eval 9 for most measures (its
    interpolated precision cut), MS MARCO's script for RR@k (ties by doc id ascending, scores as doubles)."""
    import ir_measures

    qrels_dict, run_dict = adversarial(seed)
    qrels, run = to_harness(qrels_dict, run_dict)
    names = ["RR@10", "RR", "nDCG@10", "P@5", "AP", "IPrec@0.3", "R@20"]
    theirs = ir_measures.calc_aggregate([ir_measures.parse_measure(n) for n in names], qrels_dict, run_dict)
    expected = {str(m): float(v) for m, v in theirs.items()}
    rows = {str(e.measure): e.peers[0] for e in explain_measures(qrels, run, names, peers=["ir_measures"])}
    for name in names:
        key = str(parse_measure(name))
        assert rows[key].value == pytest.approx(expected[name], abs=1e-12), name
    assert {"ties": "docno_ascending", "scores": "float64"}.items() <= rows["RR@10"].differences.items()


@pytest.mark.parametrize("seed", range(3))
def test_sklearn_row_is_ndcg_scores_mean(seed: int) -> None:
    from sklearn.metrics import ndcg_score

    rng = np.random.default_rng(40 + seed)
    qrels, run, scores = [], [], []
    for q in range(25):
        n = int(rng.integers(2, 12))
        labels, values = rng.integers(0, 4, size=n), np.round(rng.random(n) * 3)
        if not labels.any():
            labels[0] = 1
        qrels += [(f"q{q}", f"d{i}", int(labels[i])) for i in range(n)]
        run += [(f"q{q}", f"d{i}", float(values[i])) for i in range(n)]
        scores.append(ndcg_score([labels], [values], k=K))
    qrels.append(("q0", "never-listed", 3))  # judged but not listed: invisible to ndcg_score (ideal from the listed)
    (explanation,) = explain_measures(Qrels.from_records(qrels), Run.from_records(run), [f"nDCG@{K}"], peers=["sklearn"])
    assert explanation.peers[0].value == pytest.approx(float(np.mean(scores)), abs=1e-12)


def test_each_settings_effect_alone_by_hand() -> None:
    """q1: 3 relevant, the top 2 both hits: AP@2 = (1 + 1)/3 under R, 2/2 under min(R, k). q2: 1 relevant at rank 1:
    1 either way. So min_R_k alone changes one query, by 1/3, and the mean by 1/6."""
    qrels = Qrels.from_records([("q1", "a", 1), ("q1", "b", 1), ("q1", "c", 1), ("q2", "x", 1)])
    run = Run.from_records([("q1", "a", 2.0), ("q1", "b", 1.0), ("q2", "x", 1.0)])
    (explanation,) = explain_measures(qrels, run, ["AP@2"], peers=["msrec"])
    assert explanation.value == pytest.approx((2 / 3 + 1) / 2)
    effects = {e.setting: e for e in explanation.peers[0].effects}
    assert effects["ap_denominator=min_R_k"].queries_affected == 1
    assert effects["ap_denominator=min_R_k"].delta == pytest.approx(1 / 6)
    assert effects["ties=input_order"].queries_affected == 0  # no tie here
    assert effects["all"].value == pytest.approx(1.0)


@pytest.mark.slow
@pytest.mark.parametrize("draw", range(6))
def test_match_finds_the_settings_that_made_a_value(draw: int) -> None:
    """A value computed under settings drawn at random is found by match among its exact matches, and every match
    listed gives that value when evaluated on its own."""
    rng = np.random.default_rng(900 + draw)
    qrels_dict, run_dict = adversarial(draw, n_queries=24)
    qrels, run = to_harness(qrels_dict, run_dict)
    measure = parse_measure(["nDCG@5", "AP@5", "P@5", "RR", "R@5", "nDCG"][draw])
    space = search_space(measure, qrels)
    chosen = {key: options[int(rng.integers(len(options)))] for key, options in space.items()}
    gain = chosen.pop("gain", None)
    asked = (
        measure
        if gain in (None, "linear")
        else parse_measure(f"{measure.name}(gain={gain})" + (f"@{measure.cutoff}" if measure.cutoff else ""))
    )
    conventions = Conv.from_mapping(chosen)
    values = Evaluator(qrels, [asked], conventions).evaluate(run).values[:, 0]
    target = aggregate_values(asked, values)
    found = match(qrels, run, measure, target, tol=0.0)
    wanted = {**chosen, **({} if gain is None else {"gain": gain})}
    assert any(m.settings == wanted for m in found), (wanted, [m.settings for m in found[:3]])
    for m in found[:: max(1, len(found) // 5)]:  # a sample of the others, evaluated again
        settings = dict(m.settings)
        g = settings.pop("gain", None)
        again = (
            measure
            if g in (None, "linear")
            else parse_measure(f"{measure.name}(gain={g})" + (f"@{measure.cutoff}" if measure.cutoff else ""))
        )
        value = aggregate_values(again, Evaluator(qrels, [again], Conv.from_mapping(settings)).evaluate(run).values[:, 0])
        assert value == target


def test_match_names_the_profile_and_says_when_nothing_is_close() -> None:
    qrels, run = _recsys_case(1)
    target = _recbole(*_lists(qrels, run))["AP"]
    found = match(Qrels.from_records(qrels), Run.from_records(run), f"AP@{K}", target, tol=1e-12)
    assert "recbole" in {m.profile for m in found}
    far = match(Qrels.from_records(qrels), Run.from_records(run), f"AP@{K}", 7.0)
    assert far and all(m.distance > 1 for m in far)  # the nearest values, none within the tolerance


def test_every_profile_option_is_listed_as_used_by_its_peer() -> None:
    for peer in PEERS.values():
        for option, value in peer.conventions.items():
            assert peer.name in USED_BY[option, str(value)], (peer.name, option, value)


def test_the_relevant_query_universe_leaves_out_queries_without_a_relevant_judgment() -> None:
    qrels = Qrels.from_records([("q1", "a", 1), ("q2", "b", 0), ("q3", "c", 2)])
    run = Run.from_records([("q1", "a", 1.0), ("q2", "b", 1.0)])
    per_query = Evaluator(qrels, ["P@1"], Conventions(queries="relevant")).evaluate(run)  # type: ignore[arg-type]
    assert per_query.query_ids.tolist() == ["q1", "q3"] and per_query.values[:, 0].tolist() == [1.0, 0.0]
    at_two = Evaluator(qrels, ["P@1"], Conventions(queries="relevant", relevance_level=2)).evaluate(run)  # type: ignore[arg-type]
    assert at_two.query_ids.tolist() == ["q3"]


def test_the_api_returns_the_tables(tmp_path: Any) -> None:
    qrels, run = _recsys_case(2)
    table = explain(Qrels.from_records(qrels), Run.from_records(run), [f"nDCG@{K}"])
    recbole = table[(table.peer == "recbole") & (table.setting == "all")].value.item()
    assert recbole == pytest.approx(_recbole(*_lists(qrels, run))["nDCG"], abs=1e-12)
    found = explain(Qrels.from_records(qrels), Run.from_records(run), f"nDCG@{K}", match=recbole, tol=1e-12)
    assert (found.distance <= 1e-12).all() and "recbole" in set(found.profile.dropna())
    with pytest.raises(Exception, match="one measure"):
        explain(Qrels.from_records(qrels), Run.from_records(run), ["P@5", "R@5"], match=0.5)
    with pytest.raises(Exception, match="unknown peer 'pyterrier'"):
        explain(Qrels.from_records(qrels), Run.from_records(run), "P@5", peers=["pyterrier"])


def _files(tmp_path: Any) -> tuple[str, str]:
    qrels, run = _recsys_case(0)
    qrels_path, run_path = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels_path.write_text("".join(f"{u} 0 {i} {r}\n" for u, i, r in qrels))
    # TREC runs are ordered by score, then by the file: keep each user's lines in their order
    run_path.write_text("".join(f"{u} Q0 {i} {n} {s} r\n" for n, (u, i, s) in enumerate(run)))
    return str(qrels_path), str(run_path)


def test_cli_explain_prints_each_peer_and_matches_as_json(tmp_path: Any, capsys: Any) -> None:
    qrels_path, run_path = _files(tmp_path)
    assert main(["explain", qrels_path, run_path, "-m", f"AP@{K}"]) == 0
    text = capsys.readouterr().out
    theirs = _recbole(*_lists(*_recsys_case(0)))["AP"]
    assert "RecBole" in text and f"{theirs:8.4f}" in text and "ap_denominator=min_R_k alone" in text
    assert "Elliot" in text and "not reproduced" in text
    assert (
        main(["explain", qrels_path, run_path, "-m", f"AP@{K}", "--match", repr(theirs), "--tol", "1e-12", "--format", "json"])
        == 0
    )
    record = json.loads(capsys.readouterr().out)
    assert record["within_tol"] and record["matches"][0]["distance"] <= 1e-12
    assert "recbole" in {m["profile"] for m in record["matches"]}
    assert set(record["matches"][0]) == {"conventions", "changes", "value", "distance", "profile", "note"}
    recbole = next(m for m in record["matches"] if m["profile"] == "recbole")
    assert recbole["note"] == PEERS["recbole"].caveat  # the note explain's table prints beside RecBole's row


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["-m", "P@5", "--match", "0.5", "--tol", "-1"], "--tol must be 0 or more"),
        (["-m", "P@5,R@5", "--match", "0.5"], "--match searches for one measure"),
        (["-m", "Coverage@5"], "Coverage@5 needs training interactions"),
        ([], "explain needs a measure"),
        (["-m", "nDGC@5"], "unknown measure"),
        (["-m", "P@5", "--train", "missing.csv"], "missing.csv: table file not found"),
    ],
)
def test_cli_explain_bad_input_is_one_clear_line(tmp_path: Any, capsys: Any, extra: list[str], message: str) -> None:
    qrels_path, run_path = _files(tmp_path)
    assert main(["explain", qrels_path, run_path, *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


@pytest.mark.parametrize("seed", range(3))
def test_mlflow_profile_gives_mlflows_own_values(seed: int) -> None:
    """MLflow's own retrieval metrics (a core dependency, so run here): precision over the number retrieved when fewer
    than k (short_lists: truncate), nDCG through scikit-learn with k = the number retrieved and binary relevance."""
    import pandas as pd
    from mlflow.metrics import metric_definitions as mlflow_metrics

    rng = np.random.default_rng(70 + seed)
    qrels, run, predictions, targets = [], [], [], []
    for q in range(40):
        docs = [f"d{int(d)}" for d in rng.choice(50, size=20, replace=False)]
        labels = rng.choice([0, 0, 1, 2], size=8)
        qrels += [(f"q{q}", d, int(r)) for d, r in zip(docs[:8], labels, strict=True)]
        listed = list(rng.permutation(docs))[: int(rng.integers(1, 12))]  # often shorter than k
        scores = np.sort(np.round(rng.random(len(listed)) * 3))[::-1]
        run += [(f"q{q}", d, float(s)) for d, s in zip(listed, scores, strict=True)]
        predictions.append(listed)
        targets.append([d for d, r in zip(docs[:8], labels, strict=True) if r >= 1])
    found = _peer_values(qrels, run, "mlflow", ["P", "R", "nDCG"])
    preds, truth = pd.Series(predictions), pd.Series(targets)
    for name, fn in (
        ("P", mlflow_metrics._precision_at_k_eval_fn),
        ("R", mlflow_metrics._recall_at_k_eval_fn),
        ("nDCG", mlflow_metrics._ndcg_at_k_eval_fn),
    ):
        theirs = fn(K)(preds, truth).aggregate_results["mean"]
        assert found[name] == pytest.approx(theirs, abs=1e-6), name  # MLflow's nDCG reads float32 scores
    assert found["P"] != pytest.approx(
        aggregate_values(
            parse_measure(f"P@{K}"), Evaluator(Qrels.from_records(qrels), [f"P@{K}"]).evaluate(Run.from_records(run)).values[:, 0]
        ),
        abs=1e-3,
    )


@pytest.mark.parametrize("seed", range(3))
def test_torchmetrics_profile_gives_its_ndcg_and_precision(seed: int) -> None:
    """TorchMetrics' retrieval_normalized_dcg is scikit-learn's tie-averaged DCG "translated" (its source says so),
    over each query's predictions and their targets (unjudged ones 0), every predicted query counted; its precision
    divides the hits in the top k by k. Checked with scikit-learn's ndcg_score and by hand, scores positive and
    untied for P (TorchMetrics orders ties arbitrarily there)."""
    from sklearn.metrics import ndcg_score

    rng = np.random.default_rng(80 + seed)
    qrels, run, ndcgs, precisions = [], [], [], []
    for q in range(30):
        n = int(rng.integers(3, 12))
        labels = rng.integers(0, 4, size=n)
        judged = rng.random(n) < 0.8 if q % 7 else np.zeros(n, dtype=bool)  # some queries nobody judged
        qrels += [(f"q{q}", f"d{i}", int(labels[i])) for i in range(n) if judged[i]]
        if q % 3 == 0:
            qrels.append((f"q{q}", "never-predicted", 2))  # not among the predictions: invisible to TorchMetrics
        tied = np.round(rng.random(n) * 3) + 1.0  # positive, with ties: nDCG averages them
        run += [(f"q{q}", f"d{i}", float(tied[i])) for i in range(n)]
        target = np.where(judged, labels, 0)
        ndcgs.append(ndcg_score([target], [tied], k=K) if target.any() else 0.0)
    (nd,) = explain_measures(Qrels.from_records(qrels), Run.from_records(run), [f"nDCG@{K}"], peers=["torchmetrics"])
    assert nd.peers[0].value == pytest.approx(float(np.mean(ndcgs)), abs=1e-12)
    untied = [(q, d, float(len(run) - i)) for i, (q, d, _) in enumerate(run)]  # positive, falling in file order
    for q in sorted({row[0] for row in untied}):
        top = [d for qq, d, _ in sorted((r for r in untied if r[0] == q), key=lambda r: -r[2])][:K]
        relevant = {d for qq, d, r in qrels if qq == q and r >= 1}
        precisions.append(sum(d in relevant for d in top) / K)
    (p,) = explain_measures(Qrels.from_records(qrels), Run.from_records(untied), [f"P@{K}"], peers=["torchmetrics"])
    assert p.peers[0].value == pytest.approx(float(np.mean(precisions)), abs=1e-12)


def test_harness_measures_names_the_tools_behind_each_conventions_value(capsys: Any) -> None:
    assert main(["measures"]) == 0
    text = capsys.readouterr().out
    tail = text[text.index("Conventions (the first value is harness's default") :]
    assert "ap_denominator\n    R (trec_eval, ranx, ir_measures) | min_R_k (msrec, recbole, spark)" in tail
    assert "short_lists\n    pad (" in tail and "truncate (mlflow, RecList)" in tail


@pytest.mark.slow
def test_ranx_profile_gives_ranxs_own_values() -> None:
    """ranx's values, computed by ranx itself (tests/fixtures/peers/make_ranx.py, scores without ties: its tie order
    is no rule), on judgments with -1 labels and judged queries missing from the run."""
    case = json.loads((Path(__file__).parents[1] / "fixtures" / "peers" / "ranx.json").read_text())
    qrels = Qrels.from_records([(q, d, r) for q, docs in case["qrels"].items() for d, r in docs.items()])
    run = Run.from_records([(q, d, s) for q, docs in case["run"].items() for d, s in docs.items()])
    names = {
        "nDCG@10": "ndcg@10",
        "nDCG(gain=exp)@10": "ndcg_burges@10",
        "AP@10": "map@10",
        "AP": "map",
        "P@5": "precision@5",
        "R@10": "recall@10",
        "RR": "mrr",
        "Success@5": "hit_rate@5",
    }
    found = explain_measures(qrels, run, list(names), peers=["ranx"])
    for explanation, name in zip(found, names.values(), strict=True):
        assert explanation.peers[0].value == pytest.approx(case["values"][name], abs=1e-12), name
    # ranx's own metric names are read as the measures that reproduce them
    assert {ours: str(parse_measure(theirs)) for ours, theirs in names.items()} == {
        ours: str(parse_measure(ours)) for ours in names
    }
    # at a relevance level, ranx drops the judgments below it: graded gains start there (graded_below_level: zero)
    for level, leveled in (
        (2, {"nDCG@10": "ndcg@10-l2", "nDCG(gain=exp)@10": "ndcg_burges@10-l2", "AP@10": "map@10-l2", "P@5": "precision@5-l2"}),
        (3, {"nDCG@10": "ndcg@10-l3", "RR": "mrr-l3"}),
    ):
        found = explain_measures(qrels, run, list(leveled), Conv(relevance_level=level), peers=["ranx"])
        for explanation, name in zip(found, leveled.values(), strict=True):
            assert explanation.peers[0].value == pytest.approx(case["values"][name], abs=1e-12), name
        ndcg = found[0]
        assert ndcg.peers[0].value < ndcg.value  # harness's (trec_eval's) -l leaves graded gains alone
    # and --match finds ranx's number from harness's side: the level, with the gains below it zeroed
    (best, *_) = match(qrels, run, "nDCG@10", case["values"]["ndcg@10-l2"])
    assert best.distance < 1e-12 and best.changes == {"relevance_level": 2, "graded_below_level": "zero"}


@pytest.mark.parametrize("seed", range(3))
def test_spark_profile_gives_rankingmetrics_formulas(seed: int) -> None:
    """Spark's RankingMetrics (RankingMetrics.scala, read): one row per user of the predictions, in their order, the
    ground truth a set (binary hits); precisionAt(k) over k, recallAt(k) over |truth|, meanAveragePrecisionAt(k) over
    min(|truth|, k), ndcgAt(k) with an ideal of min(|truth|, k) hits; a row without ground truth scores 0."""
    qrels, run = _recsys_case(seed)
    qrels = [(u, i, r) for u, i, r in qrels if r >= 1]
    run = [row for row in run if row[0] != "u04"] + [("u99", "i001", 1.0), ("u99", "i002", 0.5)]  # unjudged user
    truth, lists = _lists(qrels, run)
    out: dict[str, list[float]] = {"P": [], "R": [], "AP": [], "nDCG": []}
    for user, ranked in lists.items():
        relevant = set(truth.get(user, {}))
        hits = [1.0 if i in relevant else 0.0 for i in ranked[:K]]
        if not relevant:
            for values in out.values():
                values.append(0.0)
            continue
        out["P"].append(sum(hits) / K)
        out["R"].append(sum(hits) / len(relevant))
        precisions = [sum(hits[: r + 1]) / (r + 1) for r in range(len(hits))]
        out["AP"].append(sum(p * h for p, h in zip(precisions, hits, strict=True)) / min(len(relevant), K))
        ideal = sum(1 / math.log2(r + 2) for r in range(min(len(relevant), K)))
        out["nDCG"].append(sum(h / math.log2(r + 2) for r, h in enumerate(hits)) / ideal)
    theirs = {m: float(np.mean(v)) for m, v in out.items()}
    assert _peer_values(qrels, run, "spark", list(theirs)) == pytest.approx(theirs, abs=1e-12)


@pytest.mark.parametrize(
    ("measure", "settings"),
    [
        ("F@10", {"short_lists": "truncate"}),  # F@k divides by P@k's k too
        ("RnDCG", {"relevance_level": 2}),  # RnDCG reads the level (queries without a relevant document score 0)
    ],
)
@pytest.mark.slow
def test_match_reads_each_convention_a_measure_reads(measure: str, settings: dict[str, object]) -> None:
    """The conventions the registry says a measure reads are searched, and evaluated, for it: a value made under one
    of them is found, and every match gives it again. q2 has no document at level 2, so RnDCG scores it 0 there."""
    qrels_dict, run_dict = adversarial(3, n_queries=30)
    qrels_dict["q2"] = {"x": 1, "y": 1, "z": 0}
    run_dict["q2"] = {"y": 3.0, "z": 2.0, "x": 1.0}
    qrels, run = to_harness(qrels_dict, run_dict)
    asked = parse_measure(measure)
    default = aggregate_values(asked, Evaluator(qrels, [asked]).evaluate(run).values[:, 0])
    target = aggregate_values(asked, Evaluator(qrels, [asked], Conv.from_mapping(settings)).evaluate(run).values[:, 0])
    assert target != default  # the setting changes this measure here
    found = match(qrels, run, asked, target, tol=0.0)
    assert found and all(m.distance == 0.0 for m in found)
    assert any(all(m.settings[k] == v for k, v in settings.items()) for m in found)
    for m in found[:: max(1, len(found) // 4)]:
        conventions = {k: v for k, v in m.settings.items() if k != "gain"}
        variant = (
            asked
            if m.settings.get("gain", "linear") == "linear"
            else parse_measure(f"{asked.name}(gain={m.settings['gain']})" + (f"@{asked.cutoff}" if asked.cutoff else ""))
        )
        again = Evaluator(qrels, [variant], Conv.from_mapping(conventions)).evaluate(run).values[:, 0]
        assert aggregate_values(variant, again) == target, m.settings


def test_tied_queries_are_counted_only_for_a_peer_that_orders_ties_its_own_way() -> None:
    """ranx orders ties by no rule: the note counts q1, whose tie straddles the cutoff. TorchMetrics averages nDCG over
    the tie orders, so no query depends on one."""
    qrels = Qrels.from_records([("q1", "a", 1), ("q1", "b", 0), ("q2", "c", 1)])
    run = Run.from_records([("q1", "a", 1.0), ("q1", "b", 1.0), ("q2", "c", 1.0)])
    (explanation,) = explain_measures(qrels, run, ["nDCG@1"], peers=["ranx", "torchmetrics"])
    notes = {p.peer.name: p.note for p in explanation.peers}
    assert "(1 queries here have tied scores that change this measure)" in notes["ranx"]
    assert "queries here have tied scores" not in notes["torchmetrics"]


@pytest.mark.parametrize("measure", ["nDCG@5", "AP", "RR", "P@3", "R@5", "Bpref", "nDCG(gain=binary)@5", "P(rel=2)@3"])
def test_a_search_shares_one_evaluation_across_the_query_universes_with_the_same_bits(measure: str) -> None:
    """match evaluates each setting once over every query of the judgments and the run, and takes each ``queries``
    universe's mean from it: the same bits as evaluating that universe alone, including queries only the run has,
    queries only the judgments have, one with only negative labels and one with no label at the level."""
    from harness.evaluation.explain import _Values
    from harness.evaluation.results import aggregate_values
    from harness.measures.parse import parse_measure

    rng = np.random.default_rng(7)
    judged = {f"q{i}": {f"d{j}": int(rng.integers(0, 4)) for j in range(8)} for i in range(12)}
    judged["q_negative"] = {"d1": -1, "d2": 0}
    judged["q_low"] = {"d1": 1, "d2": 0}
    qrels = Qrels.from_dict(judged)
    ranked = {f"q{i}": {f"d{j}": float(rng.integers(0, 5)) for j in range(10)} for i in range(2, 14)}
    ranked["q_negative"] = {"d1": 1.0, "d3": 0.5}
    run = Run.from_dict(ranked, name="r")
    parsed = parse_measure(measure)
    for queries in ("qrels", "intersection", "run", "relevant"):
        for level in (1, 2):
            for negative in ("unjudged", "nonrelevant"):
                conventions = Conventions.from_mapping(
                    {"queries": queries, "relevance_level": level, "negative_labels": negative, "ties": "input_order"}
                )
                searching = _Values(qrels, run, [parsed], keep_values=False)
                shared = searching.mean(conventions, parsed)
                assert searching._union, "the shared evaluation is the one under test"
                direct = _Values(qrels, run, [parsed]).get(conventions, parsed)[1]
                assert shared == aggregate_values(parsed, direct), (queries, level, negative)


@pytest.mark.parametrize("measure", ["nDCG@5", "AP", "RR", "P@3", "Bpref", "nDCG(gain=exp)", "P@8"])
def test_a_search_evaluates_the_queries_a_setting_reads_apart_alone_with_the_same_bits(measure: str) -> None:
    """Under a tie rule other than harness's, only the queries with tied scores are evaluated again, and under
    truncated short lists only those whose list is shorter than the cutoff (the others' rows are read alike, so their
    values are the same): each universe's mean is the bits of evaluating it alone, for every rule, ties in float64 and
    ties a C float makes, short lists, a query the run lacks, and queries without any of these beside them."""
    from harness.evaluation.explain import _Values
    from harness.evaluation.results import aggregate_values
    from harness.measures.parse import parse_measure

    rng = np.random.default_rng(11)
    qrels = Qrels.from_dict({f"q{i}": {f"d{j}": int(rng.integers(0, 3)) for j in range(8)} for i in range(11)})
    ranked = {f"q{i}": {f"d{j}": float(v) for j, v in enumerate(rng.permutation(10))} for i in range(10)}  # no ties
    ranked["q1"]["d3"] = ranked["q1"]["d4"]  # tied in float64
    ranked["q2"]["d5"], ranked["q2"]["d6"] = 0.1234567891, 0.1234567892  # tied only as C floats
    ranked["q3"] = {f"d{j}": 1.0 for j in range(10)}  # every score tied
    ranked["q4"] = {"d1": 2.0, "d2": 1.0}  # a short list (q10: none at all)
    run = Run.from_dict(ranked, name="r")
    parsed = parse_measure(measure)
    for ties in ("input_order", "optimistic", "pessimistic", "docno_ascending", "trec_eval"):
        for scores in ("float32", "float64"):
            for short_lists in ("pad", "truncate"):
                for queries in ("qrels", "run", "relevant"):
                    settings = {"ties": ties, "scores": scores, "queries": queries, "short_lists": short_lists}
                    conventions = Conventions.from_mapping(settings)
                    searching = _Values(qrels, run, [parsed], keep_values=False)
                    shared = searching.mean(conventions, parsed)
                    direct = _Values(qrels, run, [parsed]).get(conventions, parsed)[1]
                    assert shared == aggregate_values(parsed, direct), settings
                    apart = {q for _, some in searching._union for q in some}
                    tied = ({"q1", "q2", "q3"} if scores == "float32" else {"q1", "q3"}) if ties != "trec_eval" else set()
                    short = (
                        {"q4", "q10"}
                        if short_lists == "truncate"
                        and parsed.cutoff
                        and "short_lists" in (REGISTRY.definition(parsed).reads_conventions)
                        else set()
                    )
                    assert apart == tied | short, settings
