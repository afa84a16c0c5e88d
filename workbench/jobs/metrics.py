"""A running job's metrics, from Spark's progress events and the job's totals.

The job process keeps the last micro-batch's :class:`~workbench.streaming.progress.BatchReport`
and the job's :class:`~workbench.streaming.progress.Totals`; :func:`snapshot` turns them into the
METRICS dict the heartbeat carries and the service shows (keys in :data:`KEYS`):
rates and duration of the last batch, the watermark, ``offsets_behind_latest`` (sum over
Kafka partitions of the latest offset minus the last batch's end offset), totals of late
rows, dead letters, decoded records and batches, and when the last batch ran and the last
sink write of at least one row happened (ISO-8601 UTC).
"""

from __future__ import annotations

from dataclasses import asdict
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workbench.streaming.progress import BatchReport, Totals

KEYS = (
    "input_rate",
    "processed_rate",
    "batch_duration_ms",
    "watermark",
    "offsets_behind_latest",
    "late",
    "dead_letters",
    "records",
    "batches",
    "last_batch_at",
    "last_sink_write_at",
)


def iso(epoch: float | None) -> str | None:
    if epoch is None:
        return None
    return (
        datetime.fromtimestamp(epoch, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    )


def empty() -> dict[str, Any]:
    """The metrics of a job that has run no batch yet."""
    return {
        "input_rate": 0.0,
        "processed_rate": 0.0,
        "batch_duration_ms": 0,
        "watermark": None,
        "offsets_behind_latest": 0,
        "late": 0,
        "dead_letters": 0,
        "records": 0,
        "batches": 0,
        "last_batch_at": None,
        "last_sink_write_at": None,
    }


def snapshot(
    last: BatchReport | None, totals: Totals, last_batch_at: float | None
) -> dict[str, Any]:
    """METRICS from the last batch's report (None: no batch yet) and the job's totals."""
    out = empty()
    if last is not None:
        out.update(
            input_rate=round(last.input_rate, 3),
            processed_rate=round(last.processed_rate, 3),
            batch_duration_ms=last.duration_ms,
            offsets_behind_latest=last.offsets_behind or 0,
        )
    out.update(
        watermark=(last.watermark if last else None) or totals.watermark,
        late=totals.late_rows,
        dead_letters=totals.dead_letters,
        records=totals.input_rows,
        batches=totals.batches,
        last_batch_at=iso(last_batch_at),
        last_sink_write_at=iso(totals.last_write_at),
    )
    return out


def record(report: BatchReport, at: float, totals: Totals | None = None) -> dict[str, Any]:
    """The ``progress.jsonl`` line of one micro-batch: the report's fields, its time and
    the run's dead letters so far (``dead_letters_total``; the health page's per-batch
    dead letters are its differences)."""
    line = {**asdict(report), "time": at}
    if totals is not None:
        line["dead_letters_total"] = totals.dead_letters
    return line
