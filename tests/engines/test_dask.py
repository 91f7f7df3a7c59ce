"""The dask engine on a real LocalCluster (2 worker processes, small memory limits): one machine's numbers, bit for bit."""

from __future__ import annotations

import dataclasses
import io
import re
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from harness.config.load import load_config
from harness.config.schema import Engine
from harness.data.model import Qrels, Run
from harness.errors import ConfigError, InputFormatError
from harness.evaluation.diagnostics import diagnose
from harness.evaluation.evaluator import Evaluator
from harness.measures.conventions import Conventions
from harness.measures.parse import parse_measure

pytestmark = pytest.mark.cluster  # the package's LocalCluster, or one harness starts

MEASURES = tuple(parse_measure(m) for m in ("nDCG@10", "AP", "P@5", "RR", "R@100", "bpref", "Success@3"))


def _generated(n_queries: int, depth: int, seed: int = 5) -> tuple[Qrels, Run]:
    """A run of n_queries x depth rows in shuffled order, with tied scores and repeated documents; judgments for most
    of its queries and for queries it does not answer."""
    rng = np.random.default_rng(seed)
    query = np.repeat(np.char.add("q", np.arange(n_queries).astype(str)), depth)
    doc = np.char.add("d", rng.integers(0, 20 * depth, query.size).astype(str))  # some (query, doc) pairs repeat
    score = np.round(rng.random(query.size), 2)  # ties
    order = rng.permutation(query.size)
    run = Run(pa.array(query[order]), pa.array(doc[order]), score[order], name="generated", source="<generated run>")
    judged_queries = np.arange(n_queries // 10, n_queries + n_queries // 10)  # 10% unjudged, 10% judged but unanswered
    j_query = np.repeat(np.char.add("q", judged_queries.astype(str)), 8)
    j_doc = np.char.add("d", rng.integers(0, 20 * depth, j_query.size).astype(str))
    _, first = np.unique(np.char.add(np.char.add(j_query, " "), j_doc), return_index=True)
    keep = np.sort(first)
    relevance = rng.integers(-1, 3, keep.size).astype(np.float64)  # -1: pooled but unjudged
    return Qrels(pa.array(j_query[keep]), pa.array(j_doc[keep]), relevance, source="<generated qrels>"), run


@pytest.mark.slow
def test_two_million_rows_evaluate_to_the_same_bits(client: Any) -> None:
    from harness.engines.dask import evaluate_runs

    qrels, run = _generated(20_000, 100)
    assert len(run) == 2_000_000
    conventions = Conventions.from_mapping({"duplicates": "max"})
    evaluator = Evaluator(qrels, MEASURES, conventions)
    aligned = evaluator.align(run)
    local = evaluator.evaluate_aligned(run.name, aligned)
    (dask,) = evaluate_runs(client, qrels, [run], MEASURES, conventions, (5, 10))
    assert np.array_equal(dask.per_query.query_ids, local.query_ids)
    assert np.array_equal(dask.per_query.values, local.values, equal_nan=True)  # ==, not isclose
    assert np.array_equal(dask.per_query.in_run, local.in_run)
    assert dask.diagnostics == diagnose(aligned, (5, 10))
    assert dask.stats.duplicates_dropped > 0 and dask.stats.run_queries_unjudged == 2_000  # the cases are exercised


@pytest.mark.parametrize(
    "conventions",
    [
        {"ties": "input_order", "duplicates": "first", "queries": "run"},
        {"ties": "pessimistic", "duplicates": "max", "queries": "intersection", "depth": 30, "judged_only": True},
        {"ties": "average", "duplicates": "first", "negative_labels": "nonrelevant"},
        {
            "queries": "relevant",
            "relevance_level": 2,
            "short_lists": "truncate",
            "ap_denominator": "min_R_k",
            "depth": 3,
            "ideal_from": "run",
            "duplicates": "first",
        },  # the peers' conventions (harness explain's profiles)
    ],
)
def test_file_order_conventions_survive_the_shuffle(client: Any, conventions: dict[str, object]) -> None:
    """input_order ties and duplicates: first read the file order, which the shuffle destroys and the engine restores."""
    from harness.engines.dask import evaluate_runs

    qrels, run = _generated(1_500, 40, seed=9)
    measures = MEASURES if conventions.get("ties") != "average" else tuple(parse_measure(m) for m in ("nDCG@10", "P@5"))
    conv = Conventions.from_mapping(conventions)
    evaluator = Evaluator(qrels, measures, conv)
    aligned = evaluator.align(run)
    local = evaluator.evaluate_aligned(run.name, aligned)
    (dask,) = evaluate_runs(client, qrels, [run], measures, conv, (10,), partitions=7)
    assert np.array_equal(dask.per_query.query_ids, local.query_ids)
    assert np.array_equal(dask.per_query.values, local.values, equal_nan=True)
    assert dask.diagnostics == diagnose(aligned, (10,))


def test_a_duplicate_names_the_file_and_its_line(client: Any, tmp_path: Path) -> None:
    from harness.data.load import load_qrels, load_run
    from harness.engines.dask import evaluate_runs

    (tmp_path / "qrels.txt").write_text("q1 0 a 1\nq2 0 b 1\n")
    (tmp_path / "run.txt").write_text("q1 Q0 a 1 2.0 r\nq2 Q0 b 1 2.0 r\nq2 Q0 c 2 1.0 r\nq2 Q0 b 3 0.5 r\n")
    qrels, run = load_qrels(tmp_path / "qrels.txt"), load_run(tmp_path / "run.txt")
    with pytest.raises(InputFormatError) as raised:
        evaluate_runs(client, qrels, [run], MEASURES[:1], Conventions(), (10,), partitions=2)
    assert "'b' is listed twice for query 'q2'" in str(raised.value) and raised.value.line == 4
    assert str(raised.value.path).endswith("run.txt")


def _tables(experiment: Any) -> dict[str, pd.DataFrame]:
    """What ``harness run`` computes and writes, read back from its results folder."""
    from datetime import UTC, datetime

    from harness.pipeline.experiment import _evaluated, comparison_tables, save_results
    from harness.progress import SILENT
    from harness.records.store import read_results

    results = _evaluated(experiment, SILENT)
    comparisons = comparison_tables(experiment, results)
    saved = read_results(save_results(experiment, results, comparisons, datetime.now(UTC), []).folder)
    per_query = saved.per_query_of()
    return {
        "per_query": per_query,
        "summary": saved.summary,
        "diagnostics": saved.diagnostics,
        "long_tail": saved.long_tail,
        **{
            k: v
            for k, v in (("comparisons", saved.comparisons), ("anova", saved.anova), ("groups", saved.groups))
            if v is not None
        },
    }


def _judgments_read_by_the_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    """TREC judgments are never read whole here: the workers read them (the ratings' CSV judgments are read here, for
    the items' context)."""
    from harness.data import load

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("TREC judgments read whole in the client")

    monkeypatch.setattr(load, "read_trec_qrels", refuse)


def _one_run_demo(folder: Path) -> None:
    """The demo's data and config under ``folder``, with one trained run of each system (its first seed)."""
    from harness.demo import generate
    from tests.repo import ROOT

    generate(folder)
    (folder / "configs").mkdir()
    one_run = re.sub(
        r'"\.\./runs/(demo|trec-demo)/seeds/([a-z0-9-]+)-seed\*\.(csv|run)"',
        r"../runs/\1/\2.\3",
        (ROOT / "configs" / "demo.yaml").read_text(),
    ).replace("claim: version, ", "")
    assert "seed*" not in one_run and "claim" not in one_run
    (folder / "configs" / "demo.yaml").write_text(one_run)


def test_the_demo_config_gives_the_same_tables_and_p_values(client: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The demo on the cluster (3 partitions a run): per-query values, system measures (Coverage, Gini, Entropy: from
    the gathered lists), summaries, diagnostics, the long tail, every p-value of every comparison and the ANOVA, equal
    to one process's exactly, in the same row order."""

    _one_run_demo(tmp_path)
    overrides = {"stats.permutations": 2000, "stats.system_resamples": 100}
    local = load_config(tmp_path / "configs" / "demo.yaml", overrides)
    on_dask = dataclasses.replace(local, engine=Engine(name="dask", partitions=3))
    expected = _tables(local)
    _judgments_read_by_the_workers(monkeypatch)
    got = _tables(on_dask)
    assert set(expected) == set(got) and "comparisons" in got
    for name, table in expected.items():
        pd.testing.assert_frame_equal(got[name], table, check_exact=True, obj=name)
    p_values = [c for c in got["comparisons"].columns if c.startswith("p_")]
    assert len(p_values) >= 3 and got["comparisons"][p_values].notna().any().all()
    system_rows = got["comparisons"][got["comparisons"]["aggregate"] == "system"]
    assert set(system_rows["measure"]) == {"Coverage@10", "Gini@10", "Entropy@10"}
    assert "anova" in got  # three systems: ANOVA and Tukey HSD


def test_many_small_partitions_give_the_same_bits(client: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every run cut into 16 partitions (a few users each), without system measures, segments and all: every per-query
    value, summary row (NaN-skipping measures included), diagnostic and p-value as on one machine."""
    _one_run_demo(tmp_path)
    overrides = {
        "stats.permutations": 500,
        "measures": ["nDCG", "AP", "R@20", "RR@10", "Novelty@10", "ILD(sim=features)@10"],
        "release.guards.2.measure": "Novelty@10",
    }
    local = load_config(tmp_path / "configs" / "demo.yaml", overrides)
    expected = _tables(local)
    _judgments_read_by_the_workers(monkeypatch)
    got = _tables(dataclasses.replace(local, engine=Engine(name="dask", partitions=16)))
    assert set(expected) == set(got)
    for name, table in expected.items():
        pd.testing.assert_frame_equal(got[name], table, check_exact=True, obj=name)
    ratings = got["summary"][got["summary"]["dataset"] == "ratings"]
    assert set(ratings["segment"]) == {"all", "new", "returning"} and ratings["value"].notna().all()
    assert (ratings["n_queries"][ratings["measure"] == "ILD(sim=features)@10"] > 0).all()


def test_engine_config_errors_are_located(tmp_path: Path) -> None:
    from harness.demo import generate
    from tests.repo import ROOT

    generate(tmp_path)
    (tmp_path / "configs").mkdir()
    config = tmp_path / "configs" / "demo.yaml"
    shutil.copy(ROOT / "configs" / "demo.yaml", config)
    with pytest.raises(ConfigError) as raised:  # uncut, a system measure would gather every row
        load_config(
            config,
            {
                "engine.name": "dask",
                "cutoffs": [],
                "measures": ["nDCG@10", "Coverage"],
                "release.guards": [{"measure": "nDCG@10", "max_drop": 0.01}],
            },
        )
    assert "Coverage counts every recommended item of every list: on the dask engine give it a cutoff" in str(raised.value)
    with pytest.raises(ConfigError) as raised:
        load_config(config, {"engine.name": "spark"})
    assert "unknown engine 'spark'" in str(raised.value)
    with pytest.raises(ConfigError) as raised:
        load_config(config, {"engine.partitions": 4})
    assert "partitions is a setting of the dask engine" in str(raised.value)


def test_harness_eval_on_dask_prints_what_it_prints_here(client: Any, tmp_path: Path) -> None:
    from harness.cli import main
    from harness.demo import generate

    generate(tmp_path)
    qrels, run = tmp_path / "runs" / "trec-demo" / "qrels.txt", tmp_path / "runs" / "trec-demo" / "bm25.run"
    outputs = []
    for extra in ([], ["--engine", "dask"]):
        out, err = io.StringIO(), io.StringIO()
        measures = ["-m", "ndcg_cut.10", "-m", "map", "-m", "P.5", "-m", "relstring.20", "-m", "relstring"]
        code = main(["eval", "-q", *measures, *extra, str(qrels), str(run)], out, err)
        assert code == 0, err.getvalue()
        outputs.append(out.getvalue())
    # relstring (each query's top labels, one character each) as trec_eval prints it: held to trec_eval's own
    # expected output on one machine by tests/conformance, here to one machine
    assert outputs[0] == outputs[1] and outputs[0].count(f"\n{'relstring':<22}\t") > 20


def test_the_shuffle_s_log_level_is_the_process_s_again_after_an_evaluation(client: Any, tmp_path: Path) -> None:
    """The engine quiets the p2p shuffle's warnings while it evaluates, and leaves the caller's logging as it was."""
    import logging

    from harness.cli import main
    from harness.demo import generate

    generate(tmp_path)
    qrels, run = tmp_path / "runs" / "trec-demo" / "qrels.txt", tmp_path / "runs" / "trec-demo" / "bm25.run"
    logger = logging.getLogger("distributed.shuffle")
    before = logger.level
    logger.setLevel(logging.INFO)
    try:
        assert main(["eval", "-q", "-m", "map", "--engine", "dask", str(qrels), str(run)], io.StringIO(), io.StringIO()) == 0
        assert logger.level == logging.INFO
    finally:
        logger.setLevel(before)


def test_harness_eval_on_dask_never_reads_a_run_whole_in_the_client(
    client: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``harness eval --engine dask`` hands the run and judgments files to the workers (text streamed to Parquet): the
    one-machine readers are not called; the output is one process's, the run keeping its tag as its name; a missing
    file is named before any work starts."""
    from harness.cli import main
    from harness.data import load
    from harness.demo import generate

    generate(tmp_path)
    qrels, run = tmp_path / "runs" / "trec-demo" / "qrels.txt", tmp_path / "runs" / "trec-demo" / "bm25.run"
    out, err = io.StringIO(), io.StringIO()
    assert main(["eval", "-m", "map", "-m", "runid", str(qrels), str(run)], out, err) == 0, err.getvalue()
    here = out.getvalue()

    def whole(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the client read a run whole")

    monkeypatch.setattr(load, "load_run", whole)
    monkeypatch.setattr(load, "read_trec_qrels", whole)
    out, err = io.StringIO(), io.StringIO()
    assert main(["eval", "--engine", "dask", "-m", "map", "-m", "runid", str(qrels), str(run)], out, err) == 0, err.getvalue()
    assert out.getvalue() == here and "runid" in here
    out, err = io.StringIO(), io.StringIO()
    assert main(["eval", "--engine", "dask", "-m", "map", str(qrels), str(tmp_path / "absent.run")], out, err) == 2
    assert "absent.run: run file not found" in err.getvalue()


def test_run_files_text_streamed_and_parquet_read_by_the_workers(client: Any, tmp_path: Path) -> None:
    """A TREC text run, a CSV run and a JSONL run (streamed to Parquet block by block), and the same run as a Parquet
    file and as a folder of pieces: the values of the run read whole, here."""
    import pyarrow.parquet as pq

    from harness.data.load import load_run
    from harness.data.pieces import RunSource
    from harness.data.trec import stream_run
    from harness.engines.dask import evaluate_runs

    qrels, run = _generated(600, 30, seed=3)
    text = tmp_path / "run.txt"
    q, d, score = run.query_id.to_pylist(), run.doc_id.to_pylist(), run.score.tolist()
    text.write_text("".join(f"{a} Q0 {b} {i} {c!r} tag\n" for i, (a, b, c) in enumerate(zip(q, d, score, strict=True))))
    blocks = list(stream_run(text, rows_per_block=5_000))
    assert len(blocks) > 2 and sum(len(b) for b in blocks) == len(run)
    table = pa.table({"user": run.query_id, "item": run.doc_id, "s": run.score})
    pq.write_table(table, tmp_path / "run.parquet")
    import pyarrow.csv as pacsv

    pacsv.write_csv(table, tmp_path / "run.csv")
    from harness.data.tables import stream_table_run

    csv_blocks = list(stream_table_run(tmp_path / "run.csv", {"query": "user", "doc": "item", "score": "s"}, "csv", 5_000))
    assert len(csv_blocks) > 2 and sum(len(b) for b in csv_blocks) == len(run)
    import json

    with open(tmp_path / "run.jsonl", "w") as out:  # an extra field, and integer scores where they are whole
        for a, b, c in zip(q, d, score, strict=True):
            out.write(json.dumps({"user": a, "item": b, "s": int(c) if c == int(c) else c, "note": "x"}) + "\n")
    json_blocks = list(stream_table_run(tmp_path / "run.jsonl", {"query": "user", "doc": "item", "score": "s"}, "jsonl", 5_000))
    assert len(json_blocks) > 2 and sum(len(b) for b in json_blocks) == len(run)
    (tmp_path / "pieces").mkdir()
    for i, start in enumerate(range(0, len(table), 4_000)):
        pq.write_table(table.slice(start, 4_000), tmp_path / "pieces" / f"{i:03d}.parquet")
    conventions = Conventions.from_mapping({"duplicates": "first", "ties": "input_order"})
    evaluator = Evaluator(qrels, MEASURES, conventions)
    local = evaluator.evaluate(load_run(text))
    columns = {"query": "user", "doc": "item", "score": "s"}
    sources = [
        RunSource(text, "t"),
        RunSource(tmp_path / "run.parquet", "p", columns),
        RunSource(tmp_path / "pieces", "f", columns),
        RunSource(tmp_path / "run.csv", "c", columns),
        RunSource(tmp_path / "run.jsonl", "j", columns),
    ]
    for evaluated in evaluate_runs(client, qrels, sources, MEASURES, conventions, (10,), partitions=3):
        assert np.array_equal(evaluated.per_query.values, local.values, equal_nan=True)


def test_a_bad_line_in_a_streamed_run_is_named(client: Any, tmp_path: Path) -> None:
    from harness.data.pieces import RunSource
    from harness.engines.dask import evaluate_runs

    qrels, _ = _generated(20, 5)
    (tmp_path / "run.txt").write_text("q2 Q0 a 1 2.0 r\nq2 Q0 b 2 1.5 r\nq3 Q0 c 1 high r\n")
    with pytest.raises(InputFormatError) as raised:
        evaluate_runs(client, qrels, [RunSource(tmp_path / "run.txt", "r")], MEASURES[:1], Conventions(), (10,))
    assert raised.value.line == 3 and "score 'high' is not a number" in str(raised.value)


def test_jsonl_runs_with_numeric_ids_or_a_missing_score_go_to_the_whole_file_reader(client: Any, tmp_path: Path) -> None:
    """Ids written as numbers do not stream (Arrow's JSON reader holds a column to one type): the file is read whole,
    as on one machine; a missing score is reported with its row by that reader."""
    from harness.data.load import load_run
    from harness.data.pieces import RunSource
    from harness.engines.dask import evaluate_runs

    qrels = Qrels.from_records([("2", "7", 1.0), ("3", "8", 2.0)])
    (tmp_path / "run.jsonl").write_text('{"query": 2, "doc": 7, "score": 2.0}\n{"query": 3, "doc": 8, "score": 1}\n')
    conventions = Conventions()
    local = Evaluator(qrels, MEASURES, conventions).evaluate(load_run(tmp_path / "run.jsonl"))
    (evaluated,) = evaluate_runs(client, qrels, [RunSource(tmp_path / "run.jsonl", "r")], MEASURES, conventions, (10,))
    assert np.array_equal(evaluated.per_query.values, local.values, equal_nan=True) and local.values[:, 0].min() > 0
    (tmp_path / "bad.jsonl").write_text('{"query": "2", "doc": "7", "score": 2.0}\n{"query": "3", "doc": "8"}\n')
    with pytest.raises(InputFormatError) as raised:
        evaluate_runs(client, qrels, [RunSource(tmp_path / "bad.jsonl", "r")], MEASURES[:1], conventions, (10,))
    assert str(raised.value.path).endswith("bad.jsonl") and "score" in str(raised.value)


def test_a_bad_value_in_a_streamed_csv_run_is_reported_by_the_table_reader(client: Any, tmp_path: Path) -> None:
    from harness.data.pieces import RunSource
    from harness.engines.dask import evaluate_runs

    qrels, _ = _generated(20, 5)
    (tmp_path / "run.csv").write_text("user,item,score\nq2,a,2.0\nq2,b,\nq3,c,1.0\n")
    with pytest.raises(InputFormatError) as raised:
        evaluate_runs(
            client,
            qrels,
            [RunSource(tmp_path / "run.csv", "r", {"query": "user", "doc": "item", "score": "score"})],
            MEASURES[:1],
            Conventions(),
            (10,),
        )
    assert "score missing or NaN in data row 2" in str(raised.value) and str(raised.value.path).endswith("run.csv")


def test_judgments_streamed_or_read_by_the_workers(client: Any, tmp_path: Path) -> None:
    """TREC qrels text and a CSV table (streamed to Parquet block by block), a Parquet file and a folder of pieces with
    integer ratings: the values of the judgments read whole, here; a bad line is named by the whole-file reader, and
    a duplicate judgment by the worker that meets it, with its line."""
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    from harness.data.pieces import QrelsSource
    from harness.engines.dask import evaluate_runs

    qrels, run = _generated(600, 30, seed=4)
    q, d, rel = qrels.query_id.to_pylist(), qrels.doc_id.to_pylist(), qrels.relevance.astype(int).tolist()
    text = tmp_path / "qrels.txt"
    text.write_text("".join(f"{a} 0 {b} {c}\n" for a, b, c in zip(q, d, rel, strict=True)))
    table = pa.table({"user": qrels.query_id, "item": qrels.doc_id, "rating": pa.array(rel, pa.int64())})
    pacsv.write_csv(table, tmp_path / "qrels.csv")
    pq.write_table(table, tmp_path / "qrels.parquet")
    (tmp_path / "pieces").mkdir()
    for i, start in enumerate(range(0, len(table), 1_000)):
        pq.write_table(table.slice(start, 1_000), tmp_path / "pieces" / f"{i:03d}.parquet")
    conventions = Conventions.from_mapping({"duplicates": "first"})
    local = Evaluator(qrels, MEASURES, conventions).evaluate(run)
    columns = {"query": "user", "doc": "item", "relevance": "rating"}
    sources = [
        QrelsSource(text),
        QrelsSource(tmp_path / "qrels.csv", columns),
        QrelsSource(tmp_path / "qrels.parquet", columns),
        QrelsSource(tmp_path / "pieces", columns, "parquet"),
    ]
    for source in sources:
        (evaluated,) = evaluate_runs(client, source, [run], MEASURES, conventions, (10,), partitions=3)
        assert np.array_equal(evaluated.per_query.values, local.values, equal_nan=True), source
    (tmp_path / "bad.txt").write_text("q1 0 a 1\nq1 0 b x\n")
    with pytest.raises(InputFormatError) as raised:
        evaluate_runs(client, QrelsSource(tmp_path / "bad.txt"), [run], MEASURES[:1], conventions, (10,))
    assert str(raised.value.path).endswith("bad.txt") and raised.value.line == 2
    (tmp_path / "twice.txt").write_text("q1 0 a 1\nq2 0 b 1\nq1 0 a 0\n")
    with pytest.raises(InputFormatError) as raised:
        evaluate_runs(client, QrelsSource(tmp_path / "twice.txt"), [run], MEASURES[:1], Conventions(), (10,))
    assert str(raised.value.path).endswith("twice.txt") and raised.value.line == 3, str(raised.value)


def test_a_reused_system_is_compared_beside_the_clusters_runs(
    client: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A system reused from an earlier results folder (``previous:``) beside one evaluated on the cluster: the
    comparisons and summaries equal the first (one-process) run's exactly."""
    from tests.records.test_previous import _first_release, _reuse, _run

    config, first = _first_release(tmp_path)
    before = Path(str(first["results_dir"]))
    _reuse(config, f"{{results: {before}}}")
    _judgments_read_by_the_workers(monkeypatch)
    code, second, err = _run(config, "--engine", "dask")
    assert code == first["exit_code"], err
    after = Path(str(second["results_dir"]))
    for name in ("comparisons", "summary"):
        pd.testing.assert_frame_equal(
            pd.read_parquet(after / f"{name}.parquet"), pd.read_parquet(before / f"{name}.parquet"), check_exact=True, obj=name
        )


FAIRNESS_MEASURES = [
    "nDCG@10",
    "PSP@5",
    "PSnDCG@10",
    "PSP(norm=pyxclib)@5",
    "PSnDCG(norm=pyxclib)@10",
    "REO(group=provider)@10",
    "RSP(group=provider)@5",
    "PopREO@10",
    "PopRSP@10",
    "ItemMAD(group=provider)@10",
    "ItemMAD(group=popgroup,gain=rating)@5",
    "ExposureGini@10",
]


def _fairness_config(root: Path) -> Path:
    """The fairness golden case as an experiment: the peers' run against a second one that reranks each user's list,
    a release gate on REO, every new kind of measure (per user, sums over users, item-group and exposure ones); the
    provider column named a group column (read as labels), popgroup a numeric one."""
    from tests.conftest import FAIRNESS

    for name in ("test.csv", "run.csv", "train.csv", "items.csv"):
        shutil.copy(FAIRNESS / name, root / name)
    run = pd.read_csv(FAIRNESS / "run.csv", dtype={"user": str, "item": str})
    run["score"] = np.random.default_rng(3).permutation(run["score"].to_numpy())  # another order within each user
    run.to_csv(root / "rerank.csv", index=False)
    columns = "columns: {query: user, doc: item, relevance: rating}, run_columns: {query: user, doc: item, score: score}"
    (root / "config.yaml").write_text(
        "experiment: fairness\n"
        f"datasets:\n  - {{name: golden, qrels: test.csv, {columns}, relevance_level: 4,\n"
        "     train: {path: train.csv, columns: {query: user, doc: item}},\n"
        "     items: {path: items.csv, id: item, groups: [provider]}}\n"
        "systems:\n  - {name: peers, runs: {golden: run.csv}}\n  - {name: rerank, runs: {golden: rerank.csv}}\n"
        f"measures: [{', '.join(repr(m) for m in FAIRNESS_MEASURES)}]\n"
        "baseline: peers\nstats: {permutations: 400, system_resamples: 200, seed: 5}\n"
        "release:\n  production: peers\n  candidate: rerank\n"
        "  guards: [{measure: 'REO(group=provider)@10', max_drop: 0.05}, {measure: 'PSP@5', max_drop: 0.1}]\n"
        "tracking: {enabled: false}\noutput: out\n"
    )
    return root / "config.yaml"


def test_fairness_measures_give_the_same_tables_on_the_cluster(client: Any, tmp_path: Path) -> None:
    """Per-user PSP and the system measures that are sums over users (REO, RSP, ItemMAD, pyxclib's PSP): the values,
    their bootstrap intervals and every paired comparison, computed from the partitions' per-user terms, equal to one
    machine's exactly."""
    local = load_config(_fairness_config(tmp_path))
    expected = _tables(local)
    got = _tables(dataclasses.replace(local, engine=Engine(name="dask", partitions=3)))
    for name, table in expected.items():
        pd.testing.assert_frame_equal(got[name], table, check_exact=True, obj=name)
    rows = expected["comparisons"].set_index("measure")
    system = rows[rows["aggregate"] == "system"]
    assert len(expected["groups"]) == 2 * (3 + 3 + 2 + 2 + 3 + 2)  # REO, RSP, PopREO, PopRSP, both ItemMADs; 2 systems
    assert set(system.index) == {
        str(parse_measure(m))
        for m in FAIRNESS_MEASURES
        if "norm" in m or m.startswith(("REO", "RSP", "Pop", "ItemMAD", "Exposure"))
    }
    assert system["p_randomization"].notna().all() and (system["ci_high"] > system["ci_low"]).sum() >= 4
    assert (system["delta"] != 0).sum() >= 3  # the rerank moves items within the top 10: set measures at 10 stay


def test_intent_aware_measures_give_the_same_tables_on_the_cluster(client: Any, tmp_path: Path) -> None:
    """Subtopic judgments (format: ndeval) on the cluster: the partitions carry each judgment's subtopic, so the
    intent-aware measures' per-query values, summaries and comparisons equal one machine's exactly; ``harness eval
    --engine dask --qrels-format ndeval`` prints the local values."""
    from harness.cli import main
    from tests.conftest import FAIRNESS

    run = pd.read_csv(
        FAIRNESS / "div_run.txt", sep=" ", header=None, names=["q", "it", "doc", "rank", "score", "tag"], dtype={"q": str}
    )
    run["score"] = np.random.default_rng(8).permutation(run["score"].to_numpy())
    run.assign(tag="shuffled").to_csv(tmp_path / "shuffled.txt", sep=" ", header=False, index=False)
    measures = ["alpha_nDCG@20", "ERR_IA@10", "nERR_IA@20", "NRBP", "P_IA@10", "StRecall@10", "AP_IA", "nDCG@10"]
    (tmp_path / "config.yaml").write_text(
        "experiment: diversity\n"
        f"datasets: [{{name: web, qrels: {FAIRNESS / 'div_qrels.txt'}, format: ndeval}}]\n"
        f"systems: [{{name: divrun, runs: {{web: {FAIRNESS / 'div_run.txt'}}}}}, "
        f"{{name: shuffled, runs: {{web: {tmp_path / 'shuffled.txt'}}}}}]\n"
        f"measures: [{', '.join(repr(m) for m in measures)}]\n"
        "baseline: divrun\nstats: {permutations: 400, seed: 5}\ntracking: {enabled: false}\noutput: out\n"
    )
    local = load_config(tmp_path / "config.yaml")
    expected = _tables(local)
    got = _tables(dataclasses.replace(local, engine=Engine(name="dask", partitions=3)))
    assert got["long_tail"] is None and expected["long_tail"] is None  # no items here: no long tail
    for name, table in expected.items():
        if name != "long_tail":
            pd.testing.assert_frame_equal(got[name], table, check_exact=True, obj=name)
    assert (expected["comparisons"]["delta"] != 0).sum() >= 5  # the shuffle changes the rankings: a real comparison
    args = [
        "eval",
        "--qrels-format",
        "ndeval",
        "--format",
        "json",
        "-m",
        ",".join(measures),
        str(FAIRNESS / "div_qrels.txt"),
        str(FAIRNESS / "div_run.txt"),
    ]
    printed = {}
    for engine in ([], ["--engine", "dask"]):  # the active client's cluster
        out, err = io.StringIO(), io.StringIO()
        assert main([*args, *engine], out, err) == 0, err.getvalue()
        printed[bool(engine)] = out.getvalue()
    assert printed[True] == printed[False]


def _exposure_config(root: Path) -> Path:
    """expeval's golden case as an experiment: its stochastic run (20 sampled rankings a query, the second column
    saying which) against one whose every sample is rotated by 0-2 ranks, expected exposure per query and nDCG@10 of
    each run's first sample; a release guard on EE_L (lower is better)."""
    from tests.conftest import FAIRNESS

    run = pd.read_csv(
        FAIRNESS / "ee_run.txt", sep=" ", header=None, names=["q", "s", "d", "r", "score", "tag"], dtype={"q": str, "s": str}
    )
    rng, rows = np.random.default_rng(4), []
    for (query, sample), group in run.groupby(["q", "s"], sort=False):
        docs = group["d"].tolist()
        shift = int(rng.integers(0, 3))
        rows += [(query, sample, d, i + 1, 1 / (i + 1), "rot") for i, d in enumerate(docs[shift:] + docs[:shift])]
    pd.DataFrame(rows).to_csv(root / "rotated.txt", sep=" ", header=False, index=False)
    (root / "config.yaml").write_text(
        "experiment: exposure\n"
        f"datasets: [{{name: fair, qrels: {FAIRNESS / 'ee_qrels.txt'}}}]\n"
        f"systems: [{{name: ppl, runs: {{fair: {FAIRNESS / 'ee_run.txt'}}}}},\n"
        f"          {{name: rot, runs: {{fair: {root / 'rotated.txt'}}}}}]\n"
        "measures: [EE_L, EE_R, EE_D, 'EE_L(model=rbp,target=judged)', 'EE_R(norm=expeval)', nDCG@10]\n"
        "baseline: ppl\nstats: {permutations: 400, seed: 5}\n"
        "release:\n  production: ppl\n  candidate: rot\n  guards: [{measure: EE_L, max_drop: 0.05}]\n"
        "tracking: {enabled: false}\noutput: out\n"
    )
    return root / "config.yaml"


def test_expected_exposure_gives_the_same_tables_on_the_cluster(client: Any, tmp_path: Path) -> None:
    """A stochastic run on the cluster: each row's sample goes with it to the partitions, so the expected-exposure
    values, summaries and comparisons (and nDCG of the first sample) equal one machine's exactly."""
    local = load_config(_exposure_config(tmp_path))
    expected = _tables(local)
    got = _tables(dataclasses.replace(local, engine=Engine(name="dask", partitions=3)))
    for name, table in expected.items():
        if table is not None:
            pd.testing.assert_frame_equal(got[name], table, check_exact=True, obj=name)
    assert (expected["comparisons"]["delta"] != 0).sum() >= 5
