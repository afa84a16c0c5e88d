"""``workbench setup``: fetch and build everything a first run would otherwise wait for."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from workbench.atlas.assets import fetch_assets
from workbench.atlas.geography import prepare as map_geography
from workbench.atlas.shared import voila_static_root
from workbench.dev.demo import spec_path
from workbench.dev.kafka import broker_jars
from workbench.exceptions import SetupError
from workbench.paths import subdir
from workbench.runtime import jvm_archive
from workbench.runtime import spark as workbench_spark
from workbench.runtime.spark import JAR_PROVIDERS, jar_provider
from workbench.schemas import default_registry
from workbench.settings import child_env, variable
from workbench.streaming.validate import validate

#: What the Spark JVM's class archive is made from: a session's start and the usual plans.
TRAINING = """
from workbench.dev.setup import train_jvm_archive
train_jvm_archive()
"""


def _step(label: str, action: Callable[[], object]) -> None:
    started = time.monotonic()
    result = action()
    count = f" ({len(result)} files)" if isinstance(result, list) else ""
    print(f"  {label}: ready{count} in {time.monotonic() - started:.1f}s")


def prepare() -> None:

    print("workbench setup")
    for spec in JAR_PROVIDERS:
        _step(f"jars from {spec}", jar_provider(spec))
    _step("kafka broker jars", broker_jars)
    _step("demo protobuf schemas", lambda: default_registry().descriptor_set_path())
    _step("map assets (deck.gl bundle, basemap css from npm)", fetch_assets)
    _step("map geography (coastlines and city names from npm, clipped)", map_geography)
    _step("dashboard static files (deck.gl for Voila)", voila_static_root)
    _step("Spark JVM class archive (faster Spark starts)", build_jvm_archive)


def build_jvm_archive() -> Path:
    """Make the archive (``workbench setup``), unless it exists: the training workload runs
    in a fresh Python process whose JVM writes the archive as it exits."""
    archive = jvm_archive.path()
    if archive.is_file():
        return archive
    log = str(subdir("logs") / "jvm-archive.log")
    env = child_env({jvm_archive.ENV: "off", variable("spark_log"): log})
    done = subprocess.run(
        [sys.executable, "-c", TRAINING], env=env, capture_output=True, text=True, timeout=900
    )
    if done.returncode != 0 or not archive.is_file():
        raise SetupError(
            "Making the Spark JVM's class archive failed (Spark still starts without it, "
            f"only slower): {(done.stderr or done.stdout).strip()[-2000:]}"
        )
    return archive


def train_jvm_archive() -> None:
    """The training workload, in its own process: a session whose JVM dumps the classes it
    loaded at exit, the plans of ``validate``, ``replay`` and previews, then the exit."""
    archive = jvm_archive.path()
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
