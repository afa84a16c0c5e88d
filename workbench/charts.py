"""Charts as inline SVG text, drawn on the server: no JavaScript, no library, no request.

:func:`line_chart` draws one or more :class:`Series` of ``(epoch seconds, value)`` points
on a shared time axis: a ``<path>`` per series (a ``None`` value or a gap between runs
breaks the line), a ``<circle>`` per point with its value as a tooltip (``<title>``), and
an optional shaded area under the first series. :func:`timeline` draws :class:`Span`
bands (a job's statuses over time). Both scale to the page's width (``viewBox``).
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from workbench.atlas.page import fmt

WIDTH = 760
LEFT, RIGHT, TOP, BOTTOM = 64, 16, 28, 30
TICKS = 5  # time labels along the x axis

Point = tuple[float, float | None]

#: The CSS of the pages these charts go in (the health, quality and chaos pages).
STYLE = """
body{font-family:system-ui,sans-serif;margin:1.5rem;color:#222;max-width:1100px}
h1{font-size:1.4rem;margin:0 0 .3rem}h2{font-size:1.1rem;margin:1.6rem 0 .5rem}
.status{display:inline-block;padding:.1rem .5rem;border-radius:.3rem;color:#fff}
table{border-collapse:collapse;font-size:.85rem}td,th{padding:.2rem .6rem;text-align:left;
border-bottom:1px solid #eee;vertical-align:top}.muted{color:#777}.problem{color:#b71c1c}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(460px,1fr));gap:1rem}
.chart-empty{padding:.8rem;border:1px dashed #ccc;color:#666}
code{font-size:.8rem;background:#f5f5f5;padding:.1rem .3rem}
"""


@dataclass(frozen=True)
class Series:
    """A named line: points ``(epoch seconds, value or None)`` in time order."""

    name: str
    points: Sequence[Point]
    color: str = "#1f77b4"


@dataclass(frozen=True)
class Span:
    """A band from ``start`` to ``end`` (epoch seconds) labelled ``label``."""

    start: float
    end: float
    label: str
    color: str


@dataclass(frozen=True)
class Frame:
    """The plot area's scales: time to x, value to y."""

    t0: float
    t1: float
    low: float
    high: float
    height: int

    def x(self, t: float) -> float:
        share = (t - self.t0) / (self.t1 - self.t0) if self.t1 > self.t0 else 0.5
        return LEFT + (WIDTH - LEFT - RIGHT) * share

    def y(self, v: float) -> float:
        share = (v - self.low) / (self.high - self.low) if self.high > self.low else 0.0
        return self.height - BOTTOM - (self.height - TOP - BOTTOM) * share


def nice_top(value: float) -> float:
    """The smallest 1, 2, 2.5 or 5 times a power of ten at or above ``value`` (1 for 0)."""
    if value <= 0:
        return 1.0
    power = 10 ** math.floor(math.log10(value))
    return next(step * power for step in (1, 2, 2.5, 5, 10) if step * power >= value)


def clock(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%H:%M:%S")


def line_chart(
    title: str,
    series: Sequence[Series],
    unit: str = "",
    area: bool = False,
    height: int = 190,
    none: str = "no data yet",
) -> str:
    """An ``<svg>`` of ``series``; the note ``none`` in its place when no series has a value."""
    values = [v for s in series for _, v in s.points if v is not None]
    if not values:
        return empty(title, none)
    times = [t for s in series for t, v in s.points if v is not None]
    low = min(0.0, min(values))
    frame = Frame(min(times), max(times), low, nice_top(max(values)), height)
    body = [y_axis(frame), _x_axis(frame)]
    for index, one in enumerate(series):
        body.append(_series(frame, one, area and index == 0))
    return _svg(title, height, "".join(body), _legend(series), unit)


def timeline(title: str, spans: Sequence[Span], height: int = 92) -> str:
    """An ``<svg>`` of ``spans`` as coloured bands on a time axis, with a legend."""
    if not spans:
        return empty(title, "no status changes recorded")
    frame = Frame(min(s.start for s in spans), max(s.end for s in spans), 0, 1, height)
    bands = "".join(
        f'<rect class="span" x="{frame.x(s.start):.1f}" y="{TOP}" '
        f'width="{max(frame.x(s.end) - frame.x(s.start), 1.5):.1f}" '
        f'height="{height - TOP - BOTTOM}" fill="{s.color}">'
        f"<title>{html.escape(s.label)} from {clock(s.start)} to {clock(s.end)} UTC</title></rect>"
        for s in spans
    )
    legend = {s.label: s.color for s in spans}
    keys = [Series(label, [], color) for label, color in legend.items()]
    return _svg(title, height, bands + _x_axis(frame), _legend(keys))


def empty(title: str, note: str) -> str:
    return (
        f'<div class="chart-empty"><strong>{html.escape(title)}</strong>: {html.escape(note)}</div>'
    )


def _svg(title: str, height: int, body: str, legend: str, unit: str = "") -> str:
    """The chart's frame; its title says the unit of the y axis, if any."""
    shown = f"{title} ({unit})" if unit else title
    return (
        f'<svg class="chart" viewBox="0 0 {WIDTH} {height}" width="100%" '
        f'style="max-width:{WIDTH}px" role="img" aria-label="{html.escape(title)}" '
        'xmlns="http://www.w3.org/2000/svg" font-family="system-ui, sans-serif" font-size="11">'
        f'<text x="{LEFT}" y="16" font-size="13" font-weight="600">{html.escape(shown)}</text>'
        f"{legend}{body}</svg>"
    )


def _legend(series: Sequence[Series]) -> str:
    if len(series) < 2:
        return ""
    out, x = [], WIDTH - RIGHT
    for one in reversed(series):
        label = html.escape(one.name)
        x -= 7 * len(one.name) + 22
        out.append(
            f'<rect x="{x}" y="7" width="10" height="10" fill="{one.color}"/>'
            f'<text x="{x + 14}" y="16">{label}</text>'
        )
    return "".join(out)


def y_axis(frame: Frame) -> str:
    base = frame.y(frame.low)
    out = [
        f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{base:.1f}" stroke="#999"/>',
        f'<line x1="{LEFT}" y1="{base:.1f}" x2="{WIDTH - RIGHT}" y2="{base:.1f}" stroke="#999"/>',
    ]
    for value in sorted({frame.low, (frame.low + frame.high) / 2, frame.high}):
        y = frame.y(value)
        out.append(
            f'<line x1="{LEFT}" y1="{y:.1f}" x2="{WIDTH - RIGHT}" y2="{y:.1f}" stroke="#eee"/>'
            f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{fmt(value)}</text>'
        )
    return "".join(out)


def _x_axis(frame: Frame) -> str:
    if frame.t1 <= frame.t0:
        stamps = [frame.t0]
    else:
        stamps = [frame.t0 + (frame.t1 - frame.t0) * i / (TICKS - 1) for i in range(TICKS)]
    y = frame.height - BOTTOM + 16
    out = []
    for i, t in enumerate(stamps):
        anchor = "start" if i == 0 and len(stamps) > 1 else "end" if i == TICKS - 1 else "middle"
        out.append(f'<text x="{frame.x(t):.1f}" y="{y}" text-anchor="{anchor}">{clock(t)}</text>')
    out.append(f'<text x="{WIDTH - RIGHT}" y="{frame.height - 2}" text-anchor="end">UTC</text>')
    return "".join(out)


def _runs(points: Sequence[Point]) -> list[list[tuple[float, float]]]:
    """The unbroken stretches of ``points`` (a None value ends one)."""
    out: list[list[tuple[float, float]]] = [[]]
    for t, v in points:
        if v is None:
            if out[-1]:
                out.append([])
            continue
        out[-1].append((t, float(v)))
    return [run for run in out if run]


def _series(frame: Frame, one: Series, area: bool) -> str:
    parts = []
    for run in _runs(one.points):
        line = " ".join(
            f"{'M' if i == 0 else 'L'}{frame.x(t):.1f},{frame.y(v):.1f}"
            for i, (t, v) in enumerate(run)
        )
        if area:
            base = f"{frame.y(max(frame.low, 0.0)):.1f}"
            shade = f"{line} L{frame.x(run[-1][0]):.1f},{base} L{frame.x(run[0][0]):.1f},{base} Z"
            parts.append(f'<path class="area" d="{shade}" fill="{one.color}" fill-opacity="0.15"/>')
        parts.append(
            f'<path class="line" d="{line}" fill="none" stroke="{one.color}" stroke-width="1.8"/>'
        )
        parts.extend(
            f'<circle class="point" cx="{frame.x(t):.1f}" cy="{frame.y(v):.1f}" r="2.2" '
            f'fill="{one.color}"><title>{html.escape(one.name)} at {clock(t)} UTC: '
            f"{fmt(v)}</title></circle>"
            for t, v in run
        )
    return f'<g class="series" data-name="{html.escape(one.name)}">{"".join(parts)}</g>'
