"""``workbench run``: a dagger as a checkpointed Spark streaming job on Kafka.

A job is one streaming query (checkpoint folder ``sinks``) that scans Kafka and decodes
once per micro-batch. Each micro-batch of the dagger SQL's result is handed, with its
batch id, to every sink; the records that did not decode leave the plan as an observed
metric and go, with the same batch id, to the dead-letter writer. Every writer makes a
replayed batch id harmless (points rewritten in place, Kafka transactions with commit
markers, Spark's file-sink log for Parquet, a dead-letter folder per batch), and counts
only the rows it wrote.

Before Spark starts, the checkpoint's manifest is checked (:mod:`workbench.streaming.checkpoints`):
a checkpoint that belongs to another dagger, other streams, another Kafka cluster or
another version of the SQL is refused with what to do.

A stop (Ctrl-C, SIGTERM, :meth:`StreamingJob.stop`) waits for the current
micro-batch to finish; a crash (SIGKILL) loses nothing either, because the query
restarts from its checkpoint and replays the unfinished batch.
"""

from __future__ import annotations

import contextlib
import functools
import signal
import threading
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench import engine
from workbench.durations import spark_interval
from workbench.exceptions import StreamInPromoteError, WorkbenchError
from workbench.paths import promote_folder, subdir
from workbench.rowtime import not_before
from workbench.runtime import spark_conf
from workbench.runtime.spark_errors import summary
from workbench.sinks import streamed
from workbench.sinks.log import LogConfig
from workbench.sinks.registry import (
    SINKS,
    LetterWriter,
    SinkConfig,
    SinkContext,
    SinkWriter,
    Written,
)
from workbench.sinks.streamed import StreamedWriter
from workbench.sources import pruning
from workbench.sources.kafka import open_stream
from workbench.spec import DaggerSpec
from workbench.streaming import checkpoints, deadletters, dedup, observed
from workbench.streaming.progress import BatchReport, ProgressListener, Totals
from workbench.streaming.queries import wait_idle
from workbench.streams import resolve

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming import DataStreamWriter, StreamingQuery

    from workbench.schemas.registry import SchemaRegistry
    from workbench.sources.letters import LetterTap

QUERY = checkpoints.QUERY  # the job's streaming query (and its checkpoint folder)


def default_checkpoint(job: str) -> Path:
    return subdir("checkpoints") / job


def with_bootstrap(spec: DaggerSpec, servers: str) -> DaggerSpec:
    """``spec`` (of any kind) with every Kafka address set to ``servers``."""
    return spec.with_bootstrap(servers)


class StreamingJob:
    """A dagger spec running as streaming queries; :meth:`start`, then :meth:`run`."""

    def __init__(
        self,
        spec: DaggerSpec,
        spark: SparkSession | None = None,
        *,
        checkpoint: str | Path | None = None,
        available_now: bool = False,
        emit: Callable[[str], None] | None = print,
        min_rowtime: datetime | None = None,
        on_batch: Callable[[BatchReport], None] | None = None,
        on_rows: Callable[[DataFrame, int], None] | None = None,
        registry: SchemaRegistry | None = None,
    ):
        self.spec = spec
        #: the schemas to decode with (a job service run's pinned version); default: the
        #: bundled ones plus the spec's ``schemas``
        self.registry = registry
        self.on_batch = on_batch  # each micro-batch's report, after the totals count it
        #: each micro-batch's result rows (persisted) and batch id, after the writers
        self.on_rows = on_rows
        #: rows of an earlier event time are dropped before the SQL (a version handoff,
        #: :mod:`workbench.jobs.handoff`)
        self.min_rowtime = min_rowtime
        self.checkpoint = Path(checkpoint or spec.checkpoint or default_checkpoint(spec.name))
        self.available_now = available_now
        self.emit = emit
        self.totals = Totals()
        self.queries: list[StreamingQuery] = []
        self._writers: list[tuple[SinkConfig, SinkWriter]] = []
        self._dead: LetterWriter | None = None
        self._context: SinkContext | None = None  # resolved once per start
        self._conf_before: spark_conf.Previous = {}
        self._stopping = threading.Event()
        self._spark = spark
        self._listener: ProgressListener | None = None
        self._hook: str | None = None  # the streamed sink's hook (workbench.sinks.streamed)
        self.resumed = False  # the checkpoint had committed micro-batches before this run
        #: each stream's dead-letter tap in the last :meth:`plan`
        self.letters: list[LetterTap] = []
        #: a query was still stopping when :meth:`stop` gave up waiting (``abandon_after_s``)
        self.abandoned = False
        #: what the code of the last failed micro-batch raised (writers, alert rules)
        self.batch_error: BaseException | None = None

    # --- building ---------------------------------------------------------------------

    @property
    def spark(self) -> SparkSession:
        if self._spark is None:
            from workbench.runtime.spark import session

            self._spark = session(
                app_name=f"dagger-{self.spec.name}", conf=self.spec.session_conf()
            )
        return self._spark

    @property
    def query_name(self) -> str:
        """The job's streaming query's name (its progress events and status carry it)."""
        return f"{self.spec.name}:{QUERY}"

    def _trigger(self) -> dict[str, Any]:
        if self.available_now:
            return {"availableNow": True}
        return {"processingTime": spark_interval(self.spec.trigger_interval_ms)}

    @property
    def context(self) -> SinkContext:
        """The job's state, resolved once per start (schema registry, trigger, output mode,
        checkpoint, query id) and shared by the plan and every writer."""
        if self._context is None:
            from workbench.streams import registry_for

            mode = "update" if self.spec.emit == "updates" else "append"
            self._context = SinkContext(
                self.spark,
                self.spec.name,
                self.checkpoint,
                self.registry or registry_for(self.spec),
                mode,
                self._trigger(),
            )
        return self._context

    def plan(self) -> DataFrame:
        """The dagger's result, streaming; each stream's dead letters go to its tap in
        :attr:`letters` (:func:`workbench.streaming.deadletters.collected`). Its decoders decode
        only the message fields the SQL reads (:mod:`workbench.sources.pruning`): the optimizer's
        answer, kept under the workbench home, so a later start of the same dagger (a
        restart, another run of it) plans once instead of twice."""

        schemas = self.context.registry.descriptor_set_path().name  # named by its digest
        key = pruning.plan_key(self.spec, schemas, self.min_rowtime is not None)
        known = pruning.known_fields(key)
        if known is not None:  # planned before: plan once, with the fields it read
            fields, schema = known
            with contextlib.suppress(Exception):  # e.g. a field it no longer finds
                result, taps = self._plan(fields)
                if result.schema.json() == schema:
                    self.letters = taps
                    return result
        full, taps = self._plan({})
        fields = pruning.read_fields(full)
        if fields and any(f is not None for f in fields.values()):
            pruned, pruned_taps = self._plan(fields)
            if pruned.schema == full.schema:
                full, taps = pruned, pruned_taps
            else:
                fields = {}
        pruning.remember(key, fields, full.schema.json())
        self.letters = taps
        return full

    def _plan(self, fields: dict[str, frozenset[str] | None]) -> tuple[DataFrame, list[LetterTap]]:
        """The result, each stream table decoding ``fields[table]`` (absent or None: all),
        and the streams' dead-letter taps."""
        from workbench.sql.enums import values_of

        registry = self.context.registry
        resolved = resolve(self.spec, registry)
        streams = [
            open_stream(self.spark, r, registry, fields=fields.get(r.spec.table)) for r in resolved
        ]
        inputs = [
            engine.Input(
                s.table,
                not_before(s.rows, r.spec.event_timestamp_field, self.min_rowtime),
                r.spec.event_timestamp_field,
                values_of(registry, r.message),
            )
            for s, r in zip(streams, resolved, strict=True)
        ]
        plan = engine.build(
            self.spark,
            self.spec.sql,
            inputs,
            job=self.spec.name,
            rowtime=self.spec.rowtime_attribute,
            watermark_delay_ms=self.spec.watermark_delay_ms,
        )
        result = dedup.apply(plan.result, self.spec.deduplicate, self.spec.rowtime_attribute)
        return result, [s.letters for s in streams]

    # --- running ----------------------------------------------------------------------

    def start(self) -> StreamingJob:

        if promote_folder() is not None:  # the stream never runs inside papermill
            raise StreamInPromoteError(f"streaming job '{self.spec.name}'")
        note = checkpoints.check(self.checkpoint, self.spec)
        if note and self.emit is not None:
            self.emit(note)
        self.resumed = checkpoints.has_progress(self.checkpoint)
        sinks = list(self.spec.sinks) or [LogConfig()]
        self._conf_before = spark_conf.apply(self.spark, self.spec.spark_conf, self.spec.name)
        try:
            result = self.plan()
            self._listener = ProgressListener(
                self.query_name, self.totals, self.emit, self.on_batch
            )
            self.spark.streams.addListener(self._listener)
            self._writers = [(s, s.open(self.context, i)) for i, s in enumerate(sinks)]
            self._dead = SINKS.letters_sink(self.spec).open_letters(self.context)
            self.queries.append(self._start_query(result))
        except Exception:
            self.stop(graceful=False)
            raise
        return self

    def _start_query(self, result: DataFrame) -> StreamingQuery:
        """One query; each micro-batch goes to every writer, then its dead letters.

        The batch's result rows are an observed metric of its plan and its dead letters are
        in the streams' taps, both read once a writer has computed it. A lone writer that
        writes in one pass (``one_pass``) gets the batch as it is: one Spark job reads Kafka,
        decodes, aggregates and writes, as a hand-written query into Spark's own sink would;
        if it can be the query's sink itself (a :class:`~workbench.sinks.streamed.StreamedWriter`)
        it is, with no foreachBatch (:meth:`_start_streamed`). Otherwise the batch is cached
        and computed once before its readers (the writers, the alert rules) run side by side.
        """
        dead_writer = self._dead
        assert dead_writer is not None
        name, taps = self.query_name, list(self.letters)
        one_pass = (
            len(self._writers) == 1
            and self.on_rows is None
            and getattr(self._writers[0][1], "one_pass", False)
        )
        result = result.observe(observed.RESULT, observed.result_rows())

        @functools.cache
        def query() -> StreamingQuery:
            """The running query, found once (its first batch may start before start() returns)."""
            return next(q for q in self.spark.streams.active if q.name == name)

        def finish(batch_id: int, written: list[tuple[SinkConfig, Written]]) -> None:
            """Count what the writers wrote, then write the batch's dead letters."""
            rows = functools.cache(functools.partial(observed.count, query(), observed.RESULT))
            for config, done in written:
                self.totals.add_written(config.describe(), *done.counted(rows))
            letters = deadletters.collected(taps)
            self.totals.letters_by_batch[batch_id] = letters.size
            if letters:
                self.totals.dead_letters += dead_writer.write(letters, batch_id)

        config, lone = self._writers[0]
        if one_pass and isinstance(lone, StreamedWriter):
            return self._start_streamed(result, config, lone, taps, finish)

        def fan_out(batch: DataFrame, batch_id: int) -> None:
            try:
                write_batch(batch, batch_id)
            except Exception as err:
                self.batch_error = err  # its type says what failed (poll raises from it)
                raise

        def write_batch(batch: DataFrame, batch_id: int) -> None:
            from concurrent.futures import ThreadPoolExecutor

            from pyspark import inheritable_thread_target

            deadletters.discard(taps)  # left by an attempt of this batch that failed
            if not one_pass:
                batch = batch.persist()
            rules, written = None, []
            try:
                if len(self._writers) + (self.on_rows is not None) > 1:
                    batch.count()  # computed once, before its readers run side by side
                # the alert rules run beside the writers (in a thread keeping the Spark local
                # properties, e.g. a shared application's pool) and end before the batch commits
                with ThreadPoolExecutor(1, thread_name_prefix="alert-rules") as beside:
                    if self.on_rows is not None:
                        rules = beside.submit(
                            inheritable_thread_target(self.on_rows), batch, batch_id
                        )
                    for config, writer in self._writers:
                        written.append((config, Written.of(writer.write(batch, batch_id))))
                    if not observed.ran(query(), [observed.RESULT]):
                        batch.count()  # no writer computed it: its dead letters are collected
                    finish(batch_id, written)
            finally:
                if not one_pass:
                    batch.unpersist()
            if rules is not None:
                rules.result()  # raises what the rules raised

        return self._query(result.writeStream).foreachBatch(fan_out).start()

    def _start_streamed(
        self,
        result: DataFrame,
        config: SinkConfig,
        writer: StreamedWriter,
        taps: list[LetterTap],
        finish: Callable[[int, list[tuple[SinkConfig, Written]]], None],
    ) -> StreamingQuery:
        """The query written into ``writer``'s sink itself, the job's side of each batch in
        a hook around the write (:mod:`workbench.sinks.streamed`)."""
        placed: dict[int, Written] = {}

        def before(batch_id: int) -> int:
            deadletters.discard(taps)  # left by an attempt of this batch that failed
            sink_batch = writer.place(batch_id)
            placed[batch_id] = Written(None) if sink_batch is not None else Written(0, None)
            return -1 if sink_batch is None else sink_batch  # -1: computed, not written

        def after(batch_id: int) -> None:
            finish(batch_id, [(config, placed.pop(batch_id))])

        self._hook = streamed.register(self.spark, streamed.BatchHook(before, after))
        return self._query(writer.stream(result, self._hook)).start()

    def _query(self, writer: DataStreamWriter) -> DataStreamWriter:
        """The job's query settings: its name, checkpoint, output mode and trigger."""
        ctx = self.context
        return (
            writer.queryName(self.query_name)
            .option("checkpointLocation", str(self.checkpoint / QUERY))
            .outputMode(ctx.output_mode)
            .trigger(**ctx.trigger)
        )

    def run(self, duration_s: float | None = None, handle_signals: bool = True) -> Totals:
        """Block until stopped (signal, :meth:`stop`, ``duration_s``), or, with
        ``available_now``, until every query has processed what was there."""
        if not self.queries:
            self.start()
        restore = on_signals(self._stopping.set) if handle_signals else None
        deadline = None if duration_s is None else time.monotonic() + duration_s
        try:
            while not self._stopping.is_set():
                if self.available_now:
                    if self._ended(1):
                        break
                else:
                    self._stopping.wait(0.5)
                self.poll()
                if deadline is not None and time.monotonic() >= deadline:
                    break
        finally:
            if restore:
                restore()
            self.stop()
        self.poll()
        return self.totals

    def _ended(self, timeout_s: int) -> bool:
        """Whether every query has ended, waiting up to ``timeout_s`` for the first one still
        running (not polling: an AvailableNow run returns the moment it ends)."""
        from pyspark.errors import StreamingQueryException

        for query in self.queries:
            try:
                if not query.awaitTermination(timeout_s):
                    return False
            except StreamingQueryException:
                self.poll()  # raises JobFailedError
        return True

    def poll(self) -> None:
        """Raise :class:`JobFailedError` (after stopping the rest) if a query failed."""
        for query in self.queries:
            err = query.exception()
            if err is not None:
                self.stop(graceful=False)
                cause = getattr(err, "desc", None) or str(err)
                failed = JobFailedError(f"query '{query.name}' failed: {summary(cause)}", cause)
                failed.query_error = err
                raise failed from self.batch_error

    def stop(
        self,
        graceful: bool = True,
        give_up: Callable[[], bool] | None = None,
        abandon_after_s: float | None = None,
    ) -> None:
        """Stop every query; ``graceful`` lets a running micro-batch finish first, unless
        ``give_up()`` turns true while it waits.

        With ``abandon_after_s`` (for a process that ends right after, as a job's run
        process does), a query stopped without waiting for its batch is waited for that
        long at most: one whose Kafka source hangs in closing (its admin client waits out
        requests to a cluster that is gone) is left to the end of the process, which ends
        it as a kill would, and :attr:`abandoned` says so."""
        for query in self.queries:
            if graceful:
                wait_idle(query, give_up=give_up)
            now = not graceful or (give_up is not None and give_up())
            if now and abandon_after_s is not None:
                if not _stopped_within(query, abandon_after_s):
                    self.abandoned = True
                continue
            _stop(query)
        for _, writer in self._writers:
            writer.close()
        if self._hook is not None:
            with contextlib.suppress(Exception):  # the JVM may be gone
                streamed.unregister(self.spark, self._hook)
            self._hook = None
        if self._dead is not None:
            self._dead.close()
        self._writers, self._dead, self._context = [], None, None
        if self._conf_before:
            spark_conf.restore(self.spark, self._conf_before)
            self._conf_before = {}
        if self._listener is not None:
            _drain_listeners(self.spark)  # the last progress events still count
            self.spark.streams.removeListener(self._listener)
            self._listener = None
        self._close()

    def _close(self) -> None:
        """What a kind of job holds beside its queries and writers, closed by :meth:`stop`."""

    def outputs(self) -> str:
        """Where the job writes, for people: its sinks and dead letters."""
        where = ", ".join(s.describe() for s in self.spec.sinks) or "log"
        return f"sinks: {where}; dead letters: {deadletters.describe(self.spec)}"

    def nothing_read(self) -> str | None:
        """After a bounded (``available_now``) run: a warning when it read no record."""
        if not self.available_now or self.totals.records_read:
            return None
        where = "; ".join(
            f"{', '.join(s.topics or []) or 'pattern ' + str(s.topic_pattern)} "
            f"(starting_offsets={s.starting_offsets})"
            for s in self.spec.streams
        )
        if self.resumed:
            why = (
                f"checkpoint {self.checkpoint} had already read everything the topics hold; "
                "publish more, or use a new --checkpoint to read them again"
            )
        else:
            why = (
                "a new checkpoint starts at each stream's starting_offsets; use "
                "starting_offsets: earliest in the spec to read what the topics hold "
                "(and a new --checkpoint, since this one now starts at the end)"
            )
        return f"warning: read 0 records from {where}: nothing was processed. {why}"


class JobFailedError(WorkbenchError):
    """A streaming query of the job stopped with an error; ``detail`` is Spark's text,
    ``query_error`` Spark's exception, and ``__cause__`` the error a micro-batch's own
    code raised, if it was that (:mod:`workbench.runtime.errors` judges them by type)."""

    def __init__(self, message: str, detail: str = ""):
        self.detail = detail
        self.query_error: BaseException | None = None
        super().__init__(message)


def _drain_listeners(spark: SparkSession, timeout_ms: int = 30_000) -> None:
    """Wait until Spark's listener bus has delivered every event posted so far."""
    with contextlib.suppress(Exception):  # a stopped context has nothing left to deliver
        spark.sparkContext._jsc.sc().listenerBus().waitUntilEmpty(timeout_ms)


def _stop(query: StreamingQuery) -> None:
    with contextlib.suppress(Exception):  # a failed query is reported by run()
        query.stop()


#: The name of the thread :func:`_stopped_within` stops a query in (it may outlive the call).
STOP_THREAD = "stop-query"


def _stopped_within(query: StreamingQuery, seconds: float) -> bool:
    """:func:`_stop` in a thread of its own: whether it returned within ``seconds``."""
    stopper = threading.Thread(target=_stop, args=(query,), name=STOP_THREAD, daemon=True)
    stopper.start()
    stopper.join(seconds)
    return not stopper.is_alive()


def on_signals(handler: Callable[[], None]) -> Callable[[], None] | None:
    if threading.current_thread() is not threading.main_thread():
        return None
    previous = {
        sig: signal.signal(sig, lambda *_: handler()) for sig in (signal.SIGINT, signal.SIGTERM)
    }

    def restore() -> None:
        for sig, old in previous.items():
            signal.signal(sig, old)

    return restore
