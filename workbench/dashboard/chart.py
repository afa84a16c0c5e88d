"""The city's total per window as an SVG line chart, drawn in Python (no JavaScript, no
request): times on the city's clock with UTC in each one's tooltip (``<title>``), both
axes labelled, and a window with no results left as a gap in the line."""

from __future__ import annotations

import html
from collections.abc import Sequence
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from workbench.atlas.page import fmt
from workbench.charts import BOTTOM, LEFT, RIGHT, TOP, WIDTH, Frame, nice_top, y_axis
from workbench.dashboard import clock

HEIGHT = 240
#: The plot area ends this far above the foot: room for the x axis's label.
FOOT = 18
TICKS = 5
#: A step longer than this many windows between two points is a gap.
GAP = 1.5

Point = tuple[datetime, float]


def line_chart(
    points: Sequence[Point],
    title: str,
    y_label: str,
    zone: ZoneInfo,
    window: timedelta | None,
    color: str = "#e31a1c",
) -> str:
    """An ``<svg>`` of ``points`` (window end, value) in time order; ``no results`` when none."""
    if not points:
        return f'<div class="dashboard-chart empty">{html.escape(title)}: no results</div>'
    times = [t.timestamp() for t, _ in points]
    values = [v for _, v in points]
    top, bottom = nice_top(max(max(values), 0.0)), min(min(values), 0.0)
    frame = Frame(min(times), max(times), bottom, top, HEIGHT - FOOT)
    body = [
        _y_axis(frame, y_label),
        _x_axis(frame, points[-1][0], zone, window),
        *(_run(frame, run, zone, color) for run in runs(points, window)),
    ]
    return (
        f'<svg class="dashboard-chart" viewBox="0 0 {WIDTH} {HEIGHT}" width="100%" '
        f'style="max-width:{WIDTH}px" role="img" aria-label="{html.escape(title)}" '
        'xmlns="http://www.w3.org/2000/svg" font-family="system-ui, sans-serif" font-size="11">'
        f'<text x="{LEFT}" y="16" font-size="13" font-weight="600">{html.escape(title)}</text>'
        f"{''.join(body)}</svg>"
    )


def runs(points: Sequence[Point], window: timedelta | None) -> list[list[Point]]:
    """The unbroken stretches: a step of more than :data:`GAP` windows starts a new one."""
    out: list[list[Point]] = []
    for point in points:
        if out and (window is None or point[0] - out[-1][-1][0] <= window * GAP):
            out[-1].append(point)
        else:
            out.append([point])
    return out


def _run(frame: Frame, run: list[Point], zone: ZoneInfo, color: str) -> str:
    xy = [(frame.x(t.timestamp()), frame.y(v)) for t, v in run]
    line = " ".join(f"{'M' if i == 0 else 'L'}{x:.1f},{y:.1f}" for i, (x, y) in enumerate(xy))
    dots = "".join(
        f'<circle class="point" cx="{x:.1f}" cy="{y:.1f}" r="2.5" fill="{color}"><title>'
        f"{clock.local(t, zone)} {clock.zone_name(zone, t)} ({clock.utc(t, '%H:%M')}): "
        f"{fmt(v)}</title></circle>"
        for (x, y), (t, v) in zip(xy, run, strict=True)
    )
    stroke = f'fill="none" stroke="{color}" stroke-width="2"'
    path = f'<path class="line" d="{line}" {stroke}/>' if len(run) > 1 else ""
    return f'<g class="run">{path}{dots}</g>'


def _y_axis(frame: Frame, label: str) -> str:
    """The value axis (:func:`workbench.charts.y_axis`) and what it counts."""
    middle = (TOP + frame.y(frame.low)) / 2
    return y_axis(frame) + (
        f'<text class="axis-label y" transform="translate(14 {middle:.1f}) rotate(-90)"'
        f' text-anchor="middle">{html.escape(label)}</text>'
    )


def ticks(t0: float, t1: float, window: timedelta | None) -> list[float]:
    """Up to :data:`TICKS` times from ``t0`` to ``t1``: window ends when the window is known."""
    if t1 <= t0:
        return [t0]
    step = window.total_seconds() if window else 0.0
    if step <= 0 or (t1 - t0) % step:
        return [t0 + (t1 - t0) * i / (TICKS - 1) for i in range(TICKS)]
    steps = round((t1 - t0) / step)
    return sorted({t0 + step * round(i * steps / (TICKS - 1)) for i in range(TICKS)})


def _x_axis(frame: Frame, last: datetime, zone: ZoneInfo, window: timedelta | None) -> str:
    stamps = ticks(frame.t0, frame.t1, window)
    count = len(stamps)
    y = frame.height - BOTTOM + 16
    out = []
    for i, t in enumerate(stamps):
        at = datetime.fromtimestamp(t, zone)
        anchor = "start" if i == 0 and count > 1 else "end" if i == count - 1 else "middle"
        out.append(
            f'<text class="tick" x="{frame.x(t):.1f}" y="{y}" text-anchor="{anchor}">'
            f"<title>{clock.utc(at)}</title>{clock.local(at, zone)}</text>"
        )
    label = f"window end, {clock.zone_label(zone, last)} (UTC on hover)"
    middle = (LEFT + WIDTH - RIGHT) / 2
    out.append(
        f'<text class="axis-label x" x="{middle:.0f}" y="{HEIGHT - 6}" text-anchor="middle">'
        f"{html.escape(label)}</text>"
    )
    return "".join(out)
