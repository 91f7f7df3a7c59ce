"""The fairness golden case (tests/fixtures/fairness): every value the peers' own code computed (Elliot, LensKit,
pyxclib) that harness reproduces, at both tie orders, through the measure tests/fixtures/fairness/harness.json maps
its id to. The ids not reproduced yet are listed there with the reason, and this test fails on any id that is neither.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from harness.data.items import read_items, read_train
from harness.data.load import load_qrels, load_run
from harness.data.tables import read_table_columns
from harness.evaluation.evaluator import Evaluator
from harness.kernels import fairness
from harness.measures.conventions import Conventions, Ties
from harness.measures.parse import parse_measure
from harness.measures.registry import REGISTRY
from tests.conftest import FAIRNESS

EXPECTED = json.loads((FAIRNESS / "expected.json").read_text())
MAP = json.loads((FAIRNESS / "harness.json").read_text())
LEVEL = MAP["conventions"]["relevance_level"]


def _base(entry: dict[str, Any]) -> str:
    return str(entry["id"]).partition("@")[0]


def _mapped(entry: dict[str, Any]) -> bool:
    return _base(entry) in MAP["measures"]


def _measure(entry: dict[str, Any]) -> str:
    return str(parse_measure(f"{MAP['measures'][_base(entry)]}@{entry['k']}"))


def _evaluate(ties: str) -> tuple[Evaluator, Any, dict[str, float]]:
    qrels = load_qrels(FAIRNESS / "test.csv", {"query": "user", "doc": "item", "relevance": "rating"})
    run = load_run(FAIRNESS / "run.csv", {"query": "user", "doc": "item", "score": "score"}, name="golden")
    measures = sorted({_measure(e) for e in EXPECTED["values"] if _mapped(e)})
    evaluator = Evaluator(
        qrels,
        measures,
        Conventions(ties=Ties(ties), relevance_level=LEVEL),
        train=read_train(FAIRNESS / "train.csv"),
        items=read_items(FAIRNESS / "items.csv"),
        user_groups=read_table_columns(FAIRNESS / "users.csv", "user", "activity"),
    )
    aligned = evaluator.align(run)
    lists = evaluator.item_lists(aligned)
    per_query = evaluator.evaluate_aligned("golden", aligned, lists)
    values = {str(m): float(v[0]) for m, v in evaluator.system_values(lists).items()}
    values |= {str(m): float(np.mean(per_query.values[:, j])) for j, m in enumerate(per_query.measures)}  # pyxclib: 40 users
    return evaluator, lists, values


@pytest.fixture(scope="module", params=["trec_eval", "input_order"])
def evaluated(request: pytest.FixtureRequest) -> tuple[str, Evaluator, Any, dict[str, float]]:
    return (request.param, *_evaluate(request.param))


def test_every_golden_id_is_mapped_or_pending() -> None:
    pending = MAP["pending"]
    elsewhere = ("ndeval.", "expeval.", "elliot.BiasDisparity")  # mapped by their own sections, tested below
    left = {_base(e) for e in EXPECTED["values"] if not _mapped(e) and not str(e["id"]).startswith(elsewhere)}
    unexplained = {b for b in left if b not in pending and b.split(".")[0] not in pending}
    assert not unexplained, unexplained
    assert set(MAP["measures"]) <= {_base(e) for e in EXPECTED["values"]}  # no stale mapping
    for entry in EXPECTED["values"]:  # every ndeval id has its measure
        if str(entry["id"]).startswith("ndeval."):
            _intent_measure(entry)


def test_each_value_of_the_peers(evaluated: tuple[str, Evaluator, Any, dict[str, float]]) -> None:
    ties, _, _, values = evaluated
    checked = 0
    for entry in EXPECTED["values"]:
        if not _mapped(entry) or entry["ties"] != ties:
            continue
        tolerance = 1e-6 if "dtype" in entry else 1e-9  # float32 in the peer (pyxclib nDCG, LensKit's exposures)
        got, want = values[_measure(entry)], entry["value"]
        assert math.isclose(got, want, rel_tol=0, abs_tol=tolerance), (entry["id"], ties, got, want)
        checked += 1
    assert checked == 50  # per tie order: pyxclib 5 ids x 4 cutoffs, LensKit 3 x 2, Elliot 12 x 2


def test_the_group_probabilities_and_the_ideal_of_pyxclib(evaluated: tuple[str, Evaluator, Any, dict[str, float]]) -> None:
    """Elliot's per-group P_g of REO and RSP (as the registry gives them to the report's group chart, named by the
    provider column's values), and pyxclib's denominator (PSP.best), from the per-user terms."""
    ties, _, lists, _ = evaluated
    checked = 0
    for entry in EXPECTED["values"]:
        if entry["ties"] != ties:
            continue
        if _base(entry).startswith(("elliot.REO.", "elliot.RSP.")):
            m = parse_measure(_measure(entry))
            sums = fairness.weighted_sums(np.ones((1, lists.n_queries)), lists.items.user_parts[m])
            groups = sorted(entry["per_group"], key=float)  # the column's values, in the order harness numbers them
            got = fairness.parity_probabilities(sums)[0]
            assert np.allclose(got, [entry["per_group"][g] for g in groups], rtol=0, atol=1e-12), entry["id"]
            named = REGISTRY.definition(m).group_values(lists, m)
            assert named is not None and [float(g) for g in named[0]] == [float(g) for g in groups], entry["id"]
            assert np.array_equal(named[1], got), entry["id"]
            checked += 1
        if _base(entry) == "pyxclib.PSP.best":
            m = parse_measure(f"PSP(norm=pyxclib)@{entry['k']}")
            terms = REGISTRY.definition(m).user_terms
            assert terms is not None
            ideal = terms(lists, m)[:, 1].mean()
            assert math.isclose(ideal, entry["value"], rel_tol=0, abs_tol=1e-9), entry["id"]
            checked += 1
    assert checked == 12


def test_the_per_user_terms_depend_on_each_users_rows_only(tmp_path: Path) -> None:
    """Every third user alone, their files shuffled: each per-user term of every measure, bit for bit."""
    _, whole, _ = _evaluate("trec_eval")
    keep = {f"u{i:02d}" for i in range(1, 41, 3)}
    for name in ("test.csv", "run.csv"):
        frame = pd.read_csv(FAIRNESS / name, dtype=str)
        frame[frame["user"].isin(keep)].sample(frac=1.0, random_state=7).to_csv(tmp_path / name, index=False)
    qrels = load_qrels(tmp_path / "test.csv", {"query": "user", "doc": "item", "relevance": "rating"})
    run = load_run(tmp_path / "run.csv", {"query": "user", "doc": "item", "score": "score"}, name="golden")
    measures = sorted({_measure(e) for e in EXPECTED["values"] if _mapped(e)})
    evaluator = Evaluator(
        qrels,
        measures,
        Conventions(relevance_level=LEVEL),
        train=read_train(FAIRNESS / "train.csv"),
        items=read_items(FAIRNESS / "items.csv"),
        user_groups=read_table_columns(FAIRNESS / "users.csv", "user", "activity"),
    )
    aligned = evaluator.align(run)
    part = evaluator.item_lists(aligned)
    rows = np.array([int(q[1:]) - 1 for q in aligned.query_ids])  # u01.. are the whole run's rows 0..
    assert whole.items.user_parts.keys() == part.items.user_parts.keys() and len(part.items.user_parts) >= 14
    for m, terms in whole.items.user_parts.items():
        alone = part.items.user_parts[m]
        got = alone.toarray() if hasattr(alone, "toarray") else alone
        want = terms[rows].toarray() if hasattr(terms, "toarray") else terms[rows]
        assert np.array_equal(got, want), m


def _intent_measure(entry: dict[str, Any]) -> str:
    base, _, k = str(entry["id"]).partition("@")
    fixed = MAP["intent_measures"].get(str(entry["id"]))  # ndeval.alpha-DCG@1.fixed: its own mapping
    name = fixed if fixed is not None else MAP["intent_measures"][base]
    cutoff = k.removesuffix(".fixed")
    return str(parse_measure(f"{name}@{cutoff}" if cutoff else name))


def _intent_entries(ties: str) -> list[dict[str, Any]]:
    return [e for e in EXPECTED["values"] if str(e["id"]).startswith("ndeval.") and e["ties"] == ties]


@pytest.mark.parametrize("ties", ["pyndeval", "trec_eval"])
def test_each_value_of_ndeval_per_query(ties: str) -> None:
    """ndeval's measures through pyndeval (alpha = beta = 0.5), every query's value: at pyndeval's tie order
    (docno ascending) and trec_eval's, ndeval's rank-1 bug as rank1=ndeval and its fix as the default."""
    from harness.data.trec import read_subtopic_qrels

    entries = _intent_entries(ties)
    measures = sorted({_intent_measure(e) for e in entries})
    evaluator = Evaluator(
        read_subtopic_qrels(FAIRNESS / "div_qrels.txt"), measures, Conventions(ties=Ties(MAP["intent_ties"][ties]))
    )
    per_query = evaluator.evaluate(load_run(FAIRNESS / "div_run.txt"))
    column = {str(m): j for j, m in enumerate(per_query.measures)}
    row = {q: i for i, q in enumerate(per_query.query_ids.tolist())}
    checked = 0
    for entry in entries:
        values = per_query.values[:, column[_intent_measure(entry)]]
        for query, want in entry["per_query"].items():
            assert math.isclose(values[row[query]], want, rel_tol=0, abs_tol=1e-9), (entry["id"], ties, query)
            checked += 1
        assert math.isclose(float(np.mean([values[row[q]] for q in entry["per_query"]])), entry["value"], abs_tol=1e-9)
    assert checked == 29 * 30  # 27 ids of ndeval and its 2 corrected rank-1 values, x 30 queries


def test_a_querys_intent_aware_values_depend_on_its_rows_only(tmp_path: Path) -> None:
    """Every other query of the diversity case alone, its lines shuffled: the same values, bit for bit."""
    from harness.data.trec import read_subtopic_qrels

    measures = ["alpha_nDCG@5", "alpha_DCG@10", "ERR_IA@20", "nERR_IA@3", "NRBP", "nNRBP", "P_IA@5", "StRecall@10", "AP_IA"]
    whole = Evaluator(read_subtopic_qrels(FAIRNESS / "div_qrels.txt"), measures).evaluate(load_run(FAIRNESS / "div_run.txt"))
    rng = np.random.default_rng(4)
    for name in ("div_qrels.txt", "div_run.txt"):
        lines = [line for line in (FAIRNESS / name).read_text().splitlines() if int(line.split()[0]) % 2]
        (tmp_path / name).write_text("\n".join(rng.permutation(lines)) + "\n")
    part = Evaluator(read_subtopic_qrels(tmp_path / "div_qrels.txt"), measures).evaluate(load_run(tmp_path / "div_run.txt"))
    rows = [whole.query_ids.tolist().index(q) for q in part.query_ids]
    assert len(rows) == 15 and np.array_equal(part.values, whole.values[rows])


def test_each_value_of_expeval_per_query() -> None:
    """expeval's 48 configurations (EE-D, EE-R, EE-L x gerr, rbp x documents, groups x incomplete, complete x
    normalised, raw), every query, under compat=expeval (its bounds and defaults, bugs included)."""
    from harness.evaluation.exposure import ExposureSettings, evaluate_exposure

    checked = 0
    frames: dict[tuple[str, ...], Any] = {}
    for entry in EXPECTED["values"]:
        if entry["peer"] != "expeval":
            continue
        _, measure, model, grouping, judged, scale = str(entry["id"]).split(".")
        key = (model, grouping, judged, scale)
        if key not in frames:
            settings = ExposureSettings(
                model=model,
                p=MAP["exposure"]["p"],
                u=MAP["exposure"]["u"],  # type: ignore[arg-type]
                groups=grouping == "group",
                complete=judged == "complete",
                normalized=scale == "norm",
                compat="expeval",
            )
            frames[key] = evaluate_exposure(FAIRNESS / "ee_qrels.txt", FAIRNESS / "ee_run.txt", settings).set_index("query_id")
        got = frames[key][measure]
        assert set(got.index) == set(entry["per_query"]), entry["id"]
        for query, want in entry["per_query"].items():
            assert math.isclose(got[query], want, rel_tol=0, abs_tol=1e-9), (entry["id"], query, got[query], want)
            checked += 1
        assert math.isclose(float(got.mean()), entry["value"], abs_tol=1e-9), entry["id"]
    assert checked == 48 * 30


def test_expected_exposure_defaults_differ_from_expeval_only_where_named(tmp_path: Path) -> None:
    """A query missing from the run: expeval gives EE-L the relevance's upper bound; harness the distance of an empty
    exposure vector to the target, ‖ε*‖² (by hand: one relevant document, rbp p = 0.5: ε* = 1, so 1.0)."""
    from harness.evaluation.exposure import ExposureSettings, evaluate_exposure

    (tmp_path / "qrels").write_text("q1 0 a 1\nq2 0 c 1\nq2 1 d 2\n")
    (tmp_path / "run").write_text("q2 0 c 1 1 r\nq2 0 d 2 1 r\n")
    ours = evaluate_exposure(tmp_path / "qrels", tmp_path / "run", ExposureSettings(model="rbp")).set_index("query_id")
    theirs = evaluate_exposure(tmp_path / "qrels", tmp_path / "run", ExposureSettings(model="rbp", compat="expeval")).set_index(
        "query_id"
    )
    assert ours.loc["q1"].tolist() == [0.0, 0.0, 1.0]
    assert theirs.loc["q1", "EE-L"] == 0.0 and theirs.loc["q1", "EE-D"] == 1 / (1 - 0.25)  # one level: relevance ub 0
    assert ours.loc["q2"].tolist() == theirs.loc["q2"].tolist()
    # the same as measures: compat=expeval is expeval's, the default harness's. Both of q2's documents score 1: the
    # measures order a sample by score, ties as the conventions say; in file order (input_order) they follow the
    # rank column as expeval does, by trec_eval's rule d comes first
    from harness.data.load import load_qrels, load_run
    from harness.measures.conventions import Conventions, Ties

    names = ["EE_D(model=rbp)", "EE_R(model=rbp)", "EE_L(model=rbp)"]
    qrels, run = load_qrels(tmp_path / "qrels"), load_run(tmp_path / "run", samples=True)
    for compat, frame in (("harness", ours), ("expeval", theirs)):
        measures = names if compat == "harness" else [n.replace(")", ",compat=expeval)") for n in names]
        per_query = Evaluator(qrels, measures, Conventions(ties=Ties.INPUT_ORDER)).evaluate(run)
        for i, query in enumerate(per_query.query_ids.tolist()):
            assert per_query.values[i].tolist() == frame.loc[query, ["EE-D", "EE-R", "EE-L"]].tolist(), (compat, query)
    by_docno = Evaluator(qrels, names).evaluate(run).values[1].tolist()
    assert by_docno != ours.loc["q2"].tolist() and by_docno[0] == ours.loc["q2", "EE-D"]  # same exposures, swapped


def test_harness_exposure_prints_the_means() -> None:
    """The command line: the default (gerr, incomplete, raw) equals expeval's means on the golden case, as JSON."""
    import io
    import json as json_module

    from harness.cli import main

    out, err = io.StringIO(), io.StringIO()
    assert main(["exposure", str(FAIRNESS / "ee_qrels.txt"), str(FAIRNESS / "ee_run.txt"), "--format", "json"], out, err) == 0
    printed = json_module.loads(out.getvalue())["mean"]
    expected = {
        str(e["id"]).split(".")[1]: e["value"] for e in EXPECTED["values"] if str(e["id"]).endswith(".gerr.doc.incomplete.raw")
    }
    assert printed.keys() == expected.keys()
    for m, want in expected.items():
        assert math.isclose(printed[m], want, rel_tol=0, abs_tol=1e-12), m


@pytest.mark.parametrize("ties", ["trec_eval", "input_order"])
def test_each_cell_of_elliots_bias_disparity(ties: str) -> None:
    """Elliot's BiasDisparityBR, BS and BD matrices (user groups of users.csv x provider or popgroup), cell by cell."""
    entries = [e for e in EXPECTED["values"] if str(e["id"]).startswith("elliot.BiasDisparity") and e["ties"] in (ties, None)]
    cells = {}
    for entry in entries:
        kind, column = str(entry["id"]).split(".")[1].removeprefix("BiasDisparity"), _base(entry).split(".")[3]
        for cell, want in entry["per_group"].items():
            user_group, category = cell.split(",")
            name = f"BiasDisparity(group={column},category={category},user_group='{user_group}',kind={kind})@{entry['k'] or 10}"
            cells[str(parse_measure(name))] = want
    qrels = load_qrels(FAIRNESS / "test.csv", {"query": "user", "doc": "item", "relevance": "rating"})
    run = load_run(FAIRNESS / "run.csv", {"query": "user", "doc": "item", "score": "score"}, name="golden")
    evaluator = Evaluator(
        qrels,
        sorted(cells),
        Conventions(ties=Ties(ties), relevance_level=LEVEL),
        train=read_train(FAIRNESS / "train.csv"),
        items=read_items(FAIRNESS / "items.csv"),
        user_groups=read_table_columns(FAIRNESS / "users.csv", "user", "activity"),
    )
    values = {str(m): float(v[0]) for m, v in evaluator.system_values(evaluator.item_lists(evaluator.align(run))).items()}
    for name, want in cells.items():
        assert math.isclose(values[name], want, rel_tol=0, abs_tol=1e-9), (name, values[name], want)
    assert len(cells) == 2 * (6 + 4) * 2 + (6 + 4)  # BR, BD x (6 provider + 4 popgroup cells) x 2 cutoffs; BS


def test_the_exposure_measures_of_the_registry_give_expevals_values() -> None:
    """EE_D, EE_R, EE_L as per-query measures: the stochastic run's samples from its second column, the judgments as
    TREC qrels; expeval's 24 document configurations (gerr, rbp x incomplete, complete x normalised, raw), every query,
    and its means."""
    from harness.data.load import load_qrels, load_run
    from harness.evaluation.results import aggregate

    run = load_run(FAIRNESS / "ee_run.txt", samples=True)
    qrels = load_qrels(FAIRNESS / "ee_qrels.txt")
    checked = 0
    for entry in EXPECTED["values"]:
        if entry["peer"] != "expeval" or ".doc." not in str(entry["id"]):
            continue
        _, measure, model, _, judged, scale = str(entry["id"]).split(".")
        settings = {
            "model": model,
            "p": MAP["exposure"]["p"],
            "u": MAP["exposure"]["u"],
            "target": "judged" if judged == "complete" else "relevant",
            "norm": "expeval" if scale == "norm" else "raw",
        }
        name = f"{measure.replace('-', '_')}({','.join(f'{k}={v}' for k, v in settings.items())})"
        per_query = Evaluator(qrels, [name]).evaluate(run)
        got = dict(zip(per_query.query_ids.tolist(), per_query.values[:, 0].tolist(), strict=True))
        assert set(got) == set(entry["per_query"]), entry["id"]
        for query, want in entry["per_query"].items():
            assert math.isclose(got[query], want, rel_tol=0, abs_tol=1e-9), (entry["id"], query, got[query], want)
            checked += 1
        assert math.isclose(dict(aggregate(per_query))[per_query.measures[0]], entry["value"], abs_tol=1e-9)
    assert checked == 24 * 30


def test_harness_eval_reads_a_stochastic_run_as_text_or_as_a_table(tmp_path: Path) -> None:
    """``harness eval -m EE_L,EE_R``: the TREC run's second column as the samples; the same run as a CSV table with
    --run-columns ...,sample=draw gives the same values; both are expeval's golden means."""
    import io
    import json as json_module

    from harness.cli import main

    lines = [line.split() for line in (FAIRNESS / "ee_run.txt").read_text().splitlines()]
    pd.DataFrame(
        {
            "user": [f[0] for f in lines],
            "draw": [f[1] for f in lines],
            "item": [f[2] for f in lines],
            "score": [float(f[4]) for f in lines],
        }
    ).to_csv(tmp_path / "run.csv", index=False)
    golden = {e["id"]: e["value"] for e in EXPECTED["values"] if e["peer"] == "expeval"}
    printed = []
    for run in (
        [str(FAIRNESS / "ee_run.txt")],
        ["--run-columns", "query=user,doc=item,score=score,sample=draw", str(tmp_path / "run.csv")],
    ):
        out, err = io.StringIO(), io.StringIO()
        assert main(["eval", "--format", "json", "-m", "EE_L,EE_R", str(FAIRNESS / "ee_qrels.txt"), *run], out, err) == 0, (
            err.getvalue()
        )
        means = {r["measure"]: r["value"] for r in json_module.loads(out.getvalue())["results"] if r["query_id"] == "all"}
        assert math.isclose(means["EE_L"], golden["expeval.EE-L.gerr.doc.incomplete.raw"], abs_tol=1e-9)
        assert math.isclose(means["EE_R"], golden["expeval.EE-R.gerr.doc.incomplete.raw"], abs_tol=1e-9)
        printed.append(means)
    assert printed[0] == printed[1]


# expeval's flags -> harness exposure's (expeval normalises unless -U; harness is raw unless --normalized)
EXPEVAL_FLAGS = {
    "": ["--normalized"],
    "-C": ["--complete", "--normalized"],
    "-C -U": ["--complete"],
    "-C -u rbp": ["--complete", "--normalized", "--model", "rbp"],
    "-C -G": ["--complete", "--normalized", "--groups"],
}


@pytest.mark.parametrize("flags", list(EXPEVAL_FLAGS))
def test_harness_exposure_keeps_the_queries_expeval_keeps(flags: str, tmp_path: Path) -> None:
    """expeval's own output (tests/fixtures/peers/expeval.json) on a judged query without relevant documents (q2: -C
    keeps it, its target spread over grade-0 documents) and a judged query missing from the run (q3): the same
    queries, the same values to expeval's six printed decimals."""
    import io
    import json as json_module

    from harness.cli import main

    case = json_module.loads((Path(__file__).parents[1] / "fixtures" / "peers" / "expeval.json").read_text())
    (tmp_path / "qrels.txt").write_text(case["qrels"])
    (tmp_path / "run.txt").write_text(case["run"])
    out = io.StringIO()
    files = [str(tmp_path / "qrels.txt"), str(tmp_path / "run.txt")]
    argv = ["exposure", "-q", "--compat", "expeval", *EXPEVAL_FLAGS[flags], *files]
    assert main(argv, out, io.StringIO()) == 0
    name = {"disparity": "EE-D", "relevance": "EE-R", "difference": "EE-L"}
    want = {(name[m], q): v for m, q, v in case["outputs"][flags]}
    got = {(m.strip(), q): float(v) for m, q, v in (line.split("\t") for line in out.getvalue().splitlines()) if q != "all"}
    assert got.keys() == want.keys()
    assert all(abs(got[key] - value) <= 5e-7 for key, value in want.items()), flags
    assert ("EE-D", "q2") in want if "-C" in flags else ("EE-D", "q2") not in want
