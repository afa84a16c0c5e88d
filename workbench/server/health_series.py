"""A job's health over time, from what the service keeps: the figures the health page charts.

- Status history: the job's events, each supervisor action read as the status it starts
  (``spawn`` → STARTING, ``running`` → RUNNING, ``backoff`` → BACKING_OFF, ...), as
  :class:`~workbench.charts.Span` bands up to now.
- Per micro-batch, from ``progress.jsonl`` of each run of the job's current version
  (one record per batch, :func:`workbench.jobs.metrics.record`): input and processed
  rate, batch duration, offsets behind latest, watermark delay (the batch's time minus
  its watermark), late rows and dead letters per batch (dead letters from the run's
  running total ``dead_letters_total``). Runs are drawn apart: the line breaks between
  two runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from workbench.charts import Series, Span
from workbench.jobs.views import epoch

#: the status an event's action starts (actions not listed change no status)
STATUS_OF_ACTION = {
    "submit": "SUBMITTED",
    "waiting": "WAITING",
    "spawn": "STARTING",
    "running": "RUNNING",
    "lagging": "LAGGING",
    "stop-requested": "STOPPING",
    "stop-now": "STOPPING",
    "run-stopped": "STOPPED",
    "backoff": "BACKING_OFF",
    "failed": "FAILED",
}
STATUS_COLORS = {
    "SUBMITTED": "#9e9e9e",
    "WAITING": "#ffb74d",
    "STARTING": "#64b5f6",
    "RUNNING": "#2e7d32",
    "LAGGING": "#f9a825",
    "STOPPING": "#a1887f",
    "STOPPED": "#616161",
    "BACKING_OFF": "#ef6c00",
    "FAILED": "#c62828",
}
BLUE, GREEN, ORANGE, RED = "#1f77b4", "#2ca02c", "#ff7f0e", "#d62728"


def status_spans(events: Sequence[dict], status: str, now: float) -> list[Span]:
    """The job's statuses as bands, from its events (oldest first) up to ``now``; the last
    band is the job's current ``status``."""
    changes: list[tuple[float, str]] = []
    for event in events:
        label, at = STATUS_OF_ACTION.get(event.get("action", "")), epoch(event.get("time"))
        if label and at is not None and (not changes or changes[-1][1] != label):
            changes.append((at, label))
    if changes and changes[-1][1] != status:
        changes.append((max(changes[-1][0], now), status))
    ends = [at for at, _ in changes[1:]] + [now] if changes else []
    return [
        Span(at, max(end, at), label, STATUS_COLORS.get(label, "#bdbdbd"))
        for (at, label), end in zip(changes, ends, strict=True)
    ]


@dataclass(frozen=True)
class Batch:
    """One micro-batch's figures (None: not reported)."""

    time: float
    input_rate: float | None
    processed_rate: float | None
    duration_s: float | None
    offsets_behind: float | None
    watermark_delay_s: float | None
    late: float | None
    dead_letters: float | None


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def batches(records: Sequence[dict]) -> list[Batch]:
    """One run's ``progress.jsonl`` records as :class:`Batch` es, in time order."""
    out, dead_before = [], 0.0
    for record in sorted(records, key=lambda r: _number(r.get("time")) or 0.0):
        at = _number(record.get("time"))
        if at is None:
            continue
        watermark = epoch(record.get("watermark"))
        dead_total = _number(record.get("dead_letters_total"))
        duration = _number(record.get("duration_ms"))
        out.append(
            Batch(
                time=at,
                input_rate=_number(record.get("input_rate")),
                processed_rate=_number(record.get("processed_rate")),
                duration_s=duration / 1000 if duration is not None else None,
                offsets_behind=_number(record.get("offsets_behind")),
                watermark_delay_s=round(at - watermark, 3) if watermark is not None else None,
                late=_number(record.get("late_rows")),
                dead_letters=max(dead_total - dead_before, 0) if dead_total is not None else None,
            )
        )
        dead_before = dead_total if dead_total is not None else dead_before
    return out


@dataclass(frozen=True)
class Chart:
    title: str
    unit: str
    series: list[Series]
    area: bool = False


def _points(runs: Sequence[Sequence[Batch]], value: Callable[[Batch], float | None]) -> list:
    """One run after another; a None point between runs breaks the line."""
    points: list[tuple[float, float | None]] = []
    for run in runs:
        if points and run:
            points.append((run[0].time, None))
        points.extend((b.time, value(b)) for b in run)
    return points


def charts(runs: Sequence[Sequence[Batch]]) -> list[Chart]:
    """The page's per-batch charts over ``runs`` (each a run's batches, oldest run first)."""

    def line(name: str, value: Callable[[Batch], float | None], color: str) -> Series:
        return Series(name, _points(runs, value), color)

    return [
        Chart(
            "Input and processed rate",
            "rows/s",
            [
                line("input", lambda b: b.input_rate, BLUE),
                line("processed", lambda b: b.processed_rate, GREEN),
            ],
            area=True,
        ),
        Chart("Batch duration", "s", [line("duration", lambda b: b.duration_s, BLUE)], True),
        Chart(
            "Offsets behind latest (as each batch was planned)",
            "",
            [line("behind", lambda b: b.offsets_behind, ORANGE)],
            area=True,
        ),
        Chart(
            "Watermark delay (batch time - watermark)",
            "s",
            [line("delay", lambda b: b.watermark_delay_s, BLUE)],
        ),
        Chart(
            "Late rows and dead letters per batch",
            "",
            [
                line("late", lambda b: b.late, ORANGE),
                line("dead letters", lambda b: b.dead_letters, RED),
            ],
        ),
    ]
