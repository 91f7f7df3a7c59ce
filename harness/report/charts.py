"""Inline SVG charts: no script, no network, readable in a screenshot.

Every text that comes from the data (system names, measure names) is escaped here,
so the returned Markup is safe to place in the page as is.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from markupsafe import Markup, escape

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22")
W, H = 640, 260
LEFT, RIGHT, TOP, BOTTOM = 56, 150, 28, 36


def _frame(title: str, body: list[str], aria: str) -> Markup:
    head = (
        f'<svg class="chart" viewBox="0 0 {W} {H}" width="{W}" height="{H}" role="img" aria-label="{escape(aria)}" '
        f'xmlns="http://www.w3.org/2000/svg">'
        f'<text x="{LEFT}" y="16" class="chart-title">{escape(title)}</text>'
    )
    return Markup(head + "".join(body) + "</svg>")


def _ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    if hi <= lo:
        hi = lo + 1.0
    return [float(v) for v in np.linspace(lo, hi, n)]


def _axes(lo: float, hi: float, x_labels: Sequence[tuple[float, str]]) -> tuple[list[str], Callable[[float], float]]:
    plot_w, plot_h = W - LEFT - RIGHT, H - TOP - BOTTOM

    def y(v: float) -> float:
        return TOP + plot_h * (1 - (v - lo) / (hi - lo if hi > lo else 1.0))

    parts = [f'<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" class="plot-bg"/>']
    for v in _ticks(lo, hi):
        parts.append(f'<line x1="{LEFT}" x2="{LEFT + plot_w}" y1="{y(v):.1f}" y2="{y(v):.1f}" class="grid"/>')
        parts.append(f'<text x="{LEFT - 6}" y="{y(v) + 4:.1f}" class="tick" text-anchor="end">{v:.3g}</text>')
    for x, label in x_labels:
        parts.append(f'<text x="{x:.1f}" y="{H - BOTTOM + 16}" class="tick" text-anchor="middle">{escape(label)}</text>')
    return parts, y


def _legend(names: Sequence[str]) -> list[str]:
    parts = []
    for i, name in enumerate(names):
        y = TOP + 14 + 18 * i
        color = PALETTE[i % len(PALETTE)]
        parts.append(f'<rect x="{W - RIGHT + 12}" y="{y - 9}" width="12" height="12" fill="{color}"/>')
        parts.append(f'<text x="{W - RIGHT + 30}" y="{y + 1}" class="legend">{escape(name[:22])}</text>')
    return parts


def sorted_deltas(deltas: np.ndarray, title: str, label: str) -> Markup:
    """Per-query differences against the baseline, sorted: where a system wins and loses."""
    values = np.sort(np.asarray(deltas, dtype=np.float64))
    n = values.size
    bound = float(max(abs(values.min()), abs(values.max()), 1e-9)) if n else 1.0
    parts, y = _axes(-bound, bound, [(LEFT, "worst"), (W - RIGHT, "best")])
    plot_w = W - LEFT - RIGHT
    zero = y(0.0)
    if n:
        xs = LEFT + plot_w * (np.arange(n) + 0.5) / n
        for cls, part in (("delta-loss", np.minimum(values, 0.0)), ("delta-win", np.maximum(values, 0.0))):
            points = " ".join(f"{x:.1f},{y(float(v)):.1f}" for x, v in zip(xs, part, strict=True))
            parts.append(f'<polygon points="{LEFT:.1f},{zero:.1f} {points} {LEFT + plot_w:.1f},{zero:.1f}" class="{cls}"/>')
    parts.append(f'<line x1="{LEFT}" x2="{LEFT + plot_w}" y1="{zero:.1f}" y2="{zero:.1f}" class="zero"/>')
    wins, losses = int((values > 0).sum()), int((values < 0).sum())
    parts.append(f'<text x="{W - RIGHT + 12}" y="{TOP + 14}" class="legend">{wins} better</text>')
    parts.append(f'<text x="{W - RIGHT + 12}" y="{TOP + 32}" class="legend">{losses} worse</text>')
    parts.append(f'<text x="{W - RIGHT + 12}" y="{TOP + 50}" class="legend">{n - wins - losses} equal</text>')
    return _frame(title, parts, f"{label}: {n} per-query differences, sorted")


def cutoff_curves(series: dict[str, list[tuple[int, float]]], title: str) -> Markup:
    """A measure against its cutoff (nDCG@k, P@k, R@k), one line per system."""
    cutoffs = sorted({k for points in series.values() for k, _ in points})
    values = [v for points in series.values() for _, v in points]
    lo, hi = (min(values), max(values)) if values else (0.0, 1.0)
    pad = (hi - lo) * 0.1 or 0.05
    lo, hi = max(0.0, lo - pad), hi + pad
    plot_w = W - LEFT - RIGHT

    def x(k: int) -> float:
        i = cutoffs.index(k)
        return LEFT + plot_w * (i + 0.5) / max(1, len(cutoffs))

    parts, y = _axes(lo, hi, [(x(k), f"@{k}") for k in cutoffs])
    for i, points in enumerate(series.values()):
        color = PALETTE[i % len(PALETTE)]
        coords = " ".join(f"{x(k):.1f},{y(v):.1f}" for k, v in sorted(points))
        parts.append(f'<polyline points="{coords}" fill="none" stroke="{color}" stroke-width="2"/>')
        parts.extend(f'<circle cx="{x(k):.1f}" cy="{y(v):.1f}" r="3" fill="{color}"/>' for k, v in points)
    parts.extend(_legend(list(series)))
    return _frame(title, parts, f"{title}: one line per system")


def distributions(values: dict[str, np.ndarray], title: str, bins: int = 20) -> Markup:
    """Per-query score histograms, one step line per system."""
    every = np.concatenate([np.asarray(v, dtype=np.float64) for v in values.values()]) if values else np.zeros(1)
    lo, hi = float(every.min()), float(every.max())
    if hi <= lo:
        hi = lo + 1.0
    edges = np.linspace(lo, hi, bins + 1)
    counts = {name: np.histogram(v, bins=edges)[0] / max(1, len(v)) for name, v in values.items()}
    top = max((float(c.max()) for c in counts.values()), default=1.0) or 1.0
    plot_w = W - LEFT - RIGHT
    labels = [(LEFT, f"{lo:.2g}"), (LEFT + plot_w, f"{hi:.2g}")]
    parts, y = _axes(0.0, top * 1.1, labels)
    for i, (_name, share) in enumerate(counts.items()):
        color = PALETTE[i % len(PALETTE)]
        coords = []
        for b, c in enumerate(share):
            x0, x1 = LEFT + plot_w * b / bins, LEFT + plot_w * (b + 1) / bins
            coords += [f"{x0:.1f},{y(float(c)):.1f}", f"{x1:.1f},{y(float(c)):.1f}"]
        parts.append(f'<polyline points="{" ".join(coords)}" fill="none" stroke="{color}" stroke-width="2" opacity="0.85"/>')
    parts.extend(_legend(list(counts)))
    return _frame(title, parts, f"{title}: share of queries per score bin")


def win_tie_loss(rows: list[tuple[str, int, int, int]], title: str) -> Markup:
    """Stacked bars: queries where each system beats, ties or loses to the baseline."""
    height = max(H, TOP + BOTTOM + 22 * len(rows))
    plot_w = W - LEFT - RIGHT - 60
    parts = []
    for i, (label, wins, ties, losses) in enumerate(rows):
        total = max(1, wins + ties + losses)
        y = TOP + 22 * i
        x = float(LEFT + 120)
        for value, cls in ((wins, "win"), (ties, "tie"), (losses, "loss")):
            width = plot_w * value / total
            parts.append(
                f'<rect x="{x:.1f}" y="{y}" width="{width:.1f}" height="16" class="{cls}"><title>{value} {cls}</title></rect>'
            )
            x += width
        parts.append(f'<text x="{LEFT + 114}" y="{y + 12}" class="tick" text-anchor="end">{escape(label[:34])}</text>')
        parts.append(f'<text x="{LEFT + 126 + plot_w}" y="{y + 12}" class="tick">{wins}/{ties}/{losses}</text>')
    svg = _frame(title, parts, f"{title}: wins, ties and losses per system and measure")
    return Markup(
        str(svg)
        .replace(f'viewBox="0 0 {W} {H}"', f'viewBox="0 0 {W} {height}"')
        .replace(f'height="{H}"', f'height="{height}"', 1)
    )
