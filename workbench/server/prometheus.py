"""``GET {base_url}workbench/metrics``: every job's health in Prometheus' text format 0.0.4.

Authenticated like the API (``Authorization: token T`` or ``Bearer T``); the caller sees
the jobs it may see (an admin all, a team member its teams'). Each job gives gauges
labelled ``job`` and ``team``: the live run's metrics (as in ``workbench jobs show``;
totals count since the run started), the watermark delay, the last batch and sink
write times, failures, version, firing alerts when the service keeps alerts, and
``workbench_job_status{job,team,status}``: 1 for the job's status, 0 for the others. A
metric the job does not have (no run, no batch yet) is left out, as Prometheus expects.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from tornado.web import HTTPError

from workbench.jobs.views import epoch
from workbench.server.api import ApiHandler
from workbench.server.health_series import STATUS_COLORS

PATH = "metrics"
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
PREFIX = "workbench_job_"
STATUSES = tuple(STATUS_COLORS)

Value = Callable[[dict[str, Any]], float | None]


def _metric(key: str) -> Value:
    return lambda job: _number((job.get("metrics") or {}).get(key))


def _stamp(key: str) -> Value:
    return lambda job: epoch((job.get("metrics") or {}).get(key))


def _field(key: str) -> Value:
    return lambda job: _number(job.get(key))


def _watermark_delay(job: dict[str, Any]) -> float | None:
    metrics = job.get("metrics") or {}
    batch, watermark = epoch(metrics.get("last_batch_at")), epoch(metrics.get("watermark"))
    return None if batch is None or watermark is None else round(batch - watermark, 3)


#: (name after ``workbench_job_``, help, value of a job view)
GAUGES: list[tuple[str, str, Value]] = [
    ("input_rate", "Input rows per second in the last micro-batch.", _metric("input_rate")),
    (
        "processed_rate",
        "Processed rows per second in the last micro-batch.",
        _metric("processed_rate"),
    ),
    ("batch_duration_ms", "Duration of the last micro-batch in ms.", _metric("batch_duration_ms")),
    (
        "offsets_behind_latest",
        "Kafka records published but not yet read, summed over partitions.",
        _metric("offsets_behind_latest"),
    ),
    ("late", "Rows dropped as late since the run started.", _metric("late")),
    (
        "dead_letters",
        "Records that failed to decode since the run started.",
        _metric("dead_letters"),
    ),
    ("records", "Decoded input records since the run started.", _metric("records")),
    ("batches", "Micro-batches since the run started.", _metric("batches")),
    (
        "watermark_delay_seconds",
        "Time of the last micro-batch minus its watermark, in seconds.",
        _watermark_delay,
    ),
    ("watermark_timestamp_seconds", "The watermark, in Unix seconds.", _stamp("watermark")),
    (
        "last_batch_timestamp_seconds",
        "When the last micro-batch ran, in Unix seconds.",
        _stamp("last_batch_at"),
    ),
    (
        "last_sink_write_timestamp_seconds",
        "When a sink last wrote rows, in Unix seconds.",
        _stamp("last_sink_write_at"),
    ),
    ("failures", "Failed runs in a row (0 once a run is healthy).", _field("failures")),
    ("version", "The job's current version.", _field("version")),
    ("alerts_firing", "Alerts of the job firing now.", _field("alerts_firing")),
]


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def label_value(text: Any) -> str:
    """A label value escaped for the text format: backslash, double quote, line feed."""
    return str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _help(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def _labels(**labels: Any) -> str:
    return "{" + ",".join(f'{k}="{label_value(v)}"' for k, v in labels.items()) + "}"


def _sample(value: float) -> str:
    return str(int(value)) if value.is_integer() and abs(value) < 2**53 else repr(value)


def exposition(jobs: list[dict[str, Any]]) -> str:
    """The text of every gauge for ``jobs`` (job views, as the API answers them)."""
    lines: list[str] = []
    for name, text, value in GAUGES:
        samples = [(job, v) for job in jobs if (v := value(job)) is not None]
        if not samples:
            continue
        lines += [f"# HELP {PREFIX}{name} {_help(text)}", f"# TYPE {PREFIX}{name} gauge"]
        lines += [
            f"{PREFIX}{name}{_labels(job=job['name'], team=job['team'])} {_sample(v)}"
            for job, v in samples
        ]
    lines += _status(jobs)
    return "\n".join(lines) + "\n"


def _status(jobs: list[dict[str, Any]]) -> list[str]:
    name = f"{PREFIX}status"
    lines = [
        f"# HELP {name} The job's status: 1 for the one it is in, 0 for the others.",
        f"# TYPE {name} gauge",
    ]
    for job in jobs:
        statuses = STATUSES if job["status"] in STATUSES else (*STATUSES, job["status"])
        lines += [
            f"{name}{_labels(job=job['name'], team=job['team'], status=s)} "
            f"{int(s == job['status'])}"
            for s in statuses
        ]
    return lines


class MetricsRoute(ApiHandler):
    def get_login_url(self) -> str:
        """Under Jupyter: a scraper without a valid token gets 403, not a login page."""
        raise HTTPError(403)

    async def get(self) -> None:
        jobs = await self.call("list_jobs")
        self.set_header("Content-Type", CONTENT_TYPE)
        self.set_header("Cache-Control", "no-store")
        self.finish(exposition(jobs))

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        error = self.error_of(status_code, **kwargs)["error"]
        self.set_header("Content-Type", "text/plain; charset=utf-8")
        self.finish(f"error {error['status']} {error['type']}: {error['message']}\n")


ROUTES: list[tuple[str, type[ApiHandler]]] = [(PATH, MetricsRoute)]
