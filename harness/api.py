"""The notebook API: plain functions over the same stages the command line uses.

>>> from harness import Qrels, Run, evaluate, compare
>>> qrels = Qrels.from_dict({f"q{i}": {"a": 1, "b": 0} for i in range(12)})
>>> good = evaluate(qrels, Run.from_dict({f"q{i}": {"a": 2.0, "b": 1.0} for i in range(12)}, name="good"), ["RR"])
>>> bad = evaluate(qrels, Run.from_dict({f"q{i}": {"a": 1.0, "b": 2.0} for i in range(12)}, name="bad"), ["RR"])
>>> table = compare([bad, good], baseline="bad", seed=1)
>>> table[["measure", "system_a", "system_b", "delta", "p_randomization"]].round(4).values.tolist()
[['RR', 'bad', 'good', 0.5, 0.0005]]
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args

import numpy as np

from harness.comparison.compare import CompareSettings
from harness.comparison.compare import compare as compare_results
from harness.comparison.versions import seeded_pair, segment_mask, versions
from harness.config.defaults import (
    DEFAULT_ALPHA,
    DEFAULT_CORRECTION,
    DEFAULT_DATASET,
    DEFAULT_FAMILY,
    DEFAULT_MIN_AFFECTED,
    DEFAULT_PERMUTATIONS,
    DEFAULT_POWER,
    DEFAULT_PRIMARY,
    DEFAULT_RESAMPLING,
    DEFAULT_SEED,
    DEFAULT_TESTS,
    MAX_ALPHA,
)
from harness.config.guards import (
    guard_of,
    release_bound,
    release_looks,
    release_min_affected,
    release_power,
)
from harness.config.guards import on_inconclusive as inconclusive_policy
from harness.config.load import load_config
from harness.config.schema import Claim, Correction, Family, NanPolicy, OnInconclusive, Release, Resampling, Test
from harness.decision.release import decide_arrays, gate_keys, paired_values
from harness.errors import GuardSpecError, HarnessError
from harness.evaluation.results import PerQuery, RunResult
from harness.measures.conventions import Conventions
from harness.measures.parse import parse_measure
from harness.measures.peers import PEERS
from harness.measures.registry import REGISTRY
from harness.pipeline import run_experiment as run_pipeline
from harness.progress import SILENT, Progress
from harness.records.looks import LEDGER, LookRecord, new_look_id, next_look, record_look
from harness.records.recorder import TrackingProcess
from harness.stats.bounds import BoundChoice
from harness.stats.looks import Look

if TYPE_CHECKING:
    import pandas as pd

    from harness.decision.plan import Plan
    from harness.decision.verdict import Decision
    from harness.evaluation.agreement import Agreement
    from harness.pipeline import Outcome


def compare(
    per_query: Sequence[PerQuery] | Mapping[str, PerQuery | Sequence[PerQuery]],
    baseline: str | None = None,
    *,
    tests: Sequence[Test] = DEFAULT_TESTS,
    primary: Test = DEFAULT_PRIMARY,
    resampling: Resampling = DEFAULT_RESAMPLING,
    correction: Correction = DEFAULT_CORRECTION,
    family: Family = DEFAULT_FAMILY,
    alpha: float = DEFAULT_ALPHA,
    permutations: int = DEFAULT_PERMUTATIONS,
    resamples: int = DEFAULT_PERMUTATIONS,
    seed: int = DEFAULT_SEED,
    nan: NanPolicy = "error",
    dataset: str = DEFAULT_DATASET,
    claim: Claim | None = None,
) -> pd.DataFrame:
    """Paired tests between runs evaluated on the same judgments: one row per pair x measure.

    Parameters
    ----------
    per_query : sequence of PerQuery, or mapping of name to PerQuery or to a list of them
        The runs' per-query tables (named by their run, or by the mapping's keys). A system may be a list of
        tables, one per training run (seed).
    baseline : str, optional
        Every other run is compared with it; without one, every pair.
    tests : sequence of {"t", "wilcoxon", "randomization", "bootstrap"}
        The paired tests to run.
    primary : {"t", "wilcoxon", "randomization", "bootstrap"}
        The test whose corrected p decides significance.
    resampling : {"auto", "always"}
        Where the randomization test and the bootstrap run: ``auto``, only on comparisons where the t-test cannot be
        trusted (fewer than 597 queries at alpha 0.05, no change, or differences skewed enough to move t's error by a
        tenth of alpha); t's p decides the others, and ``primary_test`` says so. ``always``: on every comparison.
    correction : {"holm", "bonferroni", "bh", "none"}
        Across the family of comparisons.
    family : {"per_measure", "grid"}
        The family a correction runs over: each measure's pairs, or every pair x measure.
    alpha : float
        The significance level.
    permutations, resamples : int
        The randomization test's and the bootstrap's draws.
    seed : int
        Keys every draw: the same seed gives the same p-values, in any order or subset of the rows.
    nan : {"error", "drop"}
        A per-query value that is NaN stops, or drops that query from that comparison.
    dataset : str
        The dataset name the draws are keyed by (as ``harness compare`` keys them).
    claim : {"model", "version"}, optional
        ``version`` compares the systems' training procedures over their runs, by the crossed t over users and
        seeds (``p_version``), as ``harness run`` compares versions; the default when a system has several runs.

    Returns
    -------
    ComparisonTable
        A DataFrame with the columns of ``comparisons.csv`` (README, "Comparing systems"); a notebook shows the
        compact view (measure, pair, means, difference, interval, corrected p, significant), ``.full`` every
        column.

    Raises
    ------
    HarnessError
        A baseline that is not among the runs, runs on other measures, an unknown test or a bad count.

    Examples
    --------
    >>> from harness import Qrels, Run, evaluate
    >>> qrels = Qrels.from_dict({f"q{i}": {"a": 1, "b": 0} for i in range(30)})
    >>> first = evaluate(qrels, Run.from_dict({f"q{i}": {"a": 2.0, "b": 1.0} for i in range(30)}, name="first"), ["RR"])
    >>> second = evaluate(
    ...     qrels, Run.from_dict({f"q{i}": {"a": 1.0, "b": 2.0 - 2 * (i % 3 == 0)} for i in range(30)}, name="second"), ["RR"]
    ... )
    >>> row = compare([first, second], baseline="first").full.iloc[0]
    >>> row.system_a, row.system_b, round(float(row.delta), 4), bool(row.significant)
    ('first', 'second', -0.3333, True)
    """

    runs = _seeded(per_query)
    claimed = _claim(claim, runs, list(runs))
    tables = {name: listed[0] for name, listed in runs.items()}
    names = list(tables)
    if baseline is not None and baseline not in tables:
        raise HarnessError(f"baseline {baseline!r} is not among the runs", hint=f"use one of {', '.join(names)}")
    measures = tables[names[0]].measures
    for name, listed in runs.items():
        if any(set(table.measures) != set(measures) for table in listed):
            raise HarnessError(
                f"run {name!r} was evaluated on other measures than {names[0]!r}",
                hint="evaluate every run with the same measures",
            )
    checked_tests = tuple(_choice("test", t, Test) for t in tests)
    if _choice("primary", primary, Test) not in checked_tests:
        raise HarnessError(
            f"the primary test {primary!r} is not among tests={tuple(tests)!r}",
            hint=f"add it to tests, or pass primary= one of {', '.join(tests)}",
        )
    _check_alpha(alpha)
    for name, count in (("permutations", permutations), ("resamples", resamples)):
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise HarnessError(f"{name} must be a whole number of at least 1, got {count!r}", hint=f"{name}=10000")
    settings = CompareSettings(
        tests=checked_tests,
        primary=_choice("primary", primary, Test),
        resampling=_choice("resampling", resampling, Resampling),
        correction=_choice("correction", correction, Correction),
        family=_choice("family", family, Family),
        alpha=alpha,
        mode="baseline" if baseline else "all_pairs",
        permutations=permutations,
        resamples=resamples,
        seed=seed,
        baseline=baseline,
        nan=_choice("nan", nan, NanPolicy),
        claim=claimed,
    )
    every = [
        RunResult(
            dataset,
            name,
            dataclasses.replace(t, run=name),
            np.full(len(t.query_ids), "", dtype=object),
            {},
            seed=f"{k + 1}" if len(listed) > 1 else "",
        )
        for name, listed in runs.items()
        for k, t in enumerate(listed)
    ]
    from harness.comparison.table import ComparisonTable

    return ComparisonTable(compare_results(versions(every), measures, settings, seeds=every).frame().drop(columns=["dataset"]))


def decide(
    per_query: Sequence[PerQuery] | Mapping[str, PerQuery | Sequence[PerQuery]],
    production: str,
    candidate: str,
    guards: Sequence[Mapping[str, object]],
    *,
    alpha: float = 0.05,
    power: float = DEFAULT_POWER,
    segments: Mapping[str, str] | None = None,
    on_inconclusive: OnInconclusive = "inconclusive",
    dataset: str = DEFAULT_DATASET,
    bound: BoundChoice = "auto",
    looks: int = 1,
    look: int | None = None,
    claim: Claim | None = None,
    ledger: str | Path | None = None,
    min_affected: float = DEFAULT_MIN_AFFECTED,
) -> Decision:
    """The release decision between two runs' per-query tables, as ``harness run`` decides it.

    Parameters
    ----------
    per_query : sequence of PerQuery, or mapping of name to PerQuery or to a list of them
        The runs' per-query tables. A system may be a list of tables, one per training run (seed):
        ``{"v1": [t1, t2, t3], "v2": [...]}``.
    production, candidate : str
        The two systems the gate compares.
    guards : sequence of mappings
        Written as in a config: ``{"measure": "nDCG@10", "max_drop": 0.01}``, ``max_drop_pct``, ``min_gain``,
        optionally ``segment`` and ``descriptive``.
    alpha : float
        The rate of the error the verdict controls (over all the looks of a planned gate).
    power : float
        The power "users needed" is planned for.
    segments : mapping of query id to segment, optional
        Each query's segment, for guards on a segment.
    on_inconclusive : {"inconclusive", "fail", "pass"}
        What an INCONCLUSIVE gate reads as.
    dataset : str
        The dataset name the guards are decided on.
    bound : {"auto", "t", "betting"}
        How a guard on a mean is bounded: ``auto`` (t where its normal approximation holds, the exact betting
        bound elsewhere), ``t`` or ``betting`` (:mod:`harness.stats.bounds`).
    looks : int
        The gate is planned to be run that many times as users accrue (``release.looks``): each look is tested at
        its share of ``alpha`` less what the recorded looks spent (:mod:`harness.stats.looks`).
    look : int, optional
        When given, the look the ledger must make this one.
    claim : {"model", "version"}, optional
        ``model`` decides these trained runs on these users; ``version`` the training procedures over their runs,
        users and seeds both random (:mod:`harness.stats.seeds`); by default ``version`` when either system has
        several runs. With one run of a system the version claim decides nothing.
    ledger : str or Path, optional
        With ``looks`` > 1, required: the folder whose ``.looks.jsonl`` counts the gate's looks (as ``harness run``
        counts them in the experiment's folder); each look is recorded there before it is returned.
    min_affected : float
        The rarest harm, as a share of users in [0, 1), that ``bound="auto"``'s t-test must not miss
        (``release.min_affected``): t decides a measure with a known range only from the users at which a sample
        holds none of such a share with a chance of at most alpha / 10 (528 users for 1% at alpha 0.05); below, the
        betting bound decides. 0: t never decides such a measure.

    Returns
    -------
    Decision
        ``.verdict`` (PASS, FAIL or INCONCLUSIVE), ``.errors`` (the error it controls, at what rate) and
        ``.guards``, each with its ``.verdict``, ``.drop``, one-sided bounds ``.drop_low``/``.drop_high``,
        ``.margin``, ``.p_pass``, ``.p_fail_adj``, ``.mde`` and ``.n_needed``.

    Raises
    ------
    HarnessError
        A system that is not among the runs, a guard that cannot be decided as written, a planned gate without a
        ledger, or a look given again.

    Examples
    --------
    >>> from harness import Qrels, Run, evaluate
    >>> qrels = Qrels.from_dict({f"q{i}": {"a": 1, "b": 0} for i in range(40)})
    >>> prod = evaluate(qrels, Run.from_dict({f"q{i}": {"a": 2.0, "b": 1.0} for i in range(40)}, name="prod"), ["RR"])
    >>> cand = evaluate(qrels, Run.from_dict({f"q{i}": {"a": 1.0 + (i % 4 == 0), "b": 1.5} for i in range(40)},
    ...                                      name="cand"), ["RR"])
    >>> decision = decide([prod, cand], "prod", "cand", [{"measure": "RR", "max_drop": 0.1}])
    >>> decision.verdict, round(decision.guards[0].drop, 4)
    ('FAIL', 0.375)
    """

    runs = _seeded(per_query)
    for role, name in (("production", production), ("candidate", candidate)):
        if name not in runs:
            raise HarnessError(f"{role} {name!r} is not among the runs", hint=f"use one of {', '.join(runs)}")
    claim = _claim(claim, runs, [production, candidate])
    tables = {name: tables_of[0] for name, tables_of in runs.items()}
    if production == candidate:
        raise HarnessError("production and candidate are the same run", hint="name the run to release as candidate")
    _check_alpha(alpha)
    if isinstance(guards, Mapping) or not guards:
        raise HarnessError("guards must be a non-empty list of guards", hint='guards=[{"measure": "nDCG@10", "max_drop": 0.01}]')
    try:
        policy, power, chosen = inconclusive_policy(on_inconclusive), release_power(power), release_bound(bound)
        planned = release_looks(looks)
        rarest = release_min_affected(min_affected)
    except GuardSpecError as exc:
        raise HarnessError(exc.message, hint=exc.hint) from None
    if look is not None and (isinstance(look, bool) or not isinstance(look, int) or not 1 <= look <= planned):
        raise HarnessError(
            f"look must be a whole number from 1 to looks ({planned}), got {look!r}",
            hint="leave look out: the ledger counts the looks",
        )
    if planned > 1 and ledger is None:
        raise HarnessError(
            f"a gate planned for {planned} looks needs the record of its earlier looks: a look given by number alone "
            "could be repeated or miscounted, and spend alpha again unseen",
            hint="pass ledger='reports/my-gate': each look is recorded in its .looks.jsonl and counted from there, "
            "as harness run counts them",
        )
    known = {str(m): m for m in tables[production].measures}
    checks = []
    for number, spec in enumerate(guards):
        where = f"guard {number + 1}"
        if not isinstance(spec, Mapping):
            raise HarnessError(f"{where} must be a mapping, got {spec!r}", hint='{"measure": "nDCG@10", "max_drop": 0.01}')
        text = spec.get("measure")
        if not isinstance(text, str):
            raise HarnessError(f"{where} names no measure", hint='{"measure": "nDCG@10", "max_drop": 0.01}')
        measure = known.get(text) or known.get(str(parse_measure(text)))
        if measure is None:
            raise HarnessError(
                f"{where}: {text!r} is not among the measures the tables hold", hint=f"use one of {', '.join(list(known)[:8])}"
            )
        if spec.get("dataset") not in (None, dataset):
            raise HarnessError(f"{where}: dataset {spec['dataset']!r} is not {dataset!r}", hint="leave dataset out")
        try:
            guard = dataclasses.replace(
                guard_of(spec, measure, REGISTRY.definition(measure).guard_aggregate(measure)), dataset=None
            )
        except GuardSpecError as exc:
            raise HarnessError(f"{where}: {exc.message}", hint=exc.hint) from None
        segment = guard.segment
        if segment is not None and (segments is None or segment not in set(segments.values())):
            raise HarnessError(
                f"{where}: segment {segment!r} is not a segment",
                hint="pass segments={query_id: segment}"
                if segments is None
                else f"use one of {', '.join(sorted(set(segments.values())))}",
            )
        if claim == "version":
            values: Any = seeded_pair(runs[production], runs[candidate], measure, segment, segments)
        else:
            prod, cand = tables[production], tables[candidate]
            values = paired_values(
                prod, cand, measure, segment_mask(prod, segment, segments), segment_mask(cand, segment, segments)
            )
        checks.append((guard, dataset, segment or "all", values))
    release = Release(production, candidate, tuple(g for g, *_ in checks), policy, power, chosen, None, planned, rarest)
    key, *also = gate_keys(release, claim)
    root = None if ledger is None or planned == 1 else Path(ledger)  # one look: nothing spent before it
    recorded = None if root is None else _recorded_looks(root, key, tuple(also), alpha, planned, look)
    decision = decide_arrays(
        checks,
        production,
        candidate,
        alpha,
        power,
        policy,
        chosen,
        look=None if recorded is None else recorded[0],
        key=key,
        claim=claim,
        seeds=(len(runs[production]), len(runs[candidate])),
        min_affected=rarest,
    )
    if root is None or recorded is None:  # (one is None exactly when the other is)
        return decision
    record = LookRecord(new_look_id(), key, decision.look, decision.looks, decision.tested_at, LEDGER)
    record_look(root, record, list(recorded[1]), alpha)
    return dataclasses.replace(decision, look_id=record.id)


def _recorded_looks(
    root: Path, key: str, also: tuple[str, ...], alpha: float, planned: int, given: int | None
) -> tuple[Look, tuple[LookRecord, ...]]:
    """This look of the gate by the ledger in ``root``: the number after its recorded looks, and what they spent."""
    look, before = next_look(root, key, alpha, planned, also=also)
    number = look.number
    if given is not None and given != number:
        raise HarnessError(
            f"this is look {number} of the gate by its record in {root / LEDGER} ({len(before)} earlier), not look "
            f"{given}: a look decided again spends alpha again",
            hint="leave look out: the ledger counts the looks",
        )
    if number > planned:
        raise HarnessError(
            f"the gate's {planned} planned looks are all recorded in {root / LEDGER}: its alpha ({alpha:g}) is spent",
            hint="a new decision needs a new gate (other guards, or another ledger for another experiment)",
        )
    return look, tuple(before)


def explain(
    qrels: Any,
    run: Any,
    measures: Sequence[str] | str,
    *,
    conventions: Conventions | None = None,
    peers: Sequence[str] | None = None,
    match: float | None = None,
    tol: float = 5e-5,
) -> pd.DataFrame:
    """Why a number differs from another tool's, as ``harness explain`` prints it.

    Parameters
    ----------
    qrels, run : Qrels and Run, DataFrames or dicts
        The inputs, as :func:`harness.evaluate` takes them.
    measures : str or sequence of str
        The measures to explain.
    conventions : Conventions, optional
        The conventions harness's own value is computed under (default: trec_eval's).
    peers : sequence of str, optional
        The tools to compare with (default: every profile).
    match : float, optional
        Another tool's value: search the combinations of conventions for those that give it.
    tol : float
        How near ``match`` a value must be.

    Returns
    -------
    DataFrame
        Without ``match``: one row per measure, peer and setting (``measure, peer, tool, setting, value, delta,
        queries_affected, note``): each peer's value on these inputs (``setting == "all"``), then what each of its
        conventions alone changes. With ``match``: every combination of conventions whose value is within ``tol``
        of it, nearest first (``value, distance, profile, changes`` and one column per setting).

    Examples
    --------
    >>> from harness import Qrels, Run, explain
    >>> qrels = Qrels.from_records([("q1", "a", 2), ("q1", "b", 1), ("q2", "d", 1)])
    >>> run = Run.from_records([("q1", "b", 1.0), ("q1", "a", 0.5)])
    >>> table = explain(qrels, run, "nDCG@2")
    >>> table[table.setting == "all"][["peer", "value"]].round(4).head(3).values.tolist()
    [['trec_eval', 0.4299], ['ir_measures', 0.4299], ['pytrec_eval', 0.8597]]
    >>> found = explain(qrels, run, "nDCG@2", match=0.5)
    >>> found.changes[0], sorted(set(found.profile.dropna()))
    ('gain=binary', ['mlflow', 'msrec', 'pyxclib', 'recbole'])
    """
    import pandas as pd

    from harness.evaluation.explain import explain as explain_measures
    from harness.evaluation.explain import match as match_value

    names = [measures] if isinstance(measures, str) else list(measures)
    unknown = [p for p in (peers or ()) if p not in PEERS]
    if unknown:
        raise HarnessError(f"unknown peer {unknown[0]!r}", hint=f"use some of: {', '.join(PEERS)}")
    if match is None:
        found = explain_measures(qrels, run, names, conventions, peers)
        return pd.concat([e.to_frame() for e in found], ignore_index=True)
    if len(names) != 1:
        raise HarnessError("match searches for one measure's value", hint="explain(qrels, run, 'nDCG@10', match=0.412)")
    rows = [
        {
            "value": m.value,
            "distance": m.distance,
            "profile": m.profile,
            "changes": ", ".join(f"{k}={v}" for k, v in m.changes.items()),
            **m.settings,
        }
        for m in match_value(qrels, run, names[0], match, tol, conventions)
    ]
    return pd.DataFrame(rows)


def agree(
    human: Any,
    judge: Any,
    runs: Sequence[Any] = (),
    measures: Sequence[str] | str = (),
    *,
    judge_grades: Mapping[float, float] | None = None,
    relevance_level: int = 1,
    alpha: float = 0.05,
    strata: Mapping[str, str] | None = None,
) -> Agreement:
    """How far a model judge's labels agree with people's, and what that does to the systems' numbers, as
    ``harness agree`` prints it: the audit a team runs before it trusts a judge.

    Parameters
    ----------
    human, judge : Qrels, DataFrames or dicts
        People's judgments and the judge's, as :func:`harness.evaluate` takes qrels. People may have judged some of
        the queries; the judge must label every query people judged.
    runs : sequence of Run, DataFrames or dicts, optional
        The systems whose measures are compared under each labelling, on the queries people judged.
    measures : str or sequence of str
        The measures (with ``runs``).
    judge_grades : mapping, optional
        The judge's grades on people's scale (``{3: 2}``: the judge's 3 is people's 2); without it a grade people
        never give is refused.
    relevance_level : int
        Relevant iff label >= it: the rates of relevant labels, and the binary measures.
    alpha : float
        The level of the bias intervals (two-sided, 1 - alpha) and of the pairwise tests.
    strata : mapping of query id to stratum, optional
        When people's queries were drawn at random within strata (``{"q1": "rare", ...}``, every query the judge
        labelled): the corrected values are corrected stratum by stratum, each weighted by its share of the queries.
        Without it people's queries are taken as a random sample of all of them.

    Returns
    -------
    Agreement
        ``.labels`` (``cohen_kappa``, ``weighted_kappa``, ``krippendorff_alpha``, ``confusion``, ``per_query``),
        ``.systems`` (each run's ``human`` and ``judge`` value, its ``bias`` with ``bias_low``/``bias_high``, and
        whether the judge ``favoured`` it, and its value over every query corrected by people's), ``.pairs`` (each
        pair's difference corrected, with its interval, p and the queries people would judge to tell them apart) and
        ``.rankings`` (``kendall_tau``, ``tau_ap``, ``swaps``);
        ``.to_dict()`` is ``harness agree --format json``.

    Raises
    ------
    HarnessError
        No document judged by both; a document labelled twice; a grade of the judge's that people never give; a
        query people judged that the judge did not; with ``strata``, a query without one or a stratum people judged
        fewer than 2 queries of.

    Examples
    --------
    >>> from harness import agree
    >>> human = {"q1": {"a": 1, "b": 0}, "q2": {"c": 1, "d": 0}}
    >>> judge = {"q1": {"a": 1, "b": 1}, "q2": {"c": 1, "d": 0}}
    >>> found = agree(human, judge, [{"q1": {"b": 2.0, "a": 1.0}, "q2": {"c": 2.0, "d": 1.0}}], "P@1")
    >>> found.labels.pairs, found.labels.confusion.tolist(), round(found.systems[0].bias, 2)
    (4, [[1, 1], [0, 2]], 0.5)
    """
    from harness.evaluation.agreement import agreement
    from harness.evaluation.evaluator import as_qrels, as_run
    from harness.evaluation.labels import map_grades

    _check_alpha(alpha)
    names = [measures] if isinstance(measures, str) else list(measures)
    if runs and not names:
        raise HarnessError("runs are compared on measures: name them", hint='agree(human, judge, runs, "nDCG@10")')
    people, model = as_qrels(human), as_qrels(judge)
    if judge_grades:
        model = map_grades(model, judge_grades)
    read = [as_run(r) for r in runs]
    conventions = Conventions(relevance_level=relevance_level)
    layers = None if strata is None else {str(q): str(s) for q, s in strata.items()}
    return agreement(people, model, read, tuple(parse_measure(m) for m in names), conventions, alpha, layers)


def _check_alpha(alpha: float) -> None:
    if isinstance(alpha, bool) or not isinstance(alpha, int | float) or not 0 < alpha <= MAX_ALPHA:
        raise HarnessError(f"alpha must be above 0 and at most {MAX_ALPHA:g}, got {alpha!r}", hint="alpha=0.05")


def _choice(name: str, value: object, options: Any) -> Any:
    """``value`` if it is one of the ``Literal`` type ``options``, else harness's error naming them."""
    allowed = get_args(options)
    if value not in allowed:
        raise HarnessError(f"unknown {name} {value!r}", hint=f"use one of {', '.join(map(str, allowed))}")
    return value


def _claim(claim: str | None, runs: Mapping[str, Sequence[PerQuery]], systems: Sequence[str]) -> Claim:
    """``claim`` checked, or by default ``version`` when one of ``systems`` has several runs, else ``model``; a
    HarnessError for ``model`` with several runs of a system (it decides one trained run of each)."""
    several = next((name for name in systems if len(runs[name]) > 1), None)
    chosen: Claim = _choice("claim", claim if claim is not None else "model" if several is None else "version", Claim)
    if chosen == "model" and several is not None:
        raise HarnessError(
            f"claim='model' decides one trained run of each system, and {several!r} has {len(runs[several])}",
            hint="pass one table for it, or claim='version' for the training procedure over its runs",
        )
    return chosen


def _seeded(per_query: Sequence[PerQuery] | Mapping[str, PerQuery | Sequence[PerQuery]]) -> dict[str, list[PerQuery]]:
    """Each system's tables, one per run: a mapping's value may be one table or a list of them (its seeds)."""
    if not isinstance(per_query, Mapping):
        return {name: [table] for name, table in _tables(per_query).items()}
    runs: dict[str, list[PerQuery]] = {}
    for name, given in per_query.items():
        listed: list[PerQuery] = list(given) if isinstance(given, (list, tuple)) else [given]  # type: ignore[list-item]
        if not listed or not all(isinstance(t, PerQuery) for t in listed):
            raise HarnessError(
                f"{name!r} must be a per-query table or a non-empty list of them (one per run)",
                hint="pass what harness.evaluate returns, or a list of those",
            )
        runs[str(name)] = listed
    if len(runs) < 2:
        raise HarnessError("need at least two systems", hint='{"v1": [t1, t2, t3], "v2": [u1, u2, u3]}')
    return runs


def _tables(per_query: Sequence[PerQuery] | Mapping[str, PerQuery]) -> dict[str, PerQuery]:
    tables = dict(per_query) if isinstance(per_query, Mapping) else {t.run: t for t in per_query}
    if len(tables) < 2 or len(tables) < len(per_query):  # fewer tables than given: two runs shared a name
        raise HarnessError(
            "need at least two per-query tables with distinct run names",
            hint="name the runs (Run(..., name=...)) or pass {name: per_query}",
        )
    for name, table in tables.items():
        if not isinstance(table, PerQuery):
            raise HarnessError(
                f"{name!r} is a {type(table).__name__}, not a per-query table", hint="pass what harness.evaluate returns"
            )
    return tables


def plan(
    source: str | Path | Outcome | None = None,
    *,
    margin: float,
    sd: float | None = None,
    measure: str | None = None,
    systems: Sequence[str] | None = None,
    dataset: str | None = None,
    segment: str = "all",
    alpha: float = DEFAULT_ALPHA,
    power: float = DEFAULT_POWER,
    sided: Literal["one", "two"] = "one",
    min_affected: float | None = None,
) -> Plan:
    """How many users a decision needs, as ``harness plan`` says: to resolve a true distance ``margin`` with
    ``power`` by a paired t-test at ``alpha``, and, for a guard on a measure with a known range, by the bound
    ``bound: auto`` decides it with at that many users.

    Parameters
    ----------
    source : a results folder or :func:`run_experiment`'s outcome, whose per-user differences give the sd
        (``measure`` names which; ``systems`` the pair, by default the gate's production and candidate); None with
        ``sd`` given.
    margin : the distance to resolve (a guard's allowed drop, or the difference a comparison must detect).
    sd : the per-user standard deviation of the differences, when there is no ``source``.
    sided : ``one`` for a guard, ``two`` for a comparison.
    min_affected : the gate's ``release.min_affected`` (t decides a measure with a known range only from the users
        it implies); by default the folder's gate's, else 0.01. With ``sd``, ``measure`` gives the range.

    Returns
    -------
    Plan
        ``.n_queries`` the users the t-test needs; from a folder, also the power and MDE of the users it has, and the
        users planned from the sd's 90% upper limit; one-sided on a measure with a known range, ``.n_auto`` the users
        ``bound: auto`` needs and ``.auto_by`` the bound that decides there. A notebook shows it as a sentence.

    Examples
    --------
    >>> plan(sd=0.23, margin=0.01).n_queries
    3272
    """
    from harness.decision.plan import Plan
    from harness.pipeline.plan import checked_min_affected, plan_from_results, with_auto

    _check_alpha(alpha)
    min_affected = checked_min_affected(min_affected)
    if (source is None) == (sd is None):
        raise HarnessError(
            "give either a results folder (or an outcome) or sd=, not both or neither", hint="plan(sd=0.2, margin=0.01)"
        )
    if sd is not None:
        given = Plan.of(sd, margin, alpha, power, sided)
        if measure is None:
            return given
        return with_auto(given, parse_measure(measure), DEFAULT_MIN_AFFECTED if min_affected is None else min_affected)
    assert source is not None  # one of source and sd, checked above
    folder: str | Path | None = source if isinstance(source, str | Path) else source.results_dir
    if folder is None:
        raise HarnessError("the outcome has no results folder (they could not be written)", hint="run the experiment again")
    if measure is None:
        raise HarnessError("name the measure whose differences give the sd", hint='plan(folder, measure="nDCG@10", margin=0.01)')
    return plan_from_results(folder, measure, margin, systems, dataset, segment, alpha, power, sided, min_affected)


def run_experiment(
    config: str | Path,
    *,
    output: str | Path | None = None,
    overrides: Mapping[str, object] | None = None,
    tracking: bool = True,
    progress: bool = False,
    tracking_process: TrackingProcess = "this",
) -> Outcome:
    """Run an experiment config as ``harness run`` does; the outcome carries the results as DataFrames.

    Parameters
    ----------
    config : str or Path
        The experiment config (YAML; docs/config.md).
    output : str or Path, optional
        The results root, over the config's ``output``.
    overrides : mapping, optional
        Dotted keys over the config's values, as ``--set``: ``{"stats.alpha": 0.01}``.
    tracking : bool
        Log to MLflow as the config says; False leaves MLflow out.
    progress : bool
        Show the stages on stderr.
    tracking_process : {"this", "child"}
        Where MLflow's client runs: in this process (where a notebook may have imported it already), or in a child
        process started with the run, as ``harness run`` does, so that MLflow's import and a new store's migrations
        overlap the evaluation; the records are the same.

    Returns
    -------
    Outcome
        ``.per_query``, ``.summary``, ``.comparisons``, ``.diagnostics`` as pandas DataFrames; ``.gate``: PASS,
        FAIL, INCONCLUSIVE or none (as gate.json says); ``.results_dir``: the folder. A notebook shows the verdict
        box and the links.

    Raises
    ------
    ConfigError
        The config's file and line, what is wrong and the fix.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "qrels.txt").write_text("".join(f"q{i} 0 d1 1\\nq{i} 0 d2 0\\n" for i in range(20)))
    >>> _ = (folder / "a.run").write_text("".join(f"q{i} Q0 d2 1 2 a\\nq{i} Q0 d1 2 1 a\\n" for i in range(20)))
    >>> _ = (folder / "b.run").write_text("".join(f"q{i} Q0 d1 1 2 b\\nq{i} Q0 d2 2 1 b\\n" for i in range(20)))
    >>> _ = (folder / "exp.yaml").write_text(
    ...     "experiment: ab\\ndatasets: [{qrels: qrels.txt}]\\nsystems: [{name: a, runs: a.run}, {name: b, runs: b.run}]\\n"
    ...     "measures: [RR]\\nbaseline: a\\nreport: {enabled: false}\\noutput: out\\n"
    ... )
    >>> outcome = run_experiment(folder / "exp.yaml", tracking=False)
    >>> outcome.summary[["system", "measure", "value"]].values.tolist()
    [['a', 'RR', 0.5], ['b', 'RR', 1.0]]
    """

    where = _choice("tracking_process", tracking_process, TrackingProcess)
    experiment = load_config(config, overrides, output)
    if not tracking:
        experiment = dataclasses.replace(experiment, tracking=dataclasses.replace(experiment.tracking, enabled=False))

    reporter = Progress(sys.stderr) if progress else SILENT
    return run_pipeline(experiment, reporter, argv=["harness.run_experiment", str(config)], tracking_process=where)


__all__ = ["compare", "decide", "plan", "run_experiment"]
