"""A dagger's own output over the last 15 minutes, read back from its InfluxDB sinks.

For each ``influx`` sink of the job's current spec, the sum of every field per 30 s
window, as the seed system's page asked::

    v1 (InfluxQL): SELECT sum(*) FROM "<measurement>" WHERE time > now() - 900s GROUP BY time(30s)
    v2 (Flux):     from(bucket: "<bucket>") |> range(start: -900s)
                   |> filter(fn: (r) => r._measurement == "<measurement>")
                   |> group(columns: ["_field"])
                   |> aggregateWindow(every: 30s, fn: sum, createEmpty: false)

Credentials come from the sink's config; its ``${env:}``/``${file:}`` references are
resolved here, in the job service's process, used for the request and dropped: no value
is stored, logged or shown (a failure's text is masked with :func:`workbench.secrets.redact`).
A sink that cannot be read gives a :class:`Output` with a ``problem`` instead of points.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import requests

from workbench import secrets
from workbench.dashboard.stores.influx1 import ident
from workbench.exceptions import WorkbenchError
from workbench.sinks.influx import InfluxConfig

WINDOW_S, STEP_S = 900, 30
TIMEOUT_S = 5.0
MAX_FIELDS = 8


@dataclass(frozen=True)
class Output:
    """One sink's series: ``{field: [(epoch seconds, sum)]}``, or why there are none."""

    sink: str
    query: str
    fields: dict[str, list[tuple[float, float | None]]] = field(default_factory=dict)
    problem: str | None = None


def influxql(measurement: str) -> str:
    return (
        f"SELECT sum(*) FROM {ident(measurement)} "
        f"WHERE time > now() - {WINDOW_S}s GROUP BY time({STEP_S}s)"
    )


def flux_string(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("${", "\\${")
    return f'"{escaped}"'


def flux(bucket: str, measurement: str) -> str:
    return (
        f"from(bucket: {flux_string(bucket)}) |> range(start: -{WINDOW_S}s) "
        f"|> filter(fn: (r) => r._measurement == {flux_string(measurement)}) "
        '|> group(columns: ["_field"]) '
        f"|> aggregateWindow(every: {STEP_S}s, fn: sum, createEmpty: false)"
    )


def outputs(spec_yaml: str) -> list[Output]:
    """The series of every InfluxDB sink in ``spec_yaml`` (a job version's spec)."""
    from workbench.jobs.versioning import parse_spec

    spec = parse_spec(spec_yaml)
    return [read(sink) for sink in spec.sinks if isinstance(sink, InfluxConfig)]


def read(sink: Any) -> Output:
    """One sink's series, its secrets resolved only for the request."""

    found: dict[str, str] = {}
    query = influxql(sink.measurement) if sink.api == 1 else flux(sink.bucket, sink.measurement)
    try:
        resolved = type(sink).model_validate(secrets.resolve(sink.model_dump(), found))
        fields = _v1(resolved, query) if sink.api == 1 else _v2(resolved, query)
    except (WorkbenchError, requests.RequestException, ValueError) as err:
        mask = secrets.redact(found.values())
        return Output(sink.describe(), query, problem=mask(_reason(err)))
    return Output(sink.describe(), query, dict(list(fields.items())[:MAX_FIELDS]))


def _reason(err: Exception) -> str:
    if isinstance(err, requests.ConnectionError):
        return "cannot connect (is the server running, is the sink's url right?)"
    if isinstance(err, requests.Timeout):
        return f"no answer within {TIMEOUT_S:g} s"
    return str(err)[:300]


def _answer(response: requests.Response) -> requests.Response:
    if response.status_code >= 400:
        raise WorkbenchError(f"answered HTTP {response.status_code}: {response.text.strip()[:200]}")
    return response


def _v1(sink: Any, query: str) -> dict[str, list[tuple[float, float | None]]]:
    params = {"q": query, "db": sink.database, "epoch": "s"}
    if sink.retention_policy:
        params["rp"] = sink.retention_policy
    if sink.username:
        params |= {"u": sink.username, "p": sink.password or ""}
    url = sink.url.rstrip("/") + "/query"
    results = _answer(requests.get(url, params=params, timeout=TIMEOUT_S)).json()["results"]
    if results and results[0].get("error"):
        raise WorkbenchError(f"InfluxDB said: {results[0]['error']}")
    out: dict[str, list[tuple[float, float | None]]] = {}
    for series in (results[0].get("series") or []) if results else []:
        columns = series["columns"]
        for row in series["values"]:
            for name, value in zip(columns[1:], row[1:], strict=True):
                out.setdefault(name.removeprefix("sum_"), []).append((float(row[0]), value))
    return out


def _v2(sink: Any, query: str) -> dict[str, list[tuple[float, float | None]]]:
    headers = {"Accept": "application/csv", "Content-Type": "application/json"}
    if sink.token:
        headers["Authorization"] = f"Token {sink.token}"
    body: dict[str, Any] = {
        "query": query,
        "type": "flux",
        "dialect": {"header": True, "annotations": []},
    }
    url = sink.url.rstrip("/") + "/api/v2/query"
    response = requests.post(
        url, params={"org": sink.org or ""}, json=body, headers=headers, timeout=TIMEOUT_S
    )
    return flux_csv(_answer(response).text)


def flux_csv(text: str) -> dict[str, list[tuple[float, float | None]]]:
    """``{field: [(epoch seconds, value)]}`` from Flux's CSV answer (a header row begins
    each table; blank lines separate tables)."""
    out: dict[str, list[tuple[float, float | None]]] = {}
    header: list[str] | None = None
    for row in csv.reader(io.StringIO(text)):
        if not any(cell.strip() for cell in row):
            header = None
            continue
        if header is None or ("_value" in row and "_time" in row):
            header = row
            continue
        cells = dict(zip(header, row, strict=False))
        value = cells.get("_value", "")
        out.setdefault(cells.get("_field", "value"), []).append(
            (_epoch(cells["_time"]), float(value) if value not in ("", None) else None)
        )
    return {name: sorted(points, key=lambda p: p[0]) for name, points in out.items()}


def _epoch(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
