"""Spark's Kafka and protobuf connectors, which the pyspark wheel does not ship.

They are fetched from Maven at the version of the installed pyspark, leaving out what
Spark already has in its ``jars`` folder (Scala, slf4j, the Hadoop client, compression
codecs, ...): a second copy of those on the classpath can only conflict.

``$WORKBENCH_CONNECTOR_JARS`` (os.pathsep-separated jars or folders of jars) supplies jars
obtained some other way, e.g. on machines whose Maven mirror lacks them. A connector that
cannot be fetched does not stop a session from starting: a warning says why, Maven is not
asked again for an hour, and whatever needs the connector calls :func:`require`, which
raises :class:`SetupError` naming the fix.
"""

from __future__ import annotations

import json
import os
import re
import time
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.exceptions import SetupError
from workbench.infra.maven import fetch
from workbench.paths import subdir

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

ENV_JARS = "WORKBENCH_CONNECTOR_JARS"
RETRY_AFTER_S = 3600.0

#: connector -> (Maven group:artifact, a class Spark loads from it)
CONNECTORS: dict[str, tuple[str, str]] = {
    "kafka": (
        "org.apache.spark:spark-sql-kafka-0-10_2.13",
        "org.apache.spark.sql.kafka010.KafkaSourceProvider",
    ),
    "protobuf": (
        "org.apache.spark:spark-protobuf_2.13",
        "org.apache.spark.sql.protobuf.ProtobufDataToCatalyst",
    ),
}

#: group:artifact pairs Spark itself ships; never fetched a second time.
SPARK_PROVIDED: tuple[str, ...] = (
    "org.scala-lang:scala-library",
    "org.scala-lang:scala-reflect",
    "org.slf4j:slf4j-api",
    "com.google.code.findbugs:jsr305",
    "org.apache.hadoop:hadoop-client-api",
    "org.apache.hadoop:hadoop-client-runtime",
    "org.lz4:lz4-java",
    "at.yawk.lz4:lz4-java",
    "org.xerial.snappy:snappy-java",
    "com.github.luben:zstd-jni",
    "org.apache.spark:spark-tags_2.13",
    "org.spark-project.spark:unused",
)

# Maven versions start with "<digits>." (4.3.0, 1.5.7-7, 2.0.76.Final); classifiers a letter
_JAR_NAME = re.compile(
    r"^(?P<artifact>.+?)-(?P<version>\d+\.[\w.]*(?:-\d[\w.]*)*)(?:-[A-Za-z][\w.-]*)?\.jar$"
)


def spark_version() -> str:
    import pyspark

    return pyspark.__version__


def coordinates(connector: str, version: str | None = None) -> str:
    """``group:artifact:version`` of a connector (``kafka`` or ``protobuf``)."""
    return f"{CONNECTORS[connector][0]}:{version or spark_version()}"


def artifact_name(jar: str | Path) -> str:
    """The artifact a jar holds, without version or classifier (lz4-java-1.8.0.jar -> lz4-java)."""
    name = Path(jar).name
    match = _JAR_NAME.match(name)
    return match["artifact"] if match else name.removesuffix(".jar")


def spark_jars_folder() -> Path:
    """Where the running Spark keeps its own jars ($SPARK_HOME/jars, else pyspark's)."""
    home = os.environ.get("SPARK_HOME")
    if home and (Path(home) / "jars").is_dir():
        return Path(home) / "jars"
    import pyspark

    return Path(pyspark.__file__).resolve().parent / "jars"


def shipped_artifacts() -> set[str]:
    return {artifact_name(j) for j in spark_jars_folder().glob("*.jar")}


def connector_jars() -> list[Path]:
    """The connector jars for ``spark.jars`` (a ``JAR_PROVIDERS`` entry).

    Jars from ``$WORKBENCH_CONNECTOR_JARS`` come first; a connector neither they nor Maven
    provide is left out with a warning.
    """
    jars = override_jars()
    supplied = {artifact_name(j) for j in jars}
    for connector, (artifact, _) in CONNECTORS.items():
        if artifact.split(":")[1] not in supplied:
            jars += _fetched(connector)
    shipped = shipped_artifacts()
    return list(dict.fromkeys(j.resolve() for j in jars if artifact_name(j) not in shipped))


def override_jars() -> list[Path]:
    """Jars named in ``$WORKBENCH_CONNECTOR_JARS``: jar files, or folders of them."""
    found: list[Path] = []
    for entry in filter(None, os.environ.get(ENV_JARS, "").split(os.pathsep)):
        path = Path(entry).expanduser()
        if path.is_dir():
            found += sorted(path.glob("*.jar"))
        elif path.suffix == ".jar" and path.is_file():
            found.append(path)
        else:
            raise SetupError(
                f"${ENV_JARS} names '{entry}', which is neither a jar nor a folder of jars: "
                "fix or unset it."
            )
    return found


def _fetched(connector: str) -> list[Path]:
    coordinate = coordinates(connector)
    failure = subdir("jars") / f"connectors-{connector}.unavailable"
    if failure.exists():
        noted = json.loads(failure.read_text())
        if noted["coordinate"] == coordinate and time.time() < noted["retry_after"]:
            _warn(connector, noted["reason"])
            return []
    try:
        jars = fetch(f"connectors-{connector}", [coordinate], SPARK_PROVIDED)
    except SetupError as err:
        retry = time.time() + RETRY_AFTER_S
        failure.write_text(
            json.dumps({"coordinate": coordinate, "reason": str(err), "retry_after": retry})
        )
        _warn(connector, str(err))
        return []
    failure.unlink(missing_ok=True)
    return jars


def _warn(connector: str, reason: str) -> None:
    warnings.warn(
        f"Spark's {connector} connector is unavailable: {reason}\n{_how_to_supply(connector)}",
        stacklevel=3,
    )


def require(spark: SparkSession, connector: str) -> None:
    """Raise :class:`SetupError` unless ``connector``'s classes are on ``spark``'s classpath."""
    class_name = CONNECTORS[connector][1]
    jvm = spark.sparkContext._jvm
    if jvm is None or not jvm.org.apache.spark.util.Utils.classIsLoadable(class_name):
        raise SetupError(
            f"Spark's {connector} connector is not on the classpath. {_how_to_supply(connector)}"
        )


def _how_to_supply(connector: str) -> str:
    return (
        f"It is fetched from Maven as {coordinates(connector)} when a session starts; if "
        f"Maven cannot provide it, download that jar (and its dependencies), list it in "
        f"${ENV_JARS}, and start a new Python process."
    )
