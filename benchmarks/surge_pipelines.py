"""The surge dagger written by hand, for the streaming benchmark to hold the engine against.

Both hand-written pipelines compute what ``surge-pricing.yaml`` computes: CREATED bookings per
S2 level-13 cell, vehicle type and 60 s tumbling window (event time, 10 s watermark), with
the bookings and distinct customers of each, written to Parquet in the engine's layout
(``dt=YYYY-MM-DD/hour=HH``, append mode: final windows only). They differ in how a record
becomes a row and how the cell is computed:

* :func:`python_pipeline`: what a PySpark user writes today, the generated Python protobuf
  class and s2sphere in Python UDFs, in one of three forms (:data:`PYTHON_FORMS`):
  ``pandas`` (``pandas_udf``, Arrow batches: what a competent user writes for speed),
  ``row`` (plain ``udf``, pickled rows), both reading just the six fields the job needs
  from the parsed message, and ``dict`` (plain ``udf`` through ``MessageToDict``, the
  tutorial way, the event time parsed by Spark from its RFC 3339 text);
* :func:`jvm_rows` + :func:`jvm_s2id`: the workbench's JVM decoder UDF and the
  ``dagger_s2id`` JVM UDF through the DataFrame API, no Python in the hot loop.

Python workers import this module: :func:`ship` adds it to the session's Python files.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.sources.protobuf import decoder

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
ROW_TYPE_TEXT_TIME = ROW_TYPE.replace("event_timestamp timestamp", "event_timestamp string")
ENUMS = ("status", "vehicle_type")
S2Function = Callable[["Column", "Column"], "Column"]


def ship(spark: SparkSession) -> None:
    """Make this module importable in the session's Python workers."""
    spark.sparkContext.addPyFile(str(Path(__file__).resolve()))


def kafka(spark: SparkSession, bootstrap: str, topic: str, max_offsets: int) -> DataFrame:
    """The topic from the start, ``max_offsets`` records a micro-batch, with the engine's
    Kafka consumer settings (``FETCH_WAIT``)."""
    from workbench.sources.kafka import FETCH_WAIT

    return (
        spark.readStream.format("kafka")
        .options(**FETCH_WAIT)
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


def _decode_via_dict(value: bytes | None) -> tuple[Any, ...] | None:
    """The :data:`FIELDS` of one record through ``MessageToDict``, as tutorials decode;
    the event time stays RFC 3339 text, for Spark to parse."""
    from google.protobuf import json_format
    from google.protobuf.message import DecodeError

    cls, _ = _booking()
    try:
        event = json_format.MessageToDict(cls.FromString(value), preserving_proto_field_name=True)
    except (DecodeError, TypeError):
        return None
    return tuple(event.get(name) for name in FIELDS)


def _decode_batch(values):  # pd.Series -> pd.DataFrame; no hints: Spark would read them
    import pandas as pd

    empty = (None,) * len(FIELDS)
    rows = [_decode(v) or empty for v in values]
    frame = pd.DataFrame.from_records(rows, columns=list(FIELDS))
    frame["event_timestamp"] = pd.to_datetime(frame["event_timestamp"], utc=True)
    return frame


def _cell_batch(lats, lngs):  # (pd.Series, pd.Series) -> pd.Series
    import pandas as pd

    return pd.Series([_cell(a, b) for a, b in zip(lats, lngs, strict=True)])


#: form -> (the pyspark.sql.functions UDF maker, decoder, its row type, S2 cell function)
PYTHON_FORMS: dict[str, tuple[str, Callable[..., Any], str, Callable[..., Any]]] = {
    "pandas": ("pandas_udf", _decode_batch, ROW_TYPE, _cell_batch),
    "row": ("udf", _decode, ROW_TYPE, _cell),
    "dict": ("udf", _decode_via_dict, ROW_TYPE_TEXT_TIME, _cell),
}


def python_pipeline(raw: DataFrame, form: str) -> DataFrame:
    """The surge aggregation with Python decoding and s2sphere (``form``: of PYTHON_FORMS)."""
    from pyspark.sql import functions as F

    kind, decode, row_type, cell = PYTHON_FORMS[form]
    udf = getattr(F, kind)
    rows = raw.select(udf(decode, row_type)(F.col("value")).alias("d")).select("d.*")
    rows = rows.withColumn("event_timestamp", F.col("event_timestamp").cast("timestamp"))
    return surge(rows, udf(cell, "string"))


# --- (c) JVM ----------------------------------------------------------------------------


def jvm_rows(raw: DataFrame, registry: SchemaRegistry, letters: bool = False) -> DataFrame:
    """Kafka records decoded by the workbench's JVM decoder (the fields the surge reads only,
    one projection of the struct, as its docstring asks), the valid ones only; with
    ``letters``, the undecodable ones collected as the engine collects its dead letters."""
    from pyspark.sql import functions as F

    from workbench.sources.letters import LetterTap

    decode = decoder(
        raw.sparkSession, registry, MESSAGE, required_field="event_timestamp", fields=FIELDS
    )
    if letters:
        records = raw.select(decode(F.col("value")).alias("_decoded"), *raw.columns)
        decoded, d = LetterTap(raw.sparkSession, "booking").keep(records), "_decoded"
    else:
        decoded, d = raw.select(decode(F.col("value")).alias("d")), "d"
        decoded = decoded.where(F.col(f"{d}.error").isNull())
    return decoded.select(*(f"{d}.message.{f}" for f in FIELDS))


def jvm_s2id(lat: Column, lng: Column) -> Column:
    from pyspark.sql import functions as F

    return F.call_function("dagger_s2id", lat, lng, F.lit(LEVEL))
