"""A topic's quality windows as HTML: charts (inline SVG, :mod:`workbench.server.svgchart`)
of the score, completeness, record counts and latencies, and a table of the last windows.
The job service's quality page and the Voila view (notebooks/quality.ipynb) show it.
Rows are metric rows with ``window_timestamp`` in epoch milliseconds
(:mod:`workbench.quality.history`).
"""

from __future__ import annotations

import html
import time
from typing import Any

from workbench.quality.metrics import COUNTS
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
SHOWN = 48  # windows in the table


def topic_html(topic: str, rows: list[dict[str, Any]], note: str = "") -> str:
    """The heading, charts and table of one topic's windows (time order)."""
    drawn = "".join(
        line_chart(title, [_series(rows, c, COLORS[i]) for i, c in enumerate(columns)], unit)
        for title, columns, unit in CHARTS
    )
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())
    about = " · ".join(p for p in (note, f"{len(rows)} windows", f"{stamp} UTC") if p)
    return (
        f"<h1>Data quality: {html.escape(topic)}</h1>"
        f'<p class="muted">{html.escape(about)}</p>'
        f'<div class="charts">{drawn}</div><h2>Windows</h2>{_table(rows)}'
    )


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
