"""Beyond-accuracy measures by hand on a 3-user example, and their input errors.

Training rows (user, item):  a: 7, 007, x    b: 7, x, x (a repeat)    c: 7    d: 007 (train only)
    c_7 = 3, c_007 = 2, c_x = 3 rows (T = 8);  users: 7 {a, b, c}, 007 {a, d}, x {a, b}; 4 training users.
Catalogue (item, f1, f2):  7 (1, 0), 007 (0, 1), x (1, 1), y (1, 0): y is in no training row.
Judgments: a: y = 2; b: 007 = 1; c: x = 0.
Run:  a: 007 (.9), y (.8), 7 (.1)     b: 7 (.5), z (.4)     c: x (1.0)
    z is neither trained nor catalogued (a cold item); c has fewer than k items; "7" and "007" are different items.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from harness.data.items import read_items, read_train
from harness.data.load import load_qrels, load_run
from harness.data.model import Run
from harness.errors import HarnessError, InputFormatError
from harness.evaluation.evaluator import Evaluator

L2 = math.log2


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("beyond")
    (root / "train.csv").write_text("user,item\na,7\na,007\na,x\nb,7\nb,x\nb,x\nc,7\nd,007\n")
    (root / "items.csv").write_text("item,f1,f2\n7,1,0\n007,0,1\nx,1,1\ny,1,0\n")
    (root / "test.csv").write_text("user,item,rating\na,y,2\nb,007,1\nc,x,0\n")
    (root / "run.csv").write_text("user,item,score\na,007,0.9\na,y,0.8\na,7,0.1\nb,7,0.5\nb,z,0.4\nc,x,1.0\n")
    return root


def _values(folder: Path, measures: list[str]) -> tuple[dict[str, list[float]], dict[str, float]]:
    qrels = load_qrels(folder / "test.csv", {"query": "user", "doc": "item", "relevance": "rating"})
    run = load_run(folder / "run.csv", {"query": "user", "doc": "item", "score": "score"})
    evaluator = Evaluator(qrels, measures, train=read_train(folder / "train.csv"), items=read_items(folder / "items.csv"))
    aligned = evaluator.align(run)
    lists = evaluator.item_lists(aligned)
    per_query = evaluator.evaluate_aligned("run", aligned, lists)
    assert per_query.query_ids.tolist() == ["a", "b", "c"]
    per_user = {str(m): per_query.values[:, j].tolist() for j, m in enumerate(per_query.measures)}
    system = {str(m): float(v[0]) for m, v in evaluator.system_values(lists).items()}
    return per_user, system


def _close(got: list[float], expected: list[float]) -> bool:
    return all(
        (math.isnan(g) and math.isnan(e)) or math.isclose(g, e, rel_tol=1e-12, abs_tol=1e-12)
        for g, e in zip(got, expected, strict=True)
    )


NAN = float("nan")
NOV_7, NOV_007, NOV_X, NOV_COLD = -L2(3 / 8), -L2(2 / 8), -L2(3 / 8), L2(8)  # -log2(c_i / T); cold: -log2(1 / T)
COS_7_007, COS_7_X, COS_007_X = 1 / math.sqrt(6), 2 / math.sqrt(6), 1 / math.sqrt(4)  # |U_i & U_j| / sqrt(|U_i| |U_j|)
D1, D2 = 1.0, 1 / L2(3)  # rank discounts 1 / log2(r + 1)

PER_USER = {
    # popularity: training rows (x counts its repeat) or distinct users; the cold items y and z count 0
    "ARP@2": [(2 + 0) / 2, (3 + 0) / 2, 3 / 1],
    "ARP(pop='users')@2": [(2 + 0) / 2, (3 + 0) / 2, 2 / 1],
    "Novelty@2": [(NOV_007 + NOV_COLD) / 2, (NOV_7 + NOV_COLD) / 2, NOV_X],
    "Novelty(cold='zero')@2": [(NOV_007 + 0) / 2, (NOV_7 + 0) / 2, NOV_X],  # msrec: 0, still counted
    "Novelty(cold='skip')@2": [NOV_007, NOV_7, NOV_X],
    # one pair each at @2, with an item nobody trained on: similarity 0; c has no pair
    "ILD@2": [1.0, 1.0, NAN],
    "ILD@3": [1 - (0 + COS_7_007 + 0) / 3, 1.0, NAN],
    "ILD(sim='features')@3": [1 - (0 + 0 + 1) / 3, 1.0, NAN],  # 007.y = 0, 007.7 = 0, y.7 = 1; z has no features
    # 1 - mean similarity to the user's distinct training items, averaged over the list
    "Serendipity@2": [
        ((1 - (COS_7_007 + 1 + COS_007_X) / 3) + 1) / 2,  # a: 007 against {7, 007, x}; y: 1
        ((1 - (1 + COS_7_X) / 2) + 1) / 2,  # b: 7 against {7, x}; z: 1
        1 - COS_7_X,  # c: x against {7}
    ],
    "Serendipity(rel=1)@2": [(0 + 1) / 2, 0.0, 0.0],  # only a's y is relevant (label 2 >= 1); c's x has label 0
    "Serendipity(sim='features')@2": [
        1 - (1 + 1 / math.sqrt(2)) / 3,  # a: both items have cosine (1 + 1/sqrt2) / 3 with the history's sum
        ((1 - (1 + 1 / math.sqrt(2)) / 2) + 1) / 2,  # b: 7 against {7, x}; z: no features, similarity 0
        1 - 1 / math.sqrt(2),  # c: x against {7}
    ],
    # RecBole's tail: with tail_count=3 every training item (c <= 3); y and z are never tail
    "TailShare(tail_count=3)@2": [1 / 2, 1 / 2, 1.0],
    "TailShare(tail=0.34)@2": [1 / 2, 0.0, 0.0],  # max(int(3 x 0.34), 1) = 1 item: 007 (count 2)
    # Elliot's short head at 50% of the 8 rows: 7 (3 users), then 007 (2, before x by id): 5 >= 4, so x is the long tail
    "APLT(head=0.5)@2": [0.0, 0.0, 1.0],
    "ACLT(head=0.5)@2": [0.0, 0.0, 1.0],
    # EFD / EPC: only a and b have a relevant judgment (label >= 1); c is left out
    "EFD(rel=1)@2": [D2 * -L2(2 / 7) / (D1 + D2), 0.0, NAN],  # y is cold: Elliot's max novelty -log2(min pop / sum pop)
    "EPC(rel=1)@2": [D2 * (1 - 0 / 4) / (D1 + D2), 0.0, NAN],
}

# @3 lists: a: 007, y, 7   b: 7, z   c: x  ->  counts 7: 2, 007: 1, y: 1, z: 1, x: 1 (N = 6)
GINI_5 = ((-4) * 1 + (-2) * 1 + 0 * 1 + 2 * 1 + 4 * 2) / (5 * 6)  # sorted counts 1,1,1,1,2 over n = 5
GINI_6 = ((-5) * 0 + (-3) * 1 + (-1) * 1 + 1 * 1 + 3 * 1 + 5 * 2) / (6 * 6)  # one more item, never recommended
SYSTEM = {
    "Coverage@2": 5 / 3,  # 5 distinct recommended, 3 training items: above 1, as msrec
    "Coverage(catalog='items')@2": 4 / 4,  # z is outside the catalogue: not counted there (at most 1)
    "Coverage(catalog='recbole')@2": 5 / 6,  # 4 known items + z + [PAD]
    "RecItems@2": 5.0,
    "Entropy@2": L2(5),  # five items, once each
    "Entropy(form='recbole')@2": math.log(5) / 5,
    "Entropy(form='elliot')@2": (0.5 * 4 + 1) * L2(5) / 3,  # a's and b's items weigh 1/2, c's x weighs 1
    "Gini@3": GINI_5,  # 3 training items + y and z, recommended outside them
    "Gini(catalog='recbole')@3": GINI_6,
    "Gini(form='elliot')@3": 1 - GINI_5 * 5 / 4,
    "Novelty(weight='recommendation')@2": (NOV_007 + NOV_COLD + NOV_7 + NOV_COLD + NOV_X) / 5,
}


def test_per_user_measures_by_hand(folder: Path) -> None:
    per_user, _ = _values(folder, list(PER_USER))
    for name, expected in PER_USER.items():
        assert _close(per_user[name], expected), (name, per_user[name], expected)


def test_system_measures_by_hand(folder: Path) -> None:
    _, system = _values(folder, list(SYSTEM))
    for name, expected in SYSTEM.items():
        assert math.isclose(system[name], expected, rel_tol=1e-12), (name, system[name], expected)


def test_undefined_users_are_left_out_of_the_mean(folder: Path) -> None:
    from harness.evaluation.results import aggregate_values
    from harness.measures.parse import parse_measure

    assert math.isclose(aggregate_values(parse_measure("ILD@3"), np.array(PER_USER["ILD@3"])), (PER_USER["ILD@3"][0] + 1.0) / 2)
    assert math.isnan(aggregate_values(parse_measure("ILD@3"), np.array([NAN, NAN])))


# ---- bad input: one line naming the file --------------------------------------------------------------
def test_items_without_feature_columns_refused_for_feature_similarity(folder: Path, tmp_path: Path) -> None:
    (tmp_path / "ids.csv").write_text("item\n7\n007\n")
    qrels = load_qrels(folder / "test.csv", {"query": "user", "doc": "item", "relevance": "rating"})
    with pytest.raises(InputFormatError) as caught:
        Evaluator(qrels, ["ILD(sim=features)@10"], train=read_train(folder / "train.csv"), items=read_items(tmp_path / "ids.csv"))
    assert str(tmp_path / "ids.csv") in str(caught.value) and "feature" in str(caught.value)
    assert "\n" not in str(caught.value)


def test_train_file_with_wrong_columns(tmp_path: Path) -> None:
    (tmp_path / "train.csv").write_text("customer,product\na,7\n")
    with pytest.raises(InputFormatError) as caught:
        read_train(tmp_path / "train.csv")
    text = str(caught.value)
    assert text.startswith(str(tmp_path / "train.csv")) and "no column 'user'" in text and "customer, product" in text


def test_feature_that_is_not_a_number(tmp_path: Path) -> None:
    (tmp_path / "items.csv").write_text("item,f1,genre\n7,1,0\n8,0,comedy\n")
    with pytest.raises(InputFormatError) as caught:
        read_items(tmp_path / "items.csv")
    text = str(caught.value)
    assert text.startswith(f"{tmp_path / 'items.csv'}: line 3:") and "'genre'" in text and "'comedy'" in text


def test_catalogue_item_listed_twice(tmp_path: Path) -> None:
    (tmp_path / "items.csv").write_text("item,f1\n7,1\n007,0\n7,2\n")
    with pytest.raises(InputFormatError, match="line 4: item '7' is listed twice"):
        read_items(tmp_path / "items.csv")


def test_measure_needing_training_data_without_it(folder: Path) -> None:
    qrels = load_qrels(folder / "test.csv", {"query": "user", "doc": "item", "relevance": "rating"})
    with pytest.raises(HarnessError, match="ARP@10 needs training interactions"):
        Evaluator(qrels, ["ARP@10"])


# ---- the same mistakes through a config: `harness run` exits 2 with one line, before anything is written ---------
def _config(folder: Path, tmp_path: Path, measures: str, items: str = "items.csv", train_columns: str = "") -> Path:
    config = tmp_path / "exp.yaml"
    config.write_text(
        f"experiment: t\n"
        f"datasets:\n"
        f"  - name: d\n"
        f"    qrels: {folder / 'test.csv'}\n"
        f"    columns: {{query: user, doc: item, relevance: rating}}\n"
        f"    run_columns: {{query: user, doc: item, score: score}}\n"
        f"    train: {{path: {folder / 'train.csv'}{train_columns}}}\n"
        f"    items: {{path: {tmp_path / items}, id: item}}\n"
        f"systems:\n"
        f"  - name: a\n"
        f"    runs: {{d: {folder / 'run.csv'}}}\n"
        f"measures: {measures}\n"
        f"tracking: {{enabled: false}}\n"
        f"output: {tmp_path / 'out'}\n"
    )
    return config


def _run(config: Path) -> tuple[int, str]:
    import io

    from harness.cli import main

    out, err = io.StringIO(), io.StringIO()
    code = main(["run", str(config), "--quiet"], out, err)
    return code, err.getvalue()


def test_config_errors_name_the_file(folder: Path, tmp_path: Path) -> None:
    (tmp_path / "ids.csv").write_text("item\n7\n")
    code, err = _run(_config(folder, tmp_path, "[ILD(sim=features)@10]", items="ids.csv"))
    assert code == 2 and err.count("\n") == 1 and str(tmp_path / "ids.csv") in err and "feature columns" in err
    assert not (tmp_path / "out").exists()

    (tmp_path / "bad.csv").write_text("item,f1\n7,1\n8,x\n")
    code, err = _run(_config(folder, tmp_path, "[Coverage@10]", items="bad.csv"))
    assert code == 2 and err.startswith(f"harness: error: {tmp_path / 'bad.csv'}: line 3: feature 'f1' of item '8'")

    (tmp_path / "items.csv").write_text((folder / "items.csv").read_text())
    code, err = _run(_config(folder, tmp_path, "[ARP@10]", train_columns=", columns: {query: customer, doc: item}"))
    assert code == 2 and f"{folder / 'train.csv'}: line 1: no column 'customer' for the user" in err


def test_a_measure_no_dataset_can_compute_is_a_config_error(folder: Path, tmp_path: Path) -> None:
    config = _config(folder, tmp_path, "[nDCG@10, Serendipity@10]")
    text = config.read_text()
    config.write_text("\n".join(line for line in text.splitlines() if "train:" not in line and "items:" not in line) + "\n")
    code, err = _run(config)
    assert code == 2 and err.count("\n") == 1
    assert f"{config}: line 10: measures: Serendipity@10 needs training interactions (train:), and no dataset has them" in err


def test_a_config_with_beyond_accuracy_measures_runs(folder: Path, tmp_path: Path) -> None:
    import json

    (tmp_path / "items.csv").write_text((folder / "items.csv").read_text())
    config = _config(folder, tmp_path, "[nDCG@2, Coverage@2, ILD@3, Novelty@2]")
    code, err = _run(config)
    assert code == 0, err
    folder_out = next((tmp_path / "out" / "t").glob("2*"))
    import pandas as pd

    summary = pd.read_csv(folder_out / "summary.csv")
    value = dict(zip(summary["measure"], summary["value"], strict=True))
    assert math.isclose(value["Coverage@2"], SYSTEM["Coverage@2"])
    assert math.isclose(value["ILD@3"], (PER_USER["ILD@3"][0] + 1) / 2)
    per_query = pd.read_parquet(folder_out / "per_query.parquet")
    assert set(per_query["measure"]) == {"nDCG@2", "ILD@3", "Novelty@2"}  # a system measure has no per-query value
    diagnostics = json.loads(pd.read_csv(folder_out / "diagnostics.csv").to_json(orient="records"))[0]
    assert diagnostics["cold_recommendations"] == 1  # z
    # each universe apart: y and z are outside the training items (Coverage@2 = 5 / 3 counts them), z the catalogue
    assert diagnostics["recommendations_outside_train"] == 2 and diagnostics["recommendations_outside_catalogue"] == 1
    # the long tail at the largest cutoff (ILD@3): 7 twice (a, b), 007, y, z, x once: N = 6
    tail = pd.read_csv(folder_out / "long_tail.csv")
    # ranks log-spaced (at most 200 points), first and last kept: geomspace(1, 5, 5) rounds to 1, 2, 2, 3, 5
    assert tail["cutoff"].tolist() == [3] * 4 and tail["rank"].tolist() == [1, 2, 3, 5]
    assert tail["recommendations"].tolist() == [2, 1, 1, 1] and tail["items_recommended"].tolist() == [5] * 4
    assert np.allclose(tail["cumulative_share"], [2 / 6, 3 / 6, 4 / 6, 1.0])


@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::PendingDeprecationWarning", "ignore::FutureWarning")
def test_beyond_accuracy_reaches_mlflow_the_gate_and_the_report(folder: Path, tmp_path: Path) -> None:
    """A second system that recommends only popular items: its coverage drop is logged, shown beside the gate (a catalogue
    measure never decides it) and reported."""
    import json

    from mlflow import MlflowClient

    (tmp_path / "items.csv").write_text((folder / "items.csv").read_text())
    (tmp_path / "popular.csv").write_text("user,item,score\na,7,0.9\na,x,0.8\nb,7,0.5\nb,x,0.4\nc,7,1.0\n")
    config = _config(folder, tmp_path, "[nDCG@2, Coverage@2, ARP@2]")
    text = config.read_text().replace("tracking: {enabled: false}\n", "")
    text = text.replace("measures:", f"  - name: popular\n    runs: {{d: {tmp_path / 'popular.csv'}}}\nmeasures:")
    text += (
        "baseline: a\nrelease:\n  production: a\n  candidate: popular\n"
        "  guards: [{measure: Coverage@2, max_drop: 0.1, descriptive: true}]\n"
    )
    config.write_text(text)
    code, err = _run(config)
    assert code == 6 and "tracking" not in err, err  # a descriptive guard alone decides nothing: INCONCLUSIVE
    folder_out = next((tmp_path / "out" / "t").glob("2*"))
    gate = json.loads((folder_out / "gate.json").read_text())
    (guard,) = gate["guards"]
    assert gate["verdict"] == "INCONCLUSIVE" and guard["verdict"] == "DESCRIPTIVE" and "Coverage@2" in guard["guard"]
    assert guard["drop"] == pytest.approx(5 / 3 - 2 / 3) and "beyond the 0.1000 it names" in guard["reason"]
    tracking = json.loads((folder_out / "tracking.json").read_text())
    client = MlflowClient(tracking["tracking_uri"])
    metrics = client.get_run(tracking["child_runs"]["d/popular"]).data.metrics
    assert metrics["coverage_at_2"] == pytest.approx(2 / 3) and metrics["arp_at_2"] == pytest.approx((3 + 3) / 2)
    html = (folder_out / "report.html").read_text()
    assert "Beyond accuracy" in html and "the long tail" in html


def _random_cooccurrence_case(seed: int) -> dict[str, Any]:
    """Lists over known, user-less and cold items, histories with repeats and gaps, lists shorter than k."""
    from scipy import sparse

    rng = np.random.default_rng(seed)
    n_known, n_cold, n_train_users, n_users = 40, 3, 25, 30
    pairs = np.unique(np.c_[rng.integers(0, n_known - 5, 200), rng.integers(0, n_train_users, 200)], axis=0)
    item_users = sparse.csr_matrix((np.ones(len(pairs), np.int32), (pairs[:, 0], pairs[:, 1])), shape=(n_known, n_train_users))
    users = np.asarray(item_users.sum(axis=1)).ravel().astype(np.float64)
    users = np.concatenate([users, np.zeros(n_cold)])  # codes 35..39 have no users; 40..42 are cold
    lengths = rng.integers(0, 12, n_users)
    codes = np.concatenate([rng.permutation(n_known + n_cold)[:n] for n in lengths]).astype(np.int64)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    history = [list(rng.integers(0, n_known, rng.integers(0, 6))) for _ in range(n_users)]  # repeats allowed
    h_off = np.concatenate([[0], np.cumsum([len(h) for h in history])]).astype(np.int64)
    h_codes = np.array([c for h in history for c in h], dtype=np.int64)
    scale = np.where(users > 0, 1 / np.sqrt(np.maximum(users, 1)), 0.0)
    return dict(
        item_users=item_users,
        codes=codes,
        offsets=offsets,
        history=history,
        h_off=h_off,
        h_codes=h_codes,
        scale=scale,
        n_known=n_known,
    )


def _reference_cosine(case: dict[str, Any], a: int, b: int) -> float:
    """|U_a & U_b| / sqrt(|U_a| |U_b|) from the sets themselves; 0 for cold items and items without users."""
    if a >= case["n_known"] or b >= case["n_known"]:
        return 0.0
    matrix = case["item_users"]
    users_a, users_b = set(matrix[a].indices), set(matrix[b].indices)
    return len(users_a & users_b) / np.sqrt(len(users_a) * len(users_b)) if users_a and users_b else 0.0


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("k", [1, 4, None])
def test_compiled_cooccurrence_sums_match_the_sets(seed: int, k: int | None) -> None:
    """The compiled kernels against co-occurrence counted from the user sets, pair by pair; any thread split alike."""
    from harness.kernels._cooccurrence import earlier_pair_sums, history_sums

    case = _random_cooccurrence_case(seed)
    codes, offsets, matrix = case["codes"], case["offsets"], case["item_users"]
    starts = offsets[:-1]
    ends = starts + (np.diff(offsets) if k is None else np.minimum(np.diff(offsets), k))
    expected_pairs, expected_history = np.zeros(codes.size), np.zeros(codes.size)
    for q, (lo, hi) in enumerate(zip(starts, ends, strict=True)):
        for r in range(lo, hi):
            expected_pairs[r] = sum(_reference_cosine(case, codes[r], codes[r2]) for r2 in range(lo, r))
            expected_history[r] = sum(_reference_cosine(case, codes[r], h) for h in case["history"][q])
    arguments = (matrix, matrix.T.tocsr(), case["scale"])
    by_thread_count = [earlier_pair_sums(codes, starts, ends, *arguments, threads=t) for t in (1, 3)]
    np.testing.assert_allclose(by_thread_count[0], expected_pairs, rtol=1e-12, atol=1e-15)
    assert np.array_equal(by_thread_count[0], by_thread_count[1])
    by_thread_count = [history_sums(codes, starts, ends, case["h_off"], case["h_codes"], *arguments, threads=t) for t in (1, 3)]
    np.testing.assert_allclose(by_thread_count[0], expected_history, rtol=1e-12, atol=1e-15)
    assert np.array_equal(by_thread_count[0], by_thread_count[1])
    assert (expected_pairs > 0).any() == (k != 1) and (expected_history > 0).any()  # k = 1: a list has no pairs


def test_cooccurrence_values_do_not_depend_on_the_other_cutoffs_asked_for() -> None:
    """One similarity pass serves every cutoff (to the deepest); a cutoff's values are those it gets alone, bit for bit."""
    from tests.kernels.test_beyond_golden import BEYOND_ACCURACY

    qrels = load_qrels(BEYOND_ACCURACY / "test.csv", {"query": "user", "doc": "item", "relevance": "rating"})
    run = load_run(BEYOND_ACCURACY / "run.csv", {"query": "user", "doc": "item", "score": "score"})
    train = read_train(BEYOND_ACCURACY / "train.csv")
    together = Evaluator(qrels, ["ILD@3", "Serendipity@2", "ILD@9", "Serendipity(rel=3)@9"], train=train).evaluate(run)
    for column, name in [(0, "ILD@3"), (1, "Serendipity@2")]:
        alone = Evaluator(qrels, [name], train=train).evaluate(run)
        assert np.array_equal(alone.values[:, 0], together.values[:, column], equal_nan=True)
    assert not np.array_equal(together.values[:, 0], together.values[:, 2], equal_nan=True)  # the cutoffs do differ


def test_the_runs_own_counts_equal_the_resampling_product() -> None:
    """coverage_counts of the run itself (one pass over its rows) equals the sparse product resamples use, bit for bit."""
    from harness.kernels.beyond import coverage_counts
    from tests.kernels.test_beyond_golden import BEYOND_ACCURACY

    qrels = load_qrels(BEYOND_ACCURACY / "test.csv", {"query": "user", "doc": "item", "relevance": "rating"})
    run = load_run(BEYOND_ACCURACY / "run.csv", {"query": "user", "doc": "item", "score": "score"})
    evaluator = Evaluator(qrels, ["Coverage@10"], train=read_train(BEYOND_ACCURACY / "train.csv"))
    lists = evaluator.item_lists(evaluator.align(run))
    rng = np.random.default_rng(3)
    for k in (3, None):
        weights = np.vstack([np.ones(lists.n_queries), rng.random(lists.n_queries)])  # 1/length-like fractions too
        both = coverage_counts(lists, k, weights)
        for row in range(2):
            alone = coverage_counts(lists, k, weights[row : row + 1].copy())
            assert np.array_equal(alone[0], both[row])
        assert both[0].sum() == (lists.n_ret if k is None else np.minimum(lists.n_ret, k)).sum()


def test_two_stacked_runs_count_by_algebra_what_the_product_counts() -> None:
    """Swapped lists ([1 - c | c] and [c | 1 - c]) from one product with inc_B - inc_A, a bootstrap's zero half skipped:
    the counts of the product over both runs, exactly (integer weights) or to rounding (fractional ones)."""
    import dataclasses

    from harness.kernels.beyond import _incidence, coverage_counts, stack
    from tests.kernels.test_beyond_golden import BEYOND_ACCURACY

    qrels = load_qrels(BEYOND_ACCURACY / "test.csv", {"query": "user", "doc": "item", "relevance": "rating"})
    train = read_train(BEYOND_ACCURACY / "train.csv")
    evaluator = Evaluator(qrels, ["Coverage@10"], train=train)
    run_a = load_run(BEYOND_ACCURACY / "run.csv", {"query": "user", "doc": "item", "score": "score"})
    lists_a = evaluator.item_lists(evaluator.align(run_a))
    rng = np.random.default_rng(4)
    flipped = Run(run_a.query_id, run_a.doc_id, -run_a.score + rng.random(len(run_a.score)), "b")  # another order
    lists_b = evaluator.item_lists(evaluator.align(flipped))
    users = np.arange(lists_a.n_queries)
    joined = stack([(lists_a, users), (lists_b, users)])
    assert joined.items is not None and joined.items.pair_of_runs == lists_a.n_queries
    plain = dataclasses.replace(joined, items=dataclasses.replace(joined.items, pair_of_runs=None, _cache={}))
    coin = rng.integers(0, 2, (6, users.size)).astype(np.float64)
    drawn = rng.integers(0, 3, (6, users.size)).astype(np.float64)
    for k in (2, 5):
        for weights in (
            np.hstack([1 - coin, coin]),
            np.hstack([coin, 1 - coin]),
            np.hstack([drawn, 0 * drawn]),
            np.hstack([0 * drawn, drawn]),
        ):
            expected = np.asarray((_incidence(plain, k) @ weights.T).T)
            assert np.array_equal(coverage_counts(joined, k, weights), expected)
        fractional = np.hstack([coin * 0.3, coin / 7])
        np.testing.assert_allclose(coverage_counts(joined, k, fractional), (_incidence(plain, k) @ fractional.T).T, rtol=1e-12)


def test_each_training_users_items_are_the_item_user_matrix_transposed() -> None:
    from harness.data.items import ItemContext
    from tests.kernels.test_beyond_golden import BEYOND_ACCURACY

    qrels = load_qrels(BEYOND_ACCURACY / "test.csv", {"query": "user", "doc": "item", "relevance": "rating"})
    context = ItemContext(read_train(BEYOND_ACCURACY / "train.csv"), None, qrels)
    by_user, by_item = context.user_items(), context.item_users()
    assert (by_user != by_item.T.tocsr()).nnz == 0 and by_user.nnz == by_item.nnz > 0


def test_harness_eval_prints_beyond_accuracy_values(folder: Path) -> None:
    import io

    from harness.cli import main

    out, err = io.StringIO(), io.StringIO()
    code = main(
        [
            "eval",
            "-q",
            str(folder / "test.csv"),
            str(folder / "run.csv"),
            "--qrels-columns",
            "query=user,doc=item,relevance=rating",
            "--run-columns",
            "query=user,doc=item,score=score",
            "--train",
            str(folder / "train.csv"),
            "--items",
            str(folder / "items.csv"),
            "-m",
            "ARP@2,Coverage@2",
        ],
        out,
        err,
    )
    assert code == 0, err.getvalue()
    lines = [line.split("\t") for line in out.getvalue().splitlines()]
    assert [x.strip() for x in lines[0]] == ["ARP@2", "a", "1.0000"]  # per user: ARP only (coverage is one per run)
    assert [x.strip() for x in lines[-1]] == ["Coverage@2", "all", "1.6667"] and len(lines) == 5
    code = main(
        [
            "eval",
            str(folder / "test.csv"),
            str(folder / "run.csv"),
            "--qrels-columns",
            "query=user,doc=item,relevance=rating",
            "--run-columns",
            "query=user,doc=item,score=score",
            "-m",
            "ILD@10",
        ],
        out,
        err,
    )
    assert code == 2 and "ILD@10 needs training interactions" in err.getvalue() and "--train" in err.getvalue()


@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::PendingDeprecationWarning", "ignore::FutureWarning")
@pytest.mark.browser
def test_the_beyond_accuracy_section_in_chromium(tmp_path: Path) -> None:
    """The demo's report, in Debian's chromium: the section, its table and the long-tail chart, nothing too wide."""
    import io
    import json
    import shutil

    from harness.cli import main
    from harness.demo import generate
    from tests.repo import ROOT
    from tests.report.test_report import _browser

    generate(tmp_path)
    (tmp_path / "configs").mkdir()
    shutil.copy(ROOT / "configs" / "demo.yaml", tmp_path / "configs" / "demo.yaml")
    out, err = io.StringIO(), io.StringIO()
    code = main(["run", str(tmp_path / "configs" / "demo.yaml"), "--json", "--quiet", "--no-tracking"], out, err)
    assert code == 6, err.getvalue()  # the demo's gate is INCONCLUSIVE (RR@10 on 150 TREC queries)
    report = Path(json.loads(out.getvalue())["results_dir"]) / "report.html"
    manager, browser = _browser()
    try:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(report.as_uri())
        heading = page.locator("#ds-ratings-beyond")
        assert heading.is_visible() and heading.inner_text() == "Beyond accuracy" and errors == []
        assert page.locator("#ds-trec-beyond").count() == 0  # the TREC dataset has no training data: no section
        table = page.locator("#ds-ratings-beyond ~ div table").first
        measures = table.locator("tbody tr td:first-child").all_inner_texts()
        assert measures[:4] == ["Coverage@10", "Gini@10", "Entropy@10", "Novelty@10"] and len(measures) == 8
        coverage = table.locator("tbody tr").first.locator("td").all_inner_texts()
        # candidate-v2's version covers significantly less: the mean over its three runs, with their lowest and highest
        import pandas as pd

        summary = pd.read_csv(report.parent / "summary.csv")
        mine = summary[
            (summary["dataset"] == "ratings")
            & (summary["segment"] == "all")
            & (summary["system"] == "candidate-v2")
            & (summary["measure"] == "Coverage@10")
        ]
        runs = mine[mine["seed"] != "all"]["value"]
        assert len(runs) == 3 and mine[mine["seed"] == "all"]["value"].item() == pytest.approx(runs.mean(), rel=1e-12)
        assert coverage[2].startswith(f"{runs.mean():.4f} ▼") and f"3 seeds {runs.min():.4f}–{runs.max():.4f}" in coverage[2]
        chart = page.locator("svg.chart", has_text="the long tail")
        chart.scroll_into_view_if_needed()
        box = chart.bounding_box()
        assert box is not None and box["width"] > 300 and box["height"] > 150
        assert chart.locator("polyline").count() == 3  # one curve per system
        too_wide = page.evaluate(
            """() => Array.from(document.querySelectorAll('body *'))
                 .filter(e => e.getClientRects().length && e.getBoundingClientRect().right > window.innerWidth + 0.5).length"""
        )
        assert too_wide == 0
    finally:
        browser.close()
        manager.stop()


def test_tailshare_ties_at_the_cut_by_id_or_as_recbole() -> None:
    """Items b and a both have 1 training row and the 1-item tail's cut falls between them: by id a is the tail, by
    RecBole's internal ids (first appearance in training: b, then a) b is."""
    from harness import Evaluator, Interactions, Qrels, Run

    train = Interactions.from_records([("u9", "b"), ("u9", "c"), ("u8", "a"), ("u8", "c")])  # a 1, b 1, c 2
    qrels = Qrels.from_records([("u1", "b", 1)])
    run = Run.from_records([("u1", "b", 2.0), ("u1", "c", 1.0)])
    measures = ["TailShare(tail=0.34)@2", "TailShare(tail=0.34,ties=recbole)@2"]  # max(int(3 x 0.34), 1) = 1 item
    evaluator = Evaluator(qrels, measures, train=train)
    aligned = evaluator.align(run)
    values = evaluator.evaluate_aligned("run", aligned, evaluator.item_lists(aligned)).values
    assert values.tolist() == [[0.0, 1 / 2]]
