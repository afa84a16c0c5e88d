"""A warehouse table's files per partition, and which hour partitions are closed.

Works on a Delta table (its current snapshot) and on a Parquet sink's folder (the files
its ``_spark_metadata`` log committed): Spark lists the files a reader would read, and
their partition is the ``key=value`` folders they sit in.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlparse

from workbench.warehouse.delta import is_table

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


@dataclass(frozen=True)
class Partition:
    """One partition folder: its ``(column, value)`` pairs, files and bytes."""

    values: tuple[tuple[str, str], ...]
    files: int
    bytes: int

    @property
    def label(self) -> str:
        return "/".join(f"{k}={v}" for k, v in self.values) or "(unpartitioned)"

    @property
    def predicate(self) -> str:
        """SQL selecting this partition's rows (Delta's OPTIMIZE takes it)."""
        return " AND ".join(f"`{k}` = '{v.replace(chr(39), chr(39) * 2)}'" for k, v in self.values)

    def span(self) -> tuple[datetime, datetime] | None:
        """The event-time range of a ``dt`` (and ``hour``) partition; None without ``dt``."""
        values = dict(self.values)
        if "dt" not in values:
            return None
        start = datetime.strptime(values["dt"], "%Y-%m-%d").replace(tzinfo=UTC)
        if "hour" in values:
            start += timedelta(hours=int(values["hour"]))
            return start, start + timedelta(hours=1)
        return start, start + timedelta(days=1)


def read(spark: SparkSession, path: str | Path) -> DataFrame:
    """The table at ``path``: a Delta table, else a Parquet (sink) folder."""
    if is_table(path):
        return spark.read.format("delta").load(str(path))
    return spark.read.parquet(str(path))


def partitions(spark: SparkSession, path: str | Path) -> list[Partition]:
    """The files a reader of ``path`` reads now, per partition, in partition order."""
    root = Path(path).resolve()
    grouped: dict[tuple[tuple[str, str], ...], list[int]] = {}
    for uri in read(spark, path).inputFiles():
        file = Path(unquote(urlparse(uri).path))
        folders = file.parent.relative_to(root).parts
        values = tuple((k, unquote(v)) for k, _, v in (f.partition("=") for f in folders))
        grouped.setdefault(values, []).append(os.path.getsize(file))
    return [Partition(k, len(v), sum(v)) for k, v in sorted(grouped.items())]


def closed(parts: list[Partition], older_than: timedelta) -> list[Partition]:
    """The time partitions that ended at least ``older_than`` before the newest one's end
    (event time, so a backfill's hours close as its newer hours arrive). With hour
    partitions and ``older_than`` of 1 hour: every hour but the newest."""
    spans = {p: s for p in parts if (s := p.span()) is not None}
    if not spans:
        return []
    newest = max(end for _, end in spans.values())
    return [p for p, (_, end) in spans.items() if end <= newest - older_than]
