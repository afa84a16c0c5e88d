"""Live preview: the dagger's query as a short-lived streaming query, refreshed in the notebook.

:class:`LivePreview` plans the query with the production plan builder
(:meth:`workbench.streaming.job.StreamingJob.plan`: the same Kafka source, decoder, rowtime,
watermark and translated SQL) and writes each micro-batch, through ``foreachBatch``, into
a bounded in-memory table (a pandas frame). A table and a chart of a chosen metric (and
any callback, e.g. a map's) refresh every few seconds, like a notebook SQL client for
Flink:

* ``mode="append"`` (a spec's ``emit: final``): a window's row appears once the watermark
  passes it, and rows accumulate;
* ``mode="update"`` (``emit: updates``): rows are upserted by the query's group keys (the
  projections that are not aggregates), so each window shows its latest value.

Caps: the query stops by itself after ``duration_s`` or once the table would exceed
``max_rows``; :meth:`LivePreview.stop` stops it at once. One live preview runs at a time: a
new one stops the previous one, and so do the kernel's exit (``atexit``) and a stopped
Spark session (the watcher sees the query end).

Safety: the checkpoint is a fresh temporary folder (deleted on stop), never the job's;
the Kafka source reads by assignment from the starting offsets given here (``latest``,
``earliest`` or a sample's recorded offsets) under the consumer-group prefix
``workbench-live``, and Spark's Kafka source never commits offsets to Kafka.
"""

from __future__ import annotations

import atexit
import contextlib
import html
import shutil
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from workbench.exceptions import WorkbenchError
from workbench.lab.preview import chart_metrics, group_keys, measures
from workbench.streaming import deadletters
from workbench.streaming.queries import wait_idle

if TYPE_CHECKING:
    import ipywidgets as W
    import pandas as pd
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming import StreamingQuery

    from workbench.sources.letters import LetterTap
    from workbench.spec import DaggerSpec

Mode = Literal["append", "update"]
Listener = Callable[["pd.DataFrame"], None]
GROUP_PREFIX = "workbench-live"
_MODES = {"final": "append", "updates": "update", "append": "append", "update": "update"}

_current: LivePreview | None = None
_current_lock = threading.RLock()


class LivePreviewError(WorkbenchError):
    """A live preview that cannot start, or whose streaming query failed."""


def live_spec(
    spec: DaggerSpec,
    start: str | Mapping[str, Any] = "latest",
    *,
    bootstrap: str | None = None,
    max_offsets_per_trigger: int | None = None,
) -> DaggerSpec:
    """``spec`` as a live preview reads it: starting offsets from ``start`` (``latest``,
    ``earliest``, or per table a :class:`~workbench.lab.sampling.Sample` or offsets
    ``{topic: {partition: offset}}``), a throwaway consumer-group prefix, no sinks."""
    from workbench.streaming.job import with_bootstrap

    if bootstrap:
        spec = with_bootstrap(spec, bootstrap)
    streams = []
    for stream in spec.streams:
        options = {
            k: v
            for k, v in stream.kafka_options.items()
            if k.removeprefix("kafka.") not in ("group.id", "enable.auto.commit")
        }
        update: dict[str, Any] = {
            "starting_offsets": _starting(start, stream.table),
            "group_id": GROUP_PREFIX,
            "kafka_options": options,
        }
        if max_offsets_per_trigger:
            update["max_offsets_per_trigger"] = max_offsets_per_trigger
        streams.append(stream.model_copy(update=update))
    return spec.model_copy(update={"streams": streams, "sinks": [], "checkpoint": None})


def _starting(start: str | Mapping[str, Any], table: str) -> Any:
    if isinstance(start, str):
        if start not in ("latest", "earliest"):
            raise LivePreviewError(
                f"start='{start}': give 'latest', 'earliest' or samples/offsets per table"
            )
        return start
    if table not in start:
        raise LivePreviewError(
            f"no starting offsets for stream '{table}' (given: {', '.join(start) or 'none'})"
        )
    found = start[table]
    offsets = getattr(found, "offsets", found)  # a Sample: {topic: {partition: (start, end)}}
    return {
        topic: {
            str(p): int(r[0]) if isinstance(r, tuple | list) else int(r) for p, r in parts.items()
        }
        for topic, parts in offsets.items()
    }


class LivePreview:
    """``spec``'s query as a short-lived streaming query into a bounded in-memory table."""

    def __init__(
        self,
        spec: DaggerSpec,
        *,
        spark: SparkSession | None = None,
        start: str | Mapping[str, Any] = "latest",
        mode: str | None = None,
        max_rows: int = 1000,
        duration_s: float = 120.0,
        trigger_s: float = 2.0,
        refresh_s: float = 2.0,
        bootstrap: str | None = None,
        max_offsets_per_trigger: int | None = None,
    ):
        if (mode or spec.emit) not in _MODES:
            raise LivePreviewError(f"mode='{mode}': give 'append' (final) or 'update'")
        self.spec = live_spec(
            spec, start, bootstrap=bootstrap, max_offsets_per_trigger=max_offsets_per_trigger
        )
        self.mode: Mode = _MODES[mode or spec.emit]  # type: ignore[assignment]
        self.group_keys = group_keys(spec.sql)
        self.keys = self.group_keys if self.mode == "update" else []  # upserted by these
        self.max_rows, self.duration_s = max_rows, duration_s
        self.trigger_s, self.refresh_s = trigger_s, refresh_s
        self._spark = spark
        self.query: StreamingQuery | None = None
        self.checkpoint: Path | None = None
        self.stopped_reason: str | None = None
        self.error: str | None = None
        self.batches = 0
        self.undecodable = 0  # records that did not decode, over every micro-batch
        self._table: pd.DataFrame | None = None
        self._lock = threading.RLock()
        self._stopping = threading.Event()
        self._stopped = threading.Event()
        self._dirty = False
        self._cap_reached = False
        self._listeners: list[Listener] = []
        self._watcher: threading.Thread | None = None
        self._started_at = 0.0
        self._letters: list[LetterTap] = []  # the plan's dead-letter taps

    # --- running ------------------------------------------------------------------------

    @property
    def spark(self) -> SparkSession:
        if self._spark is None:
            from workbench.runtime.spark import session

            self._spark = session()
        return self._spark

    def start(self) -> LivePreview:
        """Start the query (stopping the live preview running before, if any)."""
        global _current
        with _current_lock:
            previous, _current = _current, self
        if previous is not None and previous is not self:
            previous.stop("replaced by a new live preview")
        self.checkpoint = Path(tempfile.mkdtemp(prefix="workbench-live-"))
        try:
            result = self._plan()
            self._started_at = time.monotonic()
            self.query = (
                result.writeStream.queryName(f"live-{self.spec.name}-{uuid.uuid4().hex[:8]}")
                .option("checkpointLocation", str(self.checkpoint / "query"))
                .outputMode(self.mode)
                .trigger(processingTime=f"{max(int(self.trigger_s * 1000), 100)} milliseconds")
                .foreachBatch(self._on_batch)
                .start()
            )
        except Exception:
            self._cleanup()
            raise
        self._watcher = threading.Thread(target=self._watch, name="live-preview", daemon=True)
        self._watcher.start()
        return self

    def _plan(self) -> DataFrame:
        from workbench.streaming.job import StreamingJob

        job = StreamingJob(self.spec, self.spark, checkpoint=self.checkpoint, emit=None)
        result = job.plan()
        self._letters = job.letters
        return result

    def _on_batch(self, batch: DataFrame, batch_id: int) -> None:
        """foreachBatch: merge the micro-batch into the bounded table (runs on Spark's
        callback thread; the watcher does the stopping and the refreshing)."""
        import pandas as pd

        if self._stopping.is_set():
            return
        batch = batch.persist()
        try:
            batch.count()  # every partition runs: its state is committed, its letters collected
            rows: pd.DataFrame = batch.limit(self.max_rows + 1).toPandas()  # type: ignore[assignment]
        finally:
            batch.unpersist()
        dead = deadletters.collected(self._letters).exact_count
        with self._lock:
            self.batches += 1
            self.undecodable += dead
            if rows.empty:
                return
            table = rows if self._table is None else pd.concat([self._table, rows])
            if self.keys:
                table = table.drop_duplicates(subset=self.keys, keep="last")
            if len(table) > self.max_rows:
                table, self._cap_reached = table.iloc[: self.max_rows], True
            self._table = table.reset_index(drop=True)
            self._dirty = True

    def _watch(self) -> None:
        last_refresh = 0.0
        while not self._stopping.wait(0.2):
            reason = self._due_stop()
            if reason:
                self.stop(reason)
                return
            now = time.monotonic()
            if self._dirty and now - last_refresh >= self.refresh_s:
                last_refresh = now
                self._notify()

    def _due_stop(self) -> str | None:
        query = self.query
        if self._cap_reached:
            return f"row cap reached ({self.max_rows:,} rows)"
        if time.monotonic() - self._started_at >= self.duration_s:
            return f"duration cap reached ({self.duration_s:g}s)"
        try:
            active = query is not None and query.isActive
            failure = query.exception() if query is not None and not active else None
        except Exception:  # the Spark session is gone
            return "the Spark session stopped"
        if failure is not None:
            self.error = getattr(failure, "desc", None) or str(failure)
            return "the query failed"
        return None if active else "the query ended"

    def stop(self, reason: str = "stopped") -> None:
        """Stop the query now (idempotent); the table keeps the rows received so far."""
        with self._lock:
            if self._stopping.is_set():
                already = True
            else:
                already = False
                self._stopping.set()
                self.stopped_reason = reason
        if already:
            self._stopped.wait(60)
            return
        try:
            if self.query is not None:
                with contextlib.suppress(Exception):  # a dead session has stopped it already
                    # new batches return at once: _stopping is set
                    wait_idle(self.query, timeout_s=5.0)
                    self.query.stop()
        finally:
            self._cleanup()
            self._stopped.set()
            self._notify()

    def _cleanup(self) -> None:
        global _current
        if self.checkpoint is not None:
            shutil.rmtree(self.checkpoint, ignore_errors=True)
        with _current_lock:
            if _current is self:
                _current = None

    def wait(self, rows: int | None = None, timeout_s: float = 60.0) -> bool:
        """Block until the table has ``rows`` rows (or, with None, the preview stopped);
        whether that happened within ``timeout_s``."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if rows is not None and len(self.rows) >= rows:
                return True
            if self._stopped.is_set():
                return rows is None or len(self.rows) >= rows
            time.sleep(0.1)
        return False

    # --- reading ------------------------------------------------------------------------

    @property
    def active(self) -> bool:
        return self.query is not None and not self._stopped.is_set()

    @property
    def rows(self) -> pd.DataFrame:
        """A copy of the in-memory table (at most ``max_rows`` rows)."""
        import pandas as pd

        with self._lock:
            return pd.DataFrame() if self._table is None else self._table.copy()

    def status(self) -> dict[str, Any]:
        progress: dict[str, Any] = {}
        with contextlib.suppress(Exception):  # no progress yet, or a stopped session
            progress = dict((self.query.lastProgress if self.query else None) or {})
        return {
            "state": "stopped" if self._stopped.is_set() else "running",
            "reason": self.stopped_reason,
            "mode": self.mode,
            "batches": self.batches,
            "rows": len(self.rows),
            "input_rows": progress.get("numInputRows"),
            "undecodable": self.undecodable,
            "watermark": (progress.get("eventTime") or {}).get("watermark"),
            "elapsed_s": round(time.monotonic() - self._started_at, 1) if self._started_at else 0,
            "error": self.error,
        }

    def on_update(self, listener: Listener) -> None:
        """Call ``listener(rows)`` at every refresh (e.g. to redraw a map)."""
        self._listeners.append(listener)

    def _notify(self) -> None:
        with self._lock:
            self._dirty = False
        rows = self.rows
        for listener in list(self._listeners):
            with contextlib.suppress(Exception):  # a broken view must not stop the preview
                listener(rows)

    # --- display ------------------------------------------------------------------------

    def chart(self, metric: str, *, by: str | None = None, top: int = 8) -> Any:
        """A per-window time series of ``metric`` over the rows so far, summed per window
        or one line per value of ``by`` (:class:`workbench.lab.preview.Chart`)."""
        from workbench.lab.preview import Chart

        return Chart.of(self.rows, metric, time=None, by=by, top=top)

    def widget(self, show_rows: int = 20) -> W.VBox:
        """Status line, table and a chart of a chosen metric, refreshed with the query."""
        import ipywidgets as W

        from workbench.notebook.widgets import LABEL_STYLE, as_widget

        status, table = W.HTML(), W.HTML()
        metric = W.Dropdown(options=[], description="Chart metric", style=LABEL_STYLE)
        chart = W.Box([])
        stop = W.Button(description="Stop", icon="stop")
        stop.on_click(lambda _: self.stop())

        def draw(rows: pd.DataFrame) -> None:
            status.value = _status_html(self.status())
            table.value = _table_html(rows, show_rows)
            options = chart_metrics(rows, self.group_keys)
            if list(metric.options) != options:
                metric.options = options
            if metric.value not in options:
                metric.value = next(iter(measures(rows, self.group_keys)), None)
            if metric.value and not rows.empty:
                chart.children = [as_widget(self.chart(metric.value))]

        metric.observe(lambda _: draw(self.rows), names="value")
        self.on_update(draw)
        draw(self.rows)
        return W.VBox([W.HBox([status, stop]), table, metric, chart])

    def _repr_html_(self) -> str:
        return _status_html(self.status()) + _table_html(self.rows, 20)


def _table_html(rows: pd.DataFrame, shown: int) -> str:
    """The latest ``shown`` rows, saying how many there are when that is not all."""
    table = rows.tail(shown).to_html(index=False, max_cols=30)
    if len(rows) <= shown:
        return table
    return f"<p>latest {shown} of {len(rows):,} rows</p>{table}"


def _status_html(status: dict[str, Any]) -> str:
    text = (
        f"live · {status['mode']} · {status['state']}"
        + (f" ({status['reason']})" if status["reason"] else "")
        + f" · {status['batches']} batches · {status['rows']:,} rows · {status['elapsed_s']}s"
        + f" · {status['undecodable']:,} undecodable"
    )
    if status["watermark"]:
        text += f" · watermark {status['watermark']}"
    if status["error"]:
        text += f"\n{status['error'].splitlines()[0]}"
    return f"<pre style='margin:0'>{html.escape(text)}</pre>"


def current() -> LivePreview | None:
    """The live preview running now, if any."""
    return _current


@atexit.register
def stop_current() -> None:
    """Stop the running live preview (the kernel is exiting)."""
    running = _current
    if running is not None:
        running.stop("the kernel stopped")
