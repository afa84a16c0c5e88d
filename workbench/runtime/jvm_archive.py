"""The Spark driver JVM's class-data-sharing archive: Spark's classes, parsed and verified
once, mapped into every later JVM instead of loaded from the jars again.

A cold Spark start is mostly the JVM loading and verifying some 15,000 classes of Spark,
Scala and Hadoop. ``workbench setup`` (:func:`workbench.dev.setup.build_jvm_archive`) runs
a representative workload (a session, the UDFs,
``validate`` of the demo dagger, a batch query to pandas) once in a JVM started with
``-XX:ArchiveClassesAtExit`` (JDK 13+), which writes the classes it loaded to
:func:`path` when it exits; every session afterwards starts its driver with
``-XX:SharedArchiveFile`` pointing there (:func:`java_options`), which cut the JVM's CPU
time of a cold start by 40% here (docs/benchmarks.md). Classes of ``spark.jars`` (the UDF
jar, the Kafka connector) are not archived (the JVM archives only its built-in class
loaders'), so a rebuilt UDF jar needs no new archive.

The archive's name carries the PySpark version, the Java installation it was made
with and the jar on the driver's class path (``workbench.runtime.udf_jar.local_files_jar``);
another Java, PySpark or jar simply finds none. The JVM checks the rest (its class path)
itself and ignores an archive that does not fit. ``$WORKBENCH_JVM_ARCHIVE=off`` starts
without it.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

from workbench.paths import subdir
from workbench.runtime.udf_jar import local_files_jar
from workbench.settings import settings, variable

ENV = variable("jvm_archive")


def path() -> Path:
    """Where the archive for this PySpark and this Java lives (whether or not it exists)."""
    import pyspark

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
