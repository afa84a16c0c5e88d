"""A small SVG line chart of a metric per window: drawn in Python, so it needs no
JavaScript library and shows in any page, offline."""

from __future__ import annotations

import html
from collections.abc import Sequence
from datetime import datetime

from workbench.atlas.page import fmt

WIDTH, HEIGHT = 720, 200
LEFT, RIGHT, TOP, BOTTOM = 56, 12, 24, 28


def line_chart(points: Sequence[tuple[datetime, float]], title: str, color: str = "#e31a1c") -> str:
    """An ``<svg>`` of ``points`` (time, value) in time order; a note when there are none."""
    if not points:
        return f'<div class="dashboard-chart">{html.escape(title)}: no points</div>'
    times = [t.timestamp() for t, _ in points]
    values = [v for _, v in points]
    t0, t1 = min(times), max(times)
    top = max(max(values), 0.0) or 1.0
    bottom = min(min(values), 0.0)

    def x(t: float) -> float:
        return LEFT + (WIDTH - LEFT - RIGHT) * ((t - t0) / (t1 - t0) if t1 > t0 else 0.5)

    def y(v: float) -> float:
        return TOP + (HEIGHT - TOP - BOTTOM) * (1 - (v - bottom) / (top - bottom))

    path = " ".join(f"{x(t):.1f},{y(v):.1f}" for t, v in zip(times, values, strict=True))
    dots = "".join(
        f'<circle cx="{x(t):.1f}" cy="{y(v):.1f}" r="2.5" fill="{color}">'
        f"<title>{points[i][0]:%H:%M} UTC: {fmt(v)}</title></circle>"
        for i, (t, v) in enumerate(zip(times, values, strict=True))
    )
    first, last = points[0][0], points[-1][0]
    return (
        f'<svg class="dashboard-chart" viewBox="0 0 {WIDTH} {HEIGHT}" width="100%" '
        f'style="max-width:{WIDTH}px" xmlns="http://www.w3.org/2000/svg" '
        f'font-family="system-ui, sans-serif" font-size="11">'
        f'<text x="{LEFT}" y="14" font-size="13" font-weight="600">{html.escape(title)}</text>'
        f'<line x1="{LEFT}" y1="{y(bottom)}" x2="{WIDTH - RIGHT}" y2="{y(bottom)}" stroke="#999"/>'
        f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{y(bottom)}" stroke="#999"/>'
        f'<text x="{LEFT - 6}" y="{TOP + 4}" text-anchor="end">{fmt(top)}</text>'
        f'<text x="{LEFT - 6}" y="{y(bottom)}" text-anchor="end">{fmt(bottom)}</text>'
        f'<text x="{LEFT}" y="{HEIGHT - 8}">{first:%H:%M}</text>'
        f'<text x="{WIDTH - RIGHT}" y="{HEIGHT - 8}" text-anchor="end">{last:%H:%M} UTC</text>'
        f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="2"/>{dots}</svg>'
    )
