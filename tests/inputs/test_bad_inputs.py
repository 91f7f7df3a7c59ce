"""A corpus of bad inputs: each refused with exit 2 and one line naming the file (and line) and a fix, no traceback,
nothing written; the same files through the API raise harness's own error with the same message.

Each case is (files written into a fresh folder, the command, what the line must say, the line number when the
mistake is on a line of a file). The line numbers are those of the fixtures below, counted by hand.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n"
RUN = "q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\nq2 Q0 d3 1 1.0 t\n"
RATINGS = "user,item,rating\nu1,i1,5\nu1,i2,3\nu2,i1,4\n"
SCORES = "user,item,score\nu1,i1,0.9\nu1,i2,0.5\nu2,i1,0.7\n"
CONFIG = """experiment: bad
datasets:
  - name: d
    qrels: qrels.txt
systems:
  - {name: a, runs: {d: a.run}}
  - {name: b, runs: {d: b.run}}
measures: [nDCG@10, AP]
baseline: a
tracking: {enabled: false}
report: {enabled: false}
output: out
"""


@dataclass(frozen=True)
class Case:
    id: str
    files: dict[str, str | bytes]
    argv: tuple[str, ...]
    says: str  # the phrase that names the mistake
    file: str | None = None  # the file the line names (None: no file, e.g. an argument)
    line: int | None = None
    special: str = ""  # "fifo:<name>", "dir:<name>"
    api: bool = field(default=False)  # the same files through harness's API too


def _eval(qrels: str = "qrels.txt", run: str = "a.run", *extra: str) -> tuple[str, ...]:
    return ("eval", "-m", "P.1", *extra, qrels, run)


def _tables(qrels: str, run: str) -> tuple[str, ...]:
    return (
        "eval",
        "-m",
        "P.1",
        "--qrels-columns",
        "query=user,doc=item,relevance=rating",
        "--run-columns",
        "query=user,doc=item,score=score",
        qrels,
        run,
    )


def _config(text: str) -> dict[str, str | bytes]:
    return {"exp.yaml": text, "qrels.txt": QRELS, "a.run": RUN, "b.run": RUN}


def _cfg_replace(old: str, new: str) -> dict[str, str | bytes]:
    assert old in CONFIG, old
    return _config(CONFIG.replace(old, new))


RUN_ARGV = ("run", "exp.yaml")
TREC = [
    Case(
        "qrels-3-columns",
        {"qrels.txt": "q1 0 d1 1\nq1 0 d2\n", "a.run": RUN},
        _eval(),
        "expected 4 columns",
        "qrels.txt",
        2,
        api=True,
    ),
    Case(
        "qrels-5-columns", {"qrels.txt": "q1 0 d1 1 x\n", "a.run": RUN}, _eval(), "expected 4 columns", "qrels.txt", 1, api=True
    ),
    Case(
        "qrels-relevance-text",
        {"qrels.txt": "q1 0 d1 1\nq1 0 d2 high\n", "a.run": RUN},
        _eval(),
        "relevance 'high' is not a number",
        "qrels.txt",
        2,
        api=True,
    ),
    Case(
        "qrels-relevance-nan", {"qrels.txt": "q1 0 d1 nan\n", "a.run": RUN}, _eval(), "relevance is NaN", "qrels.txt", 1, api=True
    ),
    Case(
        "qrels-relevance-overflow",
        {"qrels.txt": "q1 0 d1 1\nq2 0 d3 99999999999999999999999\n", "a.run": RUN},
        _eval(),
        "relevance 99999999999999999999999 is out of range",
        "qrels.txt",
        2,
        api=True,
    ),
    Case(
        "qrels-nul-in-id",
        {"qrels.txt": b"q1 0 d1 1\nq1 0 d\x002 0\n", "a.run": RUN},
        _eval(),
        "a control character ('\\x00')",
        "qrels.txt",
        2,
        api=True,
    ),
    Case("qrels-empty", {"qrels.txt": "", "a.run": RUN}, _eval(), "no judgments", "qrels.txt", api=True),
    Case("qrels-missing", {"a.run": RUN}, _eval(), "qrels file not found", "qrels.txt", api=True),
    Case("qrels-folder", {"a.run": RUN}, _eval(), "qrels path is a folder", "qrels.txt", special="dir:qrels.txt", api=True),
    Case("qrels-fifo", {"a.run": RUN}, _eval(), "not a regular file", "qrels.txt", special="fifo:qrels.txt", api=True),
    Case("qrels-not-utf8", {"qrels.txt": b"q1 0 d\xff1 1\n", "a.run": RUN}, _eval(), "UTF-8", "qrels.txt", 1),
    Case(
        "subtopics-3-columns",
        {"qrels.txt": "q1 1 d1 1\nq1 2 d2\n", "a.run": RUN},
        ("eval", "--qrels-format", "ndeval", "-m", "alpha_nDCG@5", "qrels.txt", "a.run"),
        "expected 4 columns (qid subtopic docid judgment)",
        "qrels.txt",
        2,
    ),
    Case(
        "subtopics-judgment-text",
        {"qrels.txt": "q1 1 d1 1\nq1 2 d2 yes\n", "a.run": RUN},
        ("eval", "--qrels-format", "ndeval", "-m", "alpha_nDCG@5", "qrels.txt", "a.run"),
        "relevance 'yes' is not a number",
        "qrels.txt",
        2,
    ),
    Case(
        "exposure-rank-twice",
        {"qrels.txt": "q1 0 d1 1\n", "a.run": "q1 0 d1 1 1 r\nq1 0 d2 1 1 r\n"},
        ("exposure", "qrels.txt", "a.run"),
        "rank 1 is given twice in sample '0' of query 'q1'",
        "a.run",
        2,
    ),
    Case(
        "exposure-rank-text",
        {"qrels.txt": "q1 0 d1 1\n", "a.run": "q1 0 d1 first 1 r\n"},
        ("exposure", "qrels.txt", "a.run"),
        "rank 'first' is not a number",
        "a.run",
        1,
    ),
    Case(
        "exposure-qrels-3-columns",
        {"qrels.txt": "q1 0 d1 1\nq1 d2 1\n", "a.run": "q1 0 d1 1 1 r\n"},
        ("exposure", "qrels.txt", "a.run"),
        "expected 4 columns (qid groups docid rel)",
        "qrels.txt",
        2,
    ),
    Case(
        "subtopics-needed",
        {"qrels.txt": QRELS, "a.run": RUN},
        ("eval", "-m", "alpha_nDCG@5", "qrels.txt", "a.run"),
        "alpha_nDCG@5 needs subtopic judgments",
    ),
    Case(
        "run-5-columns",
        {"qrels.txt": QRELS, "a.run": "q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0\n"},
        _eval(),
        "expected 6 columns",
        "a.run",
        2,
        api=True,
    ),
    Case(
        "run-7-columns",
        {"qrels.txt": QRELS, "a.run": "q1 Q0 d1 1 2.0 t extra\n"},
        _eval(),
        "expected 6 columns",
        "a.run",
        1,
        api=True,
    ),
    Case(
        "run-score-text",
        {"qrels.txt": QRELS, "a.run": "q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 high t\n"},
        _eval(),
        "score 'high' is not a number",
        "a.run",
        2,
        api=True,
    ),
    Case("run-score-nan", {"qrels.txt": QRELS, "a.run": "q1 Q0 d1 1 nan t\n"}, _eval(), "score is NaN", "a.run", 1, api=True),
    Case(
        "run-score-overflow",
        {"qrels.txt": QRELS, "a.run": "q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1e400 t\n"},
        _eval(),
        "score 1e400 overflows a double",
        "a.run",
        2,
        api=True,
    ),
    Case(
        "qrels-bell-in-id",
        {"qrels.txt": b"q1 0 d1 1\nq1 0 d\x072 0\n", "a.run": RUN},
        _eval(),
        "a control character ('\\x07') in a document id",
        "qrels.txt",
        2,
        api=True,
    ),
    Case(
        "run-escape-in-query-id",
        {"qrels.txt": QRELS, "a.run": b"q1 Q0 d1 1 2.0 t\n\x1b[31mq1 Q0 d2 2 1.0 t\n"},
        _eval(),
        "a control character ('\\x1b') in a query id",
        "a.run",
        2,
        api=True,
    ),
    Case(
        "run-nul-in-id",
        {"qrels.txt": QRELS, "a.run": b"q1 Q0 d1 1 2.0 t\nq1 Q0 d\x002 2 1.0 t\n"},
        _eval(),
        "a control character ('\\x00')",
        "a.run",
        2,
        api=True,
    ),
    Case("run-empty", {"qrels.txt": QRELS, "a.run": ""}, _eval(), "the run is empty", "a.run", api=True),
    Case(
        "run-no-shared-query",
        {"qrels.txt": QRELS, "a.run": "q9 Q0 d1 1 2.0 t\n"},
        _eval(),
        "no query of the run is judged",
        "a.run",
    ),
    Case(
        "run-duplicate-doc", {"qrels.txt": QRELS, "a.run": "q1 Q0 d1 1 2.0 t\nq1 Q0 d1 2 1.0 t\n"}, _eval(), "twice", "a.run", 2
    ),
    Case("run-missing", {"qrels.txt": QRELS}, _eval(), "run file not found", "a.run", api=True),
    Case("run-folder", {"qrels.txt": QRELS}, _eval(), "run path is a folder", "a.run", special="dir:a.run", api=True),
    Case("run-fifo", {"qrels.txt": QRELS}, _eval(), "not a regular file", "a.run", special="fifo:a.run", api=True),
    Case("run-device", {"qrels.txt": QRELS}, _eval(run="/dev/zero"), "not a regular file", "/dev/zero"),
    Case(
        "run-negative-label-error",
        {"qrels.txt": "q1 0 d1 -1\n", "a.run": RUN},
        _eval("qrels.txt", "a.run", "--negative-labels", "error"),
        "negative relevance label",
        "qrels.txt",
        1,
    ),
    Case(
        "run-same-label-twice",
        {"qrels.txt": QRELS, "a.run": RUN},
        ("eval", "-m", "P.1", "qrels.txt", "x=a.run", "x=a.run"),
        "same label",
    ),
]
TABLES = [
    Case(
        "csv-qrels-missing-column",
        {"r.csv": RATINGS.replace("rating", "stars"), "s.csv": SCORES},
        _tables("r.csv", "s.csv"),
        "no column 'rating'",
        "r.csv",
        1,
        api=True,
    ),
    Case(
        "csv-run-score-text",
        {"r.csv": RATINGS, "s.csv": SCORES.replace("0.5", "high")},
        _tables("r.csv", "s.csv"),
        "score 'high' is not a number in data row 2",
        "s.csv",
        3,
        api=True,
    ),
    Case(
        "csv-run-score-empty",
        {"r.csv": RATINGS, "s.csv": SCORES.replace("0.5", "")},
        _tables("r.csv", "s.csv"),
        "missing or NaN in data row 2",
        "s.csv",
        3,
        api=True,
    ),
    Case(
        "csv-run-empty-id",
        {"r.csv": RATINGS, "s.csv": SCORES.replace("u1,i2", ",i2")},
        _tables("r.csv", "s.csv"),
        "empty query id in data row 2",
        "s.csv",
        3,
        api=True,
    ),
    Case(
        "csv-run-score-overflow",
        {"r.csv": RATINGS, "s.csv": SCORES.replace("0.5", "1e400")},
        _tables("r.csv", "s.csv"),
        "score 1e400 overflows a double",
        "s.csv",
        3,
        api=True,
    ),
    Case(
        "csv-qrels-relevance-overflow",
        {"r.csv": RATINGS.replace("u2,i1,4", "u2,i1,99999999999999999999999"), "s.csv": SCORES},
        _tables("r.csv", "s.csv"),
        "relevance 1e+23 is out of range",
        "r.csv",
        4,
        api=True,
    ),
    Case(
        "csv-not-utf8",
        {"r.csv": RATINGS, "s.csv": SCORES.replace("u1,i2", "u1,i\xff2").encode("latin-1")},
        _tables("r.csv", "s.csv"),
        "not UTF-8 text",
        "s.csv",
        3,
    ),
    Case(
        "csv-short-row",
        {"r.csv": RATINGS, "s.csv": SCORES.replace("u1,i2,0.5", "u1,i2")},
        _tables("r.csv", "s.csv"),
        "expected 3 columns, got 2",
        "s.csv",
        3,
    ),
    Case(
        "csv-line-break-in-id",
        {"r.csv": RATINGS, "s.csv": SCORES.replace("u1,i2", 'u1,"i\n2"')},
        _tables("r.csv", "s.csv"),
        "a control character ('\\n') in a doc id",
        "s.csv",
        3,
        api=True,
    ),
    Case(
        "csv-duplicate-after-blank-line",
        {"r.csv": RATINGS, "s.csv": SCORES.replace("u1,i2,0.5\n", "\nu1,i1,0.5\n")},
        _tables("r.csv", "s.csv"),
        "listed twice",
        "s.csv",
        4,
        api=True,
    ),
    Case(
        "jsonl-score-overflow",
        {
            "r.csv": RATINGS,
            "s.jsonl": '{"user": "u1", "item": "i1", "score": 1}\n\n{"user": "u1", "item": "i2", "score": 1e400}\n',
        },
        _tables("r.csv", "s.jsonl"),
        "1e400 overflows a double",
        "s.jsonl",
        3,
    ),
    Case(
        "csv-qrels-no-rows",
        {"r.csv": "user,item,rating\n", "s.csv": SCORES},
        _tables("r.csv", "s.csv"),
        "no rows",
        "r.csv",
        api=True,
    ),
    Case(
        "jsonl-broken",
        {"r.csv": RATINGS, "s.jsonl": '{"user": "u1", "item": "i1", "score": 1}\n{"user": \n'},
        _tables("r.csv", "s.jsonl"),
        "cannot be read as jsonl",
        "s.jsonl",
        2,
    ),
    Case(
        "parquet-corrupt",
        {"r.csv": RATINGS, "s.parquet": b"PAR1 not really parquet"},
        _tables("r.csv", "s.parquet"),
        "cannot be read as parquet",
        "s.parquet",
    ),
    Case("tsv-wrong-separator", {"r.tsv": RATINGS, "s.csv": SCORES}, _tables("r.tsv", "s.csv"), "no column 'user'", "r.tsv", 1),
    Case(
        "train-missing-column",
        {"r.csv": RATINGS, "s.csv": SCORES, "t.csv": "who,what\nu1,i1\n"},
        (
            "eval",
            "-m",
            "Coverage@10",
            "--qrels-columns",
            "query=user,doc=item,relevance=rating",
            "--run-columns",
            "query=user,doc=item,score=score",
            "--train",
            "t.csv",
            "r.csv",
            "s.csv",
        ),
        "no column 'user'",
        "t.csv",
        1,
    ),
    Case(
        "run-sample-column-missing",
        {"r.csv": RATINGS, "s.csv": SCORES},
        (
            "eval",
            "-m",
            "EE_L",
            "--qrels-columns",
            "query=user,doc=item,relevance=rating",
            "--run-columns",
            "query=user,doc=item,score=score,sample=draw",
            "r.csv",
            "s.csv",
        ),
        "no column 'draw' for the sample",
        "s.csv",
        1,
    ),
    Case(
        "items-mixed-column",
        {"r.csv": RATINGS, "s.csv": SCORES, "t.csv": "user,item\nu1,i1\n", "i.csv": "item,provider\ni1,acme\ni2,1984\n"},
        (
            "eval",
            "-m",
            "REO(group=provider)@10",
            "--qrels-columns",
            "query=user,doc=item,relevance=rating",
            "--run-columns",
            "query=user,doc=item,score=score",
            "--train",
            "t.csv",
            "--items",
            "i.csv",
            "r.csv",
            "s.csv",
        ),
        "--items-groups provider",
        "i.csv",
        2,
    ),
    Case(
        "items-group-not-a-column",
        {"r.csv": RATINGS, "s.csv": SCORES, "t.csv": "user,item\nu1,i1\n", "i.csv": "item,provider\ni1,acme\n"},
        (
            "eval",
            "-m",
            "REO(group=provider)@10",
            "--qrels-columns",
            "query=user,doc=item,relevance=rating",
            "--run-columns",
            "query=user,doc=item,score=score",
            "--train",
            "t.csv",
            "--items",
            "i.csv",
            "--items-groups",
            "publisher",
            "r.csv",
            "s.csv",
        ),
        "the group column 'publisher' is not in the items file",
        "i.csv",
    ),
    Case("table-fifo", {"s.csv": SCORES}, _tables("r.csv", "s.csv"), "not a regular file", "r.csv", special="fifo:r.csv"),
]
CONFIGS = [
    Case("yaml-not-a-mapping", _config("- just\n- a list\n"), RUN_ARGV, "must be a mapping", "exp.yaml", 1),
    Case("yaml-syntax", _config(CONFIG.replace("measures: [nDCG@10, AP]", "measures: [nDCG@10, AP")), RUN_ARGV, "", "exp.yaml"),
    Case("yaml-tab", _config(CONFIG.replace("  - name: d", "\t- name: d")), RUN_ARGV, "", "exp.yaml", 3),
    Case("yaml-not-utf8", {"exp.yaml": b"experiment: b\xffad\n"}, RUN_ARGV, "not UTF-8", "exp.yaml", 1),
    Case("config-missing", {}, RUN_ARGV, "config file not found", "exp.yaml"),
    Case("config-folder", {}, RUN_ARGV, "config path is a folder", "exp.yaml", special="dir:exp.yaml"),
    Case("config-fifo", {}, RUN_ARGV, "not a regular file", "exp.yaml", special="fifo:exp.yaml"),
    Case("unknown-top-key", _cfg_replace("baseline: a\n", "baseline: a\nbasline: b\n"), RUN_ARGV, "basline", "exp.yaml", 10),
    Case("no-datasets", _cfg_replace("datasets:\n  - name: d\n    qrels: qrels.txt\n", ""), RUN_ARGV, "datasets", "exp.yaml"),
    Case("dataset-no-qrels", _cfg_replace("    qrels: qrels.txt\n", ""), RUN_ARGV, "qrels", "exp.yaml", 3),
    Case("qrels-path-missing", _cfg_replace("qrels: qrels.txt", "qrels: nowhere.txt"), RUN_ARGV, "file not found", "exp.yaml", 4),
    Case("qrels-path-fifo", _config(CONFIG), RUN_ARGV, "not a regular file", "exp.yaml", 4, special="fifo:qrels.txt"),
    Case(
        "run-path-missing", _cfg_replace("runs: {d: b.run}", "runs: {d: nowhere.run}"), RUN_ARGV, "file not found", "exp.yaml", 7
    ),
    Case(
        "run-unknown-dataset",
        _cfg_replace("runs: {d: b.run}", "runs: {e: b.run}"),
        RUN_ARGV,
        "unknown key 'systems[1].runs.e'",
        "exp.yaml",
        7,
    ),
    Case("duplicate-system", _cfg_replace("{name: b,", "{name: a,"), RUN_ARGV, "'a'", "exp.yaml", 7),
    Case("unknown-measure", _cfg_replace("measures: [nDCG@10, AP]", "measures: [nDGC@10, AP]"), RUN_ARGV, "nDGC", "exp.yaml", 8),
    Case(
        "bad-cutoff",
        _cfg_replace("measures: [nDCG@10, AP]", "measures: [nDCG@0, AP]"),
        RUN_ARGV,
        "cutoff of nDCG must be at least 1, got 0",
        "exp.yaml",
        8,
    ),
    Case("unknown-baseline", _cfg_replace("baseline: a", "baseline: z"), RUN_ARGV, "'z'", "exp.yaml", 9),
    Case(
        "permutations-huge",
        _cfg_replace("baseline: a\n", "baseline: a\nstats: {permutations: 99999999999999999999999999}\n"),
        RUN_ARGV,
        "out of range",
        "exp.yaml",
        10,
    ),
    Case(
        "permutations-too-many",
        _cfg_replace("baseline: a\n", "baseline: a\nstats: {permutations: 100000000}\n"),
        RUN_ARGV,
        "at most 10,000,000",
        "exp.yaml",
        10,
    ),
    Case(
        "permutations-text",
        _cfg_replace("baseline: a\n", "baseline: a\nstats: {permutations: many}\n"),
        RUN_ARGV,
        "must be a int",
        "exp.yaml",
        10,
    ),
    Case(
        "alpha-out-of-range",
        _cfg_replace("baseline: a\n", "baseline: a\nstats: {alpha: 2}\n"),
        RUN_ARGV,
        "alpha must be above 0 and at most 0.5",
        "exp.yaml",
        10,
    ),
    Case(
        "alpha-infinite", _cfg_replace("baseline: a\n", "baseline: a\nstats: {alpha: .inf}\n"), RUN_ARGV, "finite", "exp.yaml", 10
    ),
    Case(
        "unknown-correction",
        _cfg_replace("baseline: a\n", "baseline: a\nstats: {correction: fdr}\n"),
        RUN_ARGV,
        "unknown correction 'fdr'",
        "exp.yaml",
        10,
    ),
    Case(
        "unknown-tie-rule",
        _cfg_replace("baseline: a\n", "baseline: a\nconventions: {ties: random}\n"),
        RUN_ARGV,
        "random",
        "exp.yaml",
        10,
    ),
    Case(
        "unknown-profile",
        _cfg_replace("baseline: a\n", "baseline: a\nprofile: pyterrier\n"),
        RUN_ARGV,
        "pyterrier",
        "exp.yaml",
        10,
    ),
    Case(
        "guard-unknown-measure",
        _cfg_replace(
            "report: {enabled: false}\n",
            "report:\n  enabled: false\nrelease: {production: a, candidate: b, guards: [{measure: P@3, max_drop: 0.01}]}\n",
        ),
        RUN_ARGV,
        "P@3",
        "exp.yaml",
        13,
    ),
    Case(
        "guard-no-margin",
        _cfg_replace(
            "report: {enabled: false}\n",
            "report:\n  enabled: false\nrelease: {production: a, candidate: b, guards: [{measure: AP}]}\n",
        ),
        RUN_ARGV,
        "margin",
        "exp.yaml",
        13,
    ),
    Case(
        "guard-unknown-system",
        _cfg_replace(
            "report: {enabled: false}\n",
            "report:\n  enabled: false\nrelease: {production: a, candidate: c, guards: [{measure: AP, max_drop: 0.01}]}\n",
        ),
        RUN_ARGV,
        "'c'",
        "exp.yaml",
        13,
    ),
    Case(
        "engine-unknown", _cfg_replace("baseline: a\n", "baseline: a\nengine: {name: spark}\n"), RUN_ARGV, "spark", "exp.yaml", 10
    ),
    Case("output-is-a-file", {**_config(CONFIG), "out": "a file"}, RUN_ARGV, "is a file, not a folder", "out"),
    Case("set-unknown-key", _config(CONFIG), (*RUN_ARGV, "--set", "stats.permutatons=100"), "permutatons"),
]
ARGUMENTS = [
    Case(
        "eval-unknown-measure",
        {"qrels.txt": QRELS, "a.run": RUN},
        ("eval", "-m", "ndgc_cut.10", "qrels.txt", "a.run"),
        "ndgc_cut",
    ),
    Case("eval-unknown-flag", {"qrels.txt": QRELS, "a.run": RUN}, ("eval", "--frobnicate", "qrels.txt", "a.run"), "--frobnicate"),
    Case("eval-no-run", {"qrels.txt": QRELS}, ("eval", "-m", "P.1", "qrels.txt"), "run"),
    Case("compare-one-run", {"qrels.txt": QRELS, "a.run": RUN}, ("compare", "qrels.txt", "a.run"), "at least two runs"),
    Case(
        "compare-system-measure",
        {"qrels.txt": QRELS, "a.run": RUN, "b.run": RUN},
        ("compare", "-m", "Coverage@10", "qrels.txt", "a.run", "b.run"),
        "one value per run",
    ),
    Case("plan-neither", {}, ("plan", "--margin", "0.01"), "either a results folder or --sd"),
    Case("track-not-a-folder", {}, ("track", "nowhere"), "nowhere"),
    Case("report-not-a-folder", {}, ("report", "nowhere"), "nowhere"),
]
CASES = TREC + TABLES + CONFIGS + ARGUMENTS


def _prepare(case: Case, folder: Path) -> None:
    for name, content in case.files.items():
        path = folder / name
        path.write_bytes(content) if isinstance(content, bytes) else path.write_text(content)
    if case.special:
        kind, name = case.special.split(":")
        target = folder / name
        if target.exists():
            target.unlink()
        os.mkfifo(target) if kind == "fifo" else target.mkdir()


def test_the_corpus_is_large_enough() -> None:
    assert len(CASES) >= 60 and len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_a_bad_input_gets_one_line_exit_2_and_nothing_written(case: Case, tmp_path: Path) -> None:
    _prepare(case, tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "harness", *case.argv], capture_output=True, text=True, cwd=tmp_path, timeout=60, check=False
    )  # a FIFO read would hang: the timeout says so
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert done.stdout == "" and "Traceback" not in done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("harness: error: "), done.stderr
    assert case.says in lines[0], lines[0]
    if case.file is not None:
        assert case.file in lines[0], lines[0]
    if case.line is not None:
        assert f"line {case.line}:" in lines[0], lines[0]
    assert "Fix:" in lines[0] or (case.argv[0] in ("eval", "compare") and "--" in case.says), lines[0]
    out = tmp_path / "out"
    assert not out.is_dir() or not any(out.iterdir()), "nothing written"


API_CASES = [c for c in TREC + TABLES if c.api]


@pytest.mark.parametrize("case", API_CASES, ids=[c.id for c in API_CASES])
def test_the_api_raises_harness_errors_with_the_same_message(case: Case, tmp_path: Path) -> None:
    import harness
    from harness.errors import HarnessError

    _prepare(case, tmp_path)
    columns = {"query": "user", "doc": "item"}
    qrels_name, run_name = case.argv[-2], case.argv[-1]
    with pytest.raises(HarnessError) as raised:
        qrels = harness.read_qrels(
            tmp_path / qrels_name, columns={**columns, "relevance": "rating"} if qrels_name.endswith(".csv") else None
        )
        run = harness.read_run(tmp_path / run_name, columns={**columns, "score": "score"} if run_name.endswith(".csv") else None)
        harness.evaluate(qrels, run, ["P@1"])
    assert case.says in str(raised.value) and (case.file or "") in str(raised.value)
    if case.line is not None:
        assert f"line {case.line}:" in str(raised.value)
