"""The time-bucketed warehouse layout the file sinks share: ``dt=YYYY-MM-DD/hour=HH``.

:class:`BucketedConfig` is the base of a sink writing a table partitioned by time
buckets of ``time_column`` (UTC) and any query columns named in ``partition_by``: the
Parquet sink (Spark's file sink) and the Delta sink (a Delta Lake table).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import Field

from workbench.exceptions import SinkError, UnknownNameError
from workbench.sinks.registry import SinkConfig

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame
    from pyspark.sql.types import StructType

#: The partition columns derived from ``time_column``, with their date format.
BUCKETS = {"dt": "yyyy-MM-dd", "hour": "HH"}


class BucketedConfig(SinkConfig):
    path: str
    time_column: str = "window_timestamp"
    partition_by: list[str] = Field(default_factory=lambda: ["dt", "hour"])

    def describe(self) -> str:
        return f"{self.type} {self.path}"

    def target(self) -> str:
        return f"the folder {Path(self.path).expanduser().resolve()}"

    def check(self, schema: StructType) -> None:
        from pyspark.sql.types import DateType, TimestampNTZType, TimestampType

        columns = {f.name: f.dataType for f in schema.fields}
        self.require_column(schema, self.time_column, "time_column", "to bucket by")
        if not isinstance(columns[self.time_column], TimestampType | TimestampNTZType | DateType):
            raise SinkError(
                self.describe(),
                f"time_column '{self.time_column}' is a "
                f"{columns[self.time_column].simpleString()}, not a timestamp",
            )
        unknown = [p for p in self.partition_by if p not in BUCKETS and p not in columns]
        if unknown:
            raise SinkError(
                self.describe(),
                f"partition_by names {', '.join(unknown)}, which is neither a query column "
                f"nor one of {', '.join(BUCKETS)}",
            )

    def bucketed(self, frame: DataFrame) -> DataFrame:
        """``frame`` with the dt/hour columns the layout partitions by."""
        from pyspark.sql import functions as F

        if self.time_column not in frame.columns:
            raise UnknownNameError(f"{self.type} sink time_column", self.time_column, frame.columns)
        time: Column = F.col(self.time_column)
        derived = {
            name: F.date_format(time, fmt)
            for name, fmt in BUCKETS.items()
            if name in self.partition_by and name not in frame.columns
        }
        return frame.withColumns(derived)
