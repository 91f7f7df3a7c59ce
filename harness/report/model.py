"""Results folder -> ReportModel: formatted strings, marks and charts; no HTML layout here."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from markupsafe import Markup

from harness.measures.parse import labeller, parse_measure
from harness.measures.registry import REGISTRY
from harness.release import Verdict
from harness.report import charts
from harness.report.format import format_ci, format_delta, format_p, format_value

MAX_DELTA_CHART_MEASURES = 3  # per-query difference charts for the first measures only
PER_QUERY_MEASURES = 3


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


@dataclass(frozen=True)
class Pairwise:
    measure: str
    systems: list[str]
    cells: list[list[Cell]]


@dataclass(frozen=True)
class DatasetSection:
    name: str
    anchor: str
    baseline: str | None
    main_table: Table
    pairwise: list[Pairwise]
    delta_charts: list[Markup]
    cutoff_charts: list[Markup]
    distribution_charts: list[Markup]
    wtl_chart: Markup | None
    segments: list[tuple[str, Table]]
    diagnostics: Table
    per_query: Table
    anova: Table | None


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
    verdict: Verdict | None
    legend: str
    datasets: list[DatasetSection]
    conventions: list[tuple[str, str]]
    settings: list[tuple[str, str]]
    inputs: list[tuple[str, str, str, str]]
    versions: list[tuple[str, str]]
    command: str
    finished: str
    warnings: list[str] = field(default_factory=list)
    changes: list[str] = field(default_factory=list)


def what_changed(comparisons: Any, diagnostics: Any, baseline: str | None, label: Any) -> list[str]:
    """One line per (system, dataset, segment) against the baseline: its significant wins and losses, then data warnings.

    Each change reads ``nDCG@10 -0.0123 [95% CI -0.0201, -0.0045], p = 0.0012, d_z -0.31``.
    """
    lines: list[str] = []
    if comparisons is not None and len(comparisons) and baseline is not None:
        mine = comparisons[(comparisons["system_a"] == baseline) & comparisons["significant"]]
        for (system, dataset, segment), rows in mine.groupby(["system_b", "dataset", "segment"], sort=False):
            parts: dict[str, list[str]] = {"better": [], "worse": []}
            for r in rows.itertuples():
                p = format_p(r.p_adj)
                better = (r.delta > 0) == bool(r.higher_is_better)
                parts["better" if better else "worse"].append(
                    f"{label(r.measure)} {r.delta:+.4f} [95% CI {r.ci_low_t:+.4f}, {r.ci_high_t:+.4f}], "
                    f"p {p if p.startswith('<') else '= ' + p}, "
                    + ("d_z undefined (constant difference)" if r.effect_size != r.effect_size else f"d_z {r.effect_size:+.2f}")
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


def _read(folder: Path, stem: str) -> Any:
    import pandas as pd

    path = folder / f"{stem}.parquet"
    return pd.read_parquet(path) if path.exists() else None


def _higher(measure: str) -> bool:
    return REGISTRY.definition(parse_measure(measure)).higher_is_better


def _integer(measure: str) -> bool:
    return REGISTRY.definition(parse_measure(measure)).integer


def _anchor(text: str) -> str:
    return "ds-" + re.sub(r"[^A-Za-z0-9_-]", "-", text)


def _num(value: float | None) -> str:
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) else repr(float(value))


def _significance(comparisons: Any, dataset: str, segment: str, baseline: str | None) -> dict[tuple[str, str], tuple[str, str]]:
    """(system, measure) -> (mark, tooltip) against the baseline after correction."""
    marks: dict[tuple[str, str], tuple[str, str]] = {}
    if comparisons is None or baseline is None:
        return marks
    rows = comparisons[(comparisons["dataset"] == dataset) & (comparisons["segment"] == segment)]
    for row in rows.itertuples():
        if baseline not in (row.system_a, row.system_b):
            continue
        other = row.system_b if row.system_a == baseline else row.system_a
        delta = row.delta if row.system_a == baseline else -row.delta
        better = (delta > 0) == bool(row.higher_is_better)
        tip = f"{format_delta(delta)} vs {baseline}, corrected p {format_p(row.p_adj)}"
        if row.significant and delta != 0:
            marks[(other, row.measure)] = ("▲" if better else "▼", tip)
        else:
            marks[(other, row.measure)] = ("", tip)
    return marks


def _controlled(stats: dict[str, Any]) -> str:
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
    comparisons: Any,
    dataset: str,
    segment: str,
    systems: list[str],
    measures: list[str],
    baseline: str | None,
    label: Any,
) -> Table:
    rows_df = summary[(summary["dataset"] == dataset) & (summary["segment"] == segment)]
    values = {(r.system, r.measure): r for r in rows_df.itertuples()}
    marks = _significance(comparisons, dataset, segment, baseline)
    best: dict[str, float] = {}
    for m in measures:
        column = [float(values[(s, m)].value) for s in systems if (s, m) in values]
        if column:
            best[m] = max(column) if _higher(m) else min(column)
    table_rows = []
    for s in systems:
        name = s + (" (baseline)" if s == baseline else "")
        row = [Cell(name, s, "system")]
        for m in measures:
            r = values.get((s, m))
            if r is None:
                row.append(Cell("–", ""))
                continue
            mark, tip = marks.get((s, m), ("", ""))
            classes = " ".join(
                c
                for c in (
                    "best" if len(systems) > 1 and float(r.value) == best.get(m) else "",
                    {"▲": "sig-up", "▼": "sig-down"}.get(mark, ""),
                )
                if c
            )
            text = format_value(float(r.value), integer=_integer(m)) + (f" {mark}" if mark else "")
            row.append(Cell(text, _num(float(r.value)), classes, format_ci(r.ci_low, r.ci_high), tip))
        table_rows.append(row)
    return Table([("system", "text")] + [(label(m), "num") for m in measures], table_rows)


def _pairwise(comparisons: Any, dataset: str, systems: list[str], measures: list[str], label: Any) -> list[Pairwise]:
    if comparisons is None:
        return []
    rows = comparisons[(comparisons["dataset"] == dataset) & (comparisons["segment"] == "all")]
    out = []
    for m in measures:
        mine = rows[rows["measure"] == m]
        if mine.empty:
            continue
        lookup = {(r.system_a, r.system_b): r for r in mine.itertuples()}
        cells = []
        for a in systems:
            line = []
            for b in systems:
                r, sign = lookup.get((b, a)), 1.0
                if r is None:
                    r, sign = lookup.get((a, b)), -1.0
                if a == b or r is None:
                    line.append(Cell("·" if a == b else "–", "", "diag" if a == b else ""))
                    continue
                delta = sign * r.delta  # row minus column
                better = (delta > 0) == bool(r.higher_is_better)
                classes = ("sig-up" if better else "sig-down") if r.significant and delta != 0 else ""
                line.append(
                    Cell(
                        format_delta(delta),
                        _num(delta),
                        classes,
                        format_p(r.p_adj),
                        f"{a} − {b}: corrected p {format_p(r.p_adj)}",
                    )
                )
            cells.append(line)
        out.append(Pairwise(label(m), systems, cells))
    return out


def _families(measures: list[str]) -> dict[str, list[tuple[int, str]]]:
    """Measures that differ only in their cutoff: 'nDCG' -> [(5, 'nDCG@5'), (10, 'nDCG@10')]."""
    families: dict[str, list[tuple[int, str]]] = {}
    for m in measures:
        parsed = parse_measure(m)
        if parsed.cutoff is not None:
            base = str(parsed.__class__(parsed.name, parsed.params, None))
            families.setdefault(base, []).append((parsed.cutoff, m))
    return {k: v for k, v in families.items() if len(v) >= 2}


def _per_query_table(per_query: Any, dataset: str, systems: list[str], measures: list[str], anchor: str) -> Table:
    mine = per_query[(per_query["dataset"] == dataset) & (per_query["measure"].isin(measures))]
    wide = mine.pivot_table(index=["query_id", "segment"], columns=["measure", "system"], values="value", sort=False)
    columns = [("query", "text"), ("segment", "text")] + [(f"{m} · {s}", "num") for m in measures for s in systems]
    rows = []
    for (qid, segment), values in wide.iterrows():
        row = [Cell(str(qid), str(qid)), Cell(str(segment), str(segment))]
        for m in measures:
            for s in systems:
                v = values.get((m, s), float("nan"))
                row.append(Cell(format_value(float(v), integer=_integer(m)), _num(float(v))))
        rows.append(row)
    return Table(columns, rows, id=f"{anchor}-per-query")


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


def build_model(folder: str | Path) -> ReportModel:
    import yaml

    folder = Path(folder)
    config = yaml.safe_load((folder / "config.resolved.yaml").read_text())
    provenance = json.loads((folder / "provenance.json").read_text())
    summary, per_query = _read(folder, "summary"), _read(folder, "per_query")
    comparisons, diagnostics, anova = _read(folder, "comparisons"), _read(folder, "diagnostics"), _read(folder, "anova")
    tracking = json.loads((folder / "tracking.json").read_text()) if (folder / "tracking.json").exists() else None
    measures = list(config["measures"])
    label = labeller(config.get("gain_schemes") or {})
    order = [s["name"] for s in config["systems"]]
    baseline = config.get("baseline")
    stats = config.get("stats", {})
    legend = (
        f"▲ / ▼: significantly better / worse than the baseline by the {stats.get('primary')} test, "
        f"{stats.get('correction')}-corrected, alpha {stats.get('alpha')}; {_controlled(stats)} "
        f"Bold: best in column; brackets: 95% t-interval of the mean; GMAP-like measures are compared on their "
        f"geometric means (tests on log values)."
    )
    sections = []
    for dataset in dict.fromkeys(summary["dataset"]):
        present = set(summary[summary["dataset"] == dataset]["system"])
        systems = [s for s in order if s in present]
        anchor = _anchor(dataset)
        main = _main_table(summary, comparisons, dataset, "all", systems, measures, baseline, label)
        segment_names = [s for s in dict.fromkeys(summary[summary["dataset"] == dataset]["segment"]) if s != "all"]
        segments = [
            (seg, _main_table(summary, comparisons, dataset, seg, systems, measures, baseline, label)) for seg in segment_names
        ]
        mine = per_query[per_query["dataset"] == dataset]
        delta_charts, wtl_rows = [], []
        if baseline in systems:
            base = mine[mine["system"] == baseline].set_index(["measure", "query_id"])["value"]
            for s in systems:
                if s == baseline:
                    continue
                other = mine[mine["system"] == s].set_index(["measure", "query_id"])["value"]
                for m in measures[:MAX_DELTA_CHART_MEASURES]:
                    d = (other.loc[m] - base.loc[m]).dropna().to_numpy()
                    if not _higher(m):
                        d = -d
                    delta_charts.append(
                        charts.sorted_deltas(
                            d, f"{label(m)}: {s} − {baseline}, per query", f"{s} against {baseline} on {label(m)}"
                        )
                    )
                for m in measures:
                    d = (other.loc[m] - base.loc[m]).dropna().to_numpy() * (1 if _higher(m) else -1)
                    wtl_rows.append((f"{s} · {label(m)}", int((d > 0).sum()), int((d == 0).sum()), int((d < 0).sum())))
        table = summary[(summary["dataset"] == dataset) & (summary["segment"] == "all")]
        cutoff_charts = []
        for family, members in _families(measures).items():
            series = {}
            for s in systems:
                rows = table[table["system"] == s].set_index("measure")["value"]
                series[s] = [(k, float(rows[m])) for k, m in sorted(members) if m in rows.index]
            cutoff_charts.append(charts.cutoff_curves(series, f"{label(family)} against the cutoff"))
        distribution_charts = [
            charts.distributions(
                {s: mine[(mine["system"] == s) & (mine["measure"] == m)]["value"].to_numpy() for s in systems},
                f"{label(m)}: per-query scores",
            )
            for m in measures[:2]
        ]
        diag = diagnostics[diagnostics["dataset"] == dataset].drop(columns=["dataset"]) if diagnostics is not None else None
        anova_table = None
        if anova is not None and len(anova[anova["dataset"] == dataset]):
            a = anova[(anova["dataset"] == dataset) & (anova["segment"] == "all")][["measure", "systems", "n_queries", "F", "p"]]
            anova_table = _simple_table(a)
        sections.append(
            DatasetSection(
                name=dataset, anchor=anchor, baseline=baseline if baseline in systems else None, main_table=main,
                pairwise=_pairwise(comparisons, dataset, systems, measures, label), delta_charts=delta_charts,
                cutoff_charts=cutoff_charts, distribution_charts=distribution_charts,
                wtl_chart=charts.win_tie_loss(wtl_rows, f"Queries won / tied / lost against {baseline}") if wtl_rows else None,
                segments=segments, diagnostics=_simple_table(diag) if diag is not None else Table([], []),
                per_query=_per_query_table(per_query, dataset, systems, measures[:PER_QUERY_MEASURES], anchor), anova=anova_table,
            )
        )  # fmt: skip
    verdict = None
    if (folder / "gate.json").exists():  # decided by the pipeline, with the results
        verdict = Verdict.from_dict(json.loads((folder / "gate.json").read_text()))
    mlflow_text = mlflow_href = None
    if tracking:
        uri = tracking["tracking_uri"]
        mlflow_text = f"run {tracking['run_id']} at {uri}"
        if uri.startswith(("http://", "https://")):
            mlflow_href = f"{uri.rstrip('/')}/#/experiments/{tracking['experiment_id']}/runs/{tracking['run_id']}"
        else:
            mlflow_text += f" (open with: mlflow ui --backend-store-uri {uri})"
    settings = [(f"stats.{k}", ", ".join(map(str, v)) if isinstance(v, list) else str(v)) for k, v in stats.items()]
    settings += [
        ("profile", str(config.get("profile"))),
        ("baseline", str(baseline)),
        ("cutoffs", ", ".join(map(str, config.get("cutoffs", [])))),
    ]
    settings += [(f"gains.{k}", str(v)) for k, v in (config.get("gain_schemes") or {}).items()]
    warnings = []
    if comparisons is not None and "resolution_limited" in comparisons and comparisons["resolution_limited"].any():
        warnings.append(
            "Some comparisons can never reach significance after correction: the smallest p-value their test can give "
            "(2/2^k for an exact test over k non-zero differences, 1/(B+1) for B resamples), times the family size, "
            "is at least alpha (column resolution_limited in comparisons.csv). Raise stats.permutations / stats.resamples, "
            "or evaluate more queries."
        )
    if comparisons is not None and "few_queries" in comparisons and comparisons["few_queries"].any():
        warnings.append(
            "Some comparisons rest on fewer than 10 queries (column few_queries): no resampling test holds its level "
            "there, and the bootstrap is not computed."
        )
    changes = what_changed(comparisons, diagnostics, baseline, label)
    return ReportModel(
        changes=changes,
        title=(config.get("report") or {}).get("title") or config["name"], experiment=config["name"],
        description=config.get("description") or "",
        started=provenance["started"], harness_version=provenance["versions"]["harness"], config_hash=provenance["config_hash"],
        mlflow_text=mlflow_text, mlflow_href=mlflow_href, verdict=verdict, legend=legend, datasets=sections,
        conventions=[(k, str(v)) for k, v in config["conventions"].items()], settings=settings,
        inputs=[(i["role"], i["path"], i["sha256"], str(i["bytes"])) for i in provenance["inputs"]],
        versions=[(k, str(v)) for k, v in provenance["versions"].items()], command=" ".join(provenance["command"]),
        finished=provenance["finished"], warnings=warnings,
    )  # fmt: skip


__all__ = ["ReportModel", "build_model"]
