"""The event-time attribute: ``rowtime`` from a stream's event-timestamp field.

The field may hold a timestamp (protobuf ``google.protobuf.Timestamp``), an ISO-8601
string, or epoch milliseconds (number or digits); it becomes a timestamp, and a copy
named after the rowtime attribute is what windows and watermarks use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.exceptions import UnknownNameError

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame


def event_time(df: DataFrame, field: str) -> Column:
    from pyspark.sql import functions as F
    from pyspark.sql.types import NumericType, StringType, TimestampType

    if field not in df.columns:
        raise UnknownNameError("event-timestamp field", field, df.columns)
    dtype = df.schema[field].dataType
    value = F.col(field)
    if isinstance(dtype, TimestampType):
        return value
    if isinstance(dtype, NumericType):
        return F.timestamp_millis(value.cast("long"))
    if isinstance(dtype, StringType):
        return F.when(value.rlike(r"^-?[0-9]+$"), F.timestamp_millis(value.cast("long"))).otherwise(
            F.try_to_timestamp(value)
        )
    return value.cast("timestamp")


def with_rowtime(df: DataFrame, field: str, rowtime: str = "rowtime") -> DataFrame:
    """``df`` with ``field`` as a timestamp and the rowtime attribute beside it."""
    ts = event_time(df, field)
    return df.withColumns({field: ts, rowtime: ts})  # both computed from the original field
