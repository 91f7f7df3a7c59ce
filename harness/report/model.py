"""Results folder -> ReportModel: formatted strings, marks and charts; no HTML layout here."""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from markupsafe import Markup

from harness.comparison.rows import FEW_QUERIES, Comparison, Comparisons
from harness.decision.verdict import Decision
from harness.measures.peers import PEERS, option_users
from harness.measures.registry import REGISTRY
from harness.measures.spec import Measure
from harness.records.mlflow_names import run_url
from harness.records.store import SavedResults, previous_folders, recorded_path
from harness.report import charts
from harness.report.format import format_ci, format_delta, format_p, format_value

Label = Callable[[Measure | str], str]  # a measure's display name; the summary and diagnostics tables come from disk (Any)
TOP_QUERIES = 10  # per measure and system: the queries that changed most against the baseline (the rest: per_query.parquet)


@dataclass(frozen=True)
class Cell:
    text: str
    sort: str = ""  # the value the column sorts by (a number as text, or the text)
    classes: str = ""
    note: str = ""  # a second, smaller line (e.g. the CI)
    title: str = ""  # tooltip


@dataclass(frozen=True)
class Table:
    columns: list[tuple[str, str]]  # (label, "num" | "text")
    rows: list[list[Cell]]
    id: str = ""
    kinds: tuple[str, ...] = ()  # what each row is, where a table groups its rows (the release's: RELEASE_KINDS)


@dataclass(frozen=True)
class MeasureCharts:
    """Every per-query chart of one measure: shown one measure at a time, chosen from a list."""

    label: str
    charts: list[Markup]


@dataclass(frozen=True)
class DatasetSection:
    name: str
    anchor: str
    baseline: str | None
    main_table: Table
    comparison_table: Table | None
    measure_charts: list[MeasureCharts]
    cutoff_charts: list[Markup]
    wtl_chart: Markup | None
    segments: list[tuple[str, Table]]
    diagnostics: Table
    top_changes: Table | None
    anova: Table | None
    conventions: list[tuple[str, str, str]]  # (option, value, the tools that use that value)
    against_baseline: Table | None = None  # for summary.md: each measure's difference, CI and p per system
    beyond_table: Table | None = None  # beyond-accuracy measures: one row each, one column per system
    long_tail_chart: Markup | None = None
    group_charts: list[Markup] = field(default_factory=list)  # fairness measures' values per item or user group
    labels: LabelsSection | None = None  # a judged dataset: its judge against people


@dataclass(frozen=True)
class LabelsSection:
    """A judged dataset's judge against people (agreement.json): how far the labels agree, the confusion matrix,
    each system's bias, the rankings under each labelling, and what a reader must be warned of."""

    judge: str
    sample: str  # how people's queries are taken to have been drawn
    agreement: Table
    confusion: Markup
    bias: Table | None
    rankings: list[str]
    warnings: list[str]


@dataclass(frozen=True)
class ReportModel:
    title: str
    experiment: str
    description: str
    started: str
    harness_version: str
    config_hash: str
    mlflow_text: str | None
    mlflow_href: str | None
    verdict: Decision | None
    legend: str
    markdown_legend: str  # the legend of summary.md's tables (no bold, no bracketed intervals there)
    datasets: list[DatasetSection]
    settings: list[tuple[str, str]]
    inputs: list[tuple[str, str, str, str]]
    versions: list[tuple[str, str]]
    command: str
    finished: str
    warnings: list[str] = field(default_factory=list)
    changes: list[str] = field(default_factory=list)
    release_changes: Table | None = None  # candidate against production, before the changes of reference systems
    top_queries: int = TOP_QUERIES
    trend_charts: list[Markup] = field(default_factory=list)
    over_seeds: bool = False  # stats.claim: version: the comparisons are of versions, over users and seeds

    @property
    def gate_plan(self) -> bool:
        """Whether the guards' table shows each guard's users for the whole gate's plan."""
        return self.verdict is not None and any(g.n_needed_gate for g in self.verdict.guards)


def what_changed(comparisons: Comparisons, diagnostics: Any, baseline: str | None, label: Label) -> list[str]:
    """One line per (system, dataset, segment) against the baseline: its significant wins and losses, then data warnings.

    Each change reads ``nDCG@10 -0.0123 [95% CI -0.0201, -0.0045], p = 0.0012, d_z -0.31``.
    """
    lines: list[str] = []
    if baseline is not None:
        groups: dict[tuple[str, str, str], list[Comparison]] = {}
        for r in comparisons:
            if r.system_a == baseline and r.significant:
                groups.setdefault((r.system_b, r.dataset, r.segment), []).append(r)
        for (system, dataset, segment), rows in groups.items():
            parts: dict[str, list[str]] = {"better": [], "worse": []}
            for r in rows:
                p = format_p(r.p_adj)
                parts["better" if r.better else "worse"].append(
                    f"{label(r.measure)} {r.delta:+.4f} [95% CI {r.ci_low:+.4f}, {r.ci_high:+.4f}], "
                    f"p {p if p.startswith('<') else '= ' + p}, "
                    + (
                        "bootstrap over users and seeds"
                        if r.aggregate == "system" and r.primary_test == "bootstrap"
                        else "bootstrap over users"
                        if r.aggregate == "system"  # a system measure: no per-query differences
                        else "t over users and seeds"
                        if r.primary_test == "version"
                        else "d_z undefined (constant difference)"
                        if r.effect_size != r.effect_size
                        else f"d_z {r.effect_size:+.2f}"
                    )
                )
            where = f"{dataset}" + ("" if segment == "all" else f" / {segment}")
            for kind in ("worse", "better"):
                if parts[kind]:
                    shown = "; ".join(parts[kind][:4]) + (f"; and {len(parts[kind]) - 4} more" if len(parts[kind]) > 4 else "")
                    lines.append(
                        f"{system} is significantly {kind} than {baseline} on {where} in {len(parts[kind])} measure(s): {shown}"
                    )
    lines.sort(key=lambda line: " is significantly better " in line)  # stable: the regressions first, in order
    if diagnostics is not None and "judged_queries_missing_from_run" in diagnostics:
        for r in diagnostics[diagnostics["judged_queries_missing_from_run"] > 0].itertuples():
            missing = int(r.judged_queries_missing_from_run)
            lines.append(f"{r.system} on {r.dataset}: {missing} judged queries are missing from the run (scored 0)")
    return lines


def _relabelled(verdict: Decision | None, measures: Sequence[Measure], label: Label) -> Decision | None:
    """The verdict with every measure named as the rest of the report names it (``nDCG@10 [graded]``)."""
    if verdict is None:
        return None
    renames = sorted(((str(m), label(m)) for m in measures if label(m) != str(m)), key=lambda pair: -len(pair[0]))

    def rename(text: str) -> str:
        for old, new in renames:
            text = text.replace(old, new)
        return text

    guards = tuple(dataclasses.replace(g, guard=rename(g.guard), reason=rename(g.reason)) for g in verdict.guards)
    warnings = tuple(dataclasses.replace(g, guard=rename(g.guard), reason=rename(g.reason)) for g in verdict.warnings)
    return dataclasses.replace(verdict, guards=guards, warnings=warnings)


TREND_RUNS = 20  # the guarded measures over this many of the experiment's latest results folders


def _earlier_summaries(results: SavedResults) -> tuple[list[Path], list[Any], list[str]]:
    """The summaries of the experiment's earlier results folders (the last TREND_RUNS - 1), and a warning for each one
    that cannot be read: a damaged sibling is skipped, never the reason a report fails. None without a release gate
    (its guarded measures are what the trend draws) or a folder (results in memory)."""
    import pandas as pd

    folders: list[Path] = []
    summaries: list[Any] = []
    skipped: list[str] = []
    if results.recorded.release is None or results.folder == Path():
        return folders, summaries, skipped
    for folder in [f for f in previous_folders(results.folder.parent) if f != results.folder][-(TREND_RUNS - 1) :]:
        try:
            summary = pd.read_parquet(folder / "summary.parquet")
            if not {"dataset", "system", "segment", "measure", "value"} <= set(summary.columns):
                raise ValueError("not a summary table")
        except Exception as exc:  # any damage: the trend is drawn without it, and the report says so
            skipped.append(
                f"The earlier results folder {folder.name} was left out of the run-after-run charts: its "
                f"summary.parquet cannot be read ({' '.join(str(exc).split())[:160]})."
            )
            continue
        folders.append(folder)
        summaries.append(summary)
    return folders, summaries, skipped


def trend_charts(results: SavedResults, label: Label, earlier: tuple[list[Path], list[Any]]) -> list[Markup]:
    """Each guarded measure over the experiment's results folders (this one last), for production and candidate; none
    with no earlier folder (a chart of one dot per line says nothing)."""
    release = results.recorded.release
    folders, earlier_summaries = earlier
    if release is None or not folders:
        return []
    summaries = [
        *(s[s["seed"] == "all"] if "seed" in s.columns else s for s in earlier_summaries),
        results.system_summary,
    ]  # a system with seeds: its version over them
    stamps = [f.name[4:8] + "-" + f.name[9:13] if len(f.name) > 13 else f.name for f in [*folders, results.folder]]
    systems = (release.production, release.candidate)
    out = []
    for guard in release.guards:
        measure, segment = guard.measure, guard.segment or "all"
        datasets = [guard.dataset] if guard.dataset else sorted(set(results.system_summary["dataset"]))
        for dataset in datasets:
            series: dict[str, list[tuple[int, float]]] = {s: [] for s in systems}
            for i, summary in enumerate(summaries):
                rows = summary[
                    (summary["dataset"] == dataset) & (summary["segment"] == segment) & (summary["measure"] == measure)
                ]
                for system, value in zip(rows["system"].tolist(), rows["value"].tolist(), strict=True):
                    if system in series:
                        series[str(system)].append((i, float(value)))
            if any(series.values()):
                where = dataset + ("" if segment == "all" else f" / {segment}")
                title = f"{label(measure)} on {where}, run after run"
                out.append(
                    charts.lines(series, stamps, title, "results folder (month-day hour-minute, oldest first)", label(measure))
                )
    return out


def _higher(measure: Measure) -> bool:
    return REGISTRY.definition(measure).higher(measure)


def _beyond(measure: Measure) -> bool:
    """A beyond-accuracy measure (it reads the items: coverage, diversity, novelty, popularity)."""
    return REGISTRY.definition(measure).beyond_accuracy


def _long_tail_chart(long_tail: Any, dataset: str, systems: list[str]) -> Markup | None:
    if long_tail is None or not (long_tail["dataset"] == dataset).any():
        return None
    mine = long_tail[long_tail["dataset"] == dataset]
    series = {
        s: list(
            zip(mine[mine["system"] == s]["rank"].tolist(), mine[mine["system"] == s]["cumulative_share"].tolist(), strict=True)
        )
        for s in systems
        if (mine["system"] == s).any()
    }
    cutoff = int(mine["cutoff"].iloc[0])
    at = f" (top {cutoff})" if cutoff else ""
    return charts.long_tail(series, f"Recommendations per item{at}: the long tail")


def _group_charts(groups: Any, dataset: str, systems: list[str]) -> list[Markup]:
    """One chart per fairness measure with groups: each group's value (REO's P_g, a group's share of exposure), one
    bar per system."""
    if groups is None or not (groups["dataset"] == dataset).any():
        return []
    mine = groups[groups["dataset"] == dataset]
    out = []
    for measure in dict.fromkeys(mine["measure"].tolist()):
        rows = mine[mine["measure"] == measure]
        names = list(dict.fromkeys(rows["group"].astype(str).tolist()))
        # one column per system that has values, one row per group in the order first met (a missing one: NaN)
        table = rows.assign(group=rows["group"].astype(str)).pivot(index="group", columns="system", values="value")
        series = {s: table[s].reindex(names).astype(float).tolist() for s in systems if s in table.columns}
        by = str(rows["by"].iloc[0]) if "by" in rows and isinstance(rows["by"].iloc[0], str) else ""
        out.append(
            charts.group_bars(names, series, f"{measure}: each group", "value per group", f"item group ({by})" if by else "group")
        )
    return out


def _integer(measure: Measure) -> bool:
    return REGISTRY.definition(measure).integer


def _anchor(text: str) -> str:
    return "ds-" + re.sub(r"[^A-Za-z0-9_-]", "-", text)


def _num(value: float | None) -> str:
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) else repr(float(value))


def _significance(
    comparisons: Comparisons, dataset: str, segment: str, baseline: str | None
) -> dict[tuple[str, str], tuple[str, str]]:
    """(system, measure) -> (mark, tooltip) against the baseline after correction."""
    marks: dict[tuple[str, str], tuple[str, str]] = {}
    if baseline is None:
        return marks
    for row in comparisons:
        if (row.dataset, row.segment) != (dataset, segment) or baseline not in (row.system_a, row.system_b):
            continue
        row = row if row.system_a == baseline else row.reversed()  # the other system against the baseline
        tip = f"{format_delta(row.delta)} vs {baseline}, corrected p {format_p(row.p_adj)}"
        if row.significant and row.delta != 0:
            marks[(row.system_b, row.measure)] = ("▲" if row.better else "▼", tip)
        else:
            marks[(row.system_b, row.measure)] = ("", tip)
    return marks


def _t_instead(comparisons: Comparisons, stats: Mapping[str, Any]) -> str:
    """Where ``resampling: auto`` let the t-test decide in the primary resampling test's place: how many of the
    comparisons, in words (nothing where it did not)."""
    paired = [r for r in comparisons.rows if r.aggregate != "system" and not r.estimator and r.primary_test != "version"]
    by_t = sum(r.primary_test == "t" for r in paired)
    if not by_t or stats.get("primary") == "t":
        return ""
    return (
        f" (the t-test on the {by_t:,} of {len(paired):,} comparisons where it can be trusted, the resampling tests "
        "adding only their Monte Carlo error there: stats.resampling auto)"
    )


def _controlled(stats: Mapping[str, Any]) -> str:
    """What the correction controls, in words: the reader must know what a ▲ promises."""
    if stats.get("correction") == "none":
        return "no correction: each mark has its own 5% chance of being a false alarm, and a table of many has far more."
    what = "false discovery rate" if stats.get("correction") == "bh" else "family-wise error"
    if stats.get("family") == "grid":
        return f"the {what} is controlled over every pair x measure x dataset of a segment (family: grid)."
    return (
        f"the {what} is controlled within each measure (its pairs) but not across the measures of the table; "
        f"set stats.family: grid to control it over the whole table."
    )


def _main_table(
    summary: Any,
    comparisons: Comparisons,
    dataset: str,
    segment: str,
    systems: list[str],
    measures: Sequence[Measure],
    baseline: str | None,
    label: Label,
    spread: Mapping[tuple[str, str, str, str], tuple[int, float, float]] | None = None,
) -> Table:
    """One row per measure, one column per system: as long as needed, never wider than the page; a system with
    several runs shows its version's value, with the runs' lowest and highest beside it (``spread``)."""
    rows_df = summary[(summary["dataset"] == dataset) & (summary["segment"] == segment)]
    values = {(r.system, r.measure): r for r in rows_df.itertuples()}
    marks = _significance(comparisons, dataset, segment, baseline)
    table_rows = []
    for measure in measures:
        m = str(measure)
        column = [float(values[(s, m)].value) for s in systems if (s, m) in values]
        goodness = REGISTRY.definition(measure).goodness  # higher, lower, or closer to the measure's target
        finite = [v for v in column if math.isfinite(v)]
        best = max(goodness(measure, v) for v in finite) if finite else None
        row = [Cell(label(m), label(m), "measure")]
        for s in systems:
            r = values.get((s, m))
            if r is None:
                row.append(Cell("–", ""))
                continue
            mark, tip = marks.get((s, m), ("", ""))
            classes = " ".join(
                c
                for c in (
                    "best" if len(systems) > 1 and goodness(measure, float(r.value)) == best else "",
                    {"▲": "sig-up", "▼": "sig-down"}.get(mark, ""),
                )
                if c
            )
            text = format_value(float(r.value), integer=_integer(measure)) + (f" {mark}" if mark else "")
            note = format_ci(*_within(r.ci_low, r.ci_high, REGISTRY.definition(measure).range_of(measure)))
            runs = (spread or {}).get((dataset, segment, s, m))
            if runs is not None:
                n, low, high = runs
                note += (
                    f" · {n} seeds {format_value(low, integer=_integer(measure))}–{format_value(high, integer=_integer(measure))}"
                )
            row.append(Cell(text, _num(float(r.value)), classes, note, tip))
        table_rows.append(row)
    heads = [(s + (" (baseline)" if s == baseline else ""), "num") for s in systems]
    return Table([("measure", "text"), *heads], table_rows)


def _comparison_table(
    comparisons: Comparisons, dataset: str, label: Label, anchor: str, by_name: Mapping[str, Measure]
) -> Table | None:
    """Every tested pair x measure x segment in one sortable, filterable table (replaces mirrored matrices)."""
    mine = [r for r in comparisons if r.dataset == dataset]
    if not mine:
        return None
    has_tukey = any(r.p_tukey_hsd == r.p_tukey_hsd for r in mine)
    has_dz = any(r.effect_size == r.effect_size for r in mine)  # none for system measures: no column of dashes
    columns = [
        ("segment", "text"),
        ("measure", "text"),
        ("b vs a", "text"),
        ("mean a", "num"),
        ("mean b", "num"),
        ("b − a", "num"),
        ("95% CI", "num"),
        ("p (corrected)", "num"),
        *([("d_z", "num")] if has_dz else []),
        ("W / T / L", "num"),
    ]
    if has_tukey:
        columns.append(("Tukey HSD p", "num"))
    rows = []
    for r in mine:
        classes = ("sig-up" if r.better else "sig-down") if r.significant and r.delta != 0 else ""
        flags = [f for f, on in (("few queries", r.few_queries), ("cannot reach significance", r.resolution_limited)) if on]
        p_text = format_p(r.p_adj) + (" ▲" if classes == "sig-up" else " ▼" if classes == "sig-down" else "")
        row = [
            Cell(str(r.segment), str(r.segment)),
            Cell(label(r.measure), label(r.measure)),
            Cell(f"{r.system_b} vs {r.system_a}", f"{r.system_b} vs {r.system_a}", note=", ".join(flags)),
            Cell(format_value(r.mean_a, integer=_integer(by_name[r.measure])), _num(r.mean_a)),
            Cell(format_value(r.mean_b, integer=_integer(by_name[r.measure])), _num(r.mean_b)),
            Cell(format_delta(r.delta), _num(r.delta), classes),
            Cell(
                format_ci(*_within(r.ci_low, r.ci_high, _spread(by_name[r.measure]))),
                _num(r.ci_low),
                title="bootstrap over users (a system measure)"
                if r.aggregate == "system"
                else "t interval; bootstrap-t: " + format_ci(r.ci_low_bootstrap, r.ci_high_bootstrap)
                if r.resampled
                else "t interval (not resampled: the t-test can be trusted here)",
            ),
            Cell(
                p_text,
                _num(r.p_adj),
                classes,
                note=_undetected(r),
                title=f"{r.primary_test}, {r.correction}-corrected ({r.family})" + _needed(r),
            ),
            *([Cell(format_value(r.effect_size, digits=2), _num(r.effect_size), note=_effect_interval(r))] if has_dz else []),
            Cell("–" if r.aggregate == "system" else f"{r.wins} / {r.ties} / {r.losses}", _num(float(r.wins))),
        ]
        if has_tukey:
            row.append(Cell(format_p(r.p_tukey_hsd), _num(r.p_tukey_hsd), title=f"over {r.n_queries_tukey} shared queries"))
        rows.append(row)
    return Table(columns, rows, id=f"{anchor}-comparisons")


def _within(low: float | None, high: float | None, bounds: tuple[float, float] | None) -> tuple[float | None, float | None]:
    """An interval as shown: within the values its quantity can take (a t interval of a mean of [0, 1] values can
    reach past 1; the mean cannot), the interval as computed otherwise (the tables keep it as computed).

    >>> _within(0.93, 1.04, (0.0, 1.0)), _within(-0.2, 0.1, None)
    ((0.93, 1.0), (-0.2, 0.1))
    """
    if bounds is None or low is None or high is None or low != low or high != high:
        return low, high
    return max(low, bounds[0]), min(high, bounds[1])


def _spread(measure: Measure) -> tuple[float, float] | None:
    """The values a difference of two means of ``measure`` can take: within the width of its range."""
    bounds = REGISTRY.definition(measure).range_of(measure)
    return None if bounds is None else (bounds[0] - bounds[1], bounds[1] - bounds[0])


def _effect_interval(row: Comparison) -> str:
    low, high = row.effect_size_low, row.effect_size_high
    return "" if low != low else f"[{low:+.2f}, {high:+.2f}]"


def _undetected(row: Comparison) -> str:
    """Under a non-significant comparison: the smallest difference its queries detect (80% power), never "no difference"."""
    mde = row.mde
    if row.significant or mde != mde:
        return ""
    return f"MDE {format_value(mde)}"


def _needed(row: Comparison) -> str:
    needed = row.n_needed
    if row.significant or needed != needed:
        return ""
    return f"; about {int(needed):,} queries would detect the observed difference with 80% power"


def _against_baseline(
    comparisons: Comparisons, dataset: str, systems: list[str], baseline: str | None, measures: Sequence[Measure], label: Label
) -> Table | None:
    """Rows: measures; columns: each other system's difference against the baseline, its 95% CI and corrected p."""
    if baseline is None or baseline not in systems or not len(comparisons):
        return None
    others = [s for s in systems if s != baseline]
    table_rows = []
    for m in measures:
        found = {s: comparisons.find(dataset, "all", str(m), baseline, s) for s in others}
        if not any(r is not None for r in found.values()):  # not computed on this dataset (beyond accuracy without train)
            continue
        row = [Cell(label(m))]
        for s in others:
            r = found[s]
            if r is None:
                row.append(Cell("–"))
                continue
            mark = (" ▲" if r.better else " ▼") if r.significant and r.delta != 0 else ""
            p = format_p(r.p_adj)
            p_text = p if p.startswith("<") else "= " + p
            row.append(Cell(f"{format_delta(r.delta)} {format_ci(r.ci_low, r.ci_high)}, p {p_text}{mark}"))
        table_rows.append(row)
    return Table([("measure", "text"), *[(f"{s} − {baseline}", "text") for s in others]], table_rows)


def release_changes(comparisons: Comparisons, production: str, candidate: str, label: Label) -> Table | None:
    """What the release changes: candidate against production, one row per dataset x segment x measure, significant
    losses first, then what these users cannot tell (with the smallest difference they detect and the users that would
    detect the observed one), then significant gains."""
    ranked = []
    for r in comparisons:
        if {r.system_a, r.system_b} != {production, candidate}:
            continue
        r = r if r.system_a == production else r.reversed()  # candidate - production
        delta, low, high = r.delta, r.ci_low, r.ci_high
        # 1 losses, 2 undecided, 3 gains, 4 undefined here (either value: nothing to compare, never a change)
        kind = 4 if not math.isfinite(delta) else 2 if not r.significant or delta == 0 else (3 if r.better else 1)
        mde, needed, prod, cand = r.mde, r.n_needed, r.mean_a, r.mean_b
        cells = [
            Cell(str(r.dataset)),
            Cell(str(r.segment)),
            Cell(label(r.measure)),
            Cell(format_value(prod), _num(prod)),
            Cell(format_value(cand), _num(cand)),
            Cell("undefined here", "", title="either value is undefined on these users: nothing to compare")
            if kind == 4
            else Cell(format_delta(delta), _num(delta), {1: "sig-down", 3: "sig-up"}.get(kind, ""), note=format_ci(low, high)),
            Cell(format_p(r.p_adj), _num(r.p_adj)),
            Cell("" if kind != 2 or mde != mde else format_value(mde), _num(mde)),
            Cell("" if kind != 2 or needed != needed else f"{int(needed):,}", _num(needed)),
        ]
        ranked.append(((kind, -abs(delta) if kind in (1, 3) else 0.0), cells))  # losses and gains: largest first
    if not ranked:
        return None
    ranked.sort(key=lambda pair: pair[0])
    columns = [
        ("dataset", "text"),
        ("segment", "text"),
        ("measure", "text"),
        (production, "num"),
        (candidate, "num"),
        ("difference (95% CI)", "num"),
        ("p (corrected)", "num"),
        ("MDE (80% power)", "num"),
        ("users to detect it", "num"),
    ]
    return Table(
        columns, [cells for _, cells in ranked], id="release-changes", kinds=tuple(RELEASE_KINDS[kind] for (kind, _), _ in ranked)
    )


RELEASE_KINDS = {1: "loss", 2: "none", 3: "gain", 4: "undefined"}  # a release row: a significant loss, no detectable
# change, a significant gain, or a comparison undefined on its users


def _families(measures: Sequence[Measure]) -> dict[str, list[tuple[int, Measure]]]:
    """Measures that differ only in their cutoff: 'nDCG' -> [(5, nDCG@5), (10, nDCG@10)]."""
    families: dict[str, list[tuple[int, Measure]]] = {}
    for m in measures:
        if m.cutoff is not None:
            base = str(dataclasses.replace(m, cutoff=None))
            families.setdefault(base, []).append((m.cutoff, m))
    return {k: v for k, v in families.items() if len(v) >= 2}


def _seed_spread(seeds: Any) -> dict[tuple[str, str, str, str], tuple[int, float, float]]:
    """(dataset, segment, system, measure) -> (runs, lowest, highest) of the systems with several runs (seeds)."""
    if seeds is None or not len(seeds):
        return {}
    grouped = seeds.groupby(["dataset", "segment", "system", "measure"], sort=False)["value"].agg(["count", "min", "max"])
    return {
        tuple(str(k) for k in key): (int(row["count"]), float(row["min"]), float(row["max"]))  # type: ignore[misc]
        for key, row in grouped.iterrows()
    }


@dataclass(frozen=True)
class _Wide:
    """One measure's per-query values: each system's, row by row over the same (query, segment) pairs (``keys``)."""

    keys: Any
    values: Mapping[str, np.ndarray]

    def __contains__(self, system: object) -> bool:
        return system in self.values

    def __getitem__(self, system: str) -> np.ndarray:
        return self.values[system]

    def label(self, row: int) -> tuple[str, str]:
        """The (query, segment) of a row."""
        query, segment = self.keys.iloc[row]
        return str(query), str(segment)


def _wides(results: SavedResults, dataset: str, measures: Sequence[Measure]) -> dict[Measure, _Wide]:
    """Each measure's (query_id, segment) x system values (:meth:`SavedResults.wide_per_query`: a system with several
    runs shows their mean)."""
    wides = {}
    for m in measures:
        wide = results.wide_per_query(dataset, "system", str(m), keys=("query_id", "segment"))
        systems = [str(column) for column in wide.columns[2:]]
        values = {s: wide[s].to_numpy(dtype=np.float64) for s in systems}
        wides[m] = _Wide(wide[["query_id", "segment"]], values)
    return wides


def _top_changes(
    wides: Mapping[Measure, _Wide], systems: list[str], baseline: str, measures: Sequence[Measure], label: Label, anchor: str
) -> Table:
    """The queries that changed most against the baseline, per measure and system (bounded: TOP_QUERIES each)."""
    columns = [
        ("measure", "text"),
        ("system", "text"),
        ("query", "text"),
        ("segment", "text"),
        (f"{baseline}", "num"),
        ("system value", "num"),
        ("difference", "num"),
    ]
    rows = []
    for m in measures:
        wide = wides[m]
        if baseline not in wide:
            continue
        for s in systems:
            if s == baseline or s not in wide:
                continue
            before, after = wide[baseline], wide[s]
            both = np.flatnonzero(~np.isnan(after - before))  # by position: a label lookup in 200,000 rows is slow
            delta = after[both] - before[both]
            order = np.argsort(-np.abs(delta), kind="stable")[:TOP_QUERIES]
            for i in order.tolist():
                qid, segment = wide.label(int(both[i]))
                b, v, d = float(before[both[i]]), float(after[both[i]]), float(delta[i])
                better = REGISTRY.definition(m).goodness(m, v) > REGISTRY.definition(m).goodness(m, b)
                rows.append(
                    [
                        Cell(label(m), label(m)),
                        Cell(s, s),
                        Cell(str(qid), str(qid)),
                        Cell(str(segment), str(segment)),
                        Cell(format_value(b, integer=_integer(m)), _num(b)),
                        Cell(format_value(v, integer=_integer(m)), _num(v)),
                        Cell(format_delta(d), _num(d), ("sig-up" if better else "sig-down") if d else ""),
                    ]
                )
    return Table(columns, rows, id=f"{anchor}-top-changes")


def _measure_charts(
    wides: Mapping[Measure, _Wide], systems: list[str], baseline: str | None, measures: Sequence[Measure], label: Label
) -> list[MeasureCharts]:
    """For every measure: each system's sorted per-query differences against the baseline, and the score distributions."""
    out = []
    for m in measures:
        wide = wides[m]
        if not any(s in wide for s in systems):  # a system measure: one value per run, no per-query chart to draw
            continue
        charts_of_m = []
        if baseline is not None and baseline in wide:
            for s in systems:
                if s == baseline or s not in wide:
                    continue
                d = wide[s] - wide[baseline]
                d = d[~np.isnan(d)] * (1.0 if _higher(m) else -1.0)
                charts_of_m.append(charts.sorted_deltas(d, f"{label(m)}: {s} − {baseline}, per query", f"{s} against {baseline}"))
        present = [s for s in systems if s in wide]
        charts_of_m.append(
            charts.distributions({s: wide[s][~np.isnan(wide[s])] for s in present}, f"{label(m)}: per-query values")
        )
        out.append(MeasureCharts(label(m), charts_of_m))
    return out


def _diagnostics_table(diagnostics: Any, dataset: str, systems: list[str]) -> Table:
    """One row per diagnostic, one column per system; a system with several runs (seeds) shows the one value they
    share, or their lowest and highest ("0.12–0.14"), under a first row counting its runs."""
    if diagnostics is None:
        return Table([], [])
    mine = diagnostics[diagnostics["dataset"] == dataset]
    runs = mine.groupby("system", sort=False).size() if "seed" in mine.columns else None
    mine = mine.drop(columns=[c for c in ("dataset", "seed") if c in mine.columns])
    present = [s for s in systems if s in set(mine["system"])]
    rows = []
    if runs is not None:
        rows.append([Cell("runs (seeds)", "runs"), *[Cell(str(int(runs[s])), str(int(runs[s]))) for s in present]])
    for name in [c for c in mine.columns if c != "system"]:
        row = [Cell(name.replace("_", " "), name)]
        for s in present:
            values = mine[mine["system"] == s][name].tolist()
            v = values[0]
            numeric = [
                float(x)
                for x in values
                if isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool) and not math.isnan(float(x))
            ]
            if len(values) > 1 and len(numeric) == len(values) and min(numeric) != max(numeric):
                integer = all(x.is_integer() for x in numeric) and "fraction" not in name
                low, high = (format_value(x, integer=integer) for x in (min(numeric), max(numeric)))
                row.append(Cell(f"{low}–{high}", _num(min(numeric))))
            elif v is None or (isinstance(v, float) and math.isnan(v)):
                row.append(Cell("–", ""))
            elif isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool):
                integer = float(v).is_integer() and "fraction" not in name
                row.append(Cell(format_value(float(v), integer=integer), _num(float(v))))
            else:
                row.append(Cell(str(v), str(v)))
        rows.append(row)
    return Table([("diagnostic", "text"), *[(s, "num") for s in present]], rows)


def _simple_table(frame: Any, id: str = "") -> Table:
    columns = [(str(c), "num" if frame[c].dtype.kind in "fiub" else "text") for c in frame.columns]
    rows = []
    for values in frame.itertuples(index=False):
        row = []
        for (label, kind), v in zip(columns, values, strict=True):
            if kind == "num" and v is not None and not (isinstance(v, float) and math.isnan(v)):
                is_int = float(v).is_integer() and ("fraction" not in label and "mean" not in label)
                text = format_value(float(v), integer=is_int) if label != "p" else format_p(float(v))
                row.append(Cell(text, _num(float(v))))
            else:
                row.append(Cell("–" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v), str(v)))
        rows.append(row)
    return Table(columns, rows, id=id)


LOW_KAPPA = 0.4  # below it Cohen's kappa is "fair" or worse (Landis and Koch 1977): the labels agree little


def judge_warnings(audit: Mapping[str, Any], judge: str, candidate: str | None) -> list[str]:
    """What a reader of a judged dataset's numbers must know of its judge (agreement.json's ``audit``): that it
    favours the release's candidate, and that its labels agree little with people's.

    >>> judge_warnings({"labels": {"cohen_kappa": 0.31}, "systems": [{"name": "v2", "measure": "nDCG@10",
    ...     "favoured": "favoured", "relative": 0.05, "relative_low": 0.02, "relative_high": 0.08}]}, "llm", "v2")[0]
    "the judge llm favours the candidate v2 on nDCG@10: its bias for v2 is 0.0500 above the systems' mean [0.0200, 0.0800] ..."
    """
    out = []
    for system in audit.get("systems") or []:
        if system["name"] == candidate and system.get("favoured") == "favoured":
            out.append(
                f"the judge {judge} favours the candidate {candidate} on {system['measure']}: its bias for {candidate} is "
                f"{system['relative']:.4f} above the systems' mean [{system['relative_low']:.4f}, "
                f"{system['relative_high']:.4f}] on the queries people judged; the corrected numbers remove that "
                "bias, and the judge's numbers alone would overstate the candidate"
            )
    kappa = float((audit.get("labels") or {}).get("cohen_kappa", math.nan))
    if kappa < LOW_KAPPA:
        out.append(
            f"the judge {judge}'s labels agree little with people's (Cohen's kappa {kappa:.2f}, below {LOW_KAPPA}: "
            "fair or worse on Landis and Koch's scale): its numbers alone mean little, and the corrected ones lean on "
            "people's sample"
        )
    return out


def _labels_section(results: SavedResults, dataset: str, label: Label) -> LabelsSection | None:
    """The judge against people on a judged dataset, from agreement.json; None elsewhere."""
    audit = (results.agreement or {}).get(dataset)
    if not audit:
        return None
    entry: dict[str, Any] = next((d for d in results.config.get("datasets") or [] if d.get("name") == dataset), {})
    judge = str((entry.get("judge") or {}).get("name") or "judge")
    labels = audit["labels"]
    rows = [
        ("documents both judged", labels["pairs"]),
        ("queries judged by people", audit["human_queries"]),
        ("queries labelled by the judge", audit["judge_queries"]),
        ("Cohen's kappa", labels["cohen_kappa"]),
        ("quadratic-weighted kappa", labels["weighted_kappa"]),
        ("Krippendorff's alpha (ordinal)", labels["krippendorff_alpha"]),
        ("relevant: people", labels["human_relevant"]),
        ("relevant: the judge", labels["judge_relevant"]),
    ]
    agreement = Table(
        [("", "text"), ("value", "num")],
        [[Cell(name), Cell(format_value(float(v), integer=float(v).is_integer() and v > 1), _num(float(v)))] for name, v in rows],
    )
    bias = None
    if audit.get("systems"):
        bias = Table(
            [
                ("system", "text"),
                ("measure", "text"),
                ("people", "num"),
                ("the judge", "num"),
                ("bias", "num"),
                ("95% interval", "text"),
                ("", "text"),
            ],
            [
                [
                    Cell(s["name"]),
                    Cell(label(s["measure"])),
                    Cell(format_value(s["human"]), _num(s["human"])),
                    Cell(format_value(s["judge"]), _num(s["judge"])),
                    Cell(format_delta(s["bias"]), _num(s["bias"])),
                    Cell(format_ci(s["bias_low"], s["bias_high"])),
                    Cell(
                        {"favoured": "the judge favours it", "disfavoured": "the judge favours the others"}.get(s["favoured"], "")
                    ),
                ]
                for s in audit["systems"]
            ],
        )
    rankings = []
    for r in audit.get("ranking") or []:
        swaps = "; ".join(f"{a} > {b}" for a, b in r["swaps"]) or "none"
        rankings.append(
            f"{label(r['measure'])}: Kendall's tau {r['kendall_tau']:.3f}, tau_AP {r['tau_ap']:.3f}; people order "
            f"otherwise than the judge: {swaps}"
        )
    release = results.recorded.release
    return LabelsSection(
        judge=judge,
        sample="a random sample within strata" if audit.get("sample") == "stratified" else "a random sample",
        agreement=agreement,
        confusion=charts.confusion(labels["grades"], labels["confusion"], f"People's grades against the judge {judge}'s"),
        bias=bias,
        rankings=rankings,
        warnings=judge_warnings(audit, judge, release.candidate if release else None),
    )


def _judged_sentence(results: SavedResults) -> str:
    """What a judged dataset's numbers are (:mod:`harness.comparison.judged`), after the legend; "" without one."""
    summary = results.summary
    if "estimator" not in summary.columns:
        return ""
    out = []
    version = results.recorded.stats.get("claim") == "version"
    names = {d.get("name"): (d.get("judge") or {}).get("name") or "judge" for d in results.config.get("datasets") or []}
    for dataset in dict.fromkeys(summary["dataset"]):
        rows = summary[(summary["dataset"] == dataset) & (summary["estimator"] == "ppi") & (summary["segment"] == "all")]
        if not len(rows):
            continue
        people, judge = int(rows["n_human"].max()), int(rows["n_judge"].max())
        test = "the version test on the corrected values" if version else "the prediction-powered t"
        out.append(
            f" On {dataset}, means, differences and their intervals are prediction-powered: the judge "
            f"{names.get(dataset, 'judge')}'s labels of {judge:,} queries corrected by people's labels of {people:,} of "
            f"them (▲ / ▼ there by {test}; wins, ties and losses count people's queries; the judge's "
            "numbers alone are the judge_* columns of summary.csv and comparisons.csv, and the per-query charts and "
            "tables show the judge's values)."
        )
    return "".join(out)


def build_model(results: SavedResults) -> ReportModel:
    recorded, provenance, tracking = results.recorded, results.provenance, results.tracking
    summary, comparisons = results.system_summary, results.comparison_rows
    spread = _seed_spread(results.seed_summary)
    diagnostics, anova = results.diagnostics, results.anova
    measures = recorded.measures
    by_name = {str(m): m for m in measures}
    label = recorded.label
    order = list(recorded.systems)
    baseline = recorded.baseline
    stats = recorded.stats
    version = stats.get("claim") == "version"
    test = "version (t over users and seeds: the training procedures)" if version else stats.get("primary")
    test = f"{test} test{_t_instead(comparisons, stats)}"
    interval = (
        "95% interval of the version's mean over users and seeds, and its runs' lowest and highest"
        if version
        else "95% t-interval of the mean"
    )
    legend = (
        f"▲ / ▼: significantly better / worse than the baseline by the {test}, "
        f"{stats.get('correction')}-corrected, alpha {stats.get('alpha')}; {_controlled(stats)} "
        f"Bold: best in column; brackets: {interval}; GMAP-like measures are compared on their "
        f"geometric means (tests on log values)."
    )
    markdown_legend = (
        f"▲ / ▼ in the tables below: significantly better / worse than the baseline by the {test}, "
        f"{stats.get('correction')}-corrected, alpha {stats.get('alpha')}; {_controlled(stats)} Differences are "
        f"candidate minus production, with their 95% interval in brackets; GMAP-like measures are compared on their "
        f"geometric means (tests on log values)."
    )
    judged = _judged_sentence(results)
    legend += judged
    markdown_legend += judged
    sections = []
    used_by = {(option, value): users for option, value, users in option_users()}
    conventions = [
        (k, str(v), ", ".join(used_by.get((k, str(v)), ()))) for k, v in recorded.conventions.items() if k != "relevance_level"
    ]
    tool = PEERS[recorded.profile].tool if recorded.profile in PEERS else ""
    conventions += [  # the measures the profile's tool computes under conventions of their own
        (label(measure), ", ".join(f"{k}: {v}" for k, v in own.items()), tool)
        for measure, own in recorded.measure_conventions.items()
    ]
    for dataset in dict.fromkeys(summary["dataset"]):
        present = set(summary[summary["dataset"] == dataset]["system"])
        systems = [s for s in order if s in present]
        anchor = _anchor(dataset)
        accuracy = [m for m in measures if not _beyond(m)]
        beyond = [m for m in measures if _beyond(m) and ((summary["dataset"] == dataset) & (summary["measure"] == str(m))).any()]
        main = _main_table(summary, comparisons, dataset, "all", systems, accuracy, baseline, label, spread)
        segment_names = [s for s in dict.fromkeys(summary[summary["dataset"] == dataset]["segment"]) if s != "all"]
        segments = [
            (seg, _main_table(summary, comparisons, dataset, seg, systems, measures, baseline, label, spread))
            for seg in segment_names
        ]
        # each measure's rows read and pivoted once (not the dataset's whole table), for the charts and the top changes
        wides = _wides(results, dataset, measures)
        wtl_rows = []
        if baseline in systems:
            for r in comparisons:
                # a system measure has no per-query values to win or lose (0 / 0 / 0): no empty row for it
                if (r.dataset, r.segment, r.system_a) == (dataset, "all", baseline) and r.wins + r.ties + r.losses:
                    wtl_rows.append((f"{r.system_b} · {label(r.measure)}", r.wins, r.ties, r.losses))
        table = summary[(summary["dataset"] == dataset) & (summary["segment"] == "all")]
        cutoff_charts = []
        for family, members in _families(measures).items():
            series = {}
            for s in systems:
                rows = table[table["system"] == s].set_index("measure")["value"]
                series[s] = [
                    (k, float(rows[str(m)])) for k, m in sorted(members, key=lambda pair: pair[0]) if str(m) in rows.index
                ]
            cutoff_charts.append(charts.cutoff_curves(series, f"{label(family)} against the cutoff", label(family)))
        anova_table = None
        if anova is not None and len(anova[anova["dataset"] == dataset]):
            a = anova[(anova["dataset"] == dataset) & (anova["segment"] == "all")][["measure", "systems", "n_queries", "F", "p"]]
            anova_table = _simple_table(a.assign(measure=a["measure"].map(label)))
        level = recorded.relevance_levels.get(dataset)
        sections.append(
            DatasetSection(
                name=dataset,
                anchor=anchor,
                baseline=baseline if baseline in systems else None,
                main_table=main,
                comparison_table=_comparison_table(comparisons, dataset, label, anchor, by_name),
                measure_charts=_measure_charts(wides, systems, baseline, measures, label),
                cutoff_charts=cutoff_charts,
                wtl_chart=charts.win_tie_loss(wtl_rows, f"Queries won / tied / lost against {baseline}") if wtl_rows else None,
                segments=segments,
                diagnostics=_diagnostics_table(diagnostics, dataset, systems),
                top_changes=_top_changes(wides, systems, str(baseline), measures, label, anchor) if baseline in systems else None,
                anova=anova_table,
                conventions=[("relevance_level", str(level), ""), *conventions],
                against_baseline=_against_baseline(comparisons, dataset, systems, baseline, measures, label),
                beyond_table=(
                    _main_table(summary, comparisons, dataset, "all", systems, beyond, baseline, label, spread)
                    if beyond
                    else None
                ),
                long_tail_chart=_long_tail_chart(results.long_tail, dataset, systems),
                group_charts=_group_charts(results.groups, dataset, systems),
                labels=_labels_section(results, dataset, label),
            )
        )
    verdict = _relabelled(results.verdict, measures, label)  # decided by the pipeline; shown with the report's names
    mlflow_text = mlflow_href = None
    if tracking:
        uri = tracking["tracking_uri"]
        mlflow_href = run_url(uri, tracking["experiment_id"], tracking["run_id"])
        local = uri.startswith("sqlite:///") and not (results.config.get("tracking") or {}).get("record_paths")
        if local:  # no local absolute path in a report others may read: the store where the results folder sees it
            store = recorded_path(uri.removeprefix("sqlite:///"), results.folder)
            mlflow_text = (
                f"run {tracking['run_id']} in the local store {store} (open with: mlflow ui "
                f"--backend-store-uri sqlite:///{store}, from this results folder)"
            )
        else:
            mlflow_text = f"run {tracking['run_id']} at {uri}"
            if mlflow_href is None:
                mlflow_text += f" (open with: mlflow ui --backend-store-uri {uri})"
    settings = [(f"stats.{k}", ", ".join(map(str, v)) if isinstance(v, list) else str(v)) for k, v in stats.items()]
    settings += [
        ("profile", str(recorded.profile)),
        ("baseline", str(baseline)),
        ("cutoffs", ", ".join(map(str, recorded.cutoffs))),
    ]
    settings += [(f"gains.{k}", str(v)) for k, v in recorded.gain_schemes.items()]
    warnings = []
    earlier_folders, earlier_summaries, skipped = _earlier_summaries(results)
    warnings += skipped
    if any(r.resolution_limited for r in comparisons):
        warnings.append(
            "Some comparisons can never reach significance after correction: the smallest p-value their test can give "
            "(2/2^k for an exact test over k non-zero differences, 1/(B+1) for B resamples), times the family size, "
            "is at least alpha (column resolution_limited in comparisons.csv). Raise stats.permutations / stats.resamples, "
            "or evaluate more queries."
        )
    if any(r.few_queries for r in comparisons):
        warnings.append(
            f"Some comparisons rest on fewer than {FEW_QUERIES} queries (column few_queries): on skewed per-query "
            "differences the t-test and the randomization test reject a true null more often than alpha there (measured: "
            "about 0.09 at 15 queries for alpha 0.05), and below 10 queries the bootstrap is not computed."
        )
    warnings += [f"On {d.name}: {w}." for d in sections if d.labels is not None for w in d.labels.warnings]
    changes = what_changed(comparisons, diagnostics, baseline, label)
    release = recorded.release
    release_table = release_changes(comparisons, release.production, release.candidate, label) if release else None
    return ReportModel(
        changes=changes,
        trend_charts=trend_charts(results, label, (earlier_folders, earlier_summaries)),
        release_changes=release_table,
        over_seeds=version,
        title=recorded.title or recorded.name,
        experiment=recorded.name,
        description=recorded.description,
        started=provenance["started"],
        harness_version=provenance["versions"]["harness"],
        config_hash=provenance["config_hash"],
        mlflow_text=mlflow_text,
        mlflow_href=mlflow_href,
        verdict=verdict,
        legend=legend,
        markdown_legend=markdown_legend,
        datasets=sections,
        settings=settings,
        inputs=[(i["role"], i["path"], i["sha256"], str(i["bytes"])) for i in provenance["inputs"]],
        versions=[(k, str(v)) for k, v in provenance["versions"].items()],
        command=" ".join(provenance["command"]),
        finished=provenance["finished"],
        warnings=warnings,
    )


__all__ = ["ReportModel", "build_model"]
