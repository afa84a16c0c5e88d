"""The one place a SparkSession is made: jars, configuration, UDF registration.

Jars must be on ``spark.jars`` before the JVM starts, so every jar the workbench
needs is gathered here from the providers in :data:`JAR_PROVIDERS`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING

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
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel(os.environ.get("WORKBENCH_SPARK_LOG_LEVEL", "ERROR"))
    from workbench.udfs import UDFS

    UDFS.register_all(spark)
    return spark
