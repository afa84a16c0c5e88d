"""Delta Lake on a Spark session: its jars (Maven Central) and the settings it needs.

Delta needs its SQL extension and catalog set when a session starts, so only sessions
that use it get them: a job whose spec has a Delta sink (through
:meth:`~workbench.sinks.registry.SinkConfig.session_conf`) and ``workbench warehouse``.
Every other session starts as before.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from workbench.exceptions import WarehouseError
from workbench.runtime.maven import SPARK_PROVIDED, fetch
from workbench.runtime.spark import jars
from workbench.runtime.spark import session as spark_session

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: Delta Lake built for Spark 4.0.0 (the pyspark this project pins; 4.0.1 needs Spark 4.0.1).
COORDINATE = "io.delta:delta-spark_2.13:4.0.0"
EXTENSION = "io.delta.sql.DeltaSparkSessionExtension"
CATALOG = "org.apache.spark.sql.delta.catalog.DeltaCatalog"
LOG = "_delta_log"
#: Column statistics (data skipping) per file: appends of a job skip them (they make each
#: micro-batch's commit ~3x slower: every later write rebuilds the snapshot with them);
#: compaction writes them into the compacted files (:mod:`workbench.warehouse.compaction`).
STATS = "spark.databricks.delta.stats.collect"
APPEND_CONF = {STATS: "false"}


def delta_jars() -> list[Path]:
    """delta-spark and delta-storage (Spark's own jars, antlr included, left out)."""

    exclude = [*SPARK_PROVIDED, "org.antlr:antlr4-runtime"]
    return fetch(f"delta-{COORDINATE.rsplit(':', 1)[1]}", [COORDINATE], exclude=exclude)


def session_conf() -> dict[str, str]:
    """Settings of a session that reads and writes Delta tables: the workbench's jars
    plus Delta's, its SQL extension and catalog."""

    return {
        "spark.jars": ",".join([*jars(), *(str(p) for p in delta_jars())]),
        "spark.sql.extensions": EXTENSION,
        "spark.sql.catalog.spark_catalog": CATALOG,
    }


def session(app_name: str = "workbench-warehouse") -> SparkSession:
    """The active session (which must have Delta), or a new one with Delta."""

    spark = spark_session(app_name=app_name, conf=session_conf())
    require(spark, "this command")
    return spark


def require(spark: SparkSession, user: str) -> None:
    """A :class:`WarehouseError` unless ``spark`` started with Delta's extension."""
    extensions = spark.sparkContext.getConf().get("spark.sql.extensions", "") or ""
    if EXTENSION not in extensions.split(","):
        raise WarehouseError(
            user,
            "the Spark session started without Delta Lake (a notebook kernel or another "
            "job's session), and Delta's jars and SQL extension can only be added when a "
            "session starts: run it in its own process (workbench run, the job service) or "
            "restart the kernel and run it first",
        )


def is_table(path: str | Path) -> bool:
    return (Path(path) / LOG).is_dir()


def latest_version(path: str | Path) -> int:
    """The table's latest commit version; -1 when it has none yet."""
    log = Path(path) / LOG
    if not log.is_dir():
        return -1
    return max((int(p.stem) for p in log.glob("*.json") if p.stem.isdigit()), default=-1)


def committed_txn(path: str | Path, app_id: str, txn_version: int, after: int) -> bool:
    """Whether a commit after version ``after`` recorded ``(app_id, txn_version)``: the
    write of an idempotent append went in (rather than being skipped as a replay)."""
    import json

    log = Path(path) / LOG
    for version in range(after + 1, latest_version(path) + 1):
        for line in (log / f"{version:020d}.json").read_text(encoding="utf-8").splitlines():
            txn = json.loads(line).get("txn")
            if txn and txn.get("appId") == app_id and txn.get("version") == txn_version:
                return True
    return False
