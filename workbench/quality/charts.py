"""A topic's quality windows as HTML: charts (inline SVG, :mod:`workbench.charts`)
of the score, completeness, record counts and latencies, and a table of the last windows.
The job service's quality page and the Voila view (notebooks/quality.ipynb) show it.
Rows are metric rows with ``window_timestamp`` in epoch milliseconds
(:mod:`workbench.quality.history`).
"""

from __future__ import annotations

import html
import time
from typing import Any

from workbench.charts import Series, line_chart
from workbench.quality.metrics import COUNTS

COLORS = ("#1f77b4", "#2ca02c", "#ff7f0e", "#d62728", "#6a3d9a", "#17becf")
PERCENTILES = ("p50", "p95", "p99")
#: Each chart: its title, its series' columns (each with its legend label), its unit. Faults
#: are drawn apart from the record counts (a few records on a scale of thousands are flat).
CHARTS: tuple[tuple[str, tuple[tuple[str, str], ...], str], ...] = (
    ("Score", (("score", "score"),), ""),
    ("Completeness", (("completeness", "completeness"),), ""),
    ("Records", (("total", "total"), ("expected", "expected")), ""),
    (
        "Faults",
        tuple((c, c.replace("_", " ")) for c in COUNTS if c not in ("total", "unique", "expected")),
        "records",
    ),
    ("Publish − event time", tuple((f"publish_latency_{p}_ms", p) for p in PERCENTILES), "ms"),
    (
        "Processing − publish time",
        tuple((f"processing_latency_{p}_ms", p) for p in PERCENTILES),
        "ms",
    ),
)
TABLE = (*COUNTS, "warehouse_missing", "score")
SHOWN = 48  # windows in the table


def topic_html(topic: str, rows: list[dict[str, Any]], note: str = "") -> str:
    """The heading, charts and table of one topic's windows (time order)."""
    drawn = "".join(
        line_chart(
            title, [_series(rows, c, COLORS[i], label) for i, (c, label) in enumerate(cs)], unit
        )
        for title, cs, unit in CHARTS
    )
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())
    about = " · ".join(p for p in (note, f"{len(rows)} windows", f"{stamp} UTC") if p)
    return (
        f"<h1>Data quality: {html.escape(topic)}</h1>"
        f'<p class="muted">{html.escape(about)}</p>'
        f'<div class="charts">{drawn}</div><h2>Windows</h2>{_table(rows)}'
    )


def _series(rows: list[dict[str, Any]], column: str, color: str, label: str) -> Series:
    points = [(r["window_timestamp"] / 1000, r.get(column)) for r in rows]
    return Series(label, points, color)


def _table(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return '<p class="muted">no windows yet</p>'
    head = "".join(f"<th>{c}</th>" for c in TABLE)
    body = "".join(
        '<tr><td style="white-space:nowrap">'
        + time.strftime("%Y-%m-%d %H:%M", time.gmtime(r["window_timestamp"] / 1000))
        + "</td>"
        + "".join(f"<td>{_number(r.get(c))}</td>" for c in TABLE)
        + "</tr>"
        for r in reversed(rows[-SHOWN:])
    )
    return f'<table class="windows"><tr><th>window (UTC)</th>{head}</tr>{body}</table>'


def _number(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.2f}"
    return html.escape(str(value))
