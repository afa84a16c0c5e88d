"""``GET {base_url}workbench/quality/{topic}[?hours=H]``: a topic's data quality as an HTML
page like the health page (score, completeness, counts and latencies per window as inline
SVG, the last windows as a table; no script, nothing fetched; ``?token=T`` for browsers;
reloads every 30 s). The data is :func:`workbench.quality.board.topic_rows`.
"""

from __future__ import annotations

import html
import time
from typing import Any
from urllib.parse import unquote

from workbench.quality.board import topic_rows
from workbench.quality.metrics import COUNTS
from workbench.server.handlers import ApiHandler
from workbench.server.health_page import CSP, PageRoute, page
from workbench.server.quality_routes import hours_of
from workbench.server.svgchart import Series, line_chart

COLORS = ("#1f77b4", "#2ca02c", "#ff7f0e", "#d62728", "#6a3d9a", "#17becf")
CHARTS = (
    ("Score", ("score",), ""),
    ("Completeness", ("completeness",), ""),
    ("Records", ("total", "expected", "missing", "duplicates", "late", "undecodable"), ""),
    (
        "Publish − event time",
        ("publish_latency_p50_ms", "publish_latency_p95_ms", "publish_latency_p99_ms"),
        "ms",
    ),
    (
        "Processing − publish time",
        ("processing_latency_p50_ms", "processing_latency_p95_ms", "processing_latency_p99_ms"),
        "ms",
    ),
)
TABLE = (*COUNTS, "warehouse_missing", "score")


class QualityPage(PageRoute):
    async def get(self, topic: str) -> None:
        hours = hours_of(self)
        data = await self.run(lambda who: topic_rows(self.service, who, unquote(topic), hours))
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.set_header("Content-Security-Policy", CSP)
        self.set_header("Cache-Control", "no-store")
        self.finish(render(data))


ROUTES: list[tuple[str, type[ApiHandler]]] = [("quality/([^/]+)", QualityPage)]


def render(data: dict[str, Any]) -> str:
    rows = data["rows"]
    jobs = ", ".join(f"{j['job']} ({j['team']}, {j['status']})" for j in data["jobs"])
    charts = "".join(
        line_chart(title, [_series(rows, c, COLORS[i]) for i, c in enumerate(columns)], unit)
        for title, columns, unit in CHARTS
    )
    body = (
        f"<h1>Data quality: {html.escape(data['topic'])}</h1>"
        f'<p class="muted">{html.escape(jobs)} · last {data["hours"]:g} h · '
        f"{len(rows)} windows · {time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime())} UTC</p>"
        f'<div class="charts">{charts}</div><h2>Windows</h2>{_table(rows)}'
    )
    return page(f"{data['topic']} quality", body, refresh=True)


def _series(rows: list[dict[str, Any]], column: str, color: str) -> Series:
    points = [(r["window_timestamp"] / 1000, r.get(column)) for r in rows]
    return Series(column, points, color)


def _table(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return '<p class="muted">no windows yet</p>'
    head = "".join(f"<th>{c}</th>" for c in TABLE)
    body = "".join(
        "<tr><td>"
        + time.strftime("%Y-%m-%d %H:%M", time.gmtime(r["window_timestamp"] / 1000))
        + "</td>"
        + "".join(f"<td>{html.escape(str(r.get(c, '-')))}</td>" for c in TABLE)
        + "</tr>"
        for r in reversed(rows[-48:])
    )
    return f'<table class="windows"><tr><th>window (UTC)</th>{head}</tr>{body}</table>'
