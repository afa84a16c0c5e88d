"""Progress of a running dagger: per-batch figures from Spark, totals kept by the job.

:class:`ProgressListener` is a Spark ``StreamingQueryListener`` that turns each
micro-batch's progress into a :class:`BatchReport` line (input rate, processed rate,
batch duration, watermark, late and dead-letter counts) and keeps running totals. Every
micro-batch gets a line, also one whose records all failed to decode (0 rows).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql.streaming import StreamingQueryListener
from pyspark.sql.streaming.listener import (
    JStreamingQueryListener,
    QueryProgressEvent,
    StreamingQueryProgress,
)


@dataclass
class Totals:
    """Counts since the job started (this process). ``input_rows`` are the records that
    decoded; ``dead_letters`` the ones that did not. ``rows_written`` counts the rows each
    sink wrote; ``rows_skipped`` the rows of replayed batches a sink already held."""

    input_rows: int = 0
    late_rows: int = 0
    dead_letters: int = 0
    rows_written: dict[str, int] = field(default_factory=dict)
    rows_skipped: dict[str, int] = field(default_factory=dict)
    #: dead letters per micro-batch whose progress is not reported yet (the job sets them
    #: after the batch, :class:`ProgressListener` takes them when Spark reports it)
    letters_by_batch: dict[int, int] = field(default_factory=dict)
    batches: int = 0
    watermark: str | None = None
    last_write_at: float | None = None  # epoch seconds of the last write of 1+ rows

    def add_written(self, sink: str, rows: int, skipped: int = 0) -> None:
        self.rows_written[sink] = self.rows_written.get(sink, 0) + rows
        if rows:
            self.last_write_at = time.time()
        if skipped:
            self.rows_skipped[sink] = self.rows_skipped.get(sink, 0) + skipped

    @property
    def records_read(self) -> int:
        return self.input_rows + self.dead_letters

    def written_summary(self) -> str:
        """``sink: rows`` per sink, with the rows of replays it skipped, or ``-``."""
        parts = []
        for sink, rows in self.rows_written.items():
            skipped = self.rows_skipped.get(sink, 0)
            note = f" ({skipped:,} skipped: a replay of batches already written)" if skipped else ""
            parts.append(f"{sink}: {rows:,}{note}")
        return ", ".join(parts) or "-"


@dataclass(frozen=True)
class BatchReport:
    query: str
    batch: int
    input_rows: int
    input_rate: float
    processed_rate: float
    duration_ms: int
    watermark: str | None
    late_rows: int
    offsets_behind: int | None = None  # Kafka records after the batch's end offsets
    #: {topic: {partition: offset}} the batch read up to (None: no Kafka source)
    end_offsets: dict[str, dict[str, int]] | None = None

    def line(self, totals: Totals) -> str:
        watermark = (self.watermark or "-").replace(".000Z", "Z")
        return (
            f"[{self.query}] batch {self.batch}: {self.input_rows:,} rows | "
            f"in {self.input_rate:,.0f}/s | processed {self.processed_rate:,.0f}/s | "
            f"{self.duration_ms / 1000:.2f}s | watermark {watermark} | "
            f"late {totals.late_rows:,} | dead letters {totals.dead_letters:,}"
        )


def report(progress: Any, dead_letters: int = 0) -> BatchReport:
    """A :class:`BatchReport` from Spark's ``StreamingQueryProgress``.

    Rows are the records that decoded: those the batch read (``numInputRows``; a job scans
    each source once per batch) less its ``dead_letters``, which left the plan through the
    streams' taps (:mod:`workbench.sources.letters`). Rates are scaled to match."""
    late = sum(int(op.numRowsDroppedByWatermark or 0) for op in progress.stateOperators or [])
    scanned = int(progress.numInputRows or 0)
    rows = max(scanned - dead_letters, 0)
    scale = rows / scanned if scanned else 1.0
    watermark = (progress.eventTime or {}).get("watermark")
    if watermark and watermark.startswith("1970-01-01"):
        watermark = None
    return BatchReport(
        query=progress.name or str(progress.id),
        batch=int(progress.batchId),
        input_rows=rows,
        input_rate=float(progress.inputRowsPerSecond or 0.0) * scale,
        processed_rate=float(progress.processedRowsPerSecond or 0.0) * scale,
        duration_ms=int((progress.durationMs or {}).get("triggerExecution", 0)),
        watermark=watermark,
        late_rows=late,
        offsets_behind=offsets_behind(sources := json.loads(progress.json).get("sources") or []),
        end_offsets=end_offsets(sources),
    )


def end_offsets(sources: list[dict[str, Any]]) -> dict[str, dict[str, int]] | None:
    """The Kafka offsets a batch read up to, ``{topic: {partition: offset}}``."""
    out: dict[str, dict[str, int]] = {}
    for source in sources:
        for topic, partitions in _offsets(source.get("endOffset")).items():
            ints = {str(p): o for p, o in partitions.items() if isinstance(o, int)}
            out.setdefault(topic, {}).update(ints)
    return out or None


def offsets_behind(sources: list[dict[str, Any]]) -> int | None:
    """Records published but not yet read: each Kafka partition's ``latestOffset`` minus
    the batch's ``endOffset``, summed over partitions (a partition scanned twice counts
    once). None when no source reports Kafka offsets."""
    behind: dict[tuple[str, str], int] = {}
    for source in sources:
        latest, end = _offsets(source.get("latestOffset")), _offsets(source.get("endOffset"))
        for topic, partitions in latest.items():
            for partition, offset in partitions.items():
                done = end.get(topic, {}).get(partition)
                if isinstance(offset, int) and isinstance(done, int):
                    behind[(topic, partition)] = max(offset - done, 0)
    return sum(behind.values()) if behind else None


def _offsets(value: Any) -> dict[str, dict[str, Any]]:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return {}
    ok = isinstance(value, dict) and all(isinstance(v, dict) for v in value.values())
    return value if ok else {}


class ProgressListener(StreamingQueryListener):
    """Reports the batches of the queries named ``main`` (others only count): a line to
    ``emit``, and the :class:`BatchReport` to ``on_batch`` once the totals count it."""

    def __init__(
        self,
        main: str,
        totals: Totals,
        emit: Callable[[str], None] | None = print,
        on_batch: Callable[[BatchReport], None] | None = None,
    ):
        self.main, self.totals, self.emit, self.on_batch = main, totals, emit, on_batch
        self._lock = threading.Lock()

    @property
    def _jlistener(self) -> Any:
        """The Java side that ``spark.streams.addListener`` registers (PySpark's hook),
        handing progress over as :class:`_ProgressFromJson` does."""
        from pyspark import SparkContext

        if not hasattr(self, "_jlistenerobj"):
            wrapper = SparkContext._jvm.PythonStreamingQueryListenerWrapper  # type: ignore[union-attr]
            self._jlistenerobj = wrapper(_ProgressFromJson(self))
        return self._jlistenerobj

    def onQueryStarted(self, event: Any) -> None:
        pass

    def onQueryProgress(self, event: Any) -> None:
        progress = event.progress
        if (progress.name or str(progress.id)) != self.main:
            return
        dead = self.totals.letters_by_batch.pop(int(progress.batchId), 0)
        batch = report(progress, dead)
        with self._lock:
            self.totals.batches += 1
            self.totals.input_rows += batch.input_rows
            self.totals.late_rows += batch.late_rows
            self.totals.watermark = batch.watermark or self.totals.watermark
            if self.emit is not None:
                self.emit(batch.line(self.totals))
        if self.on_batch is not None:
            self.on_batch(batch)

    def onQueryIdle(self, event: Any) -> None:
        pass

    def onQueryTerminated(self, event: Any) -> None:
        pass


class _ProgressFromJson(JStreamingQueryListener):
    """PySpark's Java-facing listener, but each batch's progress read from its JSON in one
    call. PySpark's own reads it field by field and turns each of its Java maps into a dict
    by iterating until the JVM throws ``NoSuchElementException``: about six Java exceptions
    a batch, each of which PySpark converts with some forty class lookups by name that
    search every jar, and a stack trace made text. That was a quarter of a job's driver
    CPU at 40 events a second (docs/benchmarks.md)."""

    def onQueryProgress(self, jevent: Any) -> None:
        progress = StreamingQueryProgress.fromJson(json.loads(jevent.progress().json()))
        self.pylistener.onQueryProgress(QueryProgressEvent(progress))
