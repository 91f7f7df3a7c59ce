"""Other tools' names for harness's measures, and the MLflow keys harness logs, read back as the same measures."""

from __future__ import annotations

import io

import pytest

from harness.cli import main
from harness.errors import MeasureError
from harness.measures.parse import parse_measure
from harness.measures.registry import REGISTRY
from harness.measures.spec import Measure


def test_every_mlflow_key_harness_logs_reads_back_as_its_measure() -> None:
    """A name copied from the MLflow UI (``ndcg_at_10``, ``p_at_5``, ``alpha_ndcg_at_20``) is the measure logged."""
    checked = 0
    for definition in REGISTRY:
        if any(p.required for p in definition.params):
            continue
        for cutoff in ((10,) if definition.cutoff != "none" else ()) + ((None,) if definition.cutoff != "required" else ()):
            measure = Measure(definition.name, cutoff=cutoff)
            assert parse_measure(measure.mlflow_key()) == measure, measure.mlflow_key()
            checked += 1
    assert checked > 80


@pytest.mark.parametrize(
    ("theirs", "ours"),
    [
        ("itemcoverage@10", "Coverage(catalog=recbole)@10"),  # RecBole, by its metric names in a config
        ("GiniIndex@10", "Gini(catalog=recbole)@10"),
        ("ShannonEntropy@10", "Entropy(form=recbole)@10"),
        ("AveragePopularity@10", "ARP@10"),
        ("TailPercentage@10", "TailShare(tail=0.1,ties=recbole)@10"),
        ("catalog_coverage", "Coverage"),  # Microsoft Recommenders' functions
        ("distributional_coverage", "Entropy"),
        ("precision_at_10", "P@10"),
        ("recall_at_5", "R@5"),
        ("ndcg_burges@10", "nDCG(gain=exp)@10"),  # ranx
        ("hit_rate@5", "Success@5"),
        ("r-precision", "Rprec"),
        ("RetrievalNormalizedDCG@10", "nDCG@10"),  # TorchMetrics' classes, top_k as @k
        ("RetrievalMRR", "RR"),
    ],
)
def test_a_peers_name_is_the_measure_that_reproduces_it(theirs: str, ours: str) -> None:
    assert parse_measure(theirs) == parse_measure(ours)


def test_harness_measures_lists_the_peers_names() -> None:
    out = io.StringIO()
    assert main(["measures"], out, io.StringIO()) == 0
    text = out.getvalue()
    assert "ItemCoverage@k (recbole) = Coverage(catalog=recbole)@k" in text
    assert "catalog_coverage (msrec) = Coverage" in text
    # facts a parameter decides, read from the definitions (When), not from a measure's name
    novelty = text[text.index("\nNovelty[@k]") :].split("\n")[3]
    assert "one value per run with weight=recommendation" in novelty and "better: higher" in novelty
    gini = text[text.index("\nGini[@k]") :].split("\n")[3]
    assert "better: lower (higher with form=elliot)" in gini


def test_a_number_after_the_at_sign_sets_the_parameter_its_definition_names() -> None:
    assert parse_measure("IPrec@0.5") == parse_measure("IPrec(recall=0.5)")
    with pytest.raises(MeasureError, match=r"cutoff of 'P@0\.5' must be a whole number"):
        parse_measure("P@0.5")


@pytest.mark.parametrize(
    "written",
    [
        "P(rel=2)@5",
        "RBP(p=0.8)",
        "Novelty(weight=recommendation,cold=zero)@10",
        "TailShare(tail_count=3)@10",
        "nDCG(gain=exp)@10",
        "ILD(sim=features)@10",
    ],
)
def test_an_mlflow_key_with_parameters_reads_back(written: str) -> None:
    measure = parse_measure(written)
    assert parse_measure(measure.mlflow_key()) == measure


def test_a_key_with_a_gains_table_cannot_be_read_back_and_says_so() -> None:
    with pytest.raises(MeasureError, match="cannot read measure 'ndcg_gains_1-0_2-3_at_10'"):
        parse_measure(parse_measure("nDCG(gains={1:0,2:3})@10").mlflow_key())
