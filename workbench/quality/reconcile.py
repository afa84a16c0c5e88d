"""Reconciliation: what a dagger's Parquet sink or Delta table (the time-bucketed warehouse)
holds for each quality window, compared with the records Kafka gave.

The warehouse rows of a window are those whose ``time_column`` falls in it (a dagger's
``window_timestamp`` is its window's *end* by default, ``time_is: end``: a row at ``t``
belongs to the window holding ``t − 1 ms``); ``warehouse`` is their count, or the sum of
``count_column``. ``warehouse_missing`` is the window's decoded records in Kafka (over the
quality job's topics) minus ``warehouse``: above 0, the warehouse lost rows (a deleted
partition, a failed write); below 0, it holds more (a doubled window). A Parquet sink is
read through its ``_spark_metadata`` log, a Delta table (``format: delta``; the quality job's
session then has Delta Lake) through its own log; files a log names but that are gone are
skipped.

Windows are compared when they are emitted, and **re-checked** later (:func:`recheck`): a
warehouse partition deleted after its window closed is found too. At the first
micro-batch of a run and then at most every ``recheck_every``, the job compares every
window it emitted within ``recheck_for`` of its newest window (from its
``metrics.jsonl``) again, and emits anew the rows whose ``warehouse`` changed.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.warehouse.delta import is_table

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from workbench.quality.spec import ReconcileSpec


def warehouse_counts(
    spark: SparkSession, spec: ReconcileSpec, windows: Iterable[int], window_ms: int
) -> dict[int, int]:
    """The warehouse count of each window start in ``windows`` (0 when it holds none)."""
    from pyspark.sql import functions as F

    wanted = sorted(set(windows))
    if not wanted:
        return {}
    counts = dict.fromkeys(wanted, 0)
    delta = spec.format == "delta"
    if not Path(spec.path).exists() or (delta and not is_table(spec.path)):
        return counts
    shift = 1 if spec.time_is == "end" else 0
    previous = str(spark.conf.get("spark.sql.files.ignoreMissingFiles", "false"))
    spark.conf.set("spark.sql.files.ignoreMissingFiles", "true")
    try:
        rows = (
            spark.read.format("delta").load(spec.path) if delta else spark.read.parquet(spec.path)
        )
        moment = F.unix_millis(F.col(spec.time_column).cast("timestamp")) - shift
        start = (F.floor(moment / window_ms) * window_ms).cast("long")
        amount = F.col(spec.count_column).cast("long") if spec.count_column else F.lit(1)
        found = (
            rows.select(start.alias("w"), amount.alias("n"))
            .where(F.col("w").isin(wanted))
            .groupBy("w")
            .agg(F.sum("n").alias("n"))
            .collect()
        )
    finally:
        spark.conf.set("spark.sql.files.ignoreMissingFiles", previous)
    counts.update({int(r.w): int(r.n or 0) for r in found})
    return counts


def recheck(
    spark: SparkSession,
    spec: ReconcileSpec,
    emitted: list[dict[str, Any]],
    window_ms: int,
    batch_id: int,
) -> list[dict[str, Any]]:
    """Of rows emitted before (times in epoch ms, :mod:`~workbench.quality.history`), those
    whose warehouse count changed, as metric rows of ``batch_id`` with the new counts."""
    from datetime import UTC, datetime

    def at(ms: float) -> datetime:
        return datetime.fromtimestamp(ms / 1000, UTC)

    rows = [
        {**r, "window_timestamp": at(r["window_timestamp"]),
         "window_end": at(r["window_timestamp"] + window_ms)}
        for r in emitted
    ]  # fmt: skip
    before = {id(r): r.get("warehouse") for r in rows}
    counts = warehouse_counts(spark, spec, [r["window_timestamp"] for r in emitted], window_ms)
    reconciled(rows, counts)
    return [{**r, "emitted_batch": batch_id} for r in rows if r["warehouse"] != before[id(r)]]


def reconciled(rows: list[dict[str, Any]], counts: dict[int, int]) -> None:
    """Add ``warehouse`` and ``warehouse_missing`` to metric rows (in place): each window's
    decoded records, summed over its topics, against the warehouse."""
    kafka: dict[int, int] = {}
    for row in rows:
        start = int(row["window_timestamp"].timestamp() * 1000)
        kafka[start] = kafka.get(start, 0) + row["unique"] - row["undecodable"]
    for row in rows:
        start = int(row["window_timestamp"].timestamp() * 1000)
        row["warehouse"] = counts.get(start, 0)
        row["warehouse_missing"] = kafka[start] - row["warehouse"]
