"""Compaction of a Delta table's closed partitions into files of a target size, and
removal of the files compaction replaced (VACUUM).

Compaction is Delta Lake's OPTIMIZE over the closed partitions that hold more than one
file: one transaction that removes the small files and adds the compacted ones with
``dataChange=false``. So it is exactly once (a crash before the commit changes nothing
a reader sees; running it again finds the partitions compacted), invisible to readers
(each reads one snapshot: the small files or the compacted ones, every row once) and it
does not conflict with the sink's appends (blind inserts). The replaced files stay on
disk for readers of older snapshots until :func:`vacuum` removes those older than the
retention.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.exceptions import WarehouseError
from workbench.warehouse.delta import STATS, is_table
from workbench.warehouse.layout import Partition, closed, partitions

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?i?b?)?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
#: Delta's own minimum retention: shorter ones can remove files a reader still needs.
SAFE_RETENTION = timedelta(days=7)


def parse_size(text: str) -> int:
    """Bytes in ``128MB``, ``64m``, ``1GiB`` or a bare number of bytes (units of 1024)."""
    match = _SIZE.match(text)
    if not match:
        raise ValueError(f"'{text}' is not a size: write e.g. 128MB, 64MB or 1GB")
    return int(float(match.group(1)) * _UNITS[(match.group(2) or "")[:1].lower()])


@dataclass(frozen=True)
class Compaction:
    """What one compaction did: the compacted partitions before and after, in seconds."""

    before: list[Partition]
    after: list[Partition]
    seconds: float


def compact(
    spark: SparkSession, path: str | Path, older_than: timedelta, target_bytes: int
) -> Compaction:
    """Compact the closed partitions (:func:`~workbench.warehouse.layout.closed`) of the
    Delta table at ``path`` that hold more than one file, in one transaction."""
    began = time.monotonic()
    table = _table(spark, path)
    todo = [p for p in closed(partitions(spark, path), older_than) if p.files > 1]
    if not todo:
        return Compaction([], [], time.monotonic() - began)
    where = " OR ".join(f"({p.predicate})" for p in todo)
    sizes = {
        "spark.databricks.delta.optimize.maxFileSize": str(target_bytes),
        "spark.databricks.delta.optimize.minFileSize": str(target_bytes),
        STATS: "true",  # the compacted files get their column statistics
    }
    previous = {key: spark.conf.get(key, None) for key in sizes}
    try:
        for key, value in sizes.items():
            spark.conf.set(key, value)
        table.optimize().where(where).executeCompaction()
    finally:
        for key, old in previous.items():
            spark.conf.unset(key) if old is None else spark.conf.set(key, old)
    names = {p.values for p in todo}
    after = [p for p in partitions(spark, path) if p.values in names]
    return Compaction(todo, after, time.monotonic() - began)


def vacuum(spark: SparkSession, path: str | Path, retain: timedelta, force: bool = False) -> None:
    """Delete the files no snapshot newer than ``retain`` reads (compacted-away files,
    files of failed writes). Below 7 days only with ``force``."""
    if retain < SAFE_RETENTION and not force:
        raise WarehouseError(
            str(path),
            f"a retention of {retain} is under Delta's safe minimum of 7 days: a reader or "
            "time-travel query older than it would lose its files. Give --retain 168h or "
            "more, or --force if no such reader runs",
        )
    table = _table(spark, path)
    if retain < SAFE_RETENTION:
        spark.conf.set("spark.databricks.delta.retentionDurationCheck.enabled", "false")
    try:
        table.vacuum(retain.total_seconds() / 3600)
    finally:
        spark.conf.unset("spark.databricks.delta.retentionDurationCheck.enabled")


def _table(spark: SparkSession, path: str | Path):  # -> a py4j io.delta.tables.DeltaTable
    if not is_table(path):
        raise WarehouseError(
            str(path),
            "not a Delta table (no _delta_log): compaction needs the 'delta' sink's table; "
            "a 'parquet' sink's folder can only be listed (workbench warehouse files)",
        )
    jvm = spark._jvm
    assert jvm is not None, "Delta tables need a classic (not Spark Connect) session"
    return jvm.io.delta.tables.DeltaTable.forPath(spark._jsparkSession, str(path))
