"""The seed articles' worked examples, recomputed from the formulas (issue 2)."""

from __future__ import annotations

import math

import pytest

from harness import Conventions, Qrels, Run, aggregate, evaluate


def _value(qrels: Qrels, run: Run, measure: str, **conventions: object) -> float:
    result = aggregate(evaluate(qrels, run, [measure], Conventions.from_mapping(conventions)))
    return next(iter(result.values()))


def _ranked(labels: list[float], extra_judged: list[float] = ()) -> tuple[Qrels, Run]:  # type: ignore[assignment]
    """A run listing documents with the given labels in order (strictly decreasing scores)."""
    docs = [f"d{i + 1}" for i in range(len(labels))]
    qrels = [("q", d, rel) for d, rel in zip(docs, labels, strict=True)]
    qrels += [("q", f"x{i}", rel) for i, rel in enumerate(extra_judged)]
    run = [("q", d, float(len(docs) - i)) for i, d in enumerate(docs)]
    return Qrels.from_records(qrels), Run.from_records(run)


# d1..d5 judged 3,2,1,0,0 and scored 3,2,0,0,1.
ARTICLE_QRELS = Qrels.from_records([("q", "d1", 3), ("q", "d2", 2), ("q", "d3", 1), ("q", "d4", 0), ("q", "d5", 0)])
ARTICLE_RUN = Run.from_records([("q", "d1", 3), ("q", "d2", 2), ("q", "d3", 0), ("q", "d4", 0), ("q", "d5", 1)])


def test_article_dcg_idcg_ndcg_linear() -> None:
    # trec_eval order: d1, d2, d5, then the tie d3/d4 by docno descending: d4, d3.
    dcg = 3 + 2 / math.log2(3) + 0 / math.log2(4) + 0 / math.log2(5) + 1 / math.log2(6)
    idcg = 3 + 2 / math.log2(3) + 1 / math.log2(4)
    assert round(dcg, 4) == 4.6487 and round(idcg, 4) == 4.7619
    assert _value(ARTICLE_QRELS, ARTICLE_RUN, "DCG@5") == pytest.approx(4.6487, abs=5e-5)
    assert _value(ARTICLE_QRELS, ARTICLE_RUN, "IDCG@5") == pytest.approx(4.7619, abs=5e-5)
    assert _value(ARTICLE_QRELS, ARTICLE_RUN, "nDCG@5") == pytest.approx(0.9762, abs=5e-5)


def test_article_tie_averaging_reproduces_sklearn() -> None:
    """The article printing 4.67 / 0.98 averages the gain of the tied d3 and d4 (scikit-learn)."""
    assert _value(ARTICLE_QRELS, ARTICLE_RUN, "DCG@5", ties="average") == pytest.approx(4.6706, abs=5e-5)
    assert _value(ARTICLE_QRELS, ARTICLE_RUN, "nDCG@5", ties="average") == pytest.approx(0.9808, abs=5e-5)


def test_tie_options_bound_the_average() -> None:
    low = _value(ARTICLE_QRELS, ARTICLE_RUN, "DCG@5", ties="pessimistic")
    mid = _value(ARTICLE_QRELS, ARTICLE_RUN, "DCG@5", ties="average")
    high = _value(ARTICLE_QRELS, ARTICLE_RUN, "DCG@5", ties="optimistic")
    # d1 (3), d2 (2), d5 (0), then the tie d3 (1) / d4 (0): d3 last or fourth.
    assert low == pytest.approx(3 + 2 / math.log2(3) + 1 / math.log2(6), abs=1e-12)
    assert high == pytest.approx(3 + 2 / math.log2(3) + 1 / math.log2(5), abs=1e-12)
    assert low < mid < high


def test_input_order_ties_keep_the_file_order() -> None:
    # d3 is written before d4: input order puts d3 (label 1) at rank 4.
    value = _value(ARTICLE_QRELS, ARTICLE_RUN, "DCG@5", ties="input_order")
    assert value == pytest.approx(3 + 2 / math.log2(3) + 1 / math.log2(5), abs=1e-12)


def test_exponential_gain_example() -> None:
    qrels, run = _ranked([3, 1, 2, 3, 2, 0])
    gains = [2**r - 1 for r in [3, 1, 2, 3, 2, 0]]
    dcg = sum(g / math.log2(i + 2) for i, g in enumerate(gains))
    assert round(dcg, 4) == 13.3062
    assert _value(qrels, run, "DCG(gain=exp)@6") == pytest.approx(13.3062, abs=5e-5)
    assert _value(qrels, run, "nDCG(gain=exp)@6") == pytest.approx(0.9117, abs=5e-5)


def test_linear_example_whose_article_arithmetic_is_wrong() -> None:
    """Relevance [5,3,2,1,4] gives nDCG@5 0.9610 (one article prints 0.857)."""
    qrels, run = _ranked([5, 3, 2, 1, 4])
    assert _value(qrels, run, "nDCG@5") == pytest.approx(0.9610, abs=5e-5)


def test_ideal_from_all_judgments() -> None:
    """[3,2,3,0,1,2] plus two judged documents not retrieved (3 and 0): nDCG@6 0.8184."""
    qrels, run = _ranked([3, 2, 3, 0, 1, 2], extra_judged=[3, 0])
    assert _value(qrels, run, "nDCG@6") == pytest.approx(0.8184, abs=5e-5)
    # scikit-learn builds the ideal from the listed documents only.
    dcg = sum(g / math.log2(i + 2) for i, g in enumerate([3, 2, 3, 0, 1, 2]))
    ideal = sum(g / math.log2(i + 2) for i, g in enumerate([3, 3, 2, 2, 1, 0]))
    assert _value(qrels, run, "nDCG@6", ideal_from="run") == pytest.approx(dcg / ideal, abs=1e-12)


@pytest.mark.parametrize(("labels", "expected"), [([0, 1, 0, 1, 1], 0.5333), ([1, 0, 0, 1, 0], 0.75)])
def test_average_precision_examples(labels: list[int], expected: float) -> None:
    qrels, run = _ranked(labels)
    assert _value(qrels, run, "AP") == pytest.approx(expected, abs=5e-5)


def test_ap_at_k_denominators() -> None:
    """AP@2 of [1,0,1,1]: trec_eval divides by R = 3, MS Recommenders by min(R, 2) = 2."""
    qrels, run = _ranked([1, 0, 1, 1])
    assert _value(qrels, run, "AP@2") == pytest.approx(1 / 3, abs=1e-12)
    assert _value(qrels, run, "AP(denominator='min_R_k')@2") == pytest.approx(1 / 2, abs=1e-12)


def test_rr_p_recall_success_hand_computed() -> None:
    qrels, run = _ranked([0, 0, 2, 0, 1], extra_judged=[1])
    assert _value(qrels, run, "RR") == pytest.approx(1 / 3)
    assert _value(qrels, run, "RR@2") == 0.0
    assert _value(qrels, run, "P@10") == pytest.approx(2 / 10)  # padded with non-relevant
    assert _value(qrels, run, "R@3") == pytest.approx(1 / 3)
    assert _value(qrels, run, "Success@3") == 1.0
    assert _value(qrels, run, "P(rel=2)@5") == pytest.approx(1 / 5)
    assert _value(qrels, run, "F@5") == pytest.approx(2 * (2 / 5) * (2 / 3) / (2 / 5 + 2 / 3))


def test_err_hand_computed() -> None:
    # grades 2, 0, 1 with max_rel 2: R = 3/4, 0, 1/4
    qrels, run = _ranked([2, 0, 1])
    expected = 0.75 + 0 + (1 / 3) * 0.25 * (1 - 0.75) * 1
    assert _value(qrels, run, "ERR(max_rel=2)@3") == pytest.approx(expected, abs=1e-12)


def test_judged_and_unjudged_fractions() -> None:
    qrels = Qrels.from_records([("q", "a", 1), ("q", "b", 0)])
    run = Run.from_records([("q", "a", 3.0), ("q", "zz", 2.0), ("q", "b", 1.0)])
    assert _value(qrels, run, "Judged@10") == pytest.approx(2 / 3)  # over min(k, n)
    assert _value(qrels, run, "Unj@10") == pytest.approx(1 / 10)  # over k


def test_cg_sums_gains() -> None:
    qrels, run = _ranked([3, 0, 2])
    assert _value(qrels, run, "CG@2") == 3.0
    assert _value(qrels, run, "CG(gains={3:10})@3") == 12.0
