"""Registry-wide properties (hypothesis): what must hold for every measure."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from harness import Conventions, Evaluator, Qrels, Run
from harness.measures.registry import REGISTRY
from harness.measures.spec import Measure


def _every_measure() -> list[Measure]:
    out = []
    for d in REGISTRY:
        if d.beyond_accuracy or d.intent_aware:  # read training data or subtopics (tests/kernels/test_beyond.py, ..._golden)
            continue
        if d.reads_samples:  # NaN without a relevant document, by design (tests/kernels/test_fairness_golden.py)
            continue
        raw: dict[str, object] = {}
        if d.name == "IPrec":
            raw["recall"] = 0.3
        cutoff = 5 if d.cutoff == "required" else None
        out.append(d.make(raw, cutoff))
        if d.cutoff == "optional":
            out.append(d.make(raw, 3))
    return out


MEASURES = _every_measure()
NORMALISED = {
    "AP",
    "GMAP",
    "P",
    "R",
    "RelP",
    "Success",
    "F",
    "Rprec",
    "RprecMult",
    "SetP",
    "SetR",
    "SetRelP",
    "SetAP",
    "SetF",
    "RR",
    "Bpref",
    "GMBpref",
    "IPrec",
    "IPrecAvg",
    "binG",
    "nDCG",
    "nDCGRel",
    "RnDCG",
    "G",
    "RBP",
    "RBPResid",
    "ERR",
    "Judged",
    "Unj",
    "infAP",
}
ORDER_FREE = {
    "NumQ",
    "NumRet",
    "NumRel",
    "NumRelRet",
    "NumNonRelJudgedRet",
    "SetP",
    "SetR",
    "SetRelP",
    "SetAP",
    "SetF",
    "Utility",
    "IDCG",
}


@st.composite
def judged_runs(draw: st.DrawFn) -> tuple[list[tuple[str, str, float]], list[tuple[str, str, float]]]:
    n_queries = draw(st.integers(1, 5))
    qrels, run = [], []
    for q in range(n_queries):
        n_docs = draw(st.integers(1, 12))
        labels = draw(st.lists(st.integers(-1, 3), min_size=n_docs, max_size=n_docs))
        scores = draw(st.lists(st.integers(0, 20), min_size=n_docs, max_size=n_docs, unique=True))
        for i in range(n_docs):
            qrels.append((f"q{q}", f"d{i}", float(labels[i])))
            if draw(st.booleans()) or i == 0:
                run.append((f"q{q}", f"d{i}", float(scores[i])))
    return qrels, run


def _values(qrels: list[tuple[str, str, float]], run: list[tuple[str, str, float]]) -> np.ndarray:
    return Evaluator(Qrels.from_records(qrels), MEASURES).evaluate(Run.from_records(run)).values


@settings(max_examples=60, deadline=None)
@given(judged_runs(), st.randoms(use_true_random=False))
def test_query_order_does_not_matter(data, random) -> None:  # type: ignore[no-untyped-def]
    qrels, run = data
    shuffled_run, shuffled_qrels = run[:], qrels[:]
    random.shuffle(shuffled_run)
    random.shuffle(shuffled_qrels)
    np.testing.assert_allclose(_values(qrels, run), _values(shuffled_qrels, shuffled_run), rtol=0, atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(judged_runs())
def test_monotone_score_transform_changes_nothing(data) -> None:  # type: ignore[no-untyped-def]
    qrels, run = data
    transformed = [(q, d, float(np.exp(s / 7.0) * 3 - 100)) for q, d, s in run]
    np.testing.assert_allclose(_values(qrels, run), _values(qrels, transformed), rtol=0, atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(judged_runs())
def test_renaming_documents_changes_nothing_without_ties(data) -> None:  # type: ignore[no-untyped-def]
    qrels, run = data  # scores are unique within a query

    def rename(d):
        return "zz" + d[::-1]

    renamed_q = [(q, rename(d), r) for q, d, r in qrels]
    renamed_r = [(q, rename(d), s) for q, d, s in run]
    np.testing.assert_allclose(_values(qrels, run), _values(renamed_q, renamed_r), rtol=0, atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(judged_runs())
def test_values_stay_in_range(data) -> None:  # type: ignore[no-untyped-def]
    qrels, run = data
    values = _values(qrels, run)
    assert np.isfinite(values).all()
    for j, m in enumerate(MEASURES):
        if m.name in NORMALISED:
            assert (values[:, j] >= -1e-12).all() and (values[:, j] <= 1 + 1e-12).all(), str(m)


@settings(max_examples=60, deadline=None)
@given(judged_runs())
def test_perfect_run_scores_one_and_bounds_every_run(data) -> None:  # type: ignore[no-untyped-def]
    """A run listing every judged document by decreasing label is ideal."""
    qrels, run = data
    perfect = [(q, d, float(r) * 10 + 100 - i * 1e-3) for i, (q, d, r) in enumerate(qrels)]
    ideal_measures = [
        Measure("nDCG"),
        Measure("nDCG", cutoff=3),
        Measure("AP"),
        Measure("RR"),
        Measure("Rprec"),
        Measure("RnDCG"),
    ]
    ev = Evaluator(Qrels.from_records(qrels), ideal_measures)
    best = ev.evaluate(Run.from_records(perfect)).values
    some = ev.evaluate(Run.from_records(run)).values
    has_relevant = np.array([any(r >= 1 for qq, _, r in qrels if qq == q) for q in sorted({q for q, _, _ in qrels})])
    np.testing.assert_allclose(best[has_relevant], 1.0, rtol=0, atol=1e-12)
    assert (some <= best + 1e-12).all()


@settings(max_examples=40, deadline=None)
@given(judged_runs())
def test_order_free_measures_ignore_the_scores(data) -> None:  # type: ignore[no-untyped-def]
    qrels, run = data
    reversed_run = [(q, d, -s) for q, d, s in run]
    idx = [j for j, m in enumerate(MEASURES) if m.name in ORDER_FREE]
    np.testing.assert_allclose(_values(qrels, run)[:, idx], _values(qrels, reversed_run)[:, idx], rtol=0, atol=1e-12)


def test_tie_average_is_refused_for_rank_nonlinear_measures() -> None:
    import pytest

    from harness.errors import ConventionError

    with pytest.raises(ConventionError, match=r"ties='average'.*AP"):
        Evaluator(Qrels.from_records([("q", "d", 1)]), ["AP"], Conventions.from_mapping({"ties": "average"}))
