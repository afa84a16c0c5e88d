"""The one place a SparkSession is made: jars, configuration, UDF registration.

Jars must be on ``spark.jars`` before the JVM starts, so every jar the workbench
needs is gathered here from the providers in :data:`JAR_PROVIDERS`.

Where the JVM's output goes (:mod:`workbench.runtime.jvm_log`): by default its stderr (log4j at
``$WORKBENCH_SPARK_LOG_LEVEL``, default ERROR); a notebook kernel sends it, with PySpark's
own error loggers, to a file under the workbench home instead. Spark's state stays out of
the working folder (a notebook's folder, a run folder): ``spark.sql.warehouse.dir`` is
``$WORKBENCH_HOME/spark-warehouse``, and the session artifacts' root, which Spark 4.0.0
makes as ``artifacts/spark-<uuid>`` in the working folder (SPARK-52396, fixed in 4.0.1 by
putting it under the temp folder), is put under the JVM's temp folder before a session
is made (:func:`_artifacts_in_tmp`); a left ``artifacts/`` is still removed at exit.

A start is timed by phase (:class:`~workbench.runtime.spark_start.StartTimes`: the jars, the JVM,
the SparkContext, the session, the UDFs; ``workbench replay`` and ``validate`` print
them), and the driver JVM maps the class archive ``workbench setup`` made
(:mod:`workbench.runtime.jvm_archive`), which makes the JVM's part of a cold start faster. Py4J's
sockets run without Nagle's algorithm (:func:`no_nagle`).
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Mapping
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.paths import PACKAGE_DIR, subdir
from workbench.runtime import jvm_log
from workbench.runtime.jvm_archive import java_options
from workbench.runtime.spark_start import StartTimes
from workbench.runtime.udf_jar import local_files_jar
from workbench.settings import set_default
from workbench.settings import settings as environment
from workbench.udfs import UDFS

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: "module:function" returning a list of jar paths; called before the session starts.
JAR_PROVIDERS: list[str] = [
    "workbench.runtime.udf_jar:udf_jars",
    "workbench.sources.kafka:connector_jars",
]

CHECKPOINT_FILES = "org.apache.spark.sql.execution.streaming.FileSystemBasedCheckpointFileManager"
LOCAL_FILES = "io.daggerworkbench.fs.NioLocalFileSystem"  # runtime.udf_jar.local_files_jar
DEFAULT_CONF: dict[str, str] = {
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.shuffle.partitions": "4",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.sql.streaming.forceDeleteTempCheckpointLocation": "true",
    # No process per file written (docs/benchmarks.md, item 25). Hadoop without its native
    # library starts a process for each file a query commits: `readlink` four times in each
    # rename of the default (FileContext) checkpoint manager, `chmod` for each file created.
    # The surge dagger's micro-batch started ~100 of them (offset and commit logs, each state
    # store partition's delta file, the sink's log and part files, their .crc files).
    # FileSystem.rename has the same checks (the destination must not exist) without them,
    # and NioLocalFileSystem sets permissions in the JVM.
    "spark.sql.streaming.checkpointFileManagerClass": CHECKPOINT_FILES,
    "spark.hadoop.fs.file.impl": LOCAL_FILES,
}
#: Spark 4.0.0 makes this folder in the working folder (SPARK-52396) unless
#: :func:`_artifacts_in_tmp` gave it another, and leaves it there.
ARTIFACTS = "artifacts"
_MADE_HERE: list[Path] = []
LOG4J = PACKAGE_DIR / "data" / "log4j2.properties"
#: Called with the phase times of each Spark start (the CLI prints them).
ON_START: list[Callable[[StartTimes], None]] = []
_LOCK = threading.RLock()
_MADE: dict[str, Any] = {}  # the session this process started, and its start's times


def jar_provider(spec: str) -> Callable[[], list[Path]]:
    module, _, name = spec.partition(":")
    return getattr(import_module(module), name)


def jars() -> list[str]:
    return [str(path) for spec in JAR_PROVIDERS for path in jar_provider(spec)()]


#: The driver JVM compiling with the C1 JIT only: for a short-lived driver (a preview
#: kernel, ``workbench validate``), whose code never runs long enough for C2's compile
#: time to pay back (docs/benchmarks.md). Long streams need C2: jobs keep both compilers.
QUICK_JIT = "-XX:TieredStopAtLevel=1"
#: ``$WORKBENCH_JIT`` (:attr:`workbench.settings.Settings.jit`) ``quick``: every driver JVM
#: the workbench starts compiles with :data:`QUICK_JIT` unless told otherwise (the test
#: suite sets it: its jobs run seconds over small data); ``full`` (default): both compilers.


#: The garbage collector of every Spark JVM the workbench starts: the parallel (throughput)
#: collector, not the JVM's default G1. A micro-batch allocates a short-lived object or more
#: per record (the Kafka record's bytes, the decoded message, rows). In the surge benchmark
#: (2M bookings, 2 cores) G1's threads took 0.6-4.8 CPU-s a run (median 2.0 s, a fifth of
#: the JVM's CPU) and the parallel collector's 0.2-0.5 s; the engine's run took 24% less
#: time (docs/benchmarks.md). Its pauses stop a micro-batch, which waits for them anyway.
#: A spec's ``spark.driver.extraJavaOptions`` replaces the workbench's options, collector
#: included.
GC = "-XX:+UseParallelGC"


def driver_java_options(quick_jit: bool | None = None) -> str:
    """The driver JVM's options: UTC, the log4j configuration, :data:`GC`, the class archive
    (:mod:`workbench.runtime.jvm_archive`) when there is one, and :data:`QUICK_JIT` if asked
    (``None``: as ``$WORKBENCH_JIT`` says)."""

    if quick_jit is None:
        quick_jit = quick_jit_asked()
    base = f"-Duser.timezone=UTC -Dlog4j2.configurationFile={LOG4J} {GC}"
    return f"{base} {java_options()}{f' {QUICK_JIT}' if quick_jit else ''}".strip()


def quick_jit_asked() -> bool:
    """Whether ``$WORKBENCH_JIT`` asks every JVM the workbench starts for :data:`QUICK_JIT`."""
    return environment().jit == "quick"


def executor_java_options() -> str:
    """The executors' JVM options: UTC, :data:`GC`, and :data:`QUICK_JIT` when
    ``$WORKBENCH_JIT`` asks (a standalone cluster's executors; ``local`` runs its tasks in the
    driver)."""
    return f"-Duser.timezone=UTC {GC}{f' {QUICK_JIT}' if quick_jit_asked() else ''}"


def short_lived_conf() -> dict[str, str]:
    """The session settings of a short-lived driver: :data:`QUICK_JIT`."""
    return {"spark.driver.extraJavaOptions": driver_java_options(quick_jit=True)}


def session(
    master: str | None = None,
    app_name: str = "dagger-workbench",
    conf: Mapping[str, str] | None = None,
) -> SparkSession:
    """The active session, or a new one with the workbench's jars and UDFs.

    ``master`` defaults to ``$WORKBENCH_SPARK_MASTER`` or ``local[2]``. One start at a time:
    a call while another thread starts Spark waits for it and gets that session. Each
    start's phase times are kept (:func:`last_start`) and given to :data:`ON_START`'s
    functions.
    """
    from pyspark.sql import SparkSession

    with _LOCK:
        active = SparkSession.getActiveSession() or _running(_MADE.get("session"))
        if active is not None:
            return active
        return _start(master, app_name, conf)


def _start(master: str | None, app_name: str, conf: Mapping[str, str] | None) -> SparkSession:
    from pyspark import SparkConf, SparkContext
    from pyspark.sql import SparkSession

    set_default("PYSPARK_PYTHON", sys.executable)  # workers use this interpreter
    times = StartTimes()
    with times.phase("jars"):
        settings = {
            **DEFAULT_CONF,
            "spark.app.name": app_name,
            "spark.master": master or environment().spark_master,
            "spark.jars": ",".join(jars()),
            "spark.driver.extraJavaOptions": driver_java_options(),
            "spark.executor.extraJavaOptions": executor_java_options(),
            **(conf or {}),
        }
        settings.update(file_system_classpath(settings))
        settings.setdefault("spark.sql.warehouse.dir", str(subdir("spark-warehouse")))
    artifacts = Path.cwd() / ARTIFACTS
    if not artifacts.exists():  # Spark makes it when the session state is first used
        _MADE_HERE.append(artifacts)
        atexit.register(shutdown)
    with jvm_log.started() as (level, output), times.phase("JVM"):
        _launch_jvm(settings, output)
    with times.phase("SparkContext"):
        context = SparkContext.getOrCreate(SparkConf().setAll(list(settings.items())))
        _artifacts_in_tmp(context._jvm)
    with times.phase("session"):
        builder = SparkSession.builder
        for key, value in settings.items():
            builder = builder.config(key, value)
        spark = builder.getOrCreate()
        spark.sparkContext.setLogLevel(environment().spark_log_level or level)
    with times.phase("UDFs"):
        from workbench.udfs import UDFS

        UDFS.register_all(spark)
    times.ready_at = time.time()
    _MADE.update(session=spark, times=times)
    for announce in ON_START:
        announce(times)
    return spark


def file_system_classpath(settings: Mapping[str, str]) -> dict[str, str]:
    """The driver's and executors' ``extraClassPath`` and ``spark.jars`` with the jar of
    :data:`LOCAL_FILES` added, when ``settings`` name it as ``fs.file.impl``. Hadoop loads
    that class with the JVM's own class loader, before ``spark.jars`` are added (spark-submit
    resolves paths first; an executor may too); a remote worker without the jar at that path
    skips the entry and its tasks load the class from ``spark.jars``."""

    if settings.get("spark.hadoop.fs.file.impl") != LOCAL_FILES:
        return {}
    jar, added = str(local_files_jar()), {}
    for key, sep in (
        ("spark.driver.extraClassPath", os.pathsep),
        ("spark.executor.extraClassPath", os.pathsep),
        ("spark.jars", ","),
    ):
        entries = [e for e in settings.get(key, "").split(sep) if e]
        added[key] = sep.join(entries if jar in entries else [*entries, jar])
    return added


def _launch_jvm(settings: Mapping[str, str], output: Mapping[str, object]) -> None:
    """Start the driver JVM (``spark-submit`` with ``settings``) as PySpark would, but with
    its stdout and stderr where :mod:`workbench.runtime.jvm_log` says; nothing when a JVM is up."""
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    with SparkContext._lock:
        if SparkContext._gateway is not None:
            return
        conf = SparkConf(loadDefaults=False).setAll(list(settings.items()))
        gateway = launch_gateway(conf, popen_kwargs=dict(output))
        no_nagle(gateway)
        SparkContext._gateway = gateway
        SparkContext._jvm = gateway.jvm


def no_nagle(gateway: Any) -> None:
    """Py4J's sockets in the driver JVM without Nagle's algorithm (``Py4jNoDelay`` in the UDF
    jar). Py4J 0.10.9.9 sends anything over 8 KB in two writes, and Nagle's algorithm with
    the other side's delayed ACK held the second one for 40 ms (py4j issue #516): a
    micro-batch's dead letters took 44 ms to reach Python instead of 1. Without it (another
    py4j) the session still starts, with a warning."""
    from py4j.protocol import Py4JError

    try:
        gateway.jvm.io.daggerworkbench.udf.Py4jNoDelay.install(gateway.java_gateway_server)
    except Py4JError as err:
        logging.getLogger(__name__).warning("Py4J keeps Nagle's algorithm on: %s", err)


def _running(spark: SparkSession | None) -> SparkSession | None:
    """``spark`` if its SparkContext is still the running one (not stopped)."""
    from pyspark import SparkContext

    if spark is None or SparkContext._active_spark_context is not spark.sparkContext:
        return None
    return spark


def last_start() -> StartTimes | None:
    """The phase times of the last Spark start of this process (None: none yet)."""
    return _MADE.get("times")


def new_session(spark: SparkSession) -> SparkSession:
    """Another session of ``spark``'s application (its driver and executors): its own SQL
    settings, temporary views, functions and streaming listeners, with the workbench's
    UDFs registered."""

    other = spark.newSession()
    UDFS.register_all(other)
    return other


def _artifacts_in_tmp(jvm: Any) -> None:
    """Give Spark 4.0.0's artifact root (``ArtifactManager.artifactRootDirectory``, a lazy
    value made as ``artifacts/spark-<uuid>`` under the working folder when the first
    session state is built) a folder under ``java.io.tmpdir``, as Spark 4.0.1 does; Spark
    deletes it at exit. A Spark without that field (the fix, or a later change) is left
    as it is."""
    from py4j.protocol import Py4JError

    with contextlib.suppress(Py4JError):
        manager = jvm.java.lang.Class.forName("org.apache.spark.sql.artifact.ArtifactManager$")
        root, made = (manager.getDeclaredField(n) for n in ("artifactRootDirectory", "bitmap$0"))
        root.setAccessible(True)
        made.setAccessible(True)
        if not made.getBoolean(None):  # not made yet: no session state was built
            tmp = jvm.java.lang.System.getProperty("java.io.tmpdir")
            root.set(None, jvm.org.apache.spark.util.Utils.createTempDir(tmp, ARTIFACTS).toPath())
            made.setBoolean(None, True)


def shutdown(timeout_s: float = 2.0) -> None:
    """End the JVM (its shutdown hooks stop Spark and empty Spark's ``artifacts/``), then
    remove the ``artifacts/`` folders Spark made in the working folder if nothing else is
    in them. Runs at exit, and when a notebook kernel is asked to shut down (Jupyter kills a
    kernel that takes over 2.5 s, before Python's exit handlers run)."""
    from pyspark import SparkContext

    gateway = SparkContext._gateway
    proc = getattr(gateway, "proc", None)
    if gateway is not None and proc is not None and proc.poll() is None:
        # Once Python tasks have run (e.g. dead letters written by Spark's tasks), the JVM holds
        # a connection to PySpark's accumulator server, and its exit ends that connection: the
        # server, still reading, printed an EOFError traceback after every such run.
        server = getattr(SparkContext._active_spark_context, "_accumulatorServer", None)
        if server is not None:
            server.handle_error = lambda *_: None
        with contextlib.suppress(Exception):
            gateway.shutdown()  # py4j stops talking to the JVM (no errors from finalizers)
        with contextlib.suppress(Exception):
            proc.stdin.close()  # the JVM exits when its stdin closes
            proc.wait(timeout_s)
    while _MADE_HERE:
        folder = _MADE_HERE.pop()
        with contextlib.suppress(OSError):
            for child in sorted(folder.glob("**/*"), reverse=True):
                child.rmdir()  # only empty folders: anything else stays
            folder.rmdir()
