"""The one place a SparkSession is made: jars, configuration, UDF registration.

Jars must be on ``spark.jars`` before the JVM starts, so every jar the workbench
needs is gathered here from the providers in :data:`JAR_PROVIDERS`.

Where the JVM's output goes (:mod:`workbench.jvm_log`): by default its stderr (log4j at
``$WORKBENCH_SPARK_LOG_LEVEL``, default ERROR); a notebook kernel sends it, with PySpark's
own error loggers, to a file under the workbench home instead. Spark's state stays out of
the working folder: ``spark.sql.warehouse.dir`` is ``$WORKBENCH_HOME/spark-warehouse`` and
the empty ``artifacts/`` folder Spark 4.0 leaves in the working folder is removed at exit.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import sys
from collections.abc import Callable, Mapping
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING

from workbench import jvm_log
from workbench.paths import subdir

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: "module:function" returning a list of jar paths; called before the session starts.
JAR_PROVIDERS: list[str] = [
    "workbench.udfs.jvm:udf_jars",
    "workbench.sources.kafka:connector_jars",
]

DEFAULT_CONF: dict[str, str] = {
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.shuffle.partitions": "4",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.sql.streaming.forceDeleteTempCheckpointLocation": "true",
    "spark.executor.extraJavaOptions": "-Duser.timezone=UTC",
}
#: Spark 4.0.0 makes this folder in the working folder (SPARK-52396) and leaves it there.
ARTIFACTS = "artifacts"
_MADE_HERE: list[Path] = []
LOG4J = Path(__file__).resolve().parent / "data" / "log4j2.properties"


def jar_provider(spec: str) -> Callable[[], list[Path]]:
    module, _, name = spec.partition(":")
    return getattr(import_module(module), name)


def jars() -> list[str]:
    return [str(path) for spec in JAR_PROVIDERS for path in jar_provider(spec)()]


def session(
    master: str | None = None,
    app_name: str = "dagger-workbench",
    conf: Mapping[str, str] | None = None,
) -> SparkSession:
    """The active session, or a new one with the workbench's jars and UDFs.

    ``master`` defaults to ``$WORKBENCH_SPARK_MASTER`` or ``local[2]``.
    """
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # workers use this interpreter
    builder = SparkSession.builder.appName(app_name).master(
        master or os.environ.get("WORKBENCH_SPARK_MASTER", "local[2]")
    )
    settings = {
        **DEFAULT_CONF,
        "spark.jars": ",".join(jars()),
        "spark.driver.extraJavaOptions": f"-Duser.timezone=UTC -Dlog4j2.configurationFile={LOG4J}",
        **(conf or {}),
    }
    settings.setdefault("spark.sql.warehouse.dir", str(subdir("spark-warehouse")))
    for key, value in settings.items():
        builder = builder.config(key, value)
    artifacts = Path.cwd() / ARTIFACTS
    if not artifacts.exists():  # Spark makes it when the session state is first used
        _MADE_HERE.append(artifacts)
        atexit.register(shutdown)
    with jvm_log.started() as level:
        spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel(os.environ.get("WORKBENCH_SPARK_LOG_LEVEL", level))
    from workbench.udfs import UDFS

    UDFS.register_all(spark)
    return spark


def new_session(spark: SparkSession) -> SparkSession:
    """Another session of ``spark``'s application (its driver and executors): its own SQL
    settings, temporary views, functions and streaming listeners, with the workbench's
    UDFs registered."""
    from workbench.udfs import UDFS

    other = spark.newSession()
    UDFS.register_all(other)
    return other


def shutdown(timeout_s: float = 2.0) -> None:
    """End the JVM (its shutdown hooks stop Spark and empty Spark's ``artifacts/``), then
    remove the ``artifacts/`` folders Spark made in the working folder if nothing else is
    in them. Runs at exit, and when a notebook kernel is asked to shut down (Jupyter kills a
    kernel that takes over 2.5 s, before Python's exit handlers run)."""
    from pyspark import SparkContext

    gateway = SparkContext._gateway
    proc = getattr(gateway, "proc", None)
    if gateway is not None and proc is not None and proc.poll() is None:
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
