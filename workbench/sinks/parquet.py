"""Parquet sink: the time-bucketed warehouse layout (``dt=YYYY-MM-DD/hour=HH``).

A *native* sink: Spark's file sink in append mode, exactly once through its
``_spark_metadata`` log (read the folder with Spark, which honours the log, to see
only committed files). Append mode means final windows only, whatever the job's emit
mode: early updates go to InfluxDB, Kafka or the log.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field

from workbench.exceptions import UnknownNameError
from workbench.sinks.registry import SINKS, SinkConfig, SinkContext

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame
    from pyspark.sql.streaming import StreamingQuery

#: The partition columns this sink derives from ``time_column``.
BUCKETS = {"dt": "yyyy-MM-dd", "hour": "HH"}


class ParquetConfig(SinkConfig):
    type: Literal["parquet"] = "parquet"
    native = True
    path: str
    time_column: str = "window_timestamp"
    partition_by: list[str] = Field(default_factory=lambda: ["dt", "hour"])

    def describe(self) -> str:
        return f"parquet {self.path}"

    def bucketed(self, frame: DataFrame) -> DataFrame:
        """``frame`` with the dt/hour columns the layout partitions by."""
        from pyspark.sql import functions as F

        if self.time_column not in frame.columns:
            raise UnknownNameError("parquet sink time_column", self.time_column, frame.columns)
        time: Column = F.col(self.time_column)
        derived = {
            name: F.date_format(time, fmt)
            for name, fmt in BUCKETS.items()
            if name in self.partition_by and name not in frame.columns
        }
        return frame.withColumns(derived)

    def start(self, frame: DataFrame, ctx: SinkContext) -> StreamingQuery:
        name = f"parquet-{ctx.index}"
        return (
            self.bucketed(frame)
            .writeStream.format("parquet")
            .queryName(f"{ctx.job}:{name}")
            .option("path", self.path)
            .option("checkpointLocation", str(ctx.checkpoint / name))
            .partitionBy(*self.partition_by)
            .outputMode("append")
            .trigger(**ctx.trigger)
            .start()
        )


SINKS.add("parquet", ParquetConfig)
