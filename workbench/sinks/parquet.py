"""Parquet sink: the time-bucketed warehouse layout (``dt=YYYY-MM-DD/hour=HH``).

Each micro-batch goes through Spark's own file sink (``FileStreamSink``), so the folder
is exactly once through the sink's ``_spark_metadata`` log: a replayed batch is skipped
(and reported as skipped, not written), and Spark readers see only committed files.
Every checkpoint writing the folder is a generation of it
(:mod:`workbench.sinks.generations`): an edited dagger on a new checkpoint continues the
same table after the log's latest batch instead of being skipped. Use it with final
windows (``emit: final``); with early updates each update of a window is a new row.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal

from workbench.sinks.buckets import BucketedConfig
from workbench.sinks.generations import Generations
from workbench.sinks.registry import SINKS, SinkContext, Written

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


class ParquetConfig(BucketedConfig):
    type: Literal["parquet"] = "parquet"

    def open(self, ctx: SinkContext, index: int) -> ParquetWriter:
        return ParquetWriter(self, ctx)


class ParquetWriter:
    one_pass = True  # Spark's file sink writes the batch in one job; the job counts its rows

    def __init__(self, config: ParquetConfig, ctx: SinkContext):
        jvm = ctx.spark._jvm
        assert jvm is not None, "the Parquet sink needs a classic (not Spark Connect) session"
        utils = jvm.org.apache.spark.api.python.PythonUtils
        self.config, self.ctx = config, ctx
        self._generations = Generations(Path(config.path), config.describe())
        self._sink = jvm.org.apache.spark.sql.execution.streaming.FileStreamSink(
            ctx.spark._jsparkSession,
            config.path,
            jvm.org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat(),
            utils.toSeq(list(config.partition_by)),
            utils.toScalaMap({}),
        )

    def write(self, batch: DataFrame, batch_id: int) -> Written:
        frame = self.config.bucketed(batch)
        place = self._generations.place(self.ctx.query_id, batch_id, str(self.ctx.checkpoint))
        if place.committed:  # a replay: the log holds this batch already
            return Written(0, skipped=None)
        self._sink.addBatch(place.sink_batch, frame._jdf)
        return Written(None)

    def close(self) -> None:
        pass


SINKS.add("parquet", ParquetConfig)
