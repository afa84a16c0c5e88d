"""The notebook API behind ``import workbench.notebook as wb`` (:mod:`workbench.notebook`
re-exports it): streams, schemas, samples, previews, promote, and the kernel's Spark."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench import spec as spec_module
from workbench.exceptions import PromoteError, SparkStartError, UnknownNameError
from workbench.lab import sampling
from workbench.lab.sampling import Sample
from workbench.paths import promote_folder
from workbench.promote import promote as run
from workbench.runtime import jvm_log
from workbench.runtime.spark import driver_java_options, session
from workbench.runtime.spark_start import BackgroundStart
from workbench.schemas import default_registry_with
from workbench.schemas.registry import tree_lines
from workbench.settings import settings, variable
from workbench.spec import parse

if TYPE_CHECKING:
    import pandas as pd
    from pyspark.sql import SparkSession

    from workbench.lab.preview import Preview
    from workbench.lab.sampling import Sample
    from workbench.runtime.spark_start import BackgroundStart
    from workbench.schemas.registry import FieldInfo
    from workbench.spec import DaggerSpec, StreamSpec

#: ``background`` (default): the kernel starts Spark as it loads; ``on-use``: at first use.
START_ENV = variable("spark_start")
APP_NAME = "dagger-workbench-notebook"
#: ``$WORKBENCH_KERNEL_JIT`` (:attr:`workbench.settings.Settings.kernel_jit`): ``quick``
#: (default): the kernel's driver JVM compiles with the C1 JIT only; ``full``: C2 too. A
#: kernel runs previews over samples, where C2's compile time never pays back: the first
#: ``%%dagger`` of a cold kernel took 5.6 s instead of 8.2 s, a warm one 0.27 s instead of
#: 0.36 s (docs/benchmarks.md). Long streams in a kernel run faster with ``full``.
DEFAULT_LAST = 1000

#: The current sample of each table: what previews and ``%%dagger`` run over.
samples: dict[str, Sample] = {}
_streams: dict[str, tuple[StreamSpec, tuple[str, ...]]] = {}  # table → (stream, schemas)
_state: dict[str, Any] = {
    "spec": None,
    "bootstrap": None,
    "preview": None,
    "bundled": False,
    "jvm_log": False,
    "start": None,  # the background start of Spark (a BackgroundStart) until first use
    "started": None,  # its StartTimes, when it started Spark (not found it running)
    "given": {},  # spec keys the last preview was given explicitly (watermark_delay, emit)
}


def spark() -> SparkSession:
    """The kernel's Spark session (jars, UDFs, ``local[2]`` unless ``$WORKBENCH_SPARK_MASTER``
    says otherwise), its JVM logging to :func:`spark_log`'s file rather than into the cells.
    The kernel starts it in the background as it loads (:func:`start_spark`): this waits for
    that start, and raises its error, if any, once (the next call starts Spark again)."""
    _log_to_file()
    start = _state["start"]
    if start is not None:
        from workbench.notebook import warmup

        warmup.stop()  # real work goes first
        try:
            start.wait(hint=_LOG_HINT)
        except SparkStartError:
            if start.done:  # failed: the next call starts Spark in the foreground
                _state["start"] = None
            raise
        _state["start"] = None
    return _session()


def _session() -> SparkSession:
    """The kernel's session: Spark's own but for the driver JVM's JIT
    (``$WORKBENCH_KERNEL_JIT``)."""

    quick = settings().kernel_jit == "quick"
    options = driver_java_options(quick_jit=quick)
    return session(app_name=APP_NAME, conf={"spark.driver.extraJavaOptions": options})


def start_spark() -> None:
    """Start the kernel's Spark session in a background thread now, and warm up the preview
    path on it, so it is up (or nearly) when the first cell asks for it;
    ``$WORKBENCH_SPARK_START=on-use`` leaves the start to the first use."""

    if _state["start"] is not None or settings().spark_start == "on-use":
        return
    _log_to_file()
    start = BackgroundStart(_start, what="Spark", after=_warm_up)
    _state["start"] = start
    start.begin()


def _warm_up(spark: SparkSession) -> None:
    """When the background start made ``spark``, the first preview's one-off costs paid now
    (:mod:`.warmup`; a ``warm-up`` phase of the start's times). Not in a notebook being
    promoted: papermill runs its cells at once, and the warm-up would only compete."""
    from workbench.notebook.warmup import warm_up
    from workbench.runtime.spark import last_start

    if promote_folder() is not None:
        return
    times = last_start()
    if times is not None and times is _state["started"]:
        with times.phase("warm-up"):
            warm_up(spark)


def _start() -> SparkSession:
    from workbench.runtime.spark import last_start

    before = last_start()
    spark = _session()
    if last_start() is not before:  # this call started it
        _state["started"] = last_start()
    return spark


def background_start() -> BackgroundStart | None:
    """The kernel's start of Spark in the background, until the first use takes its session
    (then None)."""
    return _state["start"]


def _log_to_file() -> None:

    if not _state["jvm_log"]:
        _state["jvm_log"] = True
        jvm_log.to_file()


_LOG_HINT = " Spark's log: %dagger_logs (or wb.spark_log())."


@dataclass(frozen=True)
class SparkLog:
    """The last lines of the Spark JVM's log; shows as plain text."""

    text: str

    def __repr__(self) -> str:
        return self.text


def spark_log(lines: int = 50) -> SparkLog:
    """The last ``lines`` lines the Spark JVM (and PySpark's error loggers) wrote: in a
    notebook they go to ``$WORKBENCH_HOME/logs/spark-<pid>.log``, not into the cells
    (``$WORKBENCH_SPARK_LOG=stderr`` in the kernel's environment shows them there)."""

    return SparkLog(jvm_log.tail(lines))


def connect(servers: str | None) -> None:
    """Read every stream from ``servers`` (None: back to each stream's own)."""
    _state["bootstrap"] = servers
    _record()


def bootstrap_for(stream: StreamSpec) -> str:
    return _state["bootstrap"] or settings().bootstrap_servers or stream.bootstrap_servers


def use(spec: DaggerSpec | str | Path) -> DaggerSpec:
    """Make ``spec`` (or the spec file) the current spec; its streams become known."""

    if isinstance(spec, str | Path):
        spec = spec_module.load(spec)
    for stream in spec.streams:
        _streams[stream.table] = (stream, tuple(spec.schemas))
    _state["spec"] = spec
    _record()
    return spec


def current_spec() -> DaggerSpec | None:
    return _state["spec"]


def add_stream(table: str, message: str, **keys: Any) -> StreamSpec:
    """Know a stream without a spec: ``add_stream("booking", "BookingLogMessage",
    topics=["booking-log"])``; ``keys`` are stream keys of the spec."""

    stream = parse(
        {"name": "notebook", "sql": "-", "streams": [{"table": table, "message": message, **keys}]}
    ).streams[0]
    _streams[table] = (stream, ())
    return stream


def _known() -> dict[str, tuple[StreamSpec, tuple[str, ...]]]:
    if not _state["bundled"]:
        from workbench.paths import PACKAGE_DIR
        from workbench.spec import load

        _state["bundled"] = True
        for path in sorted((PACKAGE_DIR / "data" / "daggers").glob("*.yaml")):
            for stream in (spec := load(path)).streams:
                _streams.setdefault(stream.table, (stream, tuple(spec.schemas)))
    return _streams


def stream(table: str) -> StreamSpec:
    known = _known()
    if table not in known:
        raise UnknownNameError("stream", table, known, where="(add it with use() or add_stream())")
    return known[table][0]


def streams() -> pd.DataFrame:
    """The known streams, one row each, with their current sample."""
    import pandas as pd

    rows = [
        {
            "table": table,
            "message": s.message,
            "topics": ", ".join(s.topics) if s.topics else f"/{s.topic_pattern}/",
            "bootstrap_servers": bootstrap_for(s),
            "event_timestamp_field": s.event_timestamp_field,
            "sample": samples[table].describe() if table in samples else "",
        }
        for table, (s, _) in sorted(_known().items())
    ]
    return pd.DataFrame(rows, columns=["table", "message", "topics", "bootstrap_servers",
                                       "event_timestamp_field", "sample"])  # fmt: skip


@dataclass(frozen=True)
class Schema:
    """A message's field tree; renders as text and as a nested list."""

    message: str
    file: str
    fields: list[FieldInfo]

    def lines(self) -> list[str]:
        return [f"{self.message}  ({self.file})", *tree_lines(self.fields)]

    def __repr__(self) -> str:
        return "\n".join(self.lines())

    def _repr_html_(self) -> str:
        import html

        def items(fields: list[FieldInfo]) -> str:
            return "".join(
                f"<li><code>{html.escape(f.name)}</code>: "
                f"{'repeated ' if f.repeated else ''}{html.escape(f.type)} ({f.number})"
                f"{_enum_html(f)}"
                f"{'<ul>' + items(f.children) + '</ul>' if f.children else ''}</li>"
                for f in fields
            )

        return f"<b>{html.escape(self.message)}</b><ul>{items(self.fields)}</ul>"


def _enum_html(f: FieldInfo) -> str:
    import html

    if f.kind != "enum":
        return ""
    return " enum: " + ", ".join(f"<code>{html.escape(v)}</code>" for v in f.enum_values)


def schema(message: str) -> Schema:
    """The field tree of ``message`` (full, Java class or unique simple name)."""

    extra = [x for _, schemas in _known().values() for x in schemas]
    registry = default_registry_with(dict.fromkeys(extra))
    descriptor = registry.descriptor(message)
    return Schema(descriptor.full_name, descriptor.file.name, registry.fields(message))


def sample(
    table: str,
    *,
    last: int | None = None,
    start: Any = None,
    end: Any = None,
    tail_s: float | None = None,
    offsets: Mapping[str, Mapping[int, tuple[int, int]]] | None = None,
    bootstrap: str | None = None,
    progress: bool = True,
) -> Sample:
    """Sample ``table``'s stream (``last`` defaults to 1000 per partition; or a time range,
    ``tail_s``, or exact ``offsets``, see :func:`workbench.lab.sampling.sample`) with a progress
    bar; it becomes the table's current sample."""
    from workbench.notebook.progress import bar

    chosen = stream(table)
    if all(x is None for x in (last, start, end, tail_s, offsets)):
        last = DEFAULT_LAST
    shown = bar(f"sampling {table}") if progress else None
    taken = sampling.sample(
        chosen,
        bootstrap=bootstrap or bootstrap_for(chosen),
        last=last,
        start=start,
        end=end,
        tail_s=tail_s,
        offsets={t: dict(parts) for t, parts in offsets.items()} if offsets else None,
        progress=shown,
        schemas=_known()[table][1],
    )
    if shown is not None:
        shown.close(f"{len(taken):,} records")
    samples[table] = taken
    return taken


def load_sample(path: str | Path) -> Sample:
    """Read a saved sample's offsets again; it becomes its table's current sample."""
    from workbench.notebook.progress import bar

    shown = bar(f"sampling {Path(path).name}")
    taken = Sample.load(path, progress=shown)
    shown.close(f"{len(taken):,} records")
    samples[taken.table] = taken
    _streams.setdefault(taken.table, (taken.stream, taken.schemas))
    return taken


def current_samples(tables: list[str] | None = None) -> dict[str, Sample]:
    """The current samples, or those of ``tables`` (each must have one)."""
    if tables is None:
        return dict(samples)
    for table in tables:
        if table not in samples:
            raise UnknownNameError("sample", table, samples, where="(take one with sample())")
    return {t: samples[t] for t in tables}


def preview(
    sql: DaggerSpec | str | None = None,
    *,
    tables: list[str] | None = None,
    watermark: str | int | None = None,
    emit: str | None = None,
) -> Preview:
    """Run dagger SQL (default: the current spec's) over the current samples, as a batch.
    SQL given while a spec is in use previews that spec with this SQL: the preview's
    ``alerts()`` test-fire the spec's rules."""
    from workbench.lab.preview import preview as run_preview

    query = sql if sql is not None else current_spec()
    if query is None:
        raise UnknownNameError("spec", "(none)", [], where="give SQL, or use() a spec first")
    spec, given = current_spec(), watermark
    if isinstance(query, str) and spec is not None and watermark is None:
        watermark = spec.watermark_delay_ms
    result = run_preview(
        query, current_samples(tables), spark=spark(), watermark=watermark, emit=emit
    )
    if isinstance(query, str) and spec is not None:  # a %%dagger cell: the spec, with its SQL
        update = {"sql": query, "watermark_delay": result.watermark_ms, "emit": result.emit}
        result.spec = spec.model_copy(update=update)
    _state.update(preview=result, given={"watermark_delay": given, "emit": emit})
    _record(new_preview=True)
    return result


def last_preview() -> Preview | None:
    return _state["preview"]


def reset() -> None:
    """Forget the current samples, spec, streams and connection (not Spark's session)."""
    samples.clear()
    _streams.clear()
    _state.update(spec=None, bootstrap=None, preview=None, bundled=False, given={})


def _record(new_preview: bool = False) -> None:
    """In promote mode, record the spec, and a preview just made (:mod:`.promoting`)."""
    from workbench.notebook import promoting

    servers = _state["bootstrap"] or settings().bootstrap_servers
    promoting.record(current_spec(), servers, last_preview(), _state["given"], new_preview, spark)


def promote(
    notebook: str | Path | None = None,
    team: str | None = None,
    *,
    name: str | None = None,
    cluster: str | None = None,
    params: Mapping[str, Any] | None = None,
    server: str | None = None,
    token: str | None = None,
) -> dict[str, Any]:
    """Promote the saved ``notebook`` to a production job of ``team``, as ``workbench
    promote`` does (:func:`workbench.promote.promote`): papermill in a new kernel, the
    parity check, then the job service starts the job. Returns the job."""
    from workbench.notebook.promoting import notebook_path

    path = notebook_path(notebook)
    if not team:
        raise PromoteError(f"give the team that owns the job: wb.promote({str(path)!r}, team=...)")
    return run(path, team, name=name, cluster=cluster, params=params, server=server,
               token=token, emit=print)  # fmt: skip
