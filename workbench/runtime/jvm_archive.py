"""The Spark driver JVM's class-data-sharing archive: Spark's classes, parsed and verified
once, mapped into every later JVM instead of loaded from the jars again.

A cold Spark start is mostly the JVM loading and verifying some 15,000 classes of Spark,
Scala and Hadoop. ``workbench setup`` runs a representative workload (a session, the UDFs,
``validate`` of the demo dagger, a batch query to pandas) once in a JVM started with
``-XX:ArchiveClassesAtExit`` (JDK 13+), which writes the classes it loaded to
:func:`path` when it exits; every session afterwards starts its driver with
``-XX:SharedArchiveFile`` pointing there (:func:`java_options`), which cut the JVM's CPU
time of a cold start by 40% here (docs/benchmarks.md). Classes of ``spark.jars`` (the UDF
jar, the Kafka connector) are not archived (the JVM archives only its built-in class
loaders'), so a rebuilt UDF jar needs no new archive.

The archive's name carries the PySpark version, the Java installation it was made
with and the jar on the driver's class path (``workbench.udfs.jvm.local_files_jar``);
another Java, PySpark or jar simply finds none. The JVM checks the rest (its class path)
itself and ignores an archive that does not fit. ``$WORKBENCH_JVM_ARCHIVE=off`` starts
without it.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

from workbench.exceptions import SetupError
from workbench.paths import subdir
from workbench.settings import child_env, settings, variable

ENV = variable("jvm_archive")
#: What the archive is made from: a session's start and a run of the usual plans.
TRAINING = """
from workbench.runtime.jvm_archive import train
train()
"""


def path() -> Path:
    """Where the archive for this PySpark and this Java lives (whether or not it exists)."""
    import pyspark

    from workbench.udfs.jvm import local_files_jar

    java = shutil.which("java", path=_java_bin()) or "java"
    real = Path(java).resolve()
    stamp = f"{real}:{real.stat().st_mtime_ns if real.exists() else 0}:{pyspark.__file__}"
    stamp += f":{local_files_jar()}"  # on the driver's class path, which the archive fits
    digest = hashlib.sha256(stamp.encode()).hexdigest()[:10]
    return subdir("jvm") / f"spark-{pyspark.__version__}-{digest}.jsa"


def _java_bin() -> str | None:
    home = settings().java_home
    return str(home / "bin") if home else None


def java_options() -> str:
    """The driver's JVM option that maps the archive, or "" (none made, or turned off)."""
    if settings().jvm_archive == "off":
        return ""
    archive = path()
    return f"-XX:SharedArchiveFile={archive}" if archive.is_file() else ""


def build() -> Path:
    """Make the archive (``workbench setup``), unless it exists: the training workload runs
    in a fresh Python process whose JVM writes the archive as it exits."""
    archive = path()
    if archive.is_file():
        return archive
    log = str(subdir("logs") / "jvm-archive.log")
    env = child_env({ENV: "off", variable("spark_log"): log})
    done = subprocess.run(
        [sys.executable, "-c", TRAINING], env=env, capture_output=True, text=True, timeout=900
    )
    if done.returncode != 0 or not archive.is_file():
        raise SetupError(
            "Making the Spark JVM's class archive failed (Spark still starts without it, "
            f"only slower): {(done.stderr or done.stdout).strip()[-2000:]}"
        )
    return archive


def train() -> None:
    """The training workload, in its own process: a session whose JVM dumps the classes it
    loaded at exit, the plans of ``validate``, ``replay`` and previews, then the exit."""
    from workbench.dev.demo import spec_path
    from workbench.runtime import spark as workbench_spark
    from workbench.streaming.validate import validate

    archive = path()
    partial = archive.with_name(f".{archive.name}.{os.getpid()}")
    options = f"{workbench_spark.driver_java_options()} -XX:ArchiveClassesAtExit={partial}"
    spark = workbench_spark.session(conf={"spark.driver.extraJavaOptions": options})
    validate(spec_path())
    spark.range(1000).selectExpr(
        "id % 7 AS k", "dagger_s2id(-6.2 + id / 1e4, 106.8, 13) AS cell"
    ).groupBy("k").count().toPandas()
    spark.stop()
    workbench_spark.shutdown(timeout_s=600)  # the JVM writes the archive as it exits
    if not partial.is_file():
        raise SetupError(f"the JVM wrote no class archive to {partial}")
    os.replace(partial, archive)
