"""Silent surprises made loud (issue 14): one line naming the file, the line and the fix; exit 2."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from harness.cli import main


def _eval(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["eval", *argv], out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def qrels(tmp_path: Path) -> Path:
    path = tmp_path / "qrels"
    path.write_text("q1 0 d1 1\nq2 0 d2 1\n")
    return path


def test_a_run_line_with_seven_fields_is_refused(tmp_path: Path, qrels: Path) -> None:
    run = tmp_path / "run"
    run.write_text("q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t extra\n")  # read before as 'rank as score' by a lenient split
    code, out, err = _eval(str(qrels), str(run))
    assert code == 2 and out == ""
    assert err == (
        f"harness: error: {run}: line 2: expected 6 columns (qid Q0 docid rank score tag), got 7. "
        "Fix: each run line is 'query_id Q0 doc_id rank score tag', e.g. '301 Q0 FT911-1 1 12.5 bm25'\n"
    )


def test_a_run_sharing_no_query_with_the_qrels_is_refused(tmp_path: Path, qrels: Path) -> None:
    run = tmp_path / "run"
    run.write_text("Q1 Q0 d1 1 2.0 t\n")  # zeros everywhere, exit 0, before
    code, out, err = _eval(str(qrels), str(run))
    assert code == 2 and out == ""
    assert f"{run}: no query of the run is judged in {qrels} (run query ids look like 'Q1', judged ones like 'q1')" in err


def test_unknown_flags_give_one_clean_line(qrels: Path) -> None:
    code, _, err = _eval("--frobnicate", str(qrels), str(qrels))
    assert code == 2
    assert err == "harness: error: unrecognized arguments: --frobnicate. Fix: see 'harness --help'\n"  # no doubled prefix


def test_version_and_help_import_no_heavy_module() -> None:
    """Start-up stays small: --version and --help load neither numpy, pyarrow, pandas nor scipy (issue 12)."""
    import subprocess
    import sys

    probe = (
        "import sys, contextlib, io\n"
        "from harness.cli import main\n"
        "for argv in (['--version'], ['--help']):\n"
        "    with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):\n"
        "        main(argv)\n"
        "print(sorted(m for m in ('numpy', 'pyarrow', 'pandas', 'scipy', 'mlflow') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]", done.stdout + done.stderr


@pytest.mark.parametrize("compiled_from_rows", [1, 10**9], ids=["compiled", "arrow"])
def test_eval_never_imports_pandas(tmp_path: Path, qrels: Path, compiled_from_rows: int) -> None:
    """pandas costs 0.45 s to import and ``harness eval`` needs none of it, on either alignment engine (issue 12); nor
    scipy.linalg (numba's BLAS probe loaded it, 0.2 s) now that the kernels are compiled ahead of time, without numba."""
    import subprocess
    import sys

    run = tmp_path / "run"
    run.write_text("q1 Q0 d1 1 2.0 t\nq1 Q0 d9 2 1.0 t\nq3 Q0 d2 1 1.0 t\n")
    probe = (
        "import sys, contextlib, io\n"
        "import harness.data.align\n"
        f"harness.data.align.COMPILED_FROM_ROWS = {compiled_from_rows}\n"
        "from harness.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    code = main(['eval', '-m', 'ndcg_cut.10', '-m', 'map', '-m', 'P.5', {str(qrels)!r}, {str(run)!r}])\n"
        "print(code, 'pandas' in sys.modules, 'scipy.linalg' in sys.modules, 'numba' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "0 False False False", done.stdout + done.stderr


def test_eval_of_csv_tables_never_imports_pandas_or_scipy(tmp_path: Path) -> None:
    """A recommender's CSV files, as small users start with, read without pandas: the check for scores that overflow
    a double converted the column to numpy, which imports pandas (0.5 s of a 1.3 s eval, issue 64). Nor scipy: the
    statistics are for comparisons, which eval makes none of."""
    import subprocess
    import sys

    (tmp_path / "ratings.csv").write_text("user,item,rating\nu1,i1,5\nu1,i2,1\nu2,i3,4\n")
    (tmp_path / "run.csv").write_text("user,item,score\nu1,i1,0.9\nu1,i2,0.5\nu2,i3,inf\n")
    probe = (
        "import sys, contextlib, io\n"
        "from harness.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    code = main(['eval', '-m', 'nDCG@10', '--qrels-columns', 'query=user,doc=item,relevance=rating', "
        f"'--run-columns', 'query=user,doc=item,score=score', {str(tmp_path / 'ratings.csv')!r}, "
        f"{str(tmp_path / 'run.csv')!r}])\n"
        "print(code, 'pandas' in sys.modules, 'scipy' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "0 False False", done.stdout + done.stderr


def test_fairness_measures_import_no_pandas(tmp_path: Path, qrels: Path) -> None:
    """The fairness, exposure and propensity measures need no pandas either (issue 26's cost: 0.2 s of a 2.5 s
    budget); pyarrow imports it when a compute function is given a Python scalar, as ``pc.less(codes, 0)`` was."""
    import subprocess
    import sys

    run = tmp_path / "run"
    run.write_text("q1 Q0 d1 1 2.0 t\nq1 Q0 d9 2 1.0 t\nq3 Q0 d2 1 1.0 t\n")
    train = tmp_path / "train.csv"
    train.write_text("user,item\nq1,d1\nq3,d2\nq3,d7\n")
    items = tmp_path / "items.csv"
    items.write_text("item,provider\nd1,a\nd2,b\nd7,a\nd9,b\n")
    measures = (
        "PSP@10,PSnDCG@10,ExposureGini@10,REO(group=provider)@10,RSP(group=provider)@10,PopREO@10,PopRSP@10,"
        "ItemMAD(group=provider)@10"
    )
    probe = (
        "import sys, contextlib, io\n"
        "from harness.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    code = main(['eval', '-m', {measures!r}, '--train', {str(train)!r}, '--train-columns', 'user=user,item=item',"
        f" '--items', {str(items)!r}, {str(qrels)!r}, {str(run)!r}])\n"
        "print(code, 'pandas' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "0 False", done.stdout + done.stderr


def test_a_planned_run_never_imports_scipys_root_finders(tmp_path: Path) -> None:
    """Power planning (each comparison's minimum detectable effect, each guard's plan) bisects the noncentral t itself:
    importing scipy.optimize for a root finder was 0.49 s of a 1.2 s run at MovieLens-100k size (issue 64)."""
    import subprocess
    import sys

    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(5)
    users = [f"u{i}" for i in range(40)]
    (tmp_path / "qrels").write_text("".join(f"{u} 0 d{j} {int(rng.integers(0, 3))}\n" for u in users for j in range(5)))
    for name in ("production", "candidate"):
        lines = (f"{u} Q0 d{j} {r + 1} {rng.random():.4f} {name}\n" for u in users for r, j in enumerate(rng.permutation(8)))
        (tmp_path / f"{name}.run").write_text("".join(lines))
    (tmp_path / "config.yaml").write_text(
        "experiment: planned\n"
        f"datasets: [{{name: d, qrels: {tmp_path / 'qrels'}}}]\n"
        f"systems: [{{name: production, runs: {{d: {tmp_path / 'production.run'}}}}}, "
        f"{{name: candidate, runs: {{d: {tmp_path / 'candidate.run'}}}}}]\n"
        "measures: [nDCG@10, AP]\nbaseline: production\nstats: {permutations: 200, resamples: 200}\n"
        "release: {production: production, candidate: candidate, guards: [{measure: nDCG@10, max_drop: 0.01}]}\n"
        f"report: {{enabled: false}}\noutput: {tmp_path / 'out'}\n"
    )
    probe = (
        "import sys, contextlib, io\n"
        "from harness.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
        f"    code = main(['run', {str(tmp_path / 'config.yaml')!r}, '--no-tracking', '--quiet'])\n"
        "print(code, 'scipy.optimize' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    code, imported = done.stdout.split()
    assert code in {"0", "3", "6"} and imported == "False", done.stdout + done.stderr
    comparisons = pd.read_csv(tmp_path / "out" / "planned" / "latest" / "comparisons.csv")
    assert np.isfinite(comparisons["mde"]).all()  # the plan was made, by the bisection


# ---- trec_eval and ir_measures habits (issue 14) ----------------------------------------

QRELS = "q1 0 d1 2\nq1 0 d2 0\nq1 0 d3 1\nq1 0 d4 -1\nq2 0 d5 1\n"
RUN_A = "q1 Q0 d9 1 5 STANDARD\nq1 Q0 d1 2 4 STANDARD\nq1 Q0 d4 3 3 STANDARD\nq1 Q0 d3 4 2 STANDARD\n"
RUN_B = "q1 Q0 d3 1 5 STANDARD\nq1 Q0 d2 2 4 STANDARD\nq2 Q0 d5 1 1 STANDARD\n"


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    out = {}
    for name, text in (("qrels", QRELS), ("a.run", RUN_A), ("b.run", RUN_B)):
        out[name] = tmp_path / name
        out[name].write_text(text)
    return out


def _values(text: str) -> dict[tuple[str, str], str]:
    return {(line.split("\t")[0].strip(), line.split("\t")[1]): line.split("\t")[2] for line in text.splitlines()}


def test_judged_only_drops_unjudged_documents_first(files: dict[str, Path]) -> None:
    # q1 of run a: d9 (not judged) and d4 (-1: pooled, unjudged) go; d1 (2) and d3 (1) remain at ranks 1, 2
    code, out, _ = _eval("-J", "-q", "-m", "P.1,2", "-m", "num_ret", str(files["qrels"]), str(files["a.run"]))
    assert code == 0
    values = _values(out)
    assert values[("P_1", "q1")] == "1.0000" and values[("P_2", "q1")] == "1.0000" and values[("num_ret", "q1")] == "2"
    code, out, _ = _eval("-m", "nDCG(judged_only=True)@2", "-m", "nDCG@2", "-q", str(files["qrels"]), str(files["a.run"]))
    values = _values(out)  # ideal: 2, 1 -> (2 + 1/log2 3) / (2 + 1/log2 3) = 1 over judged docs; without: d9 then d1
    assert values[("nDCG(judged_only=True)@2", "q1")] == "1.0000"
    assert values[("nDCG@2", "q1")] == f"{(2 / 1.584962500721156) / (2 + 1 / 1.584962500721156):.4f}"


def test_collection_size_enters_utility(files: dict[str, Path]) -> None:
    # run b, q1: ret 2, rel_ret 1 (d3), R 2 (d1, d3); utility.0,0,0,1 = N + rel_ret - ret - R = 100 + 1 - 2 - 2
    code, out, _ = _eval("-N", "100", "-q", "-m", "utility.0,0,0,1", str(files["qrels"]), str(files["b.run"]))
    assert code == 0 and _values(out)[("utility_0,0,0,1", "q1")] == "97.0000"


def test_no_summary(files: dict[str, Path]) -> None:
    code, out, _ = _eval("-q", "-n", "-m", "P.1", str(files["qrels"]), str(files["a.run"]))
    assert code == 0 and "\tall\t" not in out and "\tq1\t" in out


def test_ir_measures_spellings_print_as_written(files: dict[str, Path]) -> None:
    code, out, _ = _eval(
        "-m",
        "nDCG@10,P@1",
        "-m",
        "IPrec@0.5 AP",
        "-m",
        "nDCG(dcg='exp-log2')@10",
        "-m",
        "map",
        str(files["qrels"]),
        str(files["b.run"]),
    )
    assert code == 0
    names = [line.split("\t")[0].strip() for line in out.splitlines()]
    assert names == ["map", "nDCG@10", "P@1", "IPrec@0.5", "AP", "nDCG(dcg='exp-log2')@10"]  # trec_eval's first, then as given
    values = {line.split("\t")[0].strip(): line.split("\t")[2] for line in out.splitlines()}
    assert values["AP"] == values["map"]
    _, same, _ = _eval("-m", "iprec_at_recall.0.50", "-m", "nDCG(gain='exp')@10", str(files["qrels"]), str(files["b.run"]))
    other = {line.split("\t")[0].strip(): line.split("\t")[2] for line in same.splitlines()}
    assert (
        values["IPrec@0.5"] == other["iprec_at_recall_0.50"] and values["nDCG(dcg='exp-log2')@10"] == other["nDCG(gain='exp')@10"]
    )


def test_runs_are_labelled_by_file_or_name(files: dict[str, Path]) -> None:
    both = (str(files["a.run"]), str(files["b.run"]))  # both files are tagged STANDARD
    code, out, _ = _eval("-m", "P.1", "--format", "csv", str(files["qrels"]), *both)
    assert code == 0 and {line.split(",")[0] for line in out.splitlines()[1:]} == {"a.run", "b.run"}
    code, out, _ = _eval("-m", "P.1", str(files["qrels"]), f"bm25={both[0]}", f"dense={both[1]}")
    assert [line for line in out.splitlines() if line.startswith("runid")] == [
        "runid                 \tall\tbm25",
        "runid                 \tall\tdense",
    ]
    code, _, err = _eval("-m", "P.1", str(files["qrels"]), f"x={both[0]}", f"x={both[1]}")
    assert code == 2 and "two runs have the same label" in err


def test_a_note_when_the_default_differs_from_trec_eval(files: dict[str, Path]) -> None:
    code, _, err = _eval("-m", "P.1", str(files["qrels"]), str(files["a.run"]))  # a.run does not answer q2
    assert code == 0 and err.count("\n") == 1
    assert err.startswith("harness: note: 1 judged queries are not in a.run and count as 0 (trec_eval does so only with -c")
    assert _eval("-c", "-m", "P.1", str(files["qrels"]), str(files["a.run"]))[2] == ""
    assert _eval("-m", "P.1", str(files["qrels"]), str(files["b.run"]))[2] == ""  # nothing missing: nothing to say


def test_a_relevance_that_is_not_a_number_names_its_line(files: dict[str, Path]) -> None:
    files["qrels"].write_text(QRELS + "q2 0 d6 high\n")
    code, _, err = _eval("-m", "P.1", str(files["qrels"]), str(files["a.run"]))
    assert code == 2 and f"{files['qrels']}: line 6: relevance 'high' is not a number" in err


def test_compare_from_the_command_line(tmp_path: Path) -> None:
    import csv
    import json

    from scipy import stats

    from tests.generated import adversarial

    qrels, run = adversarial(8)
    rng = __import__("numpy").random.default_rng(1)
    (tmp_path / "qrels").write_text("".join(f"{q} 0 {d} {r}\n" for q, docs in qrels.items() for d, r in docs.items()))
    for name in ("a", "b"):
        lines = [f"{q} Q0 {d} 0 {s + rng.random():.6f} x\n" for q, docs in run.items() for d, s in docs.items()]
        (tmp_path / f"{name}.run").write_text("".join(lines))
    args = [str(tmp_path / "qrels"), f"old={tmp_path / 'a.run'}", f"new={tmp_path / 'b.run'}", "-m", "nDCG@10,AP", "--seed", "4"]
    out, err = io.StringIO(), io.StringIO()
    assert main(["compare", *args, "--format", "csv", "--permutations", "1000"], out, err) == 0, err.getvalue()
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert [(r["name"], r["system_a"], r["system_b"]) for r in rows] == [("nDCG@10", "old", "new"), ("AP", "old", "new")]
    per_query = {}
    for name in ("a", "b"):
        text = _eval("-q", "-m", "AP", "--format", "csv", str(tmp_path / "qrels"), str(tmp_path / f"{name}.run"))[1]
        per_query[name] = {r["query_id"]: float(r["value"]) for r in csv.DictReader(io.StringIO(text)) if r["query_id"] != "all"}
    queries = sorted(per_query["a"])
    expected = stats.ttest_rel([per_query["b"][q] for q in queries], [per_query["a"][q] for q in queries]).pvalue
    assert float(rows[1]["p_t"]) == pytest.approx(expected, rel=1e-9)
    out = io.StringIO()
    assert main(["compare", *args, "--format", "json", "--permutations", "1000"], out, io.StringIO()) == 0
    assert [r["p_t"] for r in json.loads(out.getvalue())] == [float(r["p_t"]) for r in rows]  # the same seed, the same numbers
    out = io.StringIO()
    assert main(["compare", *args, "--permutations", "1000"], out, io.StringIO()) == 0
    table = out.getvalue().splitlines()
    assert table[0].split()[:3] == ["measure", "b", "vs"] and table[1].startswith("nDCG@10  new vs old")
    assert table[-1].startswith("randomization test, 1,000 permutations, seed 4; holm correction")
    code, _, err_text = _eval_command("compare", str(tmp_path / "qrels"), str(tmp_path / "a.run"))
    assert code == 2 and "compare needs at least two runs" in err_text


def _eval_command(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    return main(list(argv), out, err), out.getvalue(), err.getvalue()


def test_progress_in_a_log_and_on_a_terminal(tmp_path: Path) -> None:
    from harness.progress import Progress
    from tests.decision.test_gate import GATES, _config

    config = _config(tmp_path, GATES["pass"][1])
    out, err = io.StringIO(), io.StringIO()  # not a terminal: stage lines and counted steps, as CI logs show them
    assert main(["run", str(config)], out, err) == 0
    lines = err.getvalue().splitlines()
    assert any(line.endswith("evaluating: 0/3") for line in lines) and any(  # three systems on one dataset
        line.endswith("evaluating: 3/3 (100%)") for line in lines
    )
    assert any("comparing (pair x segment): done in" in line for line in lines)
    assert all(line.startswith("[") and "s] " in line for line in lines)
    quiet = io.StringIO()  # no progress; the one note is what the run found: the gate was decided once before
    assert main(["run", str(config), "--quiet"], io.StringIO(), quiet) == 0
    assert quiet.getvalue().startswith("harness: note: this gate was decided before") and quiet.getvalue().count("\n") == 1
    terminal = io.StringIO()
    with Progress(terminal, bars=True).task("comparing", total=3) as advance:  # a tqdm bar, as on a terminal
        for _ in range(3):
            advance()
    assert "comparing:   0%|" in terminal.getvalue() and "0/3" in terminal.getvalue()  # drawn and redrawn in place


@pytest.mark.parametrize(
    "command", ["eval", "compare", "run", "validate", "track", "report", "plan", "exposure", "explain", "measures"]
)
def test_every_command_takes_quiet_and_the_json_ones_format_json(command: str) -> None:
    """One set of habits: --quiet everywhere; --format json wherever a command prints machine output, --json its
    alias; the exit codes in the help of the commands a CI job runs."""
    from harness.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command").choices[command]  # type: ignore[union-attr]
    flags = {flag for action in sub._actions for flag in action.option_strings}
    assert "--quiet" in flags
    if command not in ("report", "measures"):
        assert "json" in next(a for a in sub._actions if "--format" in a.option_strings).choices
        assert sub.parse_args([*_positionals(command), "--json"]).format == "json"
    if command in ("run", "validate", "track", "report"):
        assert "3  the gate FAILed" in sub.format_help() and "6  the gate is INCONCLUSIVE" in sub.format_help()


def _positionals(command: str) -> list[str]:
    return {
        "eval": ["q", "r"],
        "compare": ["q", "a", "b"],
        "run": ["c.yaml"],
        "validate": ["c.yaml"],
        "track": ["f"],
        "plan": ["--margin", "0.01"],
        "exposure": ["q", "r"],
        "explain": ["q", "r"],
    }[command]


@pytest.mark.parametrize("flag", ["-o", "-Z", "-R", "-T", "-D"])
def test_a_trec_eval_flag_harness_does_not_take_is_named(flag: str, qrels: Path) -> None:
    code, out, err = _eval(flag, str(qrels), str(qrels))
    assert code == 2 and out == "" and f"trec_eval's {flag} is not supported" in err and err.count("\n") == 1, err


def test_every_column_option_takes_either_spelling_of_a_role(tmp_path: Path) -> None:
    """``query=``/``doc=`` and ``user=``/``item=`` name the same roles in --qrels-columns, --run-columns and
    --train-columns, as a config's ``columns:`` does: the same values either way."""
    (tmp_path / "test.csv").write_text("uid,iid,r\nu1,a,1\nu2,b,1\n")
    (tmp_path / "run.csv").write_text("uid,iid,s\nu1,a,2\nu1,b,1\nu2,a,2\nu2,c,1\n")
    (tmp_path / "train.csv").write_text("uid,iid\nu1,c\nu2,b\nu3,a\n")
    printed = []
    for query, doc in (("query", "doc"), ("user", "item")):
        out = io.StringIO()
        argv = [
            "eval",
            "-m",
            "RR,Coverage@2",
            "--qrels-columns",
            f"{query}=uid,{doc}=iid,relevance=r",
            "--run-columns",
            f"{query}=uid,{doc}=iid,score=s",
            "--train-columns",
            f"{query}=uid,{doc}=iid",
            "--train",
            str(tmp_path / "train.csv"),
            str(tmp_path / "test.csv"),
            str(tmp_path / "run.csv"),
        ]
        assert main(argv, out, io.StringIO()) == 0
        printed.append(out.getvalue())
    assert printed[0] == printed[1] and "RR" in printed[0] and "Coverage@2" in printed[0]
