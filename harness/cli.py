"""The command line: ``main(argv) -> int``, the only place that prints errors.

Exit codes
----------
0  success
2  a user error: bad arguments, config or input (one line on stderr names the fix);
   nothing was written
3  the release gate FAILed (``harness run``, ``harness report``): results (and the report,
   if it rendered) were written. A gate's verdict wins over 4 and 5: a CI job that blocks
   on 3 never ships a failing candidate because tracking or the report failed too
6  the release gate is INCONCLUSIVE: too few users to show the candidate within its
   margins or beyond them (``release.on_inconclusive: fail | pass`` maps it to 3 or 0);
   wins over 4 and 5 as 3 does
4  tracking failed after the results were saved (``harness run``); log them later
   with ``harness track RESULTS_DIR``
5  the report could not be rendered; the results were saved
70 an internal error (a bug: please report it with the traceback)
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import itertools
import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TextIO

from harness._text import for_csv, for_csv_cell, for_terminal
from harness._version import __version__
from harness.config.defaults import (
    COLUMN_SYNONYMS,
    DEFAULT_ALPHA,
    DEFAULT_CORRECTION,
    DEFAULT_DATASET,
    DEFAULT_FAMILY,
    DEFAULT_PERMUTATIONS,
    DEFAULT_POWER,
    DEFAULT_PRIMARY,
    DEFAULT_RESAMPLING,
    DEFAULT_SEED,
    DEFAULT_TESTS,
    MAX_ALPHA,
)
from harness.errors import HarnessError, ReportError, TrackingError

if TYPE_CHECKING:
    from harness.config.schema import Experiment
    from harness.pipeline import Outcome
    from harness.pipeline.files import FileInputs
    from harness.records.recorder import TrackingProcess

EXIT_OK = 0
EXIT_USER_ERROR = 2
EXIT_GATE_FAILED = 3
EXIT_TRACKING_FAILED = 4
EXIT_REPORT_FAILED = 5
EXIT_GATE_INCONCLUSIVE = 6
EXIT_RESULTS_NOT_WRITTEN = 7
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports Ctrl-C
EXIT_INTERNAL = 70


EXIT_CODES = """exit codes:
  0  done (a gate PASSed, or no gate)     3  the gate FAILed
  2  a mistake in the input or config     6  the gate is INCONCLUSIVE
  4  tracking failed (results kept)       5  the report failed (results kept)
  7  results not written                  130  interrupted (Ctrl-C)
  70 an internal error (a bug: please report it)"""

# trec_eval's flags harness eval does not take, and what to do instead
_TREC_EVAL_FLAGS = {
    "-o": "the old output format: harness prints trec_eval's standard one (or --format csv / json)",
    "-Z": "z-scores against a file of means: harness compare tests runs against each other",
    "-R": "another judgments format: give TREC qrels, a table with --qrels-columns, or --qrels-format ndeval",
    "-T": "another results format: give a TREC run or a table with --run-columns",
    "-D": "debug output: harness has none to give",
    "-a": "every measure with its own default: use -m all_trec",
}


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of exiting, so errors go through one printer."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)  # the exit codes keep their lines
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> None:  # type: ignore[override]
        where = "" if self.prog == "harness" else f"{self.prog.removeprefix('harness ')}: "  # main() prints 'harness: error: '
        raise HarnessError(f"{where}{message}", hint=f"see '{self.prog} --help'")


def _parse(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """The arguments; one trec_eval flag harness eval does not take is named as such, with what to do instead."""
    args, extra = parser.parse_known_args(argv)
    if extra:
        flag = next((w[:2] for w in extra if w[:2] in _TREC_EVAL_FLAGS), None)
        if getattr(args, "command", None) == "eval" and flag is not None:
            raise HarnessError(f"eval: trec_eval's {flag} is not supported", hint=_TREC_EVAL_FLAGS[flag])
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    return args


def _machine_output(parser: argparse.ArgumentParser, choices: tuple[str, ...] = ("text", "json")) -> None:
    """--format (json: one object on stdout) and --quiet (no progress on stderr), as every command takes them; --json
    is --format json."""
    parser.add_argument("--format", choices=choices, default=choices[0], help="json: one JSON object on stdout")
    parser.add_argument("--json", action="store_const", dest="format", const="json", help="the same as --format json")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")


def _column_map(text: str | None, defaults: dict[str, str], optional: tuple[str, ...] = ()) -> dict[str, str]:
    """role=column pairs over ``defaults``; ``optional`` roles (a stochastic run's sample) only when given. ``query``
    and ``user`` name one role, as do ``doc`` and ``item``, whichever the defaults spell.

    >>> _column_map("query=uid,doc=iid", {"user": "user", "item": "item"})
    {'user': 'uid', 'item': 'iid'}
    """
    mapping = dict(defaults)
    spelled = {
        **{k: v for k, v in COLUMN_SYNONYMS.items() if v in defaults},
        **{v: k for k, v in COLUMN_SYNONYMS.items() if k in defaults},
    }
    if text:
        for part in text.split(","):
            role, sep, column = part.partition("=")
            role = spelled.get(role, role)
            if not sep or (role not in defaults and role not in optional):
                raise HarnessError(
                    f"cannot read column mapping {part!r}",
                    hint=f"write role=column with roles {', '.join([*defaults, *optional])}",
                )
            mapping[role] = column
    return mapping


def _eval_items(specs: list[str]):  # type: ignore[no-untyped-def]
    """trec_eval names (printed as trec_eval does) and ir_measures names (printed as written), in trec_eval's order."""
    from harness.measures.parse import parse_measure, split_measures
    from harness.measures.trec_names import SETS, TREC_NAMES, TrecItem, parse_trec_measure

    items: list[TrecItem] = []
    for raw in specs or ["official"]:
        for token in [t for t in raw.split() if t]:
            name = token.partition(".")[0]
            trec_like = "@" not in token and "(" not in token and (token in SETS or name in TREC_NAMES)
            if trec_like:
                new = parse_trec_measure(token)
                # trec_eval keeps one parameterisation per measure: the last -m wins.
                replaced = {i.order for i in new} if token not in SETS else set()
                items = [i for i in items if i.order not in replaced]
                items.extend(new)
                continue
            for spec in split_measures(token):  # ir_measures style, comma lists allowed: nDCG@10,P@5
                items.append(TrecItem(1000 + len(items), spec, parse_measure(spec)))
    # trec_eval prints in its table order; a later -m for the same name replaces the earlier one.
    unique: dict[str, TrecItem] = {}
    for item in items:
        unique[item.display] = item
    return sorted(unique.values(), key=lambda i: i.order)


def _alpha(text: str) -> float:
    """``--alpha``: a level above 0 and at most :data:`~harness.config.defaults.MAX_ALPHA`."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 < value <= MAX_ALPHA:
        raise argparse.ArgumentTypeError(f"must be above 0 and at most {MAX_ALPHA:g}, got {text}")
    return value


def _run_arguments(values: list[str]) -> list[tuple[str | None, str]]:
    """``path`` or ``NAME=path``: (the name given, or None, and the path)."""
    out: list[tuple[str | None, str]] = []
    for value in values:
        name, sep, path = value.partition("=")
        if sep and name and not Path(value).exists():
            out.append((name, path))
        else:
            out.append((None, value))
    return out


def _format_value(value: float, integer: bool) -> str:
    return f"{round(value)}" if integer else f"{value:6.4f}"


def _file_inputs(args: argparse.Namespace) -> FileInputs:
    """The judgments, runs, conventions and engine ``harness eval`` / ``harness compare`` name, as one typed value."""
    from harness.config.schema import Engine
    from harness.data.load import QRELS_COLUMNS, RUN_COLUMNS
    from harness.measures.conventions import Conventions
    from harness.measures.peers import PROFILES
    from harness.pipeline.files import FileInputs

    # the profile's conventions, then each flag given (trec_eval's -M, -l, -J and -N: always; no profile sets them)
    if args.profile not in PROFILES:
        raise HarnessError(f"unknown profile {args.profile!r}", hint=f"use one of {', '.join(PROFILES)}")
    values: dict[str, object] = dict(PROFILES[args.profile])
    given = {key: getattr(args, key) for key in _CONVENTION_FLAGS if getattr(args, key) is not None}
    values.update(given)
    values.update({"relevance_level": args.l, "depth": args.M, "judged_only": args.J, "collection_size": args.N})
    conventions = Conventions.from_mapping(values)
    engine = Engine(name="dask", scheduler=args.scheduler) if getattr(args, "engine", None) == "dask" else Engine()
    return FileInputs(
        qrels=Path(args.qrels),
        runs=tuple((name, Path(path)) for name, path in _run_arguments(args.runs)),
        conventions=conventions,
        qrels_columns=_column_map(args.qrels_columns, QRELS_COLUMNS),
        run_columns=_column_map(args.run_columns, RUN_COLUMNS, optional=("sample",)),
        train=None if args.train is None else Path(args.train),
        train_columns=_column_map(args.train_columns, {"user": "user", "item": "item"}),
        items=None if args.items is None else Path(args.items),
        items_id=args.items_id,
        items_groups=tuple(c.strip() for c in args.items_groups.split(",") if c.strip()),
        engine=engine,
        qrels_format=args.qrels_format,
        segments=None if args.segments is None else Path(args.segments),
        segments_columns=_column_map(args.segments_columns, {"query": "query", "segment": "segment"}),
        profile=args.profile,
        given=frozenset(given),
    )


def _cmd_compare(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Evaluate the runs, then test every run against the first (or every pair) and print one row per pair x measure."""
    from harness.api import compare
    from harness.measures.parse import parse_measure, split_measures
    from harness.measures.registry import REGISTRY
    from harness.pipeline.files import evaluate_files
    from harness.report.format import as_ascii, format_ci, format_delta, format_p, format_value

    texts = [m for raw in (args.m or ["nDCG@10,AP,RR"]) for m in split_measures(raw)]
    measures = [parse_measure(m) for m in texts]
    if len(args.runs) < 2:
        raise HarnessError("compare needs at least two runs", hint="harness compare QRELS RUN_A RUN_B [RUN ...] -m nDCG@10")
    system = [m for m in measures if REGISTRY.definition(m).is_system(m)]
    if system:
        raise HarnessError(
            f"{system[0]} has one value per run, not per query: compare tests it in a config",
            hint="put the measure in a config and use harness run (it resamples users), or use harness eval for its value",
        )
    inputs = _file_inputs(args)
    evaluated = evaluate_files(inputs, tuple(measures), progress=_progress(args, err))
    tables = {run.label: run.per_query for run in evaluated}
    baseline = None if args.all_pairs else (args.baseline or evaluated[0].label)
    table = compare(
        tables,
        baseline,
        tests=tuple(args.tests.split(",")),
        primary=args.primary,
        resampling=args.resampling,
        correction=args.correction,
        family=args.family,
        alpha=args.alpha,
        permutations=args.permutations,
        resamples=args.permutations,
        seed=args.seed,
        dataset=args.dataset,
    )
    names = dict(zip([str(m) for m in measures], texts, strict=True))
    table.insert(1, "name", table["measure"].map(names))
    if args.format == "csv":
        out.write(for_csv(table).to_csv(index=False))
    elif args.format == "json":
        records = table.astype(object).where(table.notna(), None).to_dict("records")  # NaN -> null; full precision
        out.write(json.dumps(records, indent=1, default=lambda v: v.item() if hasattr(v, "item") else str(v)) + "\n")
    else:
        head = ("measure", "b vs a", "mean a", "mean b", "b - a", "95% CI", f"p ({args.correction})", "d_z", "")
        rows: list[tuple[str, ...]] = [head]
        for r in table.to_dict("records"):
            target = r.get("target", float("nan"))
            better = (
                abs(r["mean_b"] - target) < abs(r["mean_a"] - target)
                if target == target
                else (r["delta"] > 0) == bool(r["higher_is_better"])
            )
            mark = ("better" if better else "worse") if r["significant"] and r["delta"] != 0 else ""
            cells = (
                format_value(r["mean_a"]),
                format_value(r["mean_b"]),
                format_delta(r["delta"]),
                format_ci(r["ci_low"], r["ci_high"]),
                format_p(r["p_adj"]),
                format_value(r["effect_size"], digits=2),
            )
            rows.append(
                (
                    for_terminal(str(r["name"])),
                    for_terminal(f"{r['system_b']} vs {r['system_a']}"),
                    *(as_ascii(cell) for cell in cells),
                    mark,
                )
            )
        widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
        for row in rows:
            out.write(
                "  ".join(
                    cell.ljust(w) if i < 2 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths, strict=True))
                ).rstrip()
                + "\n"
            )
        out.write(
            f"{_tests_used(table['primary_test'].tolist(), args.primary)}, {args.permutations:,} permutations, seed "
            f"{args.seed}; {args.correction} correction ({args.family}); significant at alpha {args.alpha}. CI: paired t.\n"
        )
    return EXIT_OK


def _tests_used(used: list[str], primary: str) -> str:
    """Which test decided the comparisons: the primary one, or t on those where ``--resampling auto`` trusted it.

    >>> _tests_used(["t", "randomization", "t"], "randomization")
    'randomization test on 1, the t-test on 2 where it can be trusted (--resampling always: randomization on every one)'
    >>> _tests_used(["t"], "randomization")
    'the t-test, trusted on every comparison (--resampling always: randomization on every one)'
    """
    by_t = used.count("t")
    if not by_t or primary == "t":
        return f"{primary} test"
    rest = len(used) - by_t
    head = (
        f"{primary} test on {rest:,}, the t-test on {by_t:,} where it can be trusted"
        if rest
        else "the t-test, trusted on every comparison"
    )
    return f"{head} (--resampling always: {primary} on every one)"


def _cmd_eval(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from harness.evaluation.evaluator import missing_queries_note
    from harness.measures.registry import REGISTRY
    from harness.pipeline.files import evaluate_files

    items = _eval_items(args.m)
    measures = tuple(i.measure for i in items if i.measure is not None)
    inputs = _file_inputs(args)
    lengths = tuple(sorted({i.relstring_length for i in items if i.display.startswith("relstring")}))
    evaluated = evaluate_files(inputs, measures, relstring_lengths=lengths, progress=_progress(args, err))
    lines: list[str] = []
    records: list[dict[str, object]] = []
    for run in evaluated:
        label = run.label
        if run.judged_queries_missing and not args.c and inputs.conventions.queries.value == "qrels":
            err.write(f"harness: note: {missing_queries_note(run.judged_queries_missing, label)}\n")
        runid = run.given or run.name  # one run: the tag in the file, as trec_eval prints it
        if len(evaluated) > 1 and args.format == "trec" and not any(i.measure is None and i.display == "runid" for i in items):
            lines.append(f"{'runid':<22}\tall\t{label}\n")
        system = set(run.system_measures)  # one value per run: no per-query line
        per_query = run.per_query
        strings = run.relstrings
        index = {m: j for j, m in enumerate(per_query.measures)}
        counted = [per_query.queries_of(j) for j in range(len(per_query.measures))]  # each measure's own queries
        summary = {i.display: run.aggregates[i.measure] for i in items if i.measure is not None}
        if args.format == "trec":
            if args.q:
                for qi, qid in enumerate(per_query.query_ids):
                    for item in items:
                        if not item.per_query or item.measure in system:
                            continue
                        if item.measure is None:
                            relstring = strings[item.relstring_length][qi]
                            if relstring is not None:
                                lines.append(f"{item.display:<22}\t{qid}\t'{relstring}'\n")
                        elif counted[index[item.measure]][qi]:
                            value = per_query.values[qi, index[item.measure]]
                            lines.append(
                                f"{item.display:<22}\t{qid}\t{_format_value(value, REGISTRY.definition(item.measure).integer)}\n"
                            )
            for item in items:
                if not item.in_summary or (args.n and item.measure is not None):
                    continue
                if item.measure is None:
                    lines.append(f"{'runid':<22}\tall\t{runid if len(evaluated) == 1 else label}\n")
                else:
                    integer = REGISTRY.definition(item.measure).integer
                    lines.append(f"{item.display:<22}\tall\t{_format_value(summary[item.display], integer)}\n")
        else:
            for item in items:
                if item.measure is None:
                    continue
                if args.q and item.measure not in system:
                    j = index[item.measure]
                    column, ids = per_query.values[counted[j], j], per_query.query_ids[counted[j]]
                    for qid, value in zip(ids.tolist(), column.tolist(), strict=True):
                        records.append({"run": label, "query_id": qid, "measure": item.display, "value": value})
                if not args.n:
                    records.append({"run": label, "query_id": "all", "measure": item.display, "value": summary[item.display]})
    if args.format == "json":
        apart = inputs.conventions_apart(measures)  # the measures the profile's tool computes under its own
        own = {item.display: apart[item.measure] for item in items if item.measure in apart}
        head = {
            "harness": __version__,
            "conventions": inputs.conventions.as_dict(),
            **({"measure_conventions": own} if own else {}),
        }
        lines.append(json.dumps({**head, "results": records}, indent=1) + "\n")
    elif args.format == "csv":
        import csv
        import io

        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=["run", "query_id", "measure", "value"], lineterminator="\n")
        writer.writeheader()
        writer.writerows({key: for_csv_cell(value) for key, value in record.items()} for record in records)
        lines.append(buffer.getvalue())
    out.write("".join(lines))
    return EXIT_OK


def _progress(args: argparse.Namespace, err: TextIO):  # type: ignore[no-untyped-def]
    """Progress on stderr: bars on a terminal, heartbeat lines in a log; nothing with --quiet."""
    from harness.progress import Progress

    return Progress(None if getattr(args, "quiet", False) else err)


def _overrides(args: argparse.Namespace) -> dict[str, object]:
    """``--set KEY=VALUE``: any config key by its dotted path; VALUE is read as YAML (1000, true, [5, 10])."""
    import yaml

    out: dict[str, object] = {}
    for item in getattr(args, "set", None) or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise HarnessError(f"cannot read --set {item!r}", hint="write --set stats.permutations=1000 or --set ties=average")
        try:
            out[key] = yaml.safe_load(value)
        except yaml.YAMLError:
            out[key] = value
    return out


def _cmd_run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from harness.config.load import load_config
    from harness.pipeline import run_experiment

    overrides = _overrides(args)
    if args.engine is not None:
        overrides["engine.name"] = args.engine
    if args.scheduler is not None:
        overrides["engine.scheduler"] = args.scheduler
    experiment = load_config(args.config, overrides, args.output)
    for note in experiment.notes:
        err.write(f"harness: note: {for_terminal(note)}\n")
    if args.no_tracking:
        import dataclasses

        experiment = dataclasses.replace(experiment, tracking=dataclasses.replace(experiment.tracking, enabled=False))
    outcome = run_experiment(
        experiment, _progress(args, err), argv=["harness", *args.argv], tracking_process=args.tracking_process
    )
    for note in outcome.warnings:  # what the run found (the config's own notes were said above)
        if note not in experiment.notes:
            err.write(f"harness: note: {for_terminal(note)}\n")
    code = exit_code(outcome)
    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C while printing: the verdict's exit code still stands
        _print_run(args, experiment, outcome, code, out, err)
    return code


def _print_run(args: argparse.Namespace, experiment: Experiment, outcome: Outcome, code: int, out: TextIO, err: TextIO) -> None:
    for note in outcome.tracking_notes:
        err.write(f"harness: note: {for_terminal(note)}\n")
    if outcome.results_error:
        err.write(f"harness: error: {for_terminal(outcome.results_error)}\n")
    if outcome.tracking_error:
        err.write(f"harness: tracking failed: {for_terminal(outcome.tracking_error)}\n")
    if outcome.report_error:
        err.write(
            f"harness: report failed, results kept in {for_terminal(str(outcome.results_dir))}: "
            f"{for_terminal(outcome.report_error)}\n"
        )
    if args.format == "json":
        out.write(
            json.dumps(
                {
                    "results_dir": None if outcome.results_dir is None else str(outcome.results_dir),
                    "results_error": outcome.results_error,
                    "gate": outcome.gate,
                    "gate_verdict": outcome.gate_verdict,
                    "gate_line": outcome.gate_line,
                    "gate_errors": outcome.gate_errors,
                    "gate_controls": outcome.gate_controls,
                    "gate_alpha": outcome.gate_alpha,
                    "gate_approximate": outcome.gate_approximate,
                    "tracking": _stage("tracking", experiment.tracking.enabled, outcome, outcome.tracking_error),
                    "tracking_uri": outcome.tracking_uri,
                    "mlflow_run_id": outcome.mlflow_run_id,
                    "mlflow_url": outcome.mlflow_url,
                    "mlflow_runs_url": outcome.mlflow_runs_url,
                    "tracking_error": outcome.tracking_error,
                    "report": None if outcome.report is None else str(outcome.report),
                    "report_status": _stage("report", experiment.report.enabled, outcome, outcome.report_error),
                    "report_error": outcome.report_error,
                    "gate_production": outcome.gate_production,
                    "promotion": outcome.promotion,
                    "exit_code": code,
                }
            )
            + "\n"
        )
    else:
        if outcome.results_dir is not None:
            out.write(f"results: {for_terminal(str(outcome.results_dir))}\n")
        if outcome.report is not None:
            out.write(f"report:  {for_terminal(str(outcome.report))}\n")
        if outcome.mlflow_run_id is not None:
            out.write(f"mlflow:  run {outcome.mlflow_run_id} at {for_terminal(str(outcome.tracking_uri))}\n")
        if outcome.mlflow_url is not None:
            out.write(f"mlflow:  {for_terminal(outcome.mlflow_url)}\n")
        if outcome.mlflow_runs_url is not None:
            if outcome.mlflow_url is None and outcome.tracking_uri is not None:  # a local store: no server serves it yet
                from harness.records.mlflow_store import ui_command

                out.write(f"mlflow:  start the UI with: {for_terminal(ui_command(outcome.tracking_uri))}\n")
            out.write(f"mlflow:  runs and verdicts: {for_terminal(outcome.mlflow_runs_url)}\n")
        decision = outcome.decision
        if decision is not None:  # the headline first, then each guard's numbers; the reasoning on --verbose
            out.write(f"{for_terminal(decision.headline())}\n")
            for row in decision.guard_table():
                out.write(f"  {for_terminal(row)}\n")
            for warning in (*decision.seed_warnings, *(f"{g.guard}: {g.reason}" for g in decision.warnings)):
                out.write(f"  WARNING: {for_terminal(warning)}\n")
            if args.verbose:
                for g in decision.guards:
                    out.write(f"  {g.verdict} {for_terminal(g.guard)}: {for_terminal(g.reason)}\n")
                out.write(f"  {for_terminal(decision.errors)}\n")
            else:
                out.write("  why, and the error the verdict controls: harness run --verbose, gate.json or the report\n")
        if outcome.gate_production is not None:
            out.write(f"  production's values reused from {for_terminal(outcome.gate_production)}\n")
        if outcome.promotion is not None:
            out.write(f"promotion: {for_terminal(outcome.promotion)}\n")


def _stage(name: str, enabled: bool, outcome: Outcome, error: str | None) -> str:
    """A later stage's status in ``--json``: disabled, skipped (the results were not written, or the run was
    interrupted before it ended), failed or ok."""
    if not enabled:
        return "disabled"
    if outcome.results_dir is None or name in outcome.cut_short:
        return "skipped"
    return "failed" if error else "ok"


def exit_code(outcome: Outcome) -> int:
    """The gate's verdict first (FAIL 3, INCONCLUSIVE 6), whatever failed or was interrupted after it; then an
    interruption (130); then results that could not be written (7); then tracking (4); then the report (5); else 0."""
    if outcome.gate == "FAIL":
        return EXIT_GATE_FAILED
    if outcome.gate == "INCONCLUSIVE":
        return EXIT_GATE_INCONCLUSIVE
    if outcome.interrupted:
        return EXIT_INTERRUPTED
    if outcome.results_error:
        return EXIT_RESULTS_NOT_WRITTEN
    if outcome.tracking_error:
        return EXIT_TRACKING_FAILED
    if outcome.report_error:
        return EXIT_REPORT_FAILED
    return EXIT_OK


def _cmd_validate(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from harness.config.load import load_config
    from harness.pipeline import validate_experiment

    experiment = load_config(args.config, _overrides(args))
    for note in experiment.notes:
        err.write(f"harness: note: {for_terminal(note)}\n")
    report = validate_experiment(experiment, _progress(args, err))
    if args.format == "json":
        out.write(json.dumps(report, indent=1) + "\n")
        return EXIT_OK
    name = for_terminal
    out.write(
        f"{name(args.config)}: OK: experiment {experiment.name!r}, {len(experiment.systems)} systems, "
        f"{report['measures']} measures\n"
    )
    out.write(f"  measures: {', '.join(report['measure_names'])}\n")
    for dataset in report["datasets"]:
        out.write(f"  dataset {name(dataset['name'])}: {dataset['judgments']} judgments over {dataset['queries']} queries\n")
        if "judge" in dataset:  # a judged dataset: the judgments are the judge's, and people's correct them
            judge = dataset["judge"]
            out.write(
                f"    the judge {name(judge['name'])} labels them; people judged {judge['people_queries']} of the queries "
                f"(a {judge['sample']} sample), which correct the judge's values\n"
            )
        for run in dataset["runs"]:
            judged = run["judged_queries_retrieved"]
            who = name(run["system"]) + (f" [{name(run['seed'])}]" if "seed" in run else "")
            if "reused_from" in run:
                out.write(f"    {who}: {run['queries']} queries reused from {name(run['reused_from'])}\n")
                continue
            out.write(f"    {who}: {run['rows']} rows, {run['queries']} queries, {judged} of them judged\n")
    return EXIT_OK


def _cmd_track(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from harness.pipeline.folders import track_folder

    tracked = track_folder(args.results_dir, args.uri, args.experiment)
    for note in tracked.notes:
        err.write(f"harness: note: {for_terminal(note)}\n")
    if args.format == "json":
        out.write(
            json.dumps(
                {
                    "tracking_uri": tracked.tracking_uri,
                    "mlflow_run_id": tracked.run_id,
                    "child_runs": tracked.child_runs,
                    "already_logged": tracked.already,
                }
            )
            + "\n"
        )
    else:
        already = " (logged before, completely: nothing added)" if tracked.already else ""
        out.write(f"mlflow: run {tracked.run_id} at {for_terminal(tracked.tracking_uri)}{already}\n")
        if tracked.url is not None:
            out.write(f"mlflow: {for_terminal(tracked.url)}\n")
    return EXIT_OK


def _cmd_promote(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from harness.pipeline.folders import promote_folder

    tracked, promotion = promote_folder(args.results_dir, args.uri, args.experiment)
    if args.format == "json":
        out.write(json.dumps({"mlflow_run_id": tracked.run_id, "moved": promotion.moved, "promotion": promotion.line}) + "\n")
    else:
        out.write(f"promotion: {for_terminal(promotion.line)} (decided by MLflow run {tracked.run_id})\n")
    return EXIT_OK if promotion.moved else 1


def _cmd_report(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from harness.pipeline.folders import report_folder

    path, verdict = report_folder(args.results_dir)
    out.write(f"report:  {for_terminal(str(path))}\n")
    if verdict is not None:
        out.write(for_terminal(verdict.line()) + "\n")
        return {"PASS": EXIT_OK, "FAIL": EXIT_GATE_FAILED}.get(verdict.outcome, EXIT_GATE_INCONCLUSIVE)
    return EXIT_OK


def _cmd_plan(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from harness.api import plan as api_plan
    from harness.pipeline import plan_from_results

    sided: Literal["one", "two"] = "two" if args.two_sided else "one"
    if args.gate:
        from harness.pipeline.plan import gate_plan_lines

        if args.results_dir is None:
            raise HarnessError("--gate plans a results folder's gate", hint="harness plan RESULTS_DIR --gate")
        lines = gate_plan_lines(args.results_dir)
        out.write(json.dumps({"lines": lines}) + "\n" if args.format == "json" else "\n".join(lines) + "\n")
        return EXIT_OK
    if args.margin is None:
        raise HarnessError("name the distance to resolve", hint="--margin 0.01 (or --gate for a folder's whole gate)")
    if args.seed_sd is not None:
        return _plan_versions(args, out)
    if (args.results_dir is None) == (args.sd is None):
        raise HarnessError(
            "give either a results folder or --sd, not both or neither",
            hint="harness plan RESULTS_DIR --measure nDCG@10 --margin 0.01, or harness plan --sd 0.2 --margin 0.01",
        )
    if args.results_dir is not None:
        if args.measure is None:
            raise HarnessError("name the measure whose sd to estimate", hint="--measure nDCG@10")
        from harness.pipeline.plan import plan_seeds_from_results, seeds_of
        from harness.records.store import read_results

        saved = read_results(args.results_dir)  # read once, for both plans
        where = (saved, args.measure, args.margin, args.systems, args.dataset, args.segment, args.alpha, args.power)
        if seeds_of(saved, args.systems, args.dataset) and not args.two_sided:  # versions: seeds and users
            seeded = plan_seeds_from_results(*where, tuple(args.seeds or (2, 3, 5, 10)))
            lines = seeded.lines(args.margin, args.alpha, args.power)
            out.write(json.dumps(seeded.to_dict()) + "\n" if args.format == "json" else "\n".join(lines) + "\n")
            return EXIT_OK
        plan = plan_from_results(*where, sided, args.min_affected)
    else:
        plan = api_plan(
            margin=args.margin,
            sd=args.sd,
            measure=args.measure,
            alpha=args.alpha,
            power=args.power,
            sided=sided,
            min_affected=args.min_affected,
        )
    out.write(json.dumps(plan.to_dict()) + "\n" if args.format == "json" else plan.line() + "\n")
    return EXIT_OK


def _plan_versions(args: argparse.Namespace, out: TextIO) -> int:
    """``harness plan --seed-sd S --interaction-sd I --residual-sd E --margin M``: users for each number of seeds."""
    from harness.stats.seeds import version_plan

    parts = {"--seed-sd": args.seed_sd, "--interaction-sd": args.interaction_sd, "--residual-sd": args.residual_sd}
    missing = [flag for flag, value in parts.items() if value is None]
    if missing:
        raise HarnessError(
            f"a version plan needs {', '.join(missing)} too",
            hint="--seed-sd 0.005 --interaction-sd 0.08 "
            "--residual-sd 0.05 (a run's offset, the system x user and the residual sd)",
        )
    if any(not (math.isfinite(v) and v >= 0) for v in parts.values()) or not args.margin > 0:
        raise HarnessError("the sds must be numbers >= 0 and the margin above 0", hint="--seed-sd 0.005 --margin 0.01")
    seeds = tuple(args.seeds or (2, 3, 5, 10))
    if any(r < 2 for r in seeds):
        raise HarnessError("a version plan needs 2 or more runs per system", hint="--seeds 3 5 10")
    plans = version_plan(args.margin, args.seed_sd, args.interaction_sd, args.residual_sd, args.alpha, args.power, seeds)
    if args.format == "json":
        out.write(json.dumps([dataclasses.asdict(p) for p in plans]) + "\n")
        return EXIT_OK
    out.write(
        f"users to resolve {args.margin:g} between two versions at alpha {args.alpha:g} with {args.power:.0%} power "
        f"(seed sd {args.seed_sd:g}, system x user sd {args.interaction_sd:g}, residual sd {args.residual_sd:g}):\n"
    )
    for p in plans:
        if p.users is None:
            out.write(
                f"  {p.seeds} runs each: no number of users (at most {p.power_at:.0%} power: the seeds' variance "
                "alone is too large; more seeds, not more users)\n"
            )
        else:
            out.write(f"  {p.seeds} runs each: {p.users:,} users\n")
    return EXIT_OK


def _cmd_exposure(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Expected exposure of a stochastic run (TREC Fair Ranking): per query with -q, and the mean."""
    from harness.evaluation.exposure import ExposureSettings
    from harness.pipeline.files import exposure_files

    settings = ExposureSettings(
        model=args.model,
        p=args.p,
        u=args.u,
        complete=args.complete,
        groups=args.groups,
        normalized=args.normalized,
        compat=args.compat,
    )
    table = exposure_files(Path(args.qrels), Path(args.run), settings)
    measures = ["EE-L", "EE-D", "EE-R"]
    if args.format == "json":
        record = {
            "settings": dataclasses.asdict(settings),
            "mean": {m: float(table[m].mean()) for m in measures},
            "per_query": table.to_dict("records") if args.per_query else None,
        }
        out.write(json.dumps(record, indent=1) + "\n")
        return EXIT_OK
    if args.per_query:
        for row in table.to_dict("records"):
            for m in measures:
                out.write(f"{m:<8}\t{row['query_id']}\t{row[m]:.6f}\n")
    for m in measures:
        out.write(f"{m:<8}\tall\t{table[m].mean():.6f}\n")
    return EXIT_OK


def _cmd_explain(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Each peer's value of the measures, and what each of its conventions changes; or, with --match, the settings that
    give a value."""
    from harness.measures.peers import PEERS
    from harness.pipeline.files import explain_files

    # the names eval takes: trec_eval's (ndcg_cut.10, 11pt_avg) and ir_measures' (nDCG@10)
    measures = tuple(dict.fromkeys(i.measure for i in _eval_items(args.m) if i.measure is not None)) if args.m else ()
    if not measures:
        raise HarnessError("explain needs a measure", hint="harness explain QRELS RUN -m nDCG@10")
    if args.tol < 0:
        raise HarnessError(f"--tol must be 0 or more, got {args.tol}", hint="--tol 0.00005 (half a unit of the fourth decimal)")
    found = explain_files(_file_inputs(args), measures, args.match, args.tol, progress=_progress(args, err))
    if args.match is not None:
        matches = [
            {
                "conventions": m.settings,
                "changes": m.changes,
                "value": m.value,
                "distance": m.distance,
                "profile": m.profile,
                "note": PEERS[m.profile].caveat if m.profile in PEERS else "",
            }
            for m in found
        ]
        within = bool(found) and found[0].distance <= args.tol
        if args.format == "json":
            out.write(
                json.dumps(
                    {
                        "measure": str(measures[0]),
                        "target": args.match,
                        "tol": args.tol,
                        "within_tol": within,
                        "matches": matches,
                    },
                    indent=1,
                )
                + "\n"
            )
            return EXIT_OK
        head = (
            f"{len(found)} combinations give {measures[0]} = {args.match} within {args.tol:g}"
            if within
            else (f"no combination gives {measures[0]} = {args.match} within {args.tol:g}; the nearest")
        )
        order = "the fewest changes from harness's defaults first" if within else "nearest first"
        out.write(f"{head} ({order}; combinations with equal values grouped):\n")
        groups: dict[float, list[Any]] = {}
        for m in found:  # combinations with the same value: settings that do not matter on these files
            groups.setdefault(m.value, []).append(m)
        for value, group in list(groups.items())[: args.limit]:
            changes = ", ".join(f"{k}={v}" for k, v in group[0].changes.items()) or "harness's defaults"
            profiles = sorted({m.profile for m in group if m.profile})
            named = f"  [profile {', '.join(profiles)}]" if profiles else ""
            more = f"  (+{len(group) - 1} combinations with the same value)" if len(group) > 1 else ""
            out.write(f"  {value:.6f}  {changes}{named}{more}\n")
            for name in profiles if group[0].changes else ():  # what a tool's settings still miss, as explain says
                if PEERS[name].caveat:
                    out.write(f"      note ({name}): {PEERS[name].caveat}\n")
        if len(groups) > args.limit:
            out.write(f"  ... {len(groups) - args.limit} more values (--limit N, or --format json for every combination)\n")
        return EXIT_OK
    if args.format == "json":
        import pandas as pd

        frame = pd.concat([e.to_frame() for e in found], ignore_index=True)
        out.write(frame.to_json(orient="records", indent=1) + "\n")
        return EXIT_OK
    for explanation in found:
        over = f"over {explanation.queries} queries" if explanation.queries else "one value for the run"
        out.write(f"{explanation.measure} {over}: harness {explanation.value:.4f}\n")
        for p in explanation.peers:
            if p.absent:
                continue  # listed once below
            if p.value is None:
                out.write(f"  {p.peer.tool:<32} {'-':>8}  not reproduced: {p.note}\n")
                continue
            settings = ", ".join(f"{k}={v}" for k, v in p.differences.items()) or "harness's conventions"
            out.write(f"  {p.peer.tool:<32} {p.value:8.4f}  {settings}\n")
            for e in p.effects[1:] if len(p.effects) > 2 else ():
                out.write(f"  {'':<32} {'':>8}    {e.setting} alone: {_delta(e.delta)}{_on(e.queries_affected)}\n")
            if len(p.effects) == 2:
                e = p.effects[1]
                out.write(f"  {'':<32} {'':>8}    {_delta(e.delta)}{_on(e.queries_affected)}\n")
            if p.note:
                out.write(f"  {'':<32} {'':>8}    note: {p.note}\n")
        absent = [p.peer.tool for p in explanation.peers if p.absent]
        if absent:
            out.write(f"  no {explanation.measure.name} in: {', '.join(absent)}\n")
    return EXIT_OK


def _on(queries: int | None) -> str:
    """How many queries a setting moves; nothing for a measure with one value per run."""
    return "" if queries is None else f" on {queries} queries"


def _delta(value: float) -> str:
    """A change of a mean: four decimals, or two significant digits when it is smaller than they show."""
    return f"{value:+.1e}" if value != 0 and abs(value) < 5e-5 else f"{value:+.4f}"


def _cmd_measures(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from harness.measures.definition import FAMILIES
    from harness.measures.parse import lookup
    from harness.measures.peers import PEER_NAMES, PROFILES, option_users
    from harness.measures.reference import aggregate_text, better_text, elsewhere_text, name_text, param_text
    from harness.measures.registry import REGISTRY

    for family in FAMILIES:
        out.write(f"{family.upper()}\n")
        for definition in (d for d in REGISTRY if d.family == family):
            params = ", ".join(param_text(p) for p in definition.params) or "-"
            lines = (
                f"{name_text(definition)}",
                f"    {definition.description}",
                f"    params: {params}; aggregate: {aggregate_text(definition)}; better: {better_text(definition)}",
                f"    elsewhere: {elsewhere_text(definition)}" if elsewhere_text(definition) else "",
            )
            out.write("".join(line.replace("`", "") + "\n" for line in lines if line))
        out.write("\n")
    out.write(
        "\nConventions (the first value is harness's default; in brackets, the tools that use each value; "
        "profile: NAME or harness explain applies a tool's):\n"
    )
    options: dict[str, list[str]] = {}
    for option, value, users in option_users():
        options.setdefault(option, []).append(f"{value} ({', '.join(users)})" if users else value)
    for option, values in options.items():
        out.write(f"{option}\n    {' | '.join(values)}\n")
    out.write(f"\nProfiles (profile: NAME in a config, --profile NAME): {', '.join(PROFILES)}\n")
    out.write(
        "\nOther tools' names, read as the measure that reproduces them (the tool's profile gives its "
        "conventions); MLflow keys harness logs (ndcg_at_10, p_rel_2_at_5) are read back too:\n"
    )
    for written, (ours, tool) in PEER_NAMES.items():
        cut = "@k" if tool != "msrec" and lookup(ours.partition("(")[0]).cutoff != "none" else ""
        out.write(f"  {written}{cut} ({tool}) = {ours}{cut}\n")
    return EXIT_OK


# the conventions a flag of eval, compare and explain names (--ties ...), over the --profile's
_CONVENTION_FLAGS = (
    "ties",
    "scores",
    "queries",
    "duplicates",
    "negative_labels",
    "ideal_from",
    "ap_denominator",
    "short_lists",
    "graded_below_level",
    "iprec_cut",
)


def _input_arguments(parser: argparse.ArgumentParser) -> None:
    """The conventions and column mappings that eval and compare share."""
    parser.add_argument(
        "--profile",
        default="trec_eval",
        metavar="NAME",
        help="one tool's conventions at once (default trec_eval, every judged query counted as -c; "
        "pytrec_eval, ranx, msrec, recbole, ...: harness measures lists them); each convention "
        "flag below overrides it",
    )
    parser.add_argument(
        "--ties", default=None, help="trec_eval | input_order | average | optimistic | pessimistic | docno_ascending"
    )
    parser.add_argument(
        "--scores",
        default=None,
        help="float32 (ranked as C floats, as trec_eval reads them: scores one float apart tie) | "
        "float64 (as written: ranx, scikit-learn)",
    )
    parser.add_argument(
        "--queries",
        default=None,
        help="qrels (like -c) | intersection (trec_eval without -c) | run | relevant (with a relevant judgment)",
    )
    parser.add_argument("--duplicates", default=None, help="error | first | max")
    parser.add_argument("--negative-labels", default=None, help="unjudged | nonrelevant | error")
    parser.add_argument("--ideal-from", default=None, help="judgments | run")
    parser.add_argument("--ap-denominator", default=None, help="R (trec_eval) | min_R_k (AP@k over min(R, k): RecBole)")
    parser.add_argument(
        "--short-lists",
        default=None,
        help="pad (a list shorter than k is padded: P@k over k, trec_eval) | truncate (k is its length: MLflow)",
    )
    parser.add_argument(
        "--graded-below-level",
        default=None,
        help="keep (-l changes binary measures only: trec_eval) | zero (graded gains start at the level: ranx)",
    )
    parser.add_argument(
        "--iprec-cut",
        default=None,
        help="round (recall r at the lround(r R)-th relevant: trec_eval 10) | trec_eval9 ((long)(r R + 0.9): pytrec_eval)",
    )
    parser.add_argument("--qrels-columns", default=None, help="for tables: query=COL,doc=COL,relevance=COL")
    parser.add_argument(
        "--qrels-format",
        default=None,
        choices=("ndeval",),
        help="ndeval: the qrels are subtopic judgments, 'query subtopic doc judgment' (alpha_nDCG, ...)",
    )
    parser.add_argument(
        "--run-columns", default=None, help="for tables: query=COL,doc=COL,score=COL (and sample=COL: a stochastic run's sample)"
    )
    parser.add_argument("--train", default=None, metavar="PATH", help="training interactions (beyond-accuracy measures)")
    parser.add_argument("--train-columns", default=None, help="query=COL,doc=COL or user=COL,item=COL (default user, item)")
    parser.add_argument(
        "--items",
        default=None,
        metavar="PATH",
        help="item catalogue; its other columns are numeric features or text labels that group items",
    )
    parser.add_argument("--items-id", default="item", metavar="COL", help="the catalogue's id column (default item)")
    parser.add_argument(
        "--items-groups",
        default="",
        metavar="COL[,COL]",
        help="catalogue columns that group items (REO(group=COL), ...): read as labels, never features; "
        "a column of text only is one anyway",
    )
    parser.add_argument("--segments", default=None, metavar="PATH", help="each user's group, a table (UserMAD)")
    parser.add_argument("--segments-columns", default=None, help="query=COL (or user=COL),segment=COL (default query, segment)")


def _depth_and_level_flags(parser: argparse.ArgumentParser) -> None:
    """trec_eval's -M, -l, -J and -N, as compare and explain take them."""
    parser.add_argument("-M", type=int, default=None, metavar="N", help="keep only the first N documents of each query")
    parser.add_argument("-l", type=int, default=1, metavar="N", help="relevant iff label >= N (default 1)")
    parser.add_argument("-J", action="store_true", help="judged documents only")
    parser.add_argument("-N", type=int, default=0, metavar="N", help="number of documents in the collection (utility)")


def _engine_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--engine",
        choices=("local", "dask"),
        default=None,
        help="where runs are evaluated: this machine, or a Dask cluster (harness[dask])",
    )
    parser.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDRESS",
        help="with --engine dask: tcp://host:8786; default an active Client, else a LocalCluster",
    )


def _eval_command(sub: Any) -> None:
    """``harness eval``: evaluate runs against judgments, as trec_eval does."""
    ev = sub.add_parser("eval", help="evaluate runs against qrels, trec_eval style")
    ev.add_argument("qrels", help="qrels file (TREC, or CSV/TSV/Parquet/JSONL with --qrels-columns)")
    ev.add_argument("runs", nargs="+", metavar="run", help="run file(s), each labelled by its file name or as NAME=path")
    ev.add_argument(
        "-m",
        action="append",
        default=[],
        metavar="MEASURE",
        help="measure: trec_eval names (P.5,10  ndcg_cut.10  all_trec) or ir_measures names (nDCG@10,P@5); repeatable",
    )
    ev.add_argument("-q", action="store_true", help="print per-query values as well as the summary")
    ev.add_argument(
        "-c", action="store_true", help="average over every judged query (harness always does; kept for trec_eval scripts)"
    )
    ev.add_argument("-M", type=int, default=None, metavar="N", help="keep only the first N documents of each query")
    ev.add_argument("-l", type=int, default=1, metavar="N", help="relevant iff label >= N (default 1)")
    ev.add_argument(
        "-J",
        action="store_true",
        help="judged documents only: drop retrieved documents without a judgment (label >= 0) before any measure",
    )
    ev.add_argument("-N", type=int, default=0, metavar="N", help="number of documents in the collection (utility; default 0)")
    ev.add_argument("-n", action="store_true", help="no summary: per-query values only (with -q)")
    _machine_output(ev, ("trec", "csv", "json"))
    _input_arguments(ev)
    _engine_arguments(ev)
    ev.set_defaults(handler=_cmd_eval)


def _compare_command(sub: Any) -> None:
    """``harness compare``: paired tests between runs."""
    cp = sub.add_parser("compare", help="paired significance tests between runs, from the command line")
    cp.add_argument("qrels", help="qrels file (TREC, or CSV/TSV/Parquet/JSONL with --qrels-columns)")
    cp.add_argument(
        "runs", nargs="+", metavar="run", help="two run files or more, each labelled by its file name or as NAME=path"
    )
    cp.add_argument(
        "-m", action="append", default=[], metavar="MEASURES", help="ir_measures names, comma lists (default nDCG@10,AP,RR)"
    )
    cp.add_argument("-c", action="store_true", help="accepted for trec_eval scripts (every judged query always counts)")
    _depth_and_level_flags(cp)
    cp.add_argument("--baseline", default=None, help="the run the others are compared with (default: the first)")
    cp.add_argument("--all-pairs", action="store_true", help="compare every pair instead of each run with the baseline")
    cp.add_argument("--tests", default=",".join(DEFAULT_TESTS), help="comma list (default: all four)")
    cp.add_argument("--primary", default=DEFAULT_PRIMARY, help="the test whose corrected p decides significance")
    cp.add_argument(
        "--resampling",
        default=DEFAULT_RESAMPLING,
        choices=("auto", "always"),
        help="auto: the randomization test and the bootstrap only where the t-test cannot be trusted (t decides the "
        "others); always: on every comparison (default auto)",
    )
    cp.add_argument("--correction", default=DEFAULT_CORRECTION, choices=("holm", "bonferroni", "bh", "none"))
    cp.add_argument("--family", default=DEFAULT_FAMILY, choices=("per_measure", "grid"))
    cp.add_argument("--alpha", type=_alpha, default=DEFAULT_ALPHA)
    cp.add_argument(
        "--permutations",
        type=int,
        default=DEFAULT_PERMUTATIONS,
        help=f"permutations and bootstrap resamples (default {DEFAULT_PERMUTATIONS})",
    )
    cp.add_argument("--seed", type=int, default=DEFAULT_SEED)
    cp.add_argument(
        "--dataset",
        default=DEFAULT_DATASET,
        help="the data's name, as in a config: the random draws are keyed by it, so the same seed and name "
        f"give harness run's p-values (default {DEFAULT_DATASET!r}, a config's one unnamed dataset)",
    )
    _machine_output(cp, ("table", "csv", "json"))
    _input_arguments(cp)
    cp.set_defaults(handler=_cmd_compare)


def _run_command(sub: Any) -> None:
    """``harness run``: run an experiment config."""
    rn = sub.add_parser(
        "run",
        help="run an experiment config: evaluate, compare, track, report",
        epilog=EXIT_CODES,
        description="Evaluate, compare, decide the release gate, write the results folder, track it "
        "in MLflow and render the report; --format json prints one object (results_dir, "
        "report, tracking_uri, mlflow_run_id, gate).",
    )
    rn.add_argument("config", help="experiment YAML file")
    _machine_output(rn)
    rn.add_argument("--output", default=None, help="results root (overrides the config's output)")
    rn.add_argument("--no-tracking", action="store_true", help="do not log to MLflow")
    rn.add_argument(
        "--verbose", action="store_true", help="each guard's reasoning and the error the verdict controls, after its table"
    )
    rn.add_argument(
        "--set",
        action="append",
        metavar="KEY=VALUE",
        help="override any config key: --set stats.permutations=1000, --set ties=average",
    )
    _engine_arguments(rn)
    rn.set_defaults(handler=_cmd_run)


def _validate_command(sub: Any) -> None:
    """``harness validate``: check a config without computing."""
    va = sub.add_parser("validate", help="check a config and its files without computing", epilog=EXIT_CODES)
    va.add_argument("config")
    _machine_output(va)
    va.add_argument("--set", action="append", metavar="KEY=VALUE", help="override any config key, as for run")
    va.set_defaults(handler=_cmd_validate)


def _track_command(sub: Any) -> None:
    """``harness track``: log a results folder to MLflow."""
    tr = sub.add_parser("track", help="log a saved results folder to MLflow (e.g. after a server outage)", epilog=EXIT_CODES)
    tr.add_argument("results_dir")
    tr.add_argument(
        "--uri",
        default=None,
        help="tracking URI (default: MLFLOW_TRACKING_URI, else the local store of the folder's experiment; "
        "never an address read from the folder)",
    )
    tr.add_argument("--experiment", default=None, help="MLflow experiment name (default: the config's)")
    _machine_output(tr)
    tr.set_defaults(handler=_cmd_track)


def _promote_command(sub: Any) -> None:
    """``harness promote``: promote a gated folder's candidate."""
    pr = sub.add_parser(
        "promote",
        help="promote a gated results folder's candidate: its gate computed again from its per-query values first",
        description="Compute the folder's release gate again from its per-query values; refuse when gate.json says "
        "otherwise or its look is not among the gate's recorded looks; log the folder (once) and, on PASS, move "
        "release.promote's alias under the store's lock. Exit 0 when the alias moved, 1 when it did not (the line says "
        "why), 2 when the folder is refused.",
        epilog=EXIT_CODES,
    )
    pr.add_argument("results_dir")
    pr.add_argument("--uri", default=None, help="tracking URI and registry (default: MLFLOW_TRACKING_URI, else the local store)")
    pr.add_argument("--experiment", default=None, help="MLflow experiment name (default: the config's)")
    _machine_output(pr)
    pr.set_defaults(handler=_cmd_promote)


def _report_command(sub: Any) -> None:
    """``harness report``: render a folder's report again."""
    rp = sub.add_parser(
        "report", help="render (again) the HTML report and Markdown summary of a results folder", epilog=EXIT_CODES
    )
    rp.add_argument("results_dir")
    rp.add_argument("--quiet", action="store_true", help="no progress on stderr")
    rp.set_defaults(handler=_cmd_report)


def _plan_command(sub: Any) -> None:
    """``harness plan``: the users a decision needs."""
    pl = sub.add_parser(
        "plan",
        help="how many users a guard or comparison needs (Sakai's topic-set-size design)",
        description="The users a paired t-test needs to resolve a distance --margin with --power: from "
        "the per-user sd of a results folder (production against candidate, or --systems "
        "A B) or from --sd.",
    )
    pl.add_argument("results_dir", nargs="?", default=None, help="a results folder to estimate the sd from")
    pl.add_argument("--measure", help="the measure (its canonical name or the report's label)")
    pl.add_argument("--margin", type=float, default=None, help="the distance to resolve, in the measure's units")
    pl.add_argument(
        "--seed-sd",
        type=float,
        default=None,
        help="a version comparison over seeds: the sd of a run's mean between seeds (with --interaction-sd "
        "and --residual-sd): the users needed for each number of runs per system",
    )
    pl.add_argument("--interaction-sd", type=float, default=None, help="the system x user sd (with --seed-sd)")
    pl.add_argument("--residual-sd", type=float, default=None, help="a run's per-user residual sd (with --seed-sd)")
    pl.add_argument("--seeds", type=int, nargs="+", default=None, help="the numbers of runs per system to plan for")
    pl.add_argument(
        "--gate",
        action="store_true",
        help="the users the folder's whole gate needs (all its guards) to decide an equal candidate",
    )
    pl.add_argument("--sd", type=float, default=None, help="the per-user sd of the differences (instead of a folder)")
    pl.add_argument(
        "--min-affected",
        type=float,
        default=None,
        help="the gate's release.min_affected, for the plan under bound: auto (default: the folder's gate's, else 0.01)",
    )
    pl.add_argument("--power", type=float, default=DEFAULT_POWER)
    pl.add_argument("--alpha", type=_alpha, default=DEFAULT_ALPHA)
    pl.add_argument("--systems", nargs=2, metavar=("A", "B"), default=None, help="two systems (default: the gate's)")
    pl.add_argument("--dataset", default=None)
    pl.add_argument("--segment", default="all")
    pl.add_argument("--two-sided", action="store_true", help="a comparison's test, rather than a guard's one-sided one")
    _machine_output(pl, ("text", "json"))
    pl.set_defaults(handler=_cmd_plan)


def _exposure_command(sub: Any) -> None:
    """``harness exposure``: expected exposure of a stochastic run."""
    ex = sub.add_parser("exposure", help="expected exposure of a stochastic run (EE-L, EE-D, EE-R; TREC Fair Ranking)")
    ex.add_argument("qrels", help="expeval judgments: 'query groups doc relevance' lines (groups as g1|g2)")
    ex.add_argument("run", help="stochastic run: 'query sample doc rank score tag' lines, one ranking per sample")
    ex.add_argument("--model", default="gerr", choices=("gerr", "rbp"), help="user model (default gerr)")
    ex.add_argument("-p", type=float, default=0.5, help="patience (default 0.5)")
    ex.add_argument("-u", type=float, default=0.5, help="gerr: chance a relevant document satisfies (default 0.5)")
    ex.add_argument("--groups", action="store_true", help="exposure per group, not per document (expeval -G)")
    ex.add_argument("--complete", action="store_true", help="every judged document in the target (expeval -C)")
    ex.add_argument("--normalized", action="store_true", help="expeval's normalisation (default: raw, expeval -U)")
    ex.add_argument(
        "--compat",
        default="harness",
        choices=("harness", "expeval"),
        help="expeval: its values for a query missing from the run, and inf for an all-zero exposure",
    )
    ex.add_argument("-q", "--per-query", action="store_true", help="every query's values too")
    _machine_output(ex, ("text", "json"))
    ex.set_defaults(handler=_cmd_exposure)


def _explain_command(sub: Any) -> None:
    """``harness explain``: why a number differs from another tool's."""
    xp = sub.add_parser(
        "explain",
        help="why a number differs from another tool's: each peer's value, and what each of "
        "its conventions changes; --match finds the settings that give a value",
    )
    xp.add_argument("qrels", help="qrels file (TREC, or CSV/TSV/Parquet/JSONL with --qrels-columns)")
    xp.add_argument("runs", nargs=1, metavar="run", help="the run file")
    xp.add_argument("-m", action="append", default=[], metavar="MEASURE", help="measure(s): nDCG@10, AP@10, ...; repeatable")
    _depth_and_level_flags(xp)
    xp.add_argument(
        "--match",
        type=float,
        default=None,
        metavar="VALUE",
        help="search the conventions for the combinations that give VALUE (a number from another tool)",
    )
    xp.add_argument(
        "--tol", type=float, default=5e-5, help="how close a match must be (default 5e-5: a value printed to 4 decimals)"
    )
    xp.add_argument("--limit", type=int, default=20, help="matches printed (default 20; --format json lists all)")
    _machine_output(xp, ("table", "json"))
    _input_arguments(xp)
    xp.set_defaults(handler=_cmd_explain)


def _agree_command(sub: Any) -> None:
    """``harness agree``: a judge's labels against people's, before the judge is trusted."""
    ag = sub.add_parser(
        "agree",
        help="how far a model judge's labels agree with people's (kappa, alpha, confusion), and with runs each "
        "system's bias under the judge and the ranking each labelling gives",
    )
    ag.add_argument("human", help="people's qrels (TREC, or CSV/TSV/Parquet/JSONL)")
    ag.add_argument("judge", help="the judge's qrels: every query people judged, labelled")
    ag.add_argument("runs", nargs="*", metavar="run", help="runs to compare under each labelling (NAME=path or path)")
    ag.add_argument("-m", action="append", default=[], metavar="MEASURES", help="measures for the runs, comma lists")
    ag.add_argument("-l", type=int, default=1, metavar="N", help="relevant iff label >= N (default 1)")
    ag.add_argument(
        "--judge-grades",
        default=None,
        metavar="J=H,...",
        help="the judge's grades on people's scale (3=2: the judge's 3 is people's 2)",
    )
    ag.add_argument("--alpha", type=_alpha, default=DEFAULT_ALPHA, help="the bias intervals' and pairwise tests' level")
    ag.add_argument(
        "--strata",
        default=None,
        metavar="PATH",
        help="a table of each query's stratum (columns query, stratum), when people's queries were drawn at random "
        "within strata (default: a random sample of all the queries)",
    )
    _machine_output(ag, ("table", "json"))
    ag.set_defaults(handler=_cmd_agree)


def _grade_map(text: str | None) -> dict[float, float]:
    """``3=2,2=1``: the judge's grade = people's.

    >>> _grade_map("3=2, 2=1")
    {3.0: 2.0, 2.0: 1.0}
    """
    out: dict[float, float] = {}
    for item in (text or "").split(","):
        if not item.strip():
            continue
        left, sep, right = item.partition("=")
        try:
            out[float(left)] = float(right)
        except ValueError:
            raise HarnessError(f"--judge-grades {item.strip()!r} is not JUDGE=HUMAN", hint="--judge-grades 3=2,2=1") from None
        if not sep:
            raise HarnessError(f"--judge-grades {item.strip()!r} is not JUDGE=HUMAN", hint="--judge-grades 3=2,2=1")
    return out


def _cmd_agree(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """The audit: labels, then with runs the systems' biases and the rankings."""
    from harness.measures.conventions import Conventions
    from harness.measures.parse import parse_measure, split_measures
    from harness.pipeline.files import agree_files

    measures = tuple(parse_measure(m) for raw in args.m for m in split_measures(raw))
    if args.runs and not measures:
        raise HarnessError("runs are compared on measures: name them", hint="harness agree HUMAN JUDGE RUN ... -m nDCG@10")
    found = agree_files(
        Path(args.human),
        Path(args.judge),
        tuple((name, Path(path)) for name, path in _run_arguments(args.runs)),
        measures,
        Conventions(relevance_level=args.l),
        _grade_map(args.judge_grades),
        args.alpha,
        None if args.strata is None else Path(args.strata),
    )
    if args.format == "json":
        out.write(json.dumps(found.to_dict(), indent=1) + "\n")
        return EXIT_OK
    labels = found.labels
    level = f"{1 - args.alpha:.0%}"
    out.write(
        f"labels: {labels.pairs:,} documents judged by both ({found.human_queries:,} queries judged by people)\n"
        f"  Cohen's kappa {labels.cohen_kappa:.3f}, quadratic-weighted kappa {labels.weighted_kappa:.3f}, "
        f"Krippendorff's alpha (ordinal) {labels.krippendorff_alpha:.3f}\n"
        f"  relevant (label >= {args.l}): people {labels.human_relevant:.1%}, the judge {labels.judge_relevant:.1%}\n"
        "  confusion (rows people's grade, columns the judge's):\n"
    )
    width = max(6, *(len(f"{g:g}") for g in labels.grades))
    out.write("    " + " " * width + "".join(f"{g:>{width}g}" for g in labels.grades) + "\n")
    for grade, row in zip(labels.grades, labels.confusion.tolist(), strict=True):
        out.write(f"    {grade:>{width}g}" + "".join(f"{v:>{width},}" for v in row) + "\n")
    if found.systems:
        out.write(f"systems, on the queries people judged (bias = judge - people, {level} paired t interval):\n")
        out.write(f"  {'system':<20} {'measure':<12} {'people':>8} {'judge':>8} {'bias':>9} {'interval':>21}\n")
        for s in found.systems:
            note = {
                "favoured": "  the judge favours it over the others",
                "disfavoured": "  the judge favours the others over it",
            }.get(s.favoured, "")
            spread = f"[{s.bias_low:+.4f}, {s.bias_high:+.4f}]" if math.isfinite(s.bias_low) else "(no spread)"
            out.write(
                f"  {for_terminal(s.name)[:20]:<20} {s.measure[:12]:<12} {s.human:8.4f} {s.judge:8.4f} {s.bias:+9.4f} "
                f"{spread:>21}{note}\n"
            )
        out.write(
            f"the systems over the {found.judge_queries:,} queries the judge labelled: the judge alone, and corrected by "
            f"people's {found.human_queries:,} ({found.sample_text}; prediction-powered, {level} interval):\n"
        )
        for s in found.systems:
            interval = (
                f"[{s.corrected_low:.4f}, {s.corrected_high:.4f}]"
                if math.isfinite(s.corrected_low)
                else "(no interval: people's values do not spread)"
            )
            out.write(
                f"  {for_terminal(s.name)[:20]:<20} {s.measure[:12]:<12} judge {s.judge_all:.4f}  corrected "
                f"{s.corrected:.4f} {interval}  lambda {s.lam:.2f}{' (the strata weighted)' if found.strata else ''}\n"
            )
        if found.pairs:
            out.write(
                f"the pairs over the same queries (b - a): the judge alone, and corrected ({level} t interval, p "
                "two-sided); the queries people would judge to tell them apart with 80% power at that difference:\n"
            )
        for d in found.pairs:
            pair = f"{for_terminal(d.b)} - {for_terminal(d.a)}"
            spread = f"[{d.low:+.4f}, {d.high:+.4f}]  p {d.p:.2g}" if math.isfinite(d.low) else "(no spread)"
            if d.people_needed is None:
                needed = "" if found.strata else f"  not even all {found.judge_queries:,} judged by people"
            elif d.people_needed <= found.human_queries:
                needed = f"  people's {found.human_queries:,} are enough (about {d.people_needed:,})"
            else:
                needed = f"  about {d.people_needed:,} judged by people"
            out.write(
                f"  {pair[:29]:<29} {d.measure[:12]:<12} judge {d.judge:+.4f}  corrected {d.corrected:+.4f} {spread}{needed}\n"
            )
        for r in found.rankings:
            swaps = ", ".join(f"{for_terminal(a)} > {for_terminal(b)}" for a, b in r.swaps) or "none"
            out.write(
                f"ranking by {r.measure}: Kendall's tau {r.kendall_tau:.3f}, tau_AP {r.tau_ap:.3f}; "
                f"pairs people order otherwise than the judge: {swaps}; "
                f"t-test verdicts the same for {r.significance_agreement:.0%} of pairs\n"
            )
    return EXIT_OK


def _measures_command(sub: Any) -> None:
    """``harness measures``: list the measures."""
    ms = sub.add_parser("measures", help="list every measure the registry knows")
    ms.add_argument("--quiet", action="store_true", help="accepted as by every command: measures prints no progress")
    ms.set_defaults(handler=_cmd_measures)


def build_parser() -> argparse.ArgumentParser:
    """The command line: each subcommand's arguments are made by its own function above."""
    parser = _Parser(prog="harness", description="Evaluation harness for ranking and recommender systems.", epilog=EXIT_CODES)
    parser.add_argument("--version", action="version", version=f"harness {__version__}")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)

    _eval_command(sub)
    _compare_command(sub)
    _run_command(sub)
    _validate_command(sub)
    _track_command(sub)
    _promote_command(sub)
    _report_command(sub)
    _plan_command(sub)
    _exposure_command(sub)
    _explain_command(sub)
    _agree_command(sub)
    _measures_command(sub)
    return parser


def _wants_json(argv: Sequence[str] | None) -> bool:
    """Whether the command line asks for JSON on stdout (``--json``, ``--format json``), read from the words
    themselves: an error may come before they are parsed.

    >>> _wants_json(["run", "x.yaml", "--format=json"]), _wants_json(["run", "x.yaml", "--format", "text"])
    (True, False)
    """
    words = list(argv or [])
    return (
        "--json" in words
        or "--format=json" in words
        or any(a == "--format" and b == "json" for a, b in itertools.pairwise(words))
    )


def main(
    argv: Sequence[str] | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
    *,
    tracking_process: TrackingProcess = "this",
) -> int:
    """Run one command; its exit code. ``tracking_process``: where ``harness run`` runs MLflow's client (``child``
    from a process of harness's own, where nothing has imported MLflow; see :mod:`harness.records.recorder`)."""
    out = out or sys.stdout
    err = err or sys.stderr
    parser = build_parser()
    try:
        argv = list(sys.argv[1:] if argv is None else argv)
        args = _parse(parser, argv)
        args.argv = argv
        args.tracking_process = tracking_process
        if getattr(args, "handler", None) is None:
            parser.print_help(out)
            return EXIT_USER_ERROR
        code: int = args.handler(args, out, err)
        return code
    except HarnessError as exc:
        code = (
            EXIT_TRACKING_FAILED
            if isinstance(exc, TrackingError)
            else EXIT_REPORT_FAILED  # harness report on a folder: the results stand, the report did not render
            if isinstance(exc, ReportError)
            else EXIT_USER_ERROR
        )
        err.write(f"harness: error: {for_terminal(str(exc))}\n")
        if _wants_json(argv):  # a script reading stdout gets one JSON document whatever happened
            record = {"exit_code": code, "error": str(exc), "message": exc.message, "hint": exc.hint}
            out.write(json.dumps({**record, "file": exc.path, "line": exc.line}) + "\n")
        return code
    except BrokenPipeError:
        return EXIT_OK
    except KeyboardInterrupt:
        err.write("harness: interrupted\n")
        return EXIT_INTERRUPTED
