"""The surge dagger written by hand, for the streaming benchmark to hold the engine against.

Both hand-written pipelines compute what ``surge-pricing.yaml`` computes: CREATED bookings per
S2 level-13 cell, vehicle type and 60 s tumbling window (event time, 10 s watermark), with
the bookings and distinct customers of each, written to Parquet in the engine's layout
(``dt=YYYY-MM-DD/hour=HH``, append mode: final windows only). They differ in how a record
becomes a row and how the cell is computed:

* :func:`python_rows` / :func:`python_s2id`: what a PySpark user writes today, the generated
  Python protobuf class and s2sphere in Python UDFs, either ``pandas`` (``pandas_udf``, Arrow
  batches: what a competent user writes for speed) or ``row`` (plain ``udf``, pickled rows);
  the decoder builds only the six fields the job reads;
* :func:`jvm_rows`: the workbench's JVM decoder UDF and the ``dagger_s2id`` JVM UDF through
  the DataFrame API, no Python in the hot loop; ``once`` marks the decoder nondeterministic so
  Spark cannot copy it into the pushed-down filter and decodes each record once.

Python workers import this module: :func:`ship` adds it to the session's Python files.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.sources.protobuf import JAVA_CLASS, decoded_type, decoder, function_name

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession
    from pyspark.sql.streaming import StreamingQuery

    from workbench.schemas.registry import SchemaRegistry

MESSAGE = "esb.booking.BookingLogMessage"
LEVEL, WINDOW, WATERMARK = 13, "60 seconds", "10 seconds"
#: the fields the surge SQL reads, and their Spark types as the JVM decoder gives them
FIELDS = {
    "status": "string",
    "customer_id": "string",
    "pickup_lat": "double",
    "pickup_long": "double",
    "vehicle_type": "string",
    "event_timestamp": "timestamp",
}
ROW_TYPE = ", ".join(f"{name} {kind}" for name, kind in FIELDS.items())
ENUMS = ("status", "vehicle_type")
S2Function = Callable[["Column", "Column"], "Column"]


def ship(spark: SparkSession) -> None:
    """Make this module importable in the session's Python workers."""
    spark.sparkContext.addPyFile(str(Path(__file__).resolve()))


def kafka(spark: SparkSession, bootstrap: str, topic: str, max_offsets: int) -> DataFrame:
    """The topic from the start, ``max_offsets`` records a micro-batch (as the engine reads)."""
    return (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", str(max_offsets))
        .load()
    )


def surge(rows: DataFrame, s2id: S2Function) -> DataFrame:
    """The surge aggregation over decoded ``rows`` (the columns of :data:`FIELDS`)."""
    from pyspark.sql import functions as F

    return (
        rows.withColumn("rowtime", F.col("event_timestamp"))
        .withWatermark("rowtime", WATERMARK)
        .where(F.col("status") == "CREATED")
        .withColumn("tag_s2id", s2id(F.col("pickup_lat"), F.col("pickup_long")))
        .groupBy(F.window("rowtime", WINDOW), "tag_s2id", F.col("vehicle_type"))
        .agg(
            F.count(F.lit(1)).alias("bookings"),
            F.size(F.collect_set("customer_id")).alias("unique_customers"),
        )
        .select(
            "tag_s2id",
            F.col("vehicle_type").alias("tag_vehicle_type"),
            "bookings",
            "unique_customers",
            F.col("window.end").alias("window_timestamp"),
        )
    )


def to_parquet(frame: DataFrame, path: Path, checkpoint: Path) -> StreamingQuery:
    """Append ``frame`` to ``path`` as the engine's Parquet sink does, once (AvailableNow)."""
    from pyspark.sql import functions as F

    time = F.col("window_timestamp")
    return (
        frame.withColumns(
            {"dt": F.date_format(time, "yyyy-MM-dd"), "hour": F.date_format(time, "HH")}
        )
        .writeStream.format("parquet")
        .option("path", str(path))
        .option("checkpointLocation", str(checkpoint))
        .partitionBy("dt", "hour")
        .outputMode("append")
        .trigger(availableNow=True)
        .start()
    )


# --- (b) Python -------------------------------------------------------------------------


@functools.cache
def _booking() -> tuple[type[Any], dict[str, dict[int, str]]]:
    """(the generated message class, {enum field: {number: name}}), once per worker."""
    from workbench.schemas.registry import default_registry

    registry = default_registry()
    fields = registry.descriptor(MESSAGE).fields_by_name
    names = {f: {v.number: v.name for v in fields[f].enum_type.values} for f in ENUMS}
    return registry.message_class(MESSAGE), names


def _decode(value: bytes | None) -> tuple[Any, ...] | None:
    """The :data:`FIELDS` of one record; None when it does not parse (a dead letter)."""
    from datetime import UTC

    from google.protobuf.message import DecodeError

    cls, names = _booking()
    try:
        m = cls.FromString(value)
    except (DecodeError, TypeError):
        return None
    stamp = m.event_timestamp.ToDatetime(tzinfo=UTC) if m.HasField("event_timestamp") else None
    status, vehicle = names["status"].get(m.status), names["vehicle_type"].get(m.vehicle_type)
    return status, m.customer_id, m.pickup_lat, m.pickup_long, vehicle, stamp


def _cell(lat: float, lng: float) -> str:
    import s2sphere

    cell = s2sphere.CellId.from_lat_lng(s2sphere.LatLng.from_degrees(lat, lng)).parent(LEVEL)
    raw = cell.id()
    return str(raw - (1 << 64) if raw >= 1 << 63 else raw)  # signed, as the JVM S2Id gives it


def python_rows(raw: DataFrame, style: str) -> DataFrame:
    """Kafka records decoded by a Python UDF (``style``: ``pandas`` or ``row``)."""
    from pyspark.sql import functions as F

    decode = F.udf(_decode, ROW_TYPE) if style == "row" else F.pandas_udf(_decode_batch, ROW_TYPE)
    return raw.select(decode(F.col("value")).alias("d")).select("d.*")


def _decode_batch(values):  # pd.Series -> pd.DataFrame; no hints: Spark would read them
    import pandas as pd

    empty = (None,) * len(FIELDS)
    rows = [_decode(v) or empty for v in values]
    frame = pd.DataFrame.from_records(rows, columns=list(FIELDS))
    frame["event_timestamp"] = pd.to_datetime(frame["event_timestamp"], utc=True)
    return frame


def python_s2id(style: str) -> S2Function:
    """s2sphere's level-13 cell id in a Python UDF (``style``: ``pandas`` or ``row``)."""
    from pyspark.sql import functions as F

    if style == "row":
        return F.udf(_cell, "string")
    return F.pandas_udf(_cell_batch, "string")


def _cell_batch(lats, lngs):  # (pd.Series, pd.Series) -> pd.Series
    import pandas as pd

    return pd.Series([_cell(a, b) for a, b in zip(lats, lngs, strict=True)])


# --- (c) JVM ----------------------------------------------------------------------------


def jvm_rows(raw: DataFrame, registry: SchemaRegistry, once: bool = False) -> DataFrame:
    """Kafka records decoded by the workbench's JVM decoder, the valid ones only."""
    from pyspark.sql import functions as F

    spark = raw.sparkSession
    if once:
        decode = _nondeterministic_decoder(spark, registry)
    else:
        decode = decoder(spark, registry, MESSAGE, required_field="event_timestamp")
    decoded = raw.select(decode(F.col("value")).alias("d"))
    return decoded.where(F.col("d.error").isNull()).select(*(f"d.message.{f}" for f in FIELDS))


def _nondeterministic_decoder(spark: SparkSession, registry: SchemaRegistry):
    """The same Java UDF, registered nondeterministic: Spark then neither pushes a filter
    that reads its result below it nor inlines it twice, so each record is decoded once."""
    from pyspark.sql import functions as F

    name = function_name(registry, MESSAGE, "event_timestamp") + "_once"
    if not spark.catalog.functionExists(name):
        jvm, session = spark._jvm, spark._jsparkSession
        udf = getattr(jvm, JAVA_CLASS)(
            bytearray(registry.descriptor_set()), MESSAGE, "event_timestamp", True
        )
        returns = session.parseDataType(decoded_type(registry, MESSAGE).json())
        wrapped = _java_udf(spark, udf, returns).asNondeterministic()
        session.udf().register(name, wrapped)
    return functools.partial(F.call_function, name)


def _java_udf(spark: SparkSession, udf: Any, returns: Any) -> Any:
    """``functions.udf(UDF1, DataType)``, called by reflection: py4j would pick the untyped
    Scala overload ``udf(AnyRef, DataType)``, which Spark refuses."""
    gateway, jvm = spark.sparkContext._gateway, spark._jvm
    find = jvm.java.lang.Class.forName
    types = gateway.new_array(jvm.java.lang.Class, 2)
    types[0] = find("org.apache.spark.sql.api.java.UDF1")
    types[1] = find("org.apache.spark.sql.types.DataType")
    args = gateway.new_array(jvm.java.lang.Object, 2)
    args[0], args[1] = udf, returns
    return find("org.apache.spark.sql.functions").getMethod("udf", types).invoke(None, args)


def jvm_s2id(lat: Column, lng: Column) -> Column:
    from pyspark.sql import functions as F

    return F.call_function("dagger_s2id", lat, lng, F.lit(LEVEL))
