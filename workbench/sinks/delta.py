"""Delta sink: the time-bucketed warehouse layout as a Delta Lake table, compacted.

Each micro-batch is one idempotent Delta append (``txnAppId`` = the query's id, stable
across restarts of its checkpoint; ``txnVersion`` = the batch id): a replayed batch is
skipped by Delta itself and reported as skipped. A new checkpoint is a new query id, so
an edited dagger on a new checkpoint continues the same table. Empty batches write
nothing. Readers see one snapshot at a time (``spark.read.format("delta")``).

With ``compact_every: N`` the job compacts the table's closed hour partitions
(:func:`workbench.warehouse.compaction.compact`) after every ``N``-th batch, into files of
``target_file_size``; ``workbench warehouse compact`` does the same from outside the
job. Jobs with this sink start their Spark session with Delta Lake
(:mod:`workbench.warehouse.delta`), appending without per-file column statistics
(:data:`~workbench.warehouse.delta.APPEND_CONF`); compaction writes them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field, field_validator

from workbench.durations import to_millis
from workbench.sinks.buckets import BucketedConfig
from workbench.sinks.registry import SINKS, SinkContext, Written
from workbench.warehouse.compaction import compact, parse_size
from workbench.warehouse.delta import (
    APPEND_CONF,
    committed_txn,
    latest_version,
    require,
    session_conf,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from workbench.warehouse.compaction import Compaction


class DeltaConfig(BucketedConfig):
    type: Literal["delta"] = "delta"
    compact_every: int = Field(default=0, ge=0)  # batches; 0: never from the job
    compact_older_than: str = "1h"
    target_file_size: str = "128MB"

    @field_validator("compact_older_than")
    @classmethod
    def _duration(cls, value: str) -> str:
        to_millis(value)
        return value

    @field_validator("target_file_size")
    @classmethod
    def _size(cls, value: str) -> str:

        parse_size(value)
        return value

    def session_conf(self) -> dict[str, str]:

        return session_conf() | APPEND_CONF

    def open(self, ctx: SinkContext, index: int) -> DeltaWriter:
        return DeltaWriter(self, ctx)


class DeltaWriter:
    def __init__(self, config: DeltaConfig, ctx: SinkContext):

        require(ctx.spark, config.describe())
        self.config, self.ctx = config, ctx

    def write(self, batch: DataFrame, batch_id: int) -> Written:

        rows = batch.count()
        if rows == 0:
            return Written(0)
        path, app = self.config.path, self.ctx.query_id
        before = latest_version(path)
        (
            self.config.bucketed(batch)
            .write.format("delta")
            .mode("append")
            .partitionBy(*self.config.partition_by)
            .option("txnAppId", app)
            .option("txnVersion", batch_id)
            .save(path)
        )
        if not committed_txn(path, app, batch_id, before):
            return Written(0, skipped=rows)  # a replay: Delta holds this batch already
        if self.config.compact_every and (batch_id + 1) % self.config.compact_every == 0:
            self.compact()
        return Written(rows)

    def compact(self) -> Compaction:
        from datetime import timedelta

        older = timedelta(milliseconds=to_millis(self.config.compact_older_than))
        size = parse_size(self.config.target_file_size)
        return compact(self.ctx.spark, self.config.path, older, size)

    def close(self) -> None:
        pass


SINKS.add("delta", DeltaConfig)
