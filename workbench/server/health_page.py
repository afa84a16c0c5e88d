"""``GET {base_url}workbench/jobs/{job}/health``: one job's health as an HTML page.

Served by the same handlers as the API, in ``workbench serve`` and in the Jupyter
extension, with the same identity and team authorization (another team's job: 404). A
browser logs in once with its access token (the login form, or ``?token=T`` once: a
cookie; on Jupyter, its own login applies). The page is self-contained: charts are inline SVG drawn
here (:mod:`workbench.charts`), no script runs, and its Content-Security-Policy
lets the browser fetch nothing (``default-src 'none'``). It reloads every 30 s.

Shown: the job's status and metrics, its status history, per micro-batch rates, batch
duration, offsets behind latest, watermark delay, late rows and dead letters
(:mod:`workbench.server.health_series`), recent events and alerts, and the dagger's own
output series from its InfluxDB sinks (:mod:`workbench.server.sink_series`).
"""

from __future__ import annotations

import html
import json
import time
from datetime import UTC, datetime
from typing import Any

from workbench.charts import Series, line_chart, timeline
from workbench.server.api import ApiHandler
from workbench.server.health_data import Health, collect
from workbench.server.health_series import STATUS_COLORS, batches, charts, status_spans
from workbench.server.page_html import CSP, REFRESH_S, page

PATH = r"jobs/([^/]+)/health"
SHOWN_EVENTS = 15
OUTPUT_COLORS = ("#6a3d9a", "#1f77b4", "#2ca02c", "#ff7f0e", "#d62728", "#17becf")


class PageRoute(ApiHandler):
    """A route answering HTML, errors included."""

    def wants_html(self) -> bool:
        return True


class HealthRoute(PageRoute):
    async def get(self, ref: str) -> None:
        health = await self.run(lambda who: collect(self.service, who, ref))
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.set_header("Content-Security-Policy", CSP)
        self.set_header("Cache-Control", "no-store")
        self.finish(render(health, time.time()))


ROUTES: list[tuple[str, type[ApiHandler]]] = [(PATH, HealthRoute)]


def render(health: Health, now: float) -> str:
    job = health.job
    sections = [
        _summary(job),
        "<h2>Status history</h2>",
        timeline("Status", status_spans(health.events, job["status"], now)),
        _events(health.events[-SHOWN_EVENTS:]),
        "<h2>Micro-batches</h2>",
        _batch_charts(health),
        "<h2>Recent alerts</h2>",
        _alerts(health.alerts),
        "<h2>Output</h2>",
        _outputs(health),
    ]
    return page(f"{job['name']} health", "".join(sections), refresh=True)


def _summary(job: dict) -> str:
    color = STATUS_COLORS.get(job["status"], "#757575")
    run = job.get("run") or {}
    metrics = job.get("metrics") or {}
    rows = "".join(
        f"<tr><th>{html.escape(k)}</th><td>{_cell(v)}</td></tr>" for k, v in metrics.items()
    )
    return (
        f"<h1>{html.escape(job['name'])} "
        f'<span class="status" style="background:{color}">{html.escape(job["status"])}</span></h1>'
        f'<p class="muted">team {html.escape(job["team"])} · version {job["version"]} · '
        f"schema version {job.get('schema_version') or 'bundled'} · "
        f"desired {html.escape(str(job.get('desired')))} · run {_cell(run.get('id'))}"
        f" · failures {job.get('failures', 0)} · refreshed every {REFRESH_S} s</p>"
        + (
            f'<p class="problem">last error: {html.escape(str(job["last_error"]))}</p>'
            if job.get("last_error")
            else ""
        )
        + f'<table class="metrics">{rows}</table>'
    )


def _cell(value: Any) -> str:
    return "-" if value is None else html.escape(str(value))


def _events(events: list[dict]) -> str:
    if not events:
        return '<p class="muted">no events</p>'
    rows = "".join(
        f"<tr><td>{_cell(e.get('time'))}</td><td>{_cell(e.get('actor'))}</td>"
        f"<td>{_cell(e.get('action'))}</td>"
        f"<td>{html.escape(json.dumps(e.get('detail') or {})[:300])}</td></tr>"
        for e in reversed(events)
    )
    return (
        '<table class="events"><tr><th>time (UTC)</th><th>actor</th><th>action</th>'
        f"<th>detail</th></tr>{rows}</table>"
    )


def _batch_charts(health: Health) -> str:
    runs = [batches(records) for _, records in health.runs]
    drawn = [line_chart(c.title, c.series, c.unit, c.area) for c in charts(runs)]
    names = ", ".join(run_id for run_id, _ in health.runs) or "none yet"
    return (
        f'<p class="muted">runs of version {health.job["version"]}: {html.escape(names)}</p>'
        f'<div class="charts">{"".join(drawn)}</div>'
    )


def _alerts(alerts: list[dict] | None) -> str:
    if alerts is None:
        return (
            '<p class="muted">no alerts yet: this job service keeps no alert state (alerting '
            "rules in the spec's <code>alerts:</code> need the alerting service).</p>"
        )
    if not alerts:
        return '<p class="muted">no alerts yet</p>'
    rows = "".join(
        f"<tr><td>{_cell(a.get('rule'))}</td><td>{_cell(a.get('status'))}</td>"
        f"<td>{_cell(_pairs(a.get('labels')))}</td>"
        f"<td>{_cell(_when(a.get('starts_at')))}</td><td>{_cell(_when(a.get('ends_at')))}</td>"
        f"<td>{_cell(_pairs(a.get('last_value'))[:200])}</td></tr>"
        for a in alerts
    )
    return (
        '<table class="alerts"><tr><th>rule</th><th>status</th><th>labels</th><th>since</th>'
        f"<th>until</th><th>value</th></tr>{rows}</table>"
    )


def _pairs(values: dict | None) -> str:
    """``k=v, k=v`` as the CLI shows labels and values."""
    return ", ".join(f"{k}={v}" for k, v in (values or {}).items())


def _when(value: Any) -> str | None:
    """A database time (a datetime, or text from SQLite), UTC to the second."""
    if not value:
        return None
    try:
        moment = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
    except ValueError:
        return str(value)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)  # the database keeps UTC
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%SZ")


def _outputs(health: Health) -> str:
    if not health.outputs:
        return '<p class="muted">the job writes to no InfluxDB sink</p>'
    parts = []
    for out in health.outputs:
        parts.append(
            f"<p><strong>{html.escape(out.sink)}</strong>, last 15 minutes: "
            f"<code>{html.escape(out.query)}</code></p>"
        )
        if out.problem:
            parts.append(f'<p class="problem">cannot read it: {html.escape(out.problem)}</p>')
            continue
        drawn = [
            line_chart(f"sum({name}) per 30 s", [Series(name, _known(points), color)], area=True)
            for (name, points), color in zip(
                out.fields.items(), _cycle(len(out.fields)), strict=True
            )
        ]
        parts.append(
            f'<div class="charts">{"".join(drawn)}</div>'
            if drawn
            else '<p class="muted">no points in the last 15 minutes</p>'
        )
    return "".join(parts)


def _known(points: list) -> list:
    """The windows with points: an empty 30 s window joins its neighbours (as Grafana's
    "connect null values"), or a sink writing every minute would draw only dots."""
    return [(t, v) for t, v in points if v is not None]


def _cycle(n: int) -> list[str]:
    return [OUTPUT_COLORS[i % len(OUTPUT_COLORS)] for i in range(n)]
