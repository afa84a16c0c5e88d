"""The event-time attribute: ``rowtime`` from a stream's event-timestamp field.

The field may hold a timestamp (protobuf ``google.protobuf.Timestamp``), an ISO-8601
string, or epoch milliseconds (number or digits); it becomes a timestamp, and a copy
named after the rowtime attribute, truncated to milliseconds as Flink's rowtime is, is what
windows, joins and watermarks use. Every mode (job, preview, replay) derives it here, through
``engine.build``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.exceptions import UnknownNameError

if TYPE_CHECKING:
    from datetime import datetime

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


def rowtime_of(df: DataFrame, field: str) -> Column:
    """The rowtime: :func:`event_time` truncated to the millisecond, like Flink's (and so
    Dagger's) ``TIMESTAMP(3)`` rowtime, so interval-join bounds, windows and lateness compare
    the same instants as Dagger does."""
    from pyspark.sql import functions as F

    return F.date_trunc("millisecond", event_time(df, field))


def with_rowtime(df: DataFrame, field: str, rowtime: str = "rowtime") -> DataFrame:
    """``df`` with ``field`` as a timestamp (all its precision) and the rowtime attribute
    (milliseconds, :func:`rowtime_of`) beside it."""
    # both computed from the original field; if they share a name, the rowtime wins
    return df.withColumns({field: event_time(df, field), rowtime: rowtime_of(df, field)})


def not_before(df: DataFrame, field: str, moment: datetime | None) -> DataFrame:
    """``df`` without the rows whose rowtime is before ``moment`` (None: all rows)."""
    if moment is None:
        return df
    from pyspark.sql import functions as F

    return df.where(rowtime_of(df, field) >= F.lit(moment))
