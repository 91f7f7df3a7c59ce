"""Versions, not trained runs: a system's several runs (training seeds) pooled, and compared over users and seeds.

Under ``stats.claim: version`` a system is a training procedure and each of its runs one draw of it. Its value on
a user is the mean over its runs (:func:`pooled`), and two systems differ by the difference of those means, tested
with users and seeds both random (:func:`version_test`, the crossed design of :mod:`harness.stats.seeds`): the
user-paired tests on the pooled values would take the seeds' spread for a difference.

>>> ids = np.array(["u1", "u2", "u3"], dtype=object)
>>> runs = [PerQuery("v2", ids, (Measure("AP"),), np.array([[0.2], [0.4], [0.6]]), np.ones(3, dtype=bool)),
...         PerQuery("v2", ids[::-1], (Measure("AP"),), np.array([[0.8], [0.6], [0.4]]), np.ones(3, dtype=bool))]
>>> table = seeded_values(runs, Measure("AP"), None)   # runs x users, users in id order
>>> table.tolist()
[[0.2, 0.4, 0.6], [0.4, 0.6, 0.8]]
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from harness.evaluation.results import PerQuery, RunResult, summarize
from harness.measures.registry import REGISTRY
from harness.measures.spec import Measure
from harness.stats.ppi import sample_layers
from harness.stats.seeds import CrossedDifference, crossed_corrected, crossed_difference, detectable, mean_interval


@dataclass(frozen=True)
class SeededValues:
    """A guard's values for the version claim: each system's runs (seeds) x users, over the users every run has. On a
    judged dataset these are the judge's, and people's are on the users they judged (``sampled``: a mask over the
    judge's users), with each user's stratum for a stratified sample."""

    production: np.ndarray  # r_production x n
    candidate: np.ndarray  # r_candidate x n
    people_production: np.ndarray | None = None  # r_production x (people's users)
    people_candidate: np.ndarray | None = None
    sampled: np.ndarray | None = None
    strata: np.ndarray | None = None
    judge: str = ""

    @property
    def judged(self) -> bool:
        return self.sampled is not None


def segment_mask(table: PerQuery, segment: str | None, segments: Mapping[str, str] | None) -> np.ndarray | None:
    """Which of a table's queries lie in ``segment`` (by ``segments``: query id -> segment); None for every query.

    >>> t = PerQuery("a", np.array(["u1", "u2"], dtype=object), (), np.zeros((2, 0)), np.ones(2, dtype=bool))
    >>> segment_mask(t, "new", {"u1": "new"}).tolist(), segment_mask(t, None, None)
    ([True, False], None)
    """
    if segment is None:
        return None
    return np.asarray(table.segment_labels(segments or {}) == segment, dtype=np.bool_)


def seeded_values(
    runs: Sequence[PerQuery], measure: Measure, segment: str | None, segments: Mapping[str, str] | None = None
) -> np.ndarray | str:
    """The runs x users values of ``measure`` (users in the order of their ids, within the segment, every value
    finite), or why not: a run without the measure, or runs that do not all hold the same users."""
    found = seeded_users(runs, measure, segment, segments)
    return found if isinstance(found, str) else found[1]


def seeded_users(
    runs: Sequence[PerQuery], measure: Measure, segment: str | None, segments: Mapping[str, str] | None = None
) -> tuple[np.ndarray, np.ndarray] | str:
    """:func:`seeded_values` with the users' ids: (ids, runs x users values)."""
    lacking = [t.run for t in runs if measure not in t.measures]
    if lacking:
        return f"run {lacking[0]!r} has no values of {measure}"
    ids, columns = [], []
    for table in runs:
        mask = segment_mask(table, segment, segments)
        held = table.id_text if mask is None else table.id_text[mask]
        column = table.values[:, list(table.measures).index(measure)]
        if table.ascending:  # as harness's tables are: in the order of their ids already (no sort)
            ids.append(held)
            columns.append(column if mask is None else column[mask])
            continue
        order = np.argsort(held, kind="stable")
        ids.append(held[order])
        columns.append((column if mask is None else column[mask])[order])
    odd = next((t.run for t, held in zip(runs, ids, strict=True) if not np.array_equal(held, ids[0])), None)
    if odd is not None:
        return f"the runs do not all hold the same users ({odd!r} differs): the crossed design needs every run on every user"
    values = np.array(columns, dtype=np.float64).reshape(len(runs), len(ids[0]))
    finite = np.isfinite(values).all(axis=0)
    return ids[0][finite], values[:, finite]


def seeded_pair(
    production: Sequence[PerQuery],
    candidate: Sequence[PerQuery],
    measure: Measure,
    segment: str | None,
    segments: Mapping[str, str] | None = None,
) -> SeededValues | str:
    """Both systems' runs x users values of ``measure``, over the users every run of both has (finite), or why not."""
    table = seeded_values((*production, *candidate), measure, segment, segments)
    if isinstance(table, str):
        return table
    return SeededValues(table[: len(production)], table[len(production) :])


def seeded_judged(
    production: Sequence[RunResult],
    candidate: Sequence[RunResult],
    measure: Measure,
    segment: str | None,
    segments: Mapping[str, str] | None = None,
) -> SeededValues | str:
    """On a judged dataset, both systems' runs x users values of ``measure`` under the judge's labels, with people's
    on the users they judged and the strata (:class:`SeededValues`' ``people_*``, ``sampled``, ``strata``)."""
    runs = (*production, *candidate)
    judge = seeded_users(tables_of(runs), measure, segment, segments)
    people = seeded_users([r.people for r in runs if r.people is not None], measure, segment, segments)
    if isinstance(judge, str) or isinstance(people, str):
        return judge if isinstance(judge, str) else str(people)
    (ids, table), (people_ids, people_table) = judge, people
    inside = np.isin(people_ids, ids)  # people's users among the judge's (every value finite in both)
    sampled = np.isin(ids, people_ids[inside])
    strata = None
    first = production[0]
    if first.strata is not None:
        stratum = dict(zip(first.per_query.query_ids.astype(str).tolist(), first.strata.tolist(), strict=True))
        strata = np.array([stratum[q] for q in ids.tolist()], dtype=object)
    r = len(production)
    return SeededValues(
        table[:r],
        table[r:],
        people_table[:r, inside],
        people_table[r:, inside],
        sampled,
        strata,
        first.judge or "judge",
    )


def tables_of(runs: Sequence[RunResult]) -> list[PerQuery]:
    """Each run's per-query table."""
    return [r.per_query for r in runs]


def pooled(runs: Sequence[RunResult]) -> RunResult:
    """A system's runs (seeds) on a dataset as one result: on each user every run holds, the mean of the runs'
    values (NaN where one is NaN); the runs' count in ``diagnostics["runs"]``. The lists stay with each run. On a
    judged dataset people's values are pooled alike, and the strata and the judge's audit kept."""
    first = runs[0]
    per_query, keep = _pooled_table(first.system, tables_of(runs))
    segments = first.segments[keep]
    diagnostics: dict[str, object] = {
        "runs": len(runs),
        "queries_evaluated": int(keep.sum()),
        "queries_not_in_every_run": int((~keep).sum()),
    }
    judged: dict[str, object] = {}
    if all(r.people is not None for r in runs):
        people, _ = _pooled_table(first.system, [r.people for r in runs if r.people is not None])
        strata = None if first.strata is None else first.strata[keep]
        judged = {"people": people, "strata": strata, "judge": first.judge, "labels": first.labels}
    return RunResult(first.dataset, first.system, per_query, segments, diagnostics, **judged)  # type: ignore[arg-type]


def _pooled_table(system: str, tables: Sequence[PerQuery]) -> tuple[PerQuery, np.ndarray]:
    """The runs' tables pooled: on each user every table holds (the first's users, in its order), the mean of their
    values; and which of the first's users those are."""
    ids = tables[0].query_ids
    keep = np.ones(ids.size, dtype=bool)
    rows = []
    for table in tables:
        position = {q: i for i, q in enumerate(table.query_ids.tolist())}
        at = np.array([position.get(q, -1) for q in ids.tolist()], dtype=np.int64)
        keep &= at >= 0
        rows.append(at)
    stacked = np.stack([t.values[at[keep]] for t, at in zip(tables, rows, strict=True)])
    in_run = np.stack([t.in_run[at[keep]] for t, at in zip(tables, rows, strict=True)]).all(axis=0)
    # a measure under conventions of its own counts a user where every run's does (the same users: the same judgments)
    evaluated: np.ndarray | None = None
    if any(t.evaluated is not None for t in tables):
        counted = [np.ones(t.values.shape, dtype=bool) if t.evaluated is None else t.evaluated for t in tables]
        evaluated = np.asarray(np.stack([c[at[keep]] for c, at in zip(counted, rows, strict=True)]).all(axis=0))
    return PerQuery(system, ids[keep], tables[0].measures, stacked.mean(axis=0), np.asarray(in_run), evaluated), keep


def versions(results: Sequence[RunResult]) -> list[RunResult]:
    """The results with each system's runs on a dataset pooled into one (:func:`pooled`), in the order of their
    first run; a system's only run as it is."""
    return [runs[0] if len(runs) == 1 and not runs[0].seed else pooled(runs) for runs in runs_by_system(results).values()]


def runs_by_system(results: Sequence[RunResult]) -> dict[tuple[str, str], list[RunResult]]:
    """Each (dataset, system)'s runs, in order: one, or one per seed."""
    out: dict[tuple[str, str], list[RunResult]] = {}
    for r in results:
        out.setdefault((r.dataset, r.system), []).append(r)
    return out


def segment_map(result: RunResult) -> dict[str, str]:
    """A run's query id -> segment ('' where it has none)."""
    return dict(zip(result.per_query.query_ids.astype(str).tolist(), result.segments.tolist(), strict=True))


@dataclass(frozen=True)
class VersionTest:
    """mean_b - mean_a of two versions over users and seeds: the two-sided p and the 95% interval (t with
    Satterthwaite's df), and the crossed analysis itself."""

    p: float
    ci_low: float
    ci_high: float
    found: CrossedDifference


def version_test(a: np.ndarray, b: np.ndarray, confidence: float = 0.95) -> VersionTest | str:
    """The crossed test of b against a (runs x users tables, users aligned); why not, with one run of a system.

    >>> rng = np.random.default_rng(3)
    >>> users = rng.normal(0.5, 0.1, 100)
    >>> tested = version_test(users + rng.normal(0, 0.02, (4, 100)), users + 0.01 + rng.normal(0, 0.02, (4, 100)))
    >>> round(tested.found.estimate, 4), tested.ci_low < tested.found.estimate < tested.ci_high
    (0.0083, True)
    """
    too_few = _one_run(a.shape[0], b.shape[0])
    if too_few:
        return too_few
    if a.shape[1] < 2:
        return f"{a.shape[1]} user(s) in every run: too few to test"
    return _tested(crossed_difference(a, b, -1.0, 1.0), confidence)


def version_test_corrected(values: SeededValues, confidence: float = 0.95) -> VersionTest | str:
    """:func:`version_test` on a judged dataset: the crossed test of the candidate against production, each user's
    seed-averaged difference corrected by people's labels (:func:`~harness.stats.seeds.crossed_corrected`)."""
    assert values.people_production is not None and values.people_candidate is not None and values.sampled is not None
    too_few = _one_run(values.production.shape[0], values.candidate.shape[0])
    if too_few:
        return too_few
    layers = sample_layers(values.sampled, values.strata)
    if isinstance(layers, str):
        return layers
    found = crossed_corrected(
        [(values.people_production, -1.0), (values.people_candidate, 1.0)],
        [values.production, values.candidate],
        values.sampled,
        layers,
    )
    return _tested(found, confidence)


def _one_run(runs_a: int, runs_b: int) -> str:
    """Why a version has no test where a system has one run; "" otherwise."""
    if runs_a >= 2 and runs_b >= 2:
        return ""
    return (
        f"{runs_a} run(s) against {runs_b}: with one run of a system its seed variance cannot be estimated, so the "
        "version claim has no test"
    )


def _tested(found: CrossedDifference, confidence: float) -> VersionTest:
    """The two-sided p and the ``confidence`` interval of a crossed difference (t with its degrees of freedom)."""
    from scipy import stats

    if not found.variance > 0:
        return VersionTest(1.0 if found.estimate == 0 else 0.0, found.estimate, found.estimate, found)
    se = math.sqrt(found.variance)
    reach = float(stats.t.ppf(0.5 + confidence / 2, found.df)) * se
    p = float(2 * stats.t.sf(abs(found.estimate) / se, found.df))
    return VersionTest(min(1.0, p), found.estimate - reach, found.estimate + reach, found)


def version_rows(rows: list[dict[str, object]], results: Sequence[RunResult], confidence: float = 0.95) -> None:
    """The comparison rows of means between systems with several runs, tested as versions (in place): ``p_version``
    and the interval from :func:`version_test`; the user-paired statistics of the pooled values are left out (they
    would take the seeds' spread for a difference; ``mde`` is the version test's, :func:`~harness.stats.seeds.detectable`),
    and a row that cannot be tested says why in ``version_note``."""
    by_system = runs_by_system(results)
    maps: dict[tuple[str, str], dict[str, str]] = {}
    user_paired = (
        "ci_low_t",
        "ci_high_t",
        "ci_low_bootstrap",
        "ci_high_bootstrap",
        "effect_size",
        "effect_size_low",
        "effect_size_high",
        "mde",
        "n_needed",
        "p_floor",
        "mean_difference",
        "sd_difference",
    )
    for row in rows:
        if row["aggregate"] == "system":
            continue
        dataset, segment = str(row["dataset"]), str(row["segment"])
        a, b = by_system[(dataset, str(row["system_a"]))], by_system[(dataset, str(row["system_b"]))]
        for key in [k for k in row if k.startswith("p_") and k not in ("p_tukey_hsd",)]:
            del row[key]
        row.update(dict.fromkeys(user_paired, math.nan), p_tukey_hsd=math.nan, n_queries_tukey=0)
        row["ci_low"] = row["ci_high"] = row["p_version"] = math.nan
        if row["aggregate"] != "mean":
            row["version_note"] = f"the version claim is tested on means, and {row['measure']} is a {row['aggregate']}"
            continue
        where = (dataset, str(row["system_a"]))
        if where not in maps:
            maps[where] = segment_map(a[0])
        measure = next(m for m in a[0].measures if str(m) == row["measure"])
        within = None if segment == "all" else segment
        if a[0].people is not None and b[0].people is not None:  # a judged dataset: corrected by people's labels
            judged = seeded_judged(a, b, measure, within, maps[where])
            tested = judged if isinstance(judged, str) else version_test_corrected(judged, confidence)
            if isinstance(tested, str):
                row.update(version_note=tested, delta=math.nan)
                continue
            assert not isinstance(judged, str) and judged.sampled is not None
            row.update(
                p_version=tested.p,
                delta=tested.found.estimate,
                ci_low=tested.ci_low,
                ci_high=tested.ci_high,
                n_queries=int(judged.sampled.size),
                n_human=tested.found.n,
                mde=detectable(tested.found.variance, tested.found.df) if tested.found.variance > 0 else math.nan,
                version_note=(
                    f"{len(a)} runs against {len(b)}; seed noise {tested.found.seed_share:.0%} of the difference's "
                    f"variance; {tested.found.n:,} users judged by people, {judged.sampled.size:,} by the judge "
                    "(prediction-powered)"
                ),
            )
            continue
        table = seeded_values(tables_of((*a, *b)), measure, within, maps[where])
        tested = table if isinstance(table, str) else version_test(table[: len(a)], table[len(a) :], confidence)
        if isinstance(tested, str):
            row["version_note"] = tested
            continue
        row.update(
            p_version=tested.p,
            ci_low=tested.ci_low,
            ci_high=tested.ci_high,
            n_queries=tested.found.n,
            mde=detectable(tested.found.variance, tested.found.df) if tested.found.variance > 0 else math.nan,
            mean_difference=tested.found.estimate,
            sd_difference=math.sqrt(tested.found.variance * tested.found.n),
            version_note=(
                f"{len(a)} runs against {len(b)}; seed noise {tested.found.seed_share:.0%} of the difference's variance"
            ),
        )


def version_summary(runs: Sequence[RunResult], seed_rows: Sequence[Mapping[str, object]]) -> list[dict[str, object]]:
    """The summary rows of a system's version over its runs (``seed: all``): a mean over every run's users with its
    interval over users and seeds (:func:`~harness.stats.seeds.mean_interval`), another aggregate over the pooled
    values, and a system measure (one value per run: ``seed_rows``) as the mean of the runs' values with a t-interval
    over them."""
    from scipy import stats

    version = pooled(runs)
    tables = tables_of(runs)
    where = segment_map(runs[0])
    out: list[dict[str, object]] = []
    for summary in summarize(version):
        measure = next(m for m in version.per_query.measures if str(m) == summary["measure"])
        within = None if summary["segment"] == "all" else str(summary["segment"])
        if version.people is not None:  # a judged dataset: the version's mean corrected by people's labels
            summary = _corrected_version(runs, summary, measure, within, where)
        elif REGISTRY.definition(measure).aggregate == "mean":
            table = seeded_values(tables, measure, within, where)
            if not isinstance(table, str) and table.size:
                summary["mean"], summary["ci_low"], summary["ci_high"] = mean_interval(table)
        out.append({**summary, "seed": "all", "runs": len(runs)})
    by_measure: dict[tuple[object, object], list[float]] = {}
    system_measures = {str(m) for m in runs[0].system_measures}
    for row in seed_rows:
        if row["measure"] in system_measures:
            by_measure.setdefault((row["segment"], row["measure"]), []).append(float(row["value"]))  # type: ignore[arg-type]
    for (segment, name), values in by_measure.items():
        mean, half = float(np.mean(values)), math.nan
        if len(values) >= 2:
            half = float(stats.t.ppf(0.975, len(values) - 1)) * float(np.std(values, ddof=1)) / math.sqrt(len(values))
        users = next(r["n_queries"] for r in seed_rows if r["measure"] == name and r["segment"] == segment)
        out.append(
            {
                "dataset": version.dataset,
                "system": version.system,
                "segment": segment,
                "measure": name,
                "value": mean,
                "mean": mean,
                "ci_low": mean - half,
                "ci_high": mean + half,
                "n_queries": users,
                "seed": "all",
                "runs": len(runs),
            }
        )
    return out


def _corrected_version(
    runs: Sequence[RunResult],
    summary: Mapping[str, object],
    measure: Measure,
    segment: str | None,
    segments: Mapping[str, str],
) -> dict[str, object]:
    """A judged version's summary row: its mean over users and seeds, the judge's corrected by people's
    (:func:`~harness.stats.seeds.crossed_corrected` of the one system), with the judge's alone beside it; a measure
    that is not a mean over users is the judge's alone."""
    from scipy import stats

    from harness.comparison.judged import JUDGE_ONLY, corrected_summary, corrects

    if not corrects(measure):
        return {**summary, "estimator": JUDGE_ONLY}
    found = seeded_judged(runs, runs, measure, segment, segments)  # the system against itself: its tables, twice
    if isinstance(found, str):
        return corrected_summary(summary, found)
    assert found.people_production is not None and found.sampled is not None
    layers = sample_layers(found.sampled, found.strata)
    if isinstance(layers, str):
        return corrected_summary(summary, layers)
    crossed = crossed_corrected([(found.people_production, 1.0)], [found.production], found.sampled, layers)
    reach = float(stats.t.ppf(0.975, crossed.df)) * math.sqrt(crossed.variance)
    estimate = crossed.estimate
    return corrected_summary(
        summary, "", estimate, estimate - reach, estimate + reach, crossed.n, int(found.sampled.size), crossed.lam
    )


def is_seeded(results: Sequence[RunResult]) -> bool:
    """Whether any system has several runs (seeds) of a dataset."""
    return any(r.seed for r in results)


__all__ = [
    "SeededValues",
    "VersionTest",
    "is_seeded",
    "pooled",
    "runs_by_system",
    "seeded_judged",
    "seeded_pair",
    "seeded_users",
    "seeded_values",
    "segment_map",
    "segment_mask",
    "tables_of",
    "version_rows",
    "version_summary",
    "version_test",
    "version_test_corrected",
    "versions",
]
