"""Inline SVG charts: no script, no network, readable in a screenshot.

Every text that comes from the data (system names, measure names) is escaped here,
so the returned Markup is safe to place in the page as is. Systems are drawn in the
Okabe-Ito colour-blind-safe palette without its green and vermillion, which mean
better and worse in every chart and table; every chart has axis titles and a legend,
and long names are never clipped (the full name is in a tooltip when shortened).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
from markupsafe import Markup, escape

PALETTE = ("#0072B2", "#E69F00", "#CC79A7", "#56B4E9", "#000000", "#999999", "#F0E442", "#882255")
BETTER, WORSE = "#009E73", "#D55E00"  # Okabe-Ito bluish green and vermillion: distinguishable by colour-blind readers
W, H = 640, 280
LEFT, RIGHT, TOP, BOTTOM = 64, 170, 28, 50
CURVE_POINTS = 400  # a sorted curve is drawn from at most this many quantiles, whatever the number of queries
CHAR_W = 6.6  # approximate width of one character of the 11 px chart font


def _frame(title: str, body: list[str], aria: str, width: int = W, height: int = H) -> Markup:
    head = (
        f'<svg class="chart" viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
        f'aria-label="{escape(aria)}" xmlns="http://www.w3.org/2000/svg">'
        f'<text x="{LEFT}" y="16" class="chart-title">{escape(title)}</text>'
    )
    return Markup(head + "".join(body) + "</svg>")


def nice_scale(lo: float, hi: float, count: int = 5) -> tuple[float, float, list[float], int]:
    """An axis that reads as a scale: about ``count`` ticks at a 1-2-5 step (as d3's and matplotlib's locators place
    them), the range widened to whole steps around [lo, hi], and the decimals that tell every tick apart.
    Returns (low, high, ticks, decimals).

    >>> nice_scale(0.8268, 0.8274)[2:]
    ([0.8268, 0.8269, 0.827, 0.8271, 0.8272, 0.8273, 0.8274], 4)
    >>> nice_scale(0.0, 0.906)[2:]
    ([0.0, 0.2, 0.4, 0.6, 0.8, 1.0], 1)
    >>> nice_scale(131.05, 182.94)[:2]
    (130.0, 190.0)
    """
    if not (math.isfinite(lo) and math.isfinite(hi)):
        lo, hi = 0.0, 1.0
    if hi <= lo:  # one value: a unit around it, on its own scale
        half = abs(lo) * 0.05 or 0.5
        lo, hi = lo - half, hi + half
    raw = (hi - lo) / count
    power = math.floor(math.log10(raw))
    error = raw / 10**power
    factor = 10 if error >= math.sqrt(50) else 5 if error >= math.sqrt(10) else 2 if error >= math.sqrt(2) else 1
    step = factor * 10.0**power
    first, last = math.floor(lo / step + 1e-9), math.ceil(hi / step - 1e-9)
    decimals = max(0, -math.floor(math.log10(step) + 1e-9))
    ticks = [round(k * step, decimals + 2) for k in range(first, last + 1)]
    return ticks[0], ticks[-1], [t + 0.0 for t in ticks], decimals  # + 0.0: no -0.0


def tick_label(value: float, decimals: int) -> str:
    """A tick's text: its decimals, and a plain minus for a negative value (0 never prints as -0)."""
    text = f"{value:.{decimals}f}"
    return "0" if float(text) == 0 else text


def _axes(
    lo: float, hi: float, x_labels: Sequence[tuple[float, str]], x_title: str, y_title: str
) -> tuple[list[str], Callable[[float], float]]:
    plot_w, plot_h = W - LEFT - RIGHT, H - TOP - BOTTOM
    lo, hi, ticks, decimals = nice_scale(lo, hi)

    def y(v: float) -> float:
        return TOP + plot_h * (1 - (v - lo) / (hi - lo if hi > lo else 1.0))

    parts = [f'<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" class="plot-bg"/>']
    for v in ticks:
        parts.append(f'<line x1="{LEFT}" x2="{LEFT + plot_w}" y1="{y(v):.1f}" y2="{y(v):.1f}" class="grid"/>')
        parts.append(
            f'<text x="{LEFT - 6}" y="{y(v) + 4:.1f}" class="tick y-tick" text-anchor="end">{tick_label(v, decimals)}</text>'
        )
    for x, label in x_labels:
        parts.append(f'<text x="{x:.1f}" y="{H - BOTTOM + 16}" class="tick" text-anchor="middle">{escape(label)}</text>')
    parts.append(
        f'<text x="{LEFT + plot_w / 2:.1f}" y="{H - 8}" class="axis-title" text-anchor="middle">{escape(x_title)}</text>'
    )
    middle = TOP + plot_h / 2
    parts.append(
        f'<text x="14" y="{middle:.1f}" class="axis-title" text-anchor="middle" '
        f'transform="rotate(-90 14 {middle:.1f})">{escape(y_title)}</text>'
    )
    return parts, y


def _short(name: str, chars: int) -> str:
    return name if len(name) <= chars else name[: chars - 1] + "…"


def _legend(names: Sequence[str], colors: Sequence[str] = PALETTE) -> list[str]:
    parts = []
    room = int((RIGHT - 34) / CHAR_W)
    for i, name in enumerate(names):
        y = TOP + 14 + 18 * i
        color = colors[i % len(colors)]
        parts.append(f'<rect x="{W - RIGHT + 12}" y="{y - 9}" width="12" height="12" fill="{color}"/>')
        parts.append(
            f'<text x="{W - RIGHT + 30}" y="{y + 1}" class="legend"><title>{escape(name)}</title>'
            f"{escape(_short(name, room))}</text>"
        )
    return parts


def sorted_deltas(deltas: np.ndarray, title: str, label: str) -> Markup:
    """Per-query differences against the baseline (positive = better), sorted: where a system wins and loses.

    The curve is drawn through at most CURVE_POINTS quantiles, so the chart's size does not grow with the queries.
    """
    values = np.sort(np.asarray(deltas, dtype=np.float64))
    n = values.size
    bound = float(max(abs(values.min()), abs(values.max()), 1e-9)) if n else 1.0
    parts, y = _axes(-bound, bound, [(LEFT, "worst"), (W - RIGHT, "best")], f"{n:,} queries, sorted by difference", "difference")
    plot_w = W - LEFT - RIGHT
    zero = y(0.0)
    if n:
        at = np.linspace(0, n - 1, min(n, CURVE_POINTS))
        sampled = values[np.round(at).astype(np.int64)]
        xs = LEFT + plot_w * (at + 0.5) / n
        for cls, part in (("delta-loss", np.minimum(sampled, 0.0)), ("delta-win", np.maximum(sampled, 0.0))):
            points = " ".join(f"{x:.1f},{y(float(v)):.1f}" for x, v in zip(xs, part, strict=True))
            parts.append(f'<polygon points="{LEFT:.1f},{zero:.1f} {points} {LEFT + plot_w:.1f},{zero:.1f}" class="{cls}"/>')
    parts.append(f'<line x1="{LEFT}" x2="{LEFT + plot_w}" y1="{zero:.1f}" y2="{zero:.1f}" class="zero"/>')
    wins, losses = int((values > 0).sum()), int((values < 0).sum())
    parts.extend(_legend([f"{wins:,} better", f"{losses:,} worse", f"{n - wins - losses:,} equal"], (BETTER, WORSE, "#c7cdd6")))
    return _frame(title, parts, f"{label}: {n} per-query differences, sorted")


def lines(series: dict[str, list[tuple[int, float]]], x_labels: list[str], title: str, x_title: str, y_title: str) -> Markup:
    """One line per system over ordered x positions (0 .. len(x_labels) - 1), each labelled."""
    values = [v for points in series.values() for _, v in points]
    lo, hi = (min(values), max(values)) if values else (0.0, 1.0)
    pad = (hi - lo) * 0.1 or 0.05
    lo, hi = max(0.0, lo - pad), hi + pad
    plot_w = W - LEFT - RIGHT
    step = max(1, len(x_labels) // 8)  # at most about 8 labels under the axis

    def x(i: int) -> float:
        return LEFT + plot_w * (i + 0.5) / max(1, len(x_labels))

    parts, y = _axes(lo, hi, [(x(i), text) for i, text in enumerate(x_labels) if i % step == 0], x_title, y_title)
    for i, points in enumerate(series.values()):
        color = PALETTE[i % len(PALETTE)]
        coords = " ".join(f"{x(k):.1f},{y(v):.1f}" for k, v in sorted(points))
        parts.append(f'<polyline points="{coords}" fill="none" stroke="{color}" stroke-width="2"/>')
        parts.extend(f'<circle cx="{x(k):.1f}" cy="{y(v):.1f}" r="3" fill="{color}"/>' for k, v in points)
    parts.extend(_legend(list(series)))
    return _frame(title, parts, f"{title}: one line per system")


def cutoff_curves(series: dict[str, list[tuple[int, float]]], title: str, measure: str = "value") -> Markup:
    """A measure against its cutoff (nDCG@k, P@k, R@k), one line per system."""
    cutoffs = sorted({k for points in series.values() for k, _ in points})
    at = {k: i for i, k in enumerate(cutoffs)}
    indexed = {name: [(at[k], v) for k, v in points] for name, points in series.items()}
    return lines(indexed, [f"@{k}" for k in cutoffs], title, "cutoff k", measure)


def distributions(values: dict[str, np.ndarray], title: str, bins: int = 20) -> Markup:
    """Per-query value histograms, one step line per system."""
    every = np.concatenate([np.asarray(v, dtype=np.float64) for v in values.values()]) if values else np.zeros(1)
    every = every if every.size else np.zeros(1)
    lo, hi = float(every.min()), float(every.max())
    if hi <= lo:
        hi = lo + 1.0
    edges = np.linspace(lo, hi, bins + 1)
    counts = {name: np.histogram(v, bins=edges)[0] / max(1, len(v)) for name, v in values.items()}
    top = max((float(c.max()) for c in counts.values()), default=1.0) or 1.0
    plot_w = W - LEFT - RIGHT
    labels = [(LEFT, f"{lo:.2g}"), (LEFT + plot_w, f"{hi:.2g}")]
    parts, y = _axes(0.0, top * 1.1, labels, "per-query value", "share of queries")
    for i, (_name, share) in enumerate(counts.items()):
        color = PALETTE[i % len(PALETTE)]
        coords = []
        for b, c in enumerate(share):
            x0, x1 = LEFT + plot_w * b / bins, LEFT + plot_w * (b + 1) / bins
            coords += [f"{x0:.1f},{y(float(c)):.1f}", f"{x1:.1f},{y(float(c)):.1f}"]
        parts.append(f'<polyline points="{" ".join(coords)}" fill="none" stroke="{color}" stroke-width="2" opacity="0.85"/>')
    parts.extend(_legend(list(counts)))
    return _frame(title, parts, f"{title}: share of queries per value bin")


def win_tie_loss(rows: list[tuple[str, int, int, int]], title: str) -> Markup:
    """Stacked bars: queries where each system beats, ties or loses to the baseline; the label column fits its longest label."""
    label_w = int(min(max((len(r[0]) for r in rows), default=10), 60) * CHAR_W) + 12
    left = 12 + label_w
    plot_w = 360
    width = left + plot_w + 110
    height = TOP + 30 + 22 * len(rows)
    parts = []
    for i, (label, wins, ties, losses) in enumerate(rows):
        total = max(1, wins + ties + losses)
        y = TOP + 8 + 22 * i
        x = float(left)
        for value, cls in ((wins, "win"), (ties, "tie"), (losses, "loss")):
            w = plot_w * value / total
            parts.append(
                f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="16" class="{cls}"><title>{value} {cls}</title></rect>'
            )
            x += w
        parts.append(
            f'<text x="{left - 6}" y="{y + 12}" class="tick" text-anchor="end"><title>{escape(label)}</title>'
            f"{escape(_short(label, 60))}</text>"
        )
        parts.append(f'<text x="{left + plot_w + 6}" y="{y + 12}" class="tick">{wins}/{ties}/{losses}</text>')
    key_y = height - 10
    for j, (name, cls) in enumerate((("better", "win"), ("tie", "tie"), ("worse", "loss"))):
        parts.append(f'<rect x="{left + 90 * j}" y="{key_y - 10}" width="12" height="12" class="{cls}"/>')
        parts.append(f'<text x="{left + 90 * j + 16}" y="{key_y}" class="legend">{name}</text>')
    return _frame(title, parts, f"{title}: wins, ties and losses per system and measure", width, height)


def confusion(grades: Sequence[float], counts: Sequence[Sequence[int]], title: str) -> Markup:
    """The confusion matrix as a heatmap: rows people's grades, columns the judge's; each cell's shade its share of
    its row (where people's grade goes under the judge), with its count written in it."""
    k = len(grades)
    cell = 48
    left, top = 96, TOP + 34
    width, height = max(left + cell * k + 24, LEFT + int(len(title) * CHAR_W * 1.2)), top + cell * k + 40
    parts = [
        f'<text x="{left + cell * k / 2:.0f}" y="{top - 20}" class="axis-title" text-anchor="middle">the judge\'s grade</text>',
        f'<text x="16" y="{top + cell * k / 2:.0f}" class="axis-title" text-anchor="middle" '
        f'transform="rotate(-90 16 {top + cell * k / 2:.0f})">people\'s grade</text>',
    ]
    for j, grade in enumerate(grades):
        parts.append(
            f'<text x="{left + cell * j + cell / 2:.0f}" y="{top - 6}" class="tick" text-anchor="middle">{grade:g}</text>'
        )
    for i, (grade, row) in enumerate(zip(grades, counts, strict=True)):
        total = max(1, sum(row))
        y = top + cell * i
        parts.append(f'<text x="{left - 8}" y="{y + cell / 2 + 4:.0f}" class="tick" text-anchor="end">{grade:g}</text>')
        for j, count in enumerate(row):
            share = count / total
            parts.append(
                f'<rect x="{left + cell * j}" y="{y}" width="{cell - 2}" height="{cell - 2}" class="heat" '
                f'fill-opacity="{0.08 + 0.92 * share:.3f}"><title>people {grade:g}, judge {grades[j]:g}: {count:,} '
                f"({share:.0%} of people's {grade:g})</title></rect>"
            )
            shade = "heat-dark" if share > 0.55 else "heat-light"
            parts.append(
                f'<text x="{left + cell * j + cell / 2 - 1:.0f}" y="{y + cell / 2 + 3:.0f}" class="tick {shade}" '
                f'text-anchor="middle">{count:,}</text>'
            )
    return _frame(title, parts, f"{title}: documents by people's grade (rows) and the judge's (columns)", width, height)


def group_bars(groups: list[str], series: dict[str, list[float]], title: str, y_title: str, x_title: str = "group") -> Markup:
    """Each group's value, one bar per system side by side (NaN: no bar, "n/a" on the axis): where a fairness measure's
    disparity comes from, e.g. which provider's items a model stops recommending.

    >>> svg = group_bars(["acme", "zeta"], {"base": [0.4, 0.6], "new": [0.2, float("nan")]}, "Exposure", "share")
    >>> svg.count('<rect class="bar"'), "n/a" in svg
    (3, True)
    """
    values = [v for row in series.values() for v in row if np.isfinite(v)]
    hi = max(values, default=1.0) * 1.1 or 1.0
    plot_w = W - LEFT - RIGHT
    slot = plot_w / max(1, len(groups))
    width = 0.8 * slot / max(1, len(series))
    room = max(3, int(slot / CHAR_W))
    labels = [(LEFT + slot * (g + 0.5), _short(name, room)) for g, name in enumerate(groups)]
    parts, y = _axes(0.0, hi, labels, x_title, y_title)
    for i, (system, row) in enumerate(series.items()):
        color = PALETTE[i % len(PALETTE)]
        for g, value in enumerate(row):
            x = LEFT + slot * g + 0.1 * slot + width * i
            if not np.isfinite(value):
                parts.append(f'<text x="{x + width / 2:.1f}" y="{y(0.0) - 4:.1f}" class="tick" text-anchor="middle">n/a</text>')
                continue
            parts.append(
                f'<rect class="bar" x="{x:.1f}" y="{y(value):.1f}" width="{width:.1f}" '
                f'height="{y(0.0) - y(value):.1f}" fill="{color}"><title>{escape(system)}, '
                f"{escape(groups[g])}: {value:.4g}</title></rect>"
            )
    parts.extend(_legend(list(series)))
    return _frame(title, parts, f"{title}: one bar per system and group")


def long_tail(series: dict[str, list[tuple[int, float]]], title: str) -> Markup:
    """Each system's cumulative share of its recommendations over its items, most recommended first (log x).

    A system that pushes the same few items to everyone climbs to 100% within a few ranks;
    one that spreads its recommendations over the catalogue climbs slowly.
    """
    ranks = [r for points in series.values() for r, _ in points] or [1]
    top = max(max(ranks), 10)
    plot_w = W - LEFT - RIGHT
    span = np.log10(top)

    def x(rank: float) -> float:
        return LEFT + plot_w * float(np.log10(max(rank, 1))) / span

    decades = [10**i for i in range(int(np.floor(span)) + 1)]
    parts, y = _axes(
        0.0, 1.0, [(x(d), f"{d:,}") for d in decades], "item rank (most recommended first, log scale)", "share of recommendations"
    )
    for i, points in enumerate(series.values()):
        color = PALETTE[i % len(PALETTE)]
        coords = " ".join(f"{x(r):.1f},{y(v):.1f}" for r, v in sorted(points))
        parts.append(f'<polyline points="{coords}" fill="none" stroke="{color}" stroke-width="2"/>')
    parts.extend(_legend(list(series)))
    return _frame(title, parts, f"{title}: one curve per system")
