"""Parquet sink: the time-bucketed warehouse layout (``dt=YYYY-MM-DD/hour=HH``).

Each micro-batch goes through Spark's own file sink (``FileStreamSink``), so the folder
is exactly once through the sink's ``_spark_metadata`` log: a replayed batch is skipped
(and reported as skipped, not written), and Spark readers see only committed files.
Readers other than Spark (pyarrow, pandas) see the same: a batch's files are staged
under a hidden name and published once the log holds them, what a killed batch left is
dropped before the next one, and the folder keeps a schema file that carries columns an
edit added (:mod:`workbench.sinks.staging`).
Every checkpoint writing the folder is a generation of it
(:mod:`workbench.sinks.generations`): an edited dagger on a new checkpoint continues the
same table after the log's latest batch instead of being skipped. Use it with final
windows (``emit: final``); with early updates each update of a window is a new row.
"""

from __future__ import annotations

import contextlib
import functools
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from workbench.sinks import staging
from workbench.sinks.buckets import BucketedConfig
from workbench.sinks.generations import Generations
from workbench.sinks.registry import SINKS, SinkContext, Written
from workbench.sinks.streamed import PROVIDER

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.streaming import DataStreamWriter


class ParquetConfig(BucketedConfig):
    type: Literal["parquet"] = "parquet"

    def open(self, ctx: SinkContext, index: int) -> ParquetWriter:
        return ParquetWriter(self, ctx)


class ParquetWriter:
    one_pass = True  # Spark's file sink writes the batch in one job; the job counts its rows

    def __init__(self, config: ParquetConfig, ctx: SinkContext):
        assert ctx.spark._jvm is not None, "the Parquet sink needs a classic Spark session"
        self.config, self.ctx = config, ctx
        self._generations = Generations(Path(config.path), config.describe())
        # every file sink of the session (this one's streamed query clones it) stages files
        ctx.spark.conf.set(staging.PROTOCOL_CONF, staging.PROTOCOL)
        self._settled = False  # what a killed run left is set aside at the first batch

    @functools.cached_property
    def _sink(self) -> Any:
        """Spark's file sink of the folder, for :meth:`write` (a streamed query has its own)."""
        jvm: Any = self.ctx.spark._jvm
        utils = jvm.org.apache.spark.api.python.PythonUtils
        return jvm.org.apache.spark.sql.execution.streaming.FileStreamSink(
            self.ctx.spark._jsparkSession,
            self.config.path,
            jvm.org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat(),
            utils.toSeq(list(self.config.partition_by)),
            utils.toScalaMap({}),
        )

    def place(self, batch_id: int) -> int | None:
        """The batch id the query's micro-batch ``batch_id`` has in the folder's log; None
        for a replay the log holds already. What the batches before it left in the folder
        is settled first (:func:`workbench.sinks.staging.settle`)."""
        staging.settle(Path(self.config.path), orphans=not self._settled)
        self._settled = True
        place = self._generations.place(self.ctx.query_id, batch_id, str(self.ctx.checkpoint))
        return None if place.committed else place.sink_batch

    def write(self, batch: DataFrame, batch_id: int) -> Written:
        frame = self.config.bucketed(batch)
        sink_batch = self.place(batch_id)
        if sink_batch is None:  # a replay: the log holds this batch already
            return Written(0, skipped=None)
        self._sink.addBatch(sink_batch, frame._jdf)
        return Written(None)

    def stream(self, result: DataFrame, hook: str) -> DataStreamWriter:
        """The job's lone writer: its query writes the layout into the folder itself
        (:mod:`workbench.sinks.streamed`), each batch placed by :meth:`place`."""
        return (
            self.config.bucketed(result)
            .writeStream.format(PROVIDER)
            .option("path", self.config.path)
            .option("hook", hook)
            .partitionBy(*self.config.partition_by)
        )

    def close(self) -> None:
        # the last batch's schema; a failure here is met again before the next batch
        with contextlib.suppress(OSError):
            staging.settle(Path(self.config.path))


SINKS.add("parquet", ParquetConfig)
