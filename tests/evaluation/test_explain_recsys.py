"""harness explain over the recommender, fairness and intent-aware measures: each peer's row is the value the peer's
own code computed on the golden cases (tests/fixtures/beyond_accuracy, tests/fixtures/fairness), in the peer's list
order, with the peer's variant of the measure."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from harness.data.items import read_items, read_train
from harness.data.load import load_qrels, load_run
from harness.data.tables import read_table_columns
from harness.data.trec import read_subtopic_qrels
from harness.evaluation.explain import explain
from harness.measures.conventions import Conventions
from harness.measures.parse import parse_measure
from harness.measures.peers import PEERS
from tests.conftest import BEYOND_ACCURACY, FAIRNESS
from tests.kernels.test_beyond_golden import MEASURE_OF

BEYOND = json.loads((BEYOND_ACCURACY / "expected.json").read_text())
FAIR = json.loads((FAIRNESS / "expected.json").read_text())
FAIR_MAP = json.loads((FAIRNESS / "harness.json").read_text())


def _bare(measure: str) -> str:
    """The measure without parameters: what a user asks explain for."""
    parsed = parse_measure(measure)
    return str(parse_measure(f"{parsed.name}@{parsed.cutoff}" if parsed.cutoff else parsed.name))


def _rows(entries: list[tuple[str, str, float]], explained: list[Any]) -> int:
    """Each (peer, harness measure, golden value) whose measure is the peer's own variant of the bare measure asked:
    explain's row for that peer gives the value. Returns how many were checked."""
    rows = {(str(e.measure), p.peer.name): p for e in explained for p in e.peers}
    checked = 0
    for peer, measure, want in entries:
        parsed, bare = parse_measure(measure), parse_measure(_bare(measure))
        if str(PEERS[peer].measure_for(bare)) != str(parsed):
            continue  # another variant than the peer's main one (RecBole's coverage over the catalogue, say)
        row = rows[str(bare), peer]
        assert row.value is not None and math.isclose(row.value, want, rel_tol=1e-9, abs_tol=1e-9), (peer, measure)
        checked += 1
    return checked


def test_the_beyond_accuracy_peers_rows_are_their_golden_values() -> None:
    entries = []
    for e in BEYOND["values"]:
        base, _, k = str(e["id"]).partition("@")
        if e["ties"] == "input_order":  # the peers' own list order (run.csv's lines)
            entries.append((str(e["peer"]), str(parse_measure(f"{MEASURE_OF[base]}@{k}")), float(e["value"])))
    asked = sorted({_bare(m) for _, m, _ in entries})
    qrels = load_qrels(BEYOND_ACCURACY / "test.csv", {"query": "user", "doc": "item", "relevance": "rating"})
    run = load_run(BEYOND_ACCURACY / "run.csv", {"query": "user", "doc": "item", "score": "score"})
    explained = explain(
        qrels,
        run,
        asked,
        peers=["msrec", "recbole", "elliot"],
        train=read_train(BEYOND_ACCURACY / "train.csv"),
        items=read_items(BEYOND_ACCURACY / "items.csv"),
    )
    assert _rows(entries, explained) >= 25


def test_the_fairness_peers_rows_are_their_golden_values() -> None:
    """Elliot's REO, RSP and MADs, LensKit's exposure Gini and pyxclib's propensity-scored measures, at the relevance
    level the case uses: the REO gap between harness's tie order and Elliot's list order is Elliot's ties setting."""
    entries = [
        (
            str(e["peer"]),
            str(parse_measure(f"{FAIR_MAP['measures'][str(e['id']).partition('@')[0]]}@{e['k']}")),
            float(e["value"]),
            1e-6 if "dtype" in e else 1e-9,
        )
        for e in FAIR["values"]
        if e["ties"] == "input_order" and str(e["id"]).partition("@")[0] in FAIR_MAP["measures"]
    ]
    asked = sorted({f"{parse_measure(m).name}{_params_kept(m)}@{parse_measure(m).cutoff}" for _, m, _, _ in entries})
    qrels = load_qrels(FAIRNESS / "test.csv", {"query": "user", "doc": "item", "relevance": "rating"})
    run = load_run(FAIRNESS / "run.csv", {"query": "user", "doc": "item", "score": "score"})
    explained = explain(
        qrels,
        run,
        asked,
        Conventions(relevance_level=FAIR_MAP["conventions"]["relevance_level"]),
        peers=["elliot", "lenskit", "pyxclib"],
        train=read_train(FAIRNESS / "train.csv"),
        items=read_items(FAIRNESS / "items.csv"),
        user_groups=read_table_columns(FAIRNESS / "users.csv", "user", "activity"),
    )
    assert _rows_by_asked(entries, explained) >= 40  # Elliot 24, pyxclib 12, LensKit 6


def _params_kept(measure: str) -> str:
    """The parameters that name what is measured (the item group, the exposure weight, the gain read), not a peer's
    variant: they stay in the measure asked."""
    parsed = parse_measure(measure)
    kept = [f"{k}={v}" for k, v in parsed.params if k in ("group", "weight", "gain")]
    return f"({','.join(kept)})" if kept else ""


def _rows_by_asked(entries: list[tuple[str, str, float, float]], explained: list[Any]) -> int:
    """As :func:`_rows`, each measure asked with the parameters that say what it measures; within each value's
    tolerance (1e-6 where the peer computes in float32: LensKit's exposures, pyxclib's nDCG)."""
    rows = {(str(e.measure), p.peer.name): p for e in explained for p in e.peers}
    checked = 0
    for peer, measure, want, tolerance in entries:
        parsed = parse_measure(measure)
        asked = parse_measure(f"{parsed.name}{_params_kept(measure)}@{parsed.cutoff}")
        if str(PEERS[peer].measure_for(asked)) != str(parsed):
            continue
        row = rows[str(asked), peer]
        assert row.value is not None and math.isclose(row.value, want, rel_tol=0, abs_tol=tolerance), (peer, measure)
        checked += 1
    return checked


@pytest.mark.parametrize(
    "name", ["alpha_nDCG@10", "alpha_DCG@5", "ERR_IA@20", "nERR_IA@10", "NRBP", "P_IA@10", "StRecall@20", "AP_IA"]
)
def test_the_ndeval_row_is_pyndevals_value(name: str) -> None:
    """pyndeval's values (docno ascending among ties, ndeval's rank-1 discount): the ndeval row, from subtopic
    judgments read as harness eval --qrels-format ndeval reads them."""
    variant = str(PEERS["ndeval"].measure_for(parse_measure(name)))  # alpha_DCG: ndeval's rank-1 discount

    def mapped(entry: dict[str, Any]) -> str:
        base = FAIR_MAP["intent_measures"][str(entry["id"]).partition("@")[0]]
        return str(parse_measure(f"{base}@{entry['k']}" if entry["k"] else base))

    wanted = [
        e for e in FAIR["values"] if str(e["id"]).startswith("ndeval.") and e["ties"] == "pyndeval" and mapped(e) == variant
    ]
    assert len(wanted) == 1, name
    (explained,) = explain(
        read_subtopic_qrels(FAIRNESS / "div_qrels.txt"), load_run(FAIRNESS / "div_run.txt"), [name], peers=["ndeval", "trec_eval"]
    )
    rows = {p.peer.name: p for p in explained.peers}
    assert rows["ndeval"].value == pytest.approx(wanted[0]["value"], abs=1e-9)
    assert rows["trec_eval"].absent  # trec_eval has no intent-aware measure


def test_match_finds_recboles_gini_and_names_it() -> None:
    """RecBole's GiniIndex on the golden case, searched from harness's Gini@5: its list order and its universe
    (num_items: training, test and catalogue items), named as RecBole's profile; without a catalogue, the variant over
    one is not searched."""
    from harness.evaluation.explain import match

    (entry,) = [e for e in BEYOND["values"] if e["id"] == "recbole.giniindex.native@5" and e["ties"] == "input_order"]
    qrels = load_qrels(BEYOND_ACCURACY / "test.csv", {"query": "user", "doc": "item", "relevance": "rating"})
    run = load_run(BEYOND_ACCURACY / "run.csv", {"query": "user", "doc": "item", "score": "score"})
    train, items = read_train(BEYOND_ACCURACY / "train.csv"), read_items(BEYOND_ACCURACY / "items.csv")
    found = match(qrels, run, "Gini@5", entry["value"], tol=1e-12, train=train, items=items)
    assert found[0].changes == {"ties": "input_order", "Gini.catalog": "recbole"}
    assert "recbole" in {m.profile for m in found}
    nearest = match(qrels, run, "Gini@5", entry["value"], tol=1e-12, train=train)  # no catalogue: never over one
    assert nearest and all(m.settings.get("Gini.catalog") != "items" for m in nearest)


def test_the_expeval_row_is_expevals_normalised_mean() -> None:
    """expeval's default output (normalised, gerr, relevant documents only) on the stochastic golden run: the expeval
    row of each expected-exposure measure, from the run's sampled rankings."""
    qrels, run = load_qrels(FAIRNESS / "ee_qrels.txt"), load_run(FAIRNESS / "ee_run.txt", samples=True)
    golden = {e["id"]: e["value"] for e in FAIR["values"] if e["peer"] == "expeval"}
    for explained in explain(qrels, run, ["EE_L", "EE_D", "EE_R"], peers=["expeval", "trec_eval"]):
        rows = {p.peer.name: p for p in explained.peers}
        want = golden[f"expeval.{explained.measure.name.replace('_', '-')}.gerr.doc.incomplete.norm"]
        assert rows["expeval"].value == pytest.approx(want, abs=1e-9) and rows["trec_eval"].absent
        assert explained.value == pytest.approx(
            golden[f"expeval.{explained.measure.name.replace('_', '-')}.gerr.doc.incomplete.raw"], abs=1e-9
        )  # harness's default: raw
