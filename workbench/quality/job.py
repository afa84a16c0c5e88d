"""A quality spec running as one checkpointed streaming query over raw Kafka records.

Each micro-batch (``foreachBatch``, batch id ``N``):

1. turns its records into facts (:mod:`~workbench.quality.facts`), kept in memory for the
   batch, and counts them per partition and window in one Spark job
   (:mod:`~workbench.quality.summary`); records of a window the watermark (largest event
   time − ``allowed_lateness``) has closed are counted as ``too_late`` and dropped: a
   closed window's last emission is final;
2. finds offset gaps per partition, within the batch and from the last offset the state
   holds, and counts the records lost below the log start (:mod:`~.gaps`);
3. stores its facts and gaps under ``CHECKPOINT/quality/{facts,gaps}/batch=N`` (a
   replayed batch overwrites its own folder);
4. recomputes every window it touched from all stored facts (late records thus correct
   their window, which is emitted again) and hands the metric rows with the batch id to
   every sink: InfluxDB points of one topic and window overwrite each other, Parquet rows
   carry ``emitted_batch`` (:func:`~workbench.quality.metrics.latest`);
5. saves the state (:mod:`~.state`) and prunes facts of windows closed before the batch.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.durations import to_millis
from workbench.quality import history, metrics
from workbench.quality.facts import raw_facts, windowed
from workbench.quality.gaps import Gap, LogStarts, lost
from workbench.quality.reconcile import recheck
from workbench.quality.state import QualityState, StateFiles, where
from workbench.quality.summary import Summary
from workbench.sinks.log import LogConfig
from workbench.sinks.registry import SinkContext, Written
from workbench.streaming.job import StreamingJob
from workbench.streaming.progress import BatchReport, ProgressListener

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from workbench.quality.spec import QualitySpec
    from workbench.schemas.registry import SchemaRegistry

QUERY = "quality"
GAP_COLUMNS = "topic string, partition int, offset long, window_start long, missing long"


class QualityJob(StreamingJob):
    """A quality spec as a streaming query, run like a dagger's
    :class:`~workbench.streaming.job.StreamingJob` (start, run, poll, stop, totals)."""

    def __init__(
        self,
        spec: QualitySpec,
        spark: SparkSession | None = None,
        *,
        checkpoint: str | Path | None = None,
        available_now: bool = False,
        emit: Callable[[str], None] | None = print,
        min_rowtime: datetime | None = None,  # a dagger's handoff; a quality job reads all
        on_batch: Callable[[BatchReport], None] | None = None,
        on_rows: Callable[[DataFrame, int], None] | None = None,
        registry: SchemaRegistry | None = None,  # the job's pinned schema version
    ):
        super().__init__(
            spec,  # type: ignore[arg-type]
            spark,
            checkpoint=checkpoint,
            available_now=available_now,
            emit=emit,
            on_batch=on_batch,
            on_rows=on_rows,
            registry=registry,
        )
        self.spec: QualitySpec = spec  # type: ignore[assignment]
        self.too_late = 0  # records of windows already closed, dropped
        self._states = StateFiles(self.folder / "state")
        self._log_starts: dict[str, LogStarts] = {}
        self._recheck_at = float("-inf")  # when emitted windows are next re-reconciled

    @property
    def folder(self) -> Path:
        return self.checkpoint / "quality"

    @property
    def context(self) -> SinkContext:
        """The job's state for its sinks (metric rows are updates of their window)."""
        if self._context is None:
            from workbench.streams import registry_for

            registry = registry_for(self.spec)  # type: ignore[arg-type]
            ctx = SinkContext(
                self.spark, self.spec.name, self.checkpoint, registry, "update", self._trigger()
            )
            self._context = ctx
        return self._context

    # --- running ----------------------------------------------------------------------

    def start(self) -> QualityJob:
        from functools import reduce

        ctx = self.context
        sinks = list(self.spec.sinks) or [LogConfig()]
        for sink in sinks:
            sink.check(metrics.schema())  # a SinkError before Spark reads anything
        try:
            frames = [raw_facts(self.spark, s, self.spec, ctx.registry) for s in self.spec.streams]
            facts = reduce(lambda a, b: a.unionByName(b), frames)
            name = f"{self.spec.name}:{QUERY}"
            self._listener = ProgressListener(name, self.totals, self.emit, self.on_batch)
            self.spark.streams.addListener(self._listener)
            self._writers = [(s, s.open(ctx, i)) for i, s in enumerate(sinks)]
            self.queries.append(
                facts.writeStream.queryName(name)
                .option("checkpointLocation", str(self.checkpoint / "sinks"))
                .trigger(**ctx.trigger)
                .foreachBatch(self._batch)
                .start()
            )
        except Exception:
            self.stop(graceful=False)
            raise
        return self

    def _batch(self, batch: DataFrame, batch_id: int) -> None:
        spec = self.spec
        state = self._states.before(batch_id)
        facts = windowed(batch, spec, int(time.time() * 1000)).persist()
        steps: list[tuple[str, float]] = [("start", time.monotonic())]

        def step(name: str) -> None:
            steps.append((name, time.monotonic()))

        try:
            summary = Summary.of(facts, self._closed(state))  # one job: counts per window
            kept = self._drop_closed(facts, state, summary)
            gaps = [] if summary.contiguous(state) else self._gaps(facts, state)
            step("facts+gaps")
            self._store(kept, gaps, batch_id)
            touched = summary.touched | {(g["topic"], g["window_start"]) for g in gaps}
            step("store")
            rows = self._recompute(touched, batch_id) + self._rechecked(touched, batch_id)
            step("recompute")
            self._write(rows, batch_id)
            step("write")
            self._states.save(batch_id, summary.next_state(state, batch_id))
            self._prune(state)
            step("state")
        finally:
            facts.unpersist()
        if self.emit is not None:
            took = ", ".join(f"{n} {t - steps[i][1]:.1f} s" for i, (n, t) in enumerate(steps[1:]))
            self.emit(f"[{spec.name}] quality batch {batch_id}: {len(rows)} windows; {took}")

    def _drop_closed(self, facts: DataFrame, state: QualityState, summary: Summary) -> DataFrame:
        from pyspark.sql import functions as F

        mark = state.watermark(self.spec.allowed_lateness_ms)
        dropped = summary.dropped
        if mark is None or not dropped:
            return facts
        self.too_late += dropped
        if self.emit is not None:
            self.emit(f"[{self.spec.name}] {dropped} records of closed windows dropped")
        return facts.where(F.col("window_start") + self.spec.window_ms > mark)

    def _gaps(self, facts: DataFrame, state: QualityState) -> list[dict[str, Any]]:
        """Gaps before each record (from the previous record of its partition, or the last
        offset of the state), with the records lost in each."""
        from pyspark.sql import Window
        from pyspark.sql import functions as F

        order = Window.partitionBy("topic", "partition").orderBy("offset")
        found = (
            facts.select(
                "topic",
                "partition",
                "offset",
                "window_start",
                F.lag("offset").over(order).alias("previous"),
                F.row_number().over(order).alias("n"),
            )
            .where("n = 1 or offset - previous > 1")
            .collect()
        )
        at: dict[Gap, int] = {}
        for r in found:
            previous = (
                r.previous if r.n > 1 else state.last_offsets.get(where(r.topic, r.partition))
            )
            if previous is not None and r.offset - previous > 1:
                at[Gap(r.topic, r.partition, previous, r.offset)] = r.window_start
        if not at:
            return []
        counted = lost(at, self._log_start)
        closed = self._closed(state)
        return [
            {
                "topic": g.topic,
                "partition": g.partition,
                "offset": g.current,
                "window_start": at[g],
                "missing": n,
            }
            for g, n in counted.items()
            if n > 0 and not closed(at[g])
        ]

    def _closed(self, state: QualityState) -> Callable[[int], bool]:
        spec = self.spec
        return lambda start: state.closed(start, spec.window_ms, spec.allowed_lateness_ms)

    def _log_start(self, topic: str, partition: int) -> int:
        stream = self._stream_of(topic)
        if stream.bootstrap_servers not in self._log_starts:
            self._log_starts[stream.bootstrap_servers] = LogStarts(
                stream.bootstrap_servers,
                {k: v for k, v in stream.kafka_options.items() if "isolation" not in k},
            )
        return self._log_starts[stream.bootstrap_servers](topic, partition)

    def _stream_of(self, topic: str) -> Any:
        import re

        for s in self.spec.streams:
            if (s.topics and topic in s.topics) or (
                s.topic_pattern and re.fullmatch(s.topic_pattern, topic)
            ):
                return s
        return self.spec.streams[0]

    def _store(self, kept: DataFrame, gaps: list[dict[str, Any]], batch_id: int) -> None:
        kept.write.mode("overwrite").parquet(str(self.folder / "facts" / f"batch={batch_id}"))
        target = self.folder / "gaps" / f"batch={batch_id}"
        if gaps:
            self.spark.createDataFrame(gaps, GAP_COLUMNS).write.mode("overwrite").parquet(
                str(target)
            )
        else:
            shutil.rmtree(target, ignore_errors=True)

    def _stored(self, kind: str, columns: str | None = None) -> DataFrame:
        folder = self.folder / kind
        if not any(folder.glob("batch=*")):
            return self.spark.createDataFrame([], columns or GAP_COLUMNS)
        return self.spark.read.parquet(str(folder))

    def _recompute(self, touched: set[tuple[str, int]], batch_id: int) -> list[dict[str, Any]]:
        if not touched:
            return []
        keys = self.spark.createDataFrame(sorted(touched), "topic string, window_start long")
        facts = self._stored("facts").join(keys.hint("broadcast"), ["topic", "window_start"])
        gaps = self._stored("gaps").join(keys.hint("broadcast"), ["topic", "window_start"])
        found = metrics.aggregate(facts, gaps)
        rows = [metrics.finish(raw, self.spec.window_ms, batch_id) for raw in found]
        if self.spec.reconcile is not None:
            from workbench.quality.reconcile import reconciled, warehouse_counts

            starts = {w for _, w in touched}
            reconciled(
                rows, warehouse_counts(self.spark, self.spec.reconcile, starts, self.spec.window_ms)
            )
        return sorted(rows, key=lambda r: (r["tag_topic"], r["window_timestamp"]))

    def _rechecked(self, touched: set[tuple[str, int]], batch_id: int) -> list[dict[str, Any]]:
        """Windows emitted before whose warehouse count changed since (see
        :mod:`~workbench.quality.reconcile`), at most every ``recheck_every``."""

        spec = self.spec.reconcile
        if spec is None or time.monotonic() < self._recheck_at:
            return []
        self._recheck_at = time.monotonic() + to_millis(spec.recheck_every) / 1000
        emitted = history.read(self.checkpoint)
        newest = max((r["window_timestamp"] for r in emitted), default=0)
        since = newest - to_millis(spec.recheck_for)
        now = {w for _, w in touched}  # compared as they are emitted (over all their topics)
        earlier = [
            r
            for r in emitted
            if r["window_timestamp"] >= since
            and r["window_timestamp"] not in now
            and r.get("warehouse") is not None
        ]
        return recheck(self.spark, spec, earlier, self.spec.window_ms, batch_id) if earlier else []

    def _write(self, rows: list[dict[str, Any]], batch_id: int) -> None:
        out = metrics.frame(self.spark, rows).persist()
        try:
            for config, writer in self._writers:
                done = Written.of(writer.write(out, batch_id)).counted(lambda: len(rows))
                self.totals.add_written(config.describe(), *done)
            if self.on_rows is not None and rows:
                self.on_rows(out, batch_id)
            # what the service's quality page reads, compacted to history_retention
            history.append(self.checkpoint, rows, self.spec.history_retention_ms)
        finally:
            out.unpersist()

    def _prune(self, state: QualityState) -> None:
        """Remove the facts of batches whose every window was closed before this batch
        (so a replay of this batch never needs them)."""
        closed = self._closed(state)
        for batch, window in state.folders.items():
            if closed(window):
                for kind in ("facts", "gaps"):
                    shutil.rmtree(self.folder / kind / f"batch={batch}", ignore_errors=True)

    def outputs(self) -> str:
        where = ", ".join(s.describe() for s in self.spec.sinks) or "log"
        return f"sinks: {where}; undecodable records counted (kept by no dead-letter sink)"

    def _close(self) -> None:
        for starts in self._log_starts.values():
            starts.close()
        self._log_starts = {}
