"""Facts to one metric row per topic and window (see docs/quality.md for definitions).

:func:`aggregate` counts over the stored facts of the windows a micro-batch touched (Spark);
:func:`finish` derives the ratios and the score of each row (plain Python), and
:func:`frame` makes the rows a DataFrame for the sinks: ``window_timestamp`` (the window's
start, the point time in InfluxDB), ``tag_topic``, the counts and ``emitted_batch`` (a
Parquet reader keeps the row of the highest one per topic and window:
:func:`latest`).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from workbench.quality.score import completeness, score

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

PERCENTILES = (0.5, 0.95, 0.99)
#: Metric columns, in order (besides window_timestamp, window_end and tag_topic).
COUNTS = (
    "total",
    "unique",
    "expected",
    "missing",
    "duplicates",
    "key_duplicates",
    "late",
    "undecodable",
)
#: Reconciliation columns (null without ``reconcile``): see :mod:`workbench.quality.reconcile`.
WAREHOUSE = ("warehouse", "warehouse_missing")
LATENCIES = tuple(
    f"{name}_p{int(p * 100)}_ms"
    for name in ("publish_latency", "processing_latency")
    for p in PERCENTILES
)


def aggregate(facts: DataFrame, gaps: DataFrame) -> list[dict[str, Any]]:
    """One dict of counts and latencies per (topic, window_start) of ``facts``.

    One Spark job: records are grouped by (topic, partition, offset) first (``n``: how often
    each was read), then by window; distinct payloads and keys are the sizes of their sets
    (no ``count(DISTINCT ...)``, which Spark plans with an Expand of every row). The gaps'
    missing records are a second, small job."""
    from pyspark.sql import functions as F

    window = ["topic", "window_start"]
    kept = ("md5", "bkey", "late", "decoded", "publish_ms", "event_ms", "process_ms")
    records = facts.groupBy(*window, "partition", "offset").agg(
        F.count("*").alias("n"), *(F.first(c).alias(c) for c in kept)
    )
    quantiles = "array(" + ", ".join(str(p) for p in PERCENTILES) + ")"
    found = _by_window(
        records.groupBy(*window).agg(
            F.sum("n").alias("total"),
            F.count("*").alias("unique"),
            F.size(F.collect_set("md5")).alias("payloads"),
            F.count("bkey").alias("keyed"),
            F.size(F.collect_set("bkey")).alias("keys"),
            F.sum(F.col("late").cast("long")).alias("late"),
            F.sum((~F.col("decoded")).cast("long")).alias("undecodable"),
            F.expr(f"percentile(publish_ms - event_ms, {quantiles})").alias("publish_latency"),
            F.expr(f"percentile(process_ms - publish_ms, {quantiles})").alias("processing_latency"),
        )
    )
    lost = gaps.dropDuplicates(["topic", "partition", "offset"]).groupBy(*window)
    for key, row in _by_window(lost.agg(F.sum("missing").alias("missing"))).items():
        if key in found:
            found[key]["missing"] = row["missing"]
    return list(found.values())


def _by_window(frame: DataFrame) -> dict[tuple[str, int], dict[str, Any]]:
    return {(r.topic, r.window_start): r.asDict() for r in frame.collect()}


def finish(raw: dict[str, Any], window_ms: int, batch_id: int) -> dict[str, Any]:
    """The metric row of one aggregated window: counts, ratios, latencies and the score."""
    unique, missing = int(raw["unique"]), int(raw.get("missing") or 0)
    row: dict[str, Any] = {
        "window_timestamp": _time(raw["window_start"]),
        "window_end": _time(raw["window_start"] + window_ms),
        "tag_topic": raw["topic"],
        "total": int(raw["total"]),
        "unique": unique,
        "expected": unique + missing,
        "missing": missing,
        "duplicates": unique - int(raw["payloads"]),
        "key_duplicates": int(raw["keyed"]) - int(raw.get("keys") or 0),
        "late": int(raw["late"] or 0),
        "undecodable": int(raw["undecodable"] or 0),
    }
    row["completeness"] = completeness(unique, row["expected"])
    for name in ("publish_latency", "processing_latency"):
        values = raw.get(name) or [None] * len(PERCENTILES)
        for p, value in zip(PERCENTILES, values, strict=True):
            row[f"{name}_p{int(p * 100)}_ms"] = None if value is None else float(value)
    row["score"] = score(row)
    row["emitted_batch"] = batch_id
    return row


def _time(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, UTC)


#: Every column of a metric row, in order, with its type (what alert rules may name).
FIELDS: tuple[tuple[str, str], ...] = (
    ("window_timestamp", "timestamp"),
    ("window_end", "timestamp"),
    ("tag_topic", "string"),
    *((c, "long") for c in COUNTS),
    ("completeness", "double"),
    *((c, "double") for c in LATENCIES),
    ("score", "double"),
    *((c, "long") for c in WAREHOUSE),
    ("emitted_batch", "long"),
)
COLUMNS = tuple(name for name, _ in FIELDS)


def schema() -> Any:
    """The Spark schema of metric rows (:data:`FIELDS`)."""
    from pyspark.sql import types as T

    kinds = {"timestamp": T.TimestampType, "string": T.StringType}
    kinds |= {"long": T.LongType, "double": T.DoubleType}
    return T.StructType([T.StructField(n, kinds[k]()) for n, k in FIELDS])


def frame(spark: SparkSession, rows: list[dict[str, Any]]) -> DataFrame:
    """Metric rows as a DataFrame of :func:`schema`."""
    names = schema().fieldNames()
    return spark.createDataFrame([tuple(r.get(n) for n in names) for r in rows], schema())


def latest(rows: DataFrame) -> DataFrame:
    """Of metric rows read back from Parquet, the last emission per topic and window."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    order = Window.partitionBy("tag_topic", "window_timestamp").orderBy(F.desc("emitted_batch"))
    return rows.withColumn("_n", F.row_number().over(order)).where("_n = 1").drop("_n")
