"""Every value of the peers' golden case (tests/fixtures/beyond_accuracy/expected.json), per user where given.

The values were computed by the peers' own code (Microsoft Recommenders, RecBole, Elliot) on
the vendored files; each expected id maps to one harness measure below, at both tie orders.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from harness.data.items import read_items, read_train
from harness.data.load import load_qrels, load_run
from harness.evaluation.evaluator import Evaluator
from harness.measures.conventions import Conventions, Ties
from harness.measures.parse import parse_measure
from harness.measures.peers import PROFILES
from tests.conftest import BEYOND_ACCURACY

EXPECTED = json.loads((BEYOND_ACCURACY / "expected.json").read_text())
TOLERANCE = 1e-9  # the README's: the peers' values are exact to about 1e-12

# expected id (without @k) -> harness measure (without @k)
MEASURE_OF = {
    "msrec.catalog_coverage": "Coverage",
    "msrec.distributional_coverage": "Entropy",
    "msrec.novelty": "Novelty(weight=recommendation,cold=zero)",
    "msrec.diversity.cooccurrence": "ILD",
    "msrec.diversity.feature_vector": "ILD(sim=features)",
    "msrec.serendipity.cooccurrence.all": "Serendipity",
    "msrec.serendipity.cooccurrence.rel1": "Serendipity(rel=1)",
    "msrec.serendipity.cooccurrence.rel4": "Serendipity(rel=4)",
    "msrec.serendipity.feature_vector.all": "Serendipity(sim=features)",
    "msrec.serendipity.feature_vector.rel1": "Serendipity(sim=features,rel=1)",
    "msrec.serendipity.feature_vector.rel4": "Serendipity(sim=features,rel=4)",
    "recbole.itemcoverage.native": "Coverage(catalog=recbole)",
    "recbole.itemcoverage.catalog": "Coverage(catalog=items)",
    "recbole.giniindex.native": "Gini(catalog=recbole)",
    "recbole.giniindex.catalog": "Gini(catalog=items)",
    "recbole.shannonentropy": "Entropy(form=recbole)",
    "recbole.averagepopularity": "ARP",
    "recbole.tailpercentage.ratio0.1": "TailShare(tail=0.1)",
    "recbole.tailpercentage.ratio0.2": "TailShare(tail=0.2)",
    "recbole.tailpercentage.count3": "TailShare(tail_count=3)",
    "elliot.ItemCoverage": "RecItems",
    "elliot.Gini": "Gini(form=elliot)",
    "elliot.SEntropy": "Entropy(form=elliot)",
    "elliot.ARP": "ARP(pop=users)",
    "elliot.APLT": "APLT",
    "elliot.ACLT": "ACLT",
    "elliot.EFD.rel1": "EFD(rel=1)",
    "elliot.EFD.rel4": "EFD(rel=4)",
    "elliot.EPC.rel1": "EPC(rel=1)",
    "elliot.EPC.rel4": "EPC(rel=4)",
}
# msrec's novelty has a system value and, per user, the same function on one user's rows
PER_USER_OF = {"msrec.novelty": "Novelty(cold=zero)"}


def _measure(entry: dict[str, object], per_user: bool = False) -> str:
    base, _, k = str(entry["id"]).partition("@")
    name = (PER_USER_OF if per_user else {}).get(base) or MEASURE_OF[base]
    return str(parse_measure(f"{name}@{k}"))  # canonical: Coverage(catalog='items')@5


def _evaluate(
    ties: str, conventions: Conventions | None = None, extra: tuple[str, ...] = ()
) -> tuple[Evaluator, dict[str, dict[str, float]], dict[str, float]]:
    qrels = load_qrels(BEYOND_ACCURACY / "test.csv", {"query": "user", "doc": "item", "relevance": "rating"})
    run = load_run(BEYOND_ACCURACY / "run.csv", {"query": "user", "doc": "item", "score": "score"}, name="golden")
    measures = sorted(
        {_measure(e) for e in EXPECTED["values"]}
        | {_measure(e, True) for e in EXPECTED["values"]}
        | {str(parse_measure(m)) for m in extra}
    )
    evaluator = Evaluator(
        qrels,
        measures,
        conventions or Conventions(ties=Ties(ties)),
        train=read_train(BEYOND_ACCURACY / "train.csv"),
        items=read_items(BEYOND_ACCURACY / "items.csv"),
    )
    aligned = evaluator.align(run)
    lists = evaluator.item_lists(aligned)
    per_query = evaluator.evaluate_aligned("golden", aligned, lists)
    users = per_query.query_ids.tolist()
    per_user = {str(m): dict(zip(users, per_query.values[:, j].tolist(), strict=True)) for j, m in enumerate(per_query.measures)}
    system = {str(m): float(v[0]) for m, v in evaluator.system_values(lists).items()}
    return evaluator, per_user, system


@pytest.fixture(scope="module", params=["trec_eval", "input_order"])
def computed(request: pytest.FixtureRequest) -> tuple[str, dict[str, dict[str, float]], dict[str, float]]:
    _, per_user, system = _evaluate(request.param)
    return request.param, per_user, system


def test_every_expected_id_is_mapped() -> None:
    ids = {str(e["id"]).partition("@")[0] for e in EXPECTED["values"]}
    assert ids == set(MEASURE_OF)
    assert {e["ties"] for e in EXPECTED["values"]} == {"trec_eval", "input_order"}


def test_system_values(computed: tuple[str, dict[str, dict[str, float]], dict[str, float]]) -> None:
    ties, per_user, system = computed
    checked = 0
    for entry in EXPECTED["values"]:
        if entry["ties"] != ties:
            continue
        name = _measure(entry)
        got = system[name] if name in system else float(np.nanmean(list(per_user[name].values())))
        assert math.isclose(got, entry["value"], rel_tol=TOLERANCE, abs_tol=TOLERANCE), (entry["id"], name, got, entry["value"])
        checked += 1
    assert checked == 60


@pytest.mark.parametrize("peer", ["msrec", "recbole", "elliot"])
def test_each_peers_profile_gives_its_golden_values(peer: str) -> None:
    """``profile: recbole`` (msrec, elliot): its conventions are the order in which the peer read run.csv (its lines,
    ties included), so every value the peer computed from that order comes out, as the peer computed it."""
    _, per_user, system = _evaluate("", Conventions.from_mapping(dict(PROFILES[peer])))
    entries = [e for e in EXPECTED["values"] if e["peer"] == peer and e["ties"] == "input_order"]
    for entry in entries:
        name = _measure(entry)
        got = system[name] if name in system else float(np.nanmean(list(per_user[name].values())))
        assert math.isclose(got, entry["value"], rel_tol=TOLERANCE, abs_tol=TOLERANCE), (entry["id"], got, entry["value"])
    assert len(entries) >= 10


def test_per_user_values(computed: tuple[str, dict[str, dict[str, float]], dict[str, float]]) -> None:
    ties, per_user, _ = computed
    checked = 0
    for entry in EXPECTED["values"]:
        if entry["ties"] != ties or "per_user" not in entry:
            continue
        name = _measure(entry, per_user=True)
        mine = per_user[name]
        expected = entry["per_user"]
        left_out = {u for u, v in mine.items() if math.isnan(v)}
        assert set(expected) == set(mine) - left_out, (entry["id"], sorted(left_out))  # the same users left out
        for user, value in expected.items():
            assert math.isclose(mine[user], value, rel_tol=TOLERANCE, abs_tol=TOLERANCE), (entry["id"], user, mine[user], value)
            checked += 1
    assert checked > 1000


def test_tie_order_changes_what_the_readme_says() -> None:
    """22 of the 60 values differ between the tie orders; harness's differ in the same places."""
    _, trec_users, trec_system = _evaluate("trec_eval")
    _, input_users, input_system = _evaluate("input_order")
    differs = set()
    for entry in EXPECTED["values"]:
        if entry["ties"] != "trec_eval":
            continue
        name = _measure(entry)
        a = trec_system[name] if name in trec_system else np.nanmean(list(trec_users[name].values()))
        b = input_system[name] if name in input_system else np.nanmean(list(input_users[name].values()))
        if not math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12):
            differs.add(entry["id"])
    other = {e["id"]: e["value"] for e in EXPECTED["values"] if e["ties"] == "input_order"}
    expected_differs = {
        e["id"]
        for e in EXPECTED["values"]
        if e["ties"] == "trec_eval" and not math.isclose(e["value"], other[e["id"]], rel_tol=1e-12, abs_tol=1e-12)
    }
    assert differs == expected_differs
    assert len(expected_differs) == 22


# the peers' own names for the golden measures, as their users write them in a config or a script
OWN_NAME = {
    "recbole.itemcoverage.native": "itemcoverage",
    "recbole.giniindex.native": "GiniIndex",
    "recbole.shannonentropy": "shannonentropy",
    "recbole.averagepopularity": "AveragePopularity",
    "recbole.tailpercentage.ratio0.1": "tailpercentage",
    "msrec.catalog_coverage": "catalog_coverage",
    "msrec.distributional_coverage": "distributional_coverage",
    "msrec.diversity.cooccurrence": "diversity",
}


@pytest.mark.parametrize("peer", ["msrec", "recbole"])
def test_a_peers_own_name_gives_its_golden_value(peer: str) -> None:
    """RecBole's ``itemcoverage@10`` and Microsoft Recommenders' ``catalog_coverage`` are read as harness's measure
    that reproduces them: under the peer's profile, the value the peer's own code computed."""
    entries = [
        e
        for e in EXPECTED["values"]
        if e["peer"] == peer and e["ties"] == "input_order" and str(e["id"]).partition("@")[0] in OWN_NAME
    ]
    own = tuple(f"{OWN_NAME[str(e['id']).partition('@')[0]]}@{str(e['id']).partition('@')[2]}" for e in entries)
    _, per_user, system = _evaluate("", Conventions.from_mapping(dict(PROFILES[peer])), own)
    for entry in entries:
        base, _, k = str(entry["id"]).partition("@")
        name = str(parse_measure(f"{OWN_NAME[base]}@{k}"))
        got = system[name] if name in system else float(np.nanmean(list(per_user[name].values())))
        assert math.isclose(got, entry["value"], rel_tol=TOLERANCE, abs_tol=TOLERANCE), (entry["id"], got, entry["value"])
    assert len(entries) >= 6
