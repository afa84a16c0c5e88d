"""One row of facts per Kafka record: where it sits, its times, its fingerprints.

Columns: ``topic``, ``partition``, ``offset``, ``publish_ms`` (the Kafka timestamp),
``event_ms`` (the message's event time; null when the record did not decode),
``decoded``, ``md5`` (of the payload bytes), ``bkey`` (the business key, as text),
``window_start`` (of the event time; of the publish time for an undecodable record),
``process_ms`` (when the micro-batch ran) and ``late`` (publish − event time beyond
``late_after``). Records are decoded by the JVM decoder of the dagger path
(:func:`workbench.sources.kafka.decoded_records`): a record it cannot decode, or without
an event time, is what a dagger would send to its dead letters.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.sources.kafka import decoded_records
from workbench.sources.kafka import reader_options as dagger_options

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

    from workbench.quality.spec import QualitySpec, QualityStream
    from workbench.schemas import SchemaRegistry

#: The columns of a facts frame, in order.
COLUMNS = ("topic", "partition", "offset", "publish_ms", "event_ms", "decoded", "md5", "bkey")


def reader_options(stream: QualityStream) -> dict[str, str]:
    """The Kafka source options of a quality stream: committed records only (unless its
    kafka_options say otherwise), and a deleted range skipped, not failing the query (the
    job counts it as missing)."""

    options = dagger_options(stream)
    options.setdefault("kafka.isolation.level", "read_committed")
    options["failOnDataLoss"] = "false"
    return options


def raw_facts(
    spark: SparkSession, stream: QualityStream, spec: QualitySpec, registry: SchemaRegistry
) -> DataFrame:
    """The streaming facts of one stream (without window and batch columns)."""
    from pyspark.sql import functions as F

    raw = spark.readStream.format("kafka").options(**reader_options(stream)).load()
    records = decoded_records(spark, raw, stream, registry)
    decoded = F.col("_decoded.error").isNull()
    message = "_decoded.message"
    event = _millis(F.col(f"{message}.{stream.event_timestamp_field}"), records, message, stream)
    key = (
        F.col(f"{message}.{spec.business_key}").cast("string")
        if spec.business_key
        else F.lit(None).cast("string")
    )
    return records.select(
        "topic",
        "partition",
        "offset",
        F.unix_millis("timestamp").alias("publish_ms"),
        F.when(decoded, event).alias("event_ms"),
        decoded.alias("decoded"),
        F.md5("value").alias("md5"),
        F.when(decoded, key).alias("bkey"),
    )


def _millis(column: Column, records: DataFrame, message: str, stream: QualityStream) -> Column:
    from pyspark.sql import functions as F
    from pyspark.sql.types import TimestampNTZType, TimestampType

    kind = records.select(f"{message}.{stream.event_timestamp_field}").schema.fields[0].dataType
    if isinstance(kind, TimestampType | TimestampNTZType):
        return F.unix_millis(column.cast("timestamp"))
    return column.cast("long")


def windowed(facts: DataFrame, spec: QualitySpec, process_ms: int) -> DataFrame:
    """``facts`` with ``window_start``, ``process_ms`` and ``late`` (one micro-batch)."""
    from pyspark.sql import functions as F

    size = spec.window_ms
    moment = F.coalesce("event_ms", "publish_ms")
    return facts.withColumns(
        {
            "window_start": F.floor(moment / size).cast("long") * size,
            "process_ms": F.lit(process_ms).cast("long"),
            "late": F.coalesce(
                (F.col("publish_ms") - F.col("event_ms")) > spec.late_after_ms, F.lit(False)
            ),
        }
    )
