"""Golden-file conformance: every value trec_eval 10.0 printed in its own test suite.

The command lines are the ones in tests/fixtures/trec_eval/README.md (vendored); values are
compared within 5e-5 (trec_eval prints 4 decimals), strings exactly, and the set of
printed rows must be identical.
"""

from __future__ import annotations

import io
import shlex
from pathlib import Path

import pytest

from harness.cli import main

CASES = [
    ("out.test", "qrels.test results.test"),
    ("out.test", "qrels.test.with-comments results.test"),
    ("out.test.a", "-m all_trec qrels.test results.test"),
    ("out.test.aq", "-m all_trec -q qrels.test results.test"),
    ("out.test.aqc", "-m all_trec -q -c qrels.test results.trunc"),
    ("out.test.aqcM", "-m all_trec -q -c -M100 qrels.test results.trunc"),
    ("out.test.aql", "-m all_trec -mrelstring.20 -q -l2 qrels.rel_level results.test"),
    (
        "out.test.meas_params",
        "-q -miprec_at_recall..10,.20,.25,.75,.50 -m P.5,7,3 -m recall.20,2000 -m Rprec_mult.5.0,0.2,0.35 "
        "-mutility.2,-1,0,0 -m 11pt_avg..25,.5,.75 -mndcg.1=3,2=9,4=4.5 -mndcg_cut.10,20,23.4 -msuccess.2,5,20 "
        "qrels.test results.test",
    ),
]


def _rows(text: str) -> list[tuple[str, str, str]]:
    rows = []
    for line in text.splitlines():
        name, qid, value = line.split("\t")
        rows.append((name.strip(), qid, value))
    return rows


def _run(trec_eval_dir: Path, args: str) -> str:
    argv = shlex.split(args)
    argv = [str(trec_eval_dir / a) if (trec_eval_dir / a).exists() else a for a in argv]
    out, err = io.StringIO(), io.StringIO()
    assert main(["eval", *argv], out, err) == 0, err.getvalue()
    return out.getvalue()


@pytest.mark.parametrize(("expected", "args"), CASES, ids=[f"{e}:{a[:40]}" for e, a in CASES])
def test_reproduces_trec_eval_output(trec_eval_dir: Path, expected: str, args: str) -> None:
    want = _rows((trec_eval_dir / expected).read_text())
    got = _rows(_run(trec_eval_dir, args))
    assert [(n, q) for n, q, _ in got] == [(n, q) for n, q, _ in want], "rows differ in names, queries or order"
    for (name, qid, value), (_, _, expected_value) in zip(got, want, strict=True):
        try:
            reference = float(expected_value)
        except ValueError:
            assert value == expected_value, (name, qid)
            continue
        assert abs(float(value) - reference) <= 5e-5, (name, qid, value, expected_value)


def test_output_is_byte_identical_to_trec_eval(trec_eval_dir: Path) -> None:
    """A script can swap trec_eval for harness eval and diff the output."""
    assert _run(trec_eval_dir, "-m all_trec -q qrels.test results.test") == (trec_eval_dir / "out.test.aq").read_text()


def _one_query_case(tmp_path: Path) -> tuple[Path, Path]:
    qrels = tmp_path / "qrels"
    qrels.write_text("1 0 a 2\n1 0 b 1\n1 0 c 0\n")
    run = tmp_path / "run"
    run.write_text("1 Q0 a 1 3.0 x\n1 Q0 b 2 2.0 x\n1 Q0 c 3 1.0 x\n")
    return qrels, run


@pytest.mark.parametrize("gains", ["1=0.5,2=0.3", "1=2.5,2=2.0"])
def test_fractional_gains_are_correct_where_trec_eval_is_not(tmp_path: Path, gains: str) -> None:
    """semantics.md section 5: trec_eval sorts gains with an integer-truncating comparator.

    On a run already in ideal order it prints 0.0000 and 1.0516; the correct nDCG is 1.
    Here the gain of level 2 (0.3, 2.0) is below level 1's (0.5, 2.5), so the ideal
    order is b before a; the run puts a first, so the correct value is
    DCG / IDCG with both computed from the sorted gains.
    """
    qrels, run = _one_query_case(tmp_path)
    g1, g2 = (float(x.split("=")[1]) for x in gains.split(","))
    import math

    dcg = g2 / math.log2(2) + g1 / math.log2(3)
    ideal = g1 / math.log2(2) + g2 / math.log2(3)
    out = io.StringIO()
    assert main(["eval", "-m", f"ndcg.{gains}", str(qrels), str(run)], out, io.StringIO()) == 0
    value = float(out.getvalue().splitlines()[-1].split("\t")[2])
    assert value == pytest.approx(dcg / ideal, abs=5e-5)
    assert value <= 1.0


@pytest.mark.parametrize("gains", ["1=0.5,2=0.3", "1=2.5,2=2.0"])
def test_fractional_gains_in_ideal_order_score_one(tmp_path: Path, gains: str) -> None:
    """The 3-document query of semantics.md: a run in ideal order scores exactly 1."""
    qrels = tmp_path / "qrels"
    qrels.write_text("1 0 a 1\n1 0 b 2\n1 0 c 0\n")  # level 1 has the larger gain in both tables
    run = tmp_path / "run"
    run.write_text("1 Q0 a 1 3.0 x\n1 Q0 b 2 2.0 x\n1 Q0 c 3 1.0 x\n")
    out = io.StringIO()
    assert main(["eval", "-m", f"ndcg.{gains}", str(qrels), str(run)], out, io.StringIO()) == 0
    assert float(out.getvalue().splitlines()[-1].split("\t")[2]) == pytest.approx(1.0, abs=1e-12)


def test_eval_takes_a_profile_and_flags_over_it(trec_eval_dir: Path) -> None:
    """``harness eval --profile pytrec_eval`` prints pytrec_eval's interpolated precision on trec_eval's own test
    files (trec_eval 9's recall cut, the queries both files have); ``--iprec-cut round`` over it is trec_eval 10.0's
    (its golden out.test.a)."""
    import pytrec_eval

    qrels, run = trec_eval_dir / "qrels.test", trec_eval_dir / "results.test"
    with qrels.open() as q_file, run.open() as r_file:
        peer = pytrec_eval.RelevanceEvaluator(pytrec_eval.parse_qrel(q_file), {"11pt_avg", "iprec_at_recall"}).evaluate(
            pytrec_eval.parse_run(r_file)
        )
    argv = ["-q", "-m", "11pt_avg", "-m", "iprec_at_recall", str(qrels), str(run)]
    got = _rows(_run(trec_eval_dir, " ".join(["--profile", "pytrec_eval", *argv])))
    per_query = [(name, qid, value) for name, qid, value in got if qid != "all"]
    assert len(per_query) == 12 * len(peer)
    assert all(abs(float(value) - peer[qid][name]) <= 5e-5 for name, qid, value in per_query)
    golden = {(n, q): v for n, q, v in _rows((trec_eval_dir / "out.test.a").read_text())}  # -m all_trec, no -q
    rounded = _rows(_run(trec_eval_dir, " ".join(["--profile", "pytrec_eval", "--iprec-cut", "round", *argv])))
    assert all(abs(float(v) - float(golden[(n, q)])) <= 5e-5 for n, q, v in rounded if q == "all")
    assert [v for n, q, v in got if q == "all"] != [v for n, q, v in rounded if q == "all"]  # the cut matters here
