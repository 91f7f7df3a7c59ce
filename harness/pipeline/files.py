"""``harness eval`` and ``harness compare``: the pipeline's stages on files named on the command line.

The same readers, evaluator and engines as ``harness run``; only the inputs come from the
arguments instead of a config. The command line parses the arguments into
:class:`FileInputs` and prints what :func:`evaluate_files` returns.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.config.schema import Engine as EngineSpec
from harness.data.items import read_items, read_train
from harness.data.load import QRELS_COLUMNS, RUN_COLUMNS, load_qrels
from harness.data.model import Intents, Qrels
from harness.data.tables import read_table_columns
from harness.data.trec import check_exists
from harness.engines import FilesWork, open_engine
from harness.errors import HarnessError
from harness.evaluation.evaluator import Evaluator, builds_item_context
from harness.evaluation.results import EvaluatedRun, joined
from harness.measures.conventions import Conventions
from harness.measures.peers import by_conventions, conventions_apart
from harness.measures.registry import REGISTRY
from harness.measures.spec import Measure
from harness.progress import SILENT, Progress


@dataclass(frozen=True)
class FileInputs:
    """The judgments, the runs and the conventions of ``harness eval`` / ``harness compare``.

    ``runs``: (label or None, path) per run; a run without a label is labelled by its file name.
    """

    qrels: Path
    runs: tuple[tuple[str | None, Path], ...]
    conventions: Conventions = field(default_factory=Conventions)
    qrels_columns: Mapping[str, str] = field(default_factory=lambda: dict(QRELS_COLUMNS))
    run_columns: Mapping[str, str] = field(default_factory=lambda: dict(RUN_COLUMNS))
    train: Path | None = None
    train_columns: Mapping[str, str] = field(default_factory=lambda: {"user": "user", "item": "item"})
    items: Path | None = None
    items_id: str = "item"
    items_groups: tuple[str, ...] = ()  # the catalogue's columns that group items (read as labels)
    engine: EngineSpec = field(default_factory=EngineSpec)
    qrels_format: str | None = None  # None: by the file name; "ndeval": subtopic judgments
    segments: Path | None = None  # each user's group (UserMAD)
    segments_columns: Mapping[str, str] = field(default_factory=lambda: {"query": "query", "segment": "segment"})
    profile: str | None = None  # the tool whose conventions ``conventions`` starts from: its per-measure ones apply
    given: frozenset[str] = frozenset()  # the conventions the user set over the profile's: theirs for every measure

    def labels(self) -> list[str]:
        return [name or path.name for name, path in self.runs]

    def by_conventions(self, measures: tuple[Measure, ...]) -> dict[Conventions, list[Measure]]:
        """``measures`` grouped by the conventions each is evaluated under: the profile's tool may compute some
        under its own (:func:`~harness.measures.peers.by_conventions`)."""
        return by_conventions(self.profile, measures, self.conventions, self.given)

    def conventions_apart(self, measures: tuple[Measure, ...]) -> dict[Measure, dict[str, object]]:
        """Each of ``measures`` evaluated under conventions other than ``conventions``: the settings that differ."""
        return conventions_apart(self.profile, measures, self.conventions, self.given)


def evaluate_files(
    inputs: FileInputs, measures: tuple[Measure, ...], *, relstring_lengths: tuple[int, ...] = (), progress: Progress = SILENT
) -> list[EvaluatedRun]:
    """Every run of ``inputs`` evaluated on ``measures``, in order, by the engine ``inputs.engine`` names; every input is
    read and checked before any value is computed.

    Measures the profile's tool computes under conventions of their own (Elliot's fairness measures over every test
    user) are evaluated apart under those, and each keeps its own queries (:func:`~harness.evaluation.results.joined`).
    """
    labels = inputs.labels()
    if len(set(labels)) < len(labels):
        raise HarnessError("two runs have the same label", hint="name them: QRELS a=run1.txt b=run2.txt")
    check_exists(inputs.qrels, "qrels", folder_ok=True)
    for _, path in inputs.runs:
        check_exists(path, "run", folder_ok=True)
    groups = inputs.by_conventions(measures)
    # relstrings (trec_eval's) under the run's own conventions, in their group or one of their own
    relstrings_in = inputs.conventions if relstring_lengths or not groups else next(iter(groups))
    groups.setdefault(relstrings_in, [])
    with open_engine(inputs.engine, progress) as engine:
        needs_judgments = engine.reads_judgments or builds_item_context(
            measures, inputs.train is not None, inputs.items is not None
        )
        # without them here, the engine's workers read them
        needs_judgments = needs_judgments or inputs.qrels_format == "ndeval"
        judgments = (
            load_qrels(inputs.qrels, inputs.qrels_columns, inputs.qrels_format)
            if needs_judgments
            else Qrels.from_records([], str(inputs.qrels))
        )
        runs = tuple((label, given, path) for label, (given, path) in zip(labels, inputs.runs, strict=True))
        evaluators = _evaluators(inputs, groups, judgments)
        done = []
        for conventions, evaluator in evaluators.items():
            lengths = relstring_lengths if conventions == relstrings_in else ()
            work = FilesWork(
                evaluator,
                inputs.qrels,
                inputs.qrels_columns,
                judgments if needs_judgments else None,
                runs,
                inputs.run_columns,
                lengths,
                progress,
            )
            done.append(engine.evaluate_files(work))
    if len(done) == 1:
        return done[0]
    return [_joined(parts, measures, list(groups).index(relstrings_in)) for parts in zip(*done, strict=True)]


def _joined(parts: tuple[EvaluatedRun, ...], measures: tuple[Measure, ...], first: int) -> EvaluatedRun:
    """One run's evaluations under each group's conventions as one; ``first``: the group under the run's own
    conventions (its missing judged queries and relstrings are the run's)."""
    run = parts[first]
    per_query = joined(run.name, [p.per_query for p in parts], measures)
    position = {q: i for i, q in enumerate(run.per_query.query_ids.tolist())}
    at = [position.get(q) for q in per_query.query_ids.tolist()]
    relstrings = {k: [None if i is None else v[i] for i in at] for k, v in run.relstrings.items()}
    aggregates = {m: value for p in parts for m, value in p.aggregates.items()}
    system = {m for p in parts for m in p.system_measures}
    return dataclasses.replace(
        run,
        per_query=per_query,
        aggregates={m: aggregates[m] for m in measures},
        system_measures=tuple(m for m in measures if m in system),
        relstrings=relstrings,
    )


def _evaluators(
    inputs: FileInputs, groups: dict[Conventions, list[Measure]], judgments: Qrels | Intents
) -> dict[Conventions, Evaluator]:
    """Each group's evaluator, with the training data, catalogue and segments ``inputs`` name read: the training rows
    live only while the items' context summarises them (it depends on the judgments only: one, shared), so the runs
    are read into their memory."""
    context, items, out = _context(inputs), None, {}
    for conventions, group in groups.items():
        out[conventions] = Evaluator(judgments, group, conventions, item_context=items, **context)
        items = items or out[conventions].items
    return out


def _context(inputs: FileInputs) -> dict[str, Any]:
    """The training data, catalogue and user groups ``inputs`` name, read, as :class:`Evaluator` takes them."""
    train = items = None
    if inputs.train is not None:
        train = read_train(inputs.train, inputs.train_columns["user"], inputs.train_columns["item"])
    if inputs.items is not None:
        items = read_items(inputs.items, inputs.items_id, groups=inputs.items_groups)
    user_groups = (
        None
        if inputs.segments is None
        else read_table_columns(inputs.segments, inputs.segments_columns["query"], inputs.segments_columns["segment"])
    )
    return {"train": train, "items": items, "user_groups": user_groups}


def explain_files(
    inputs: FileInputs, measures: tuple[Measure, ...], target: float | None = None, tol: float = 5e-5, progress: Progress = SILENT
) -> Any:
    """``harness explain``: each peer's value of ``measures`` on the one run of ``inputs``
    (:func:`harness.evaluation.explain.explain`), or with ``target`` the settings that give it
    (:func:`~harness.evaluation.explain.match`); every input read and checked first."""
    from harness.data.load import load_run
    from harness.evaluation.explain import explain, match

    if len(inputs.runs) != 1:
        raise HarnessError("explain reads one run", hint="harness explain QRELS RUN -m nDCG@10")
    if target is not None and len(measures) != 1:
        raise HarnessError("--match searches for one measure's value", hint="name one: -m nDCG@10 --match 0.412")
    check_exists(inputs.qrels, "qrels", folder_ok=True)
    label, path = inputs.runs[0]
    check_exists(path, "run", folder_ok=True)
    judgments = load_qrels(inputs.qrels, inputs.qrels_columns, inputs.qrels_format)
    context = _context(inputs)
    run = load_run(path, inputs.run_columns, name=label or path.name, samples=REGISTRY.reads_samples(measures))
    if target is not None:
        return match(judgments, run, measures[0], target, tol, inputs.conventions, progress, **context)
    return explain(judgments, run, measures, inputs.conventions, progress=progress, **context)


def exposure_files(qrels: Path, run: Path, settings: Any) -> Any:
    """``harness exposure``: a stochastic run's expected exposure per query (:func:`harness.evaluation.exposure.
    evaluate_exposure`); every input read and checked before any value is computed."""
    from harness.evaluation.exposure import evaluate_exposure

    check_exists(qrels, "qrels")
    check_exists(run, "run")
    return evaluate_exposure(qrels, run, settings)


__all__ = ["FileInputs", "evaluate_files", "explain_files", "exposure_files"]


def agree_files(
    human: Path,
    judge: Path,
    runs: tuple[tuple[str | None, Path], ...] = (),
    measures: tuple[Measure, ...] = (),
    conventions: Conventions | None = None,
    judge_grades: Mapping[float, float] | None = None,
    alpha: float = 0.05,
    strata: Path | None = None,
) -> Any:
    """``harness agree``: the audit of a judge's labels against people's (:func:`harness.evaluation.agreement.
    agreement`); every input read and checked before anything is computed."""
    from harness.data.load import load_run
    from harness.evaluation.agreement import agreement
    from harness.evaluation.labels import map_grades

    loaded = []
    for path, role in ((human, "qrels"), (judge, "qrels")):
        check_exists(path, role)
        qrels = load_qrels(path)
        if not isinstance(qrels, Qrels):
            raise HarnessError(f"{path}: subtopic judgments cannot be compared label by label", hint="give graded qrels")
        loaded.append(qrels)
    people, model = loaded
    if judge_grades:
        model = map_grades(model, judge_grades)
    read = []
    for label, path in runs:
        check_exists(path, "run")
        read.append(load_run(path, dict(RUN_COLUMNS), name=label or path.name))
    layers = None
    if strata is not None:
        check_exists(strata, "strata")
        layers = read_table_columns(strata, "query", "stratum")
    return agreement(people, model, read, measures, conventions, alpha, layers)
