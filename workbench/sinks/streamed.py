"""A job's lone file sink written by its streaming query directly, the job around each batch.

Spark's ``foreachBatch`` hands Python each micro-batch wrapped as an RDD, which the write
then plans again; a query written into Spark's own file sink skips both. For a job whose
only reader is one writer that writes in one pass into Spark's file sink (a
:class:`StreamedWriter`), the query writes through ``io.daggerworkbench.sink.FileSinkProvider``
(the UDF jar): Spark's ``FileStreamSink`` under the batch id the job gives it, with the job's
side of each micro-batch (sink generations, totals, dead letters) in a :class:`BatchHook`
called on the query's thread before and after the write, before the batch commits.
docs/benchmarks.md (27) has the measurements.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming import DataStreamWriter

#: the sink's data source (``writeStream.format``)
PROVIDER = "io.daggerworkbench.sink.FileSinkProvider"


@runtime_checkable
class StreamedWriter(Protocol):
    """A one-pass writer (``one_pass = True``) the streaming query can write into itself."""

    def stream(self, result: DataFrame, hook: str) -> DataStreamWriter:
        """``result`` (the streaming query's rows) written into this sink, each micro-batch
        placed by the :class:`BatchHook` registered as ``hook``."""
        ...

    def place(self, batch_id: int) -> int | None:
        """The batch id the query's micro-batch ``batch_id`` has in the sink's log; None
        when the log holds it already (a replay: computed, not written)."""
        ...


class BatchHook:
    """The job's side of each micro-batch: ``before(batch_id)`` gives the sink's batch id
    (-1: a replay the sink holds), ``after(batch_id)`` runs once the batch is computed.
    A Py4J callback, called by the JVM on the query's stream thread."""

    def __init__(self, before: Callable[[int], int], after: Callable[[int], None]):
        self._before, self._after = before, after

    def before(self, batch_id: int) -> int:
        return self._before(batch_id)

    def after(self, batch_id: int) -> None:
        self._after(batch_id)

    class Java:
        implements = ["io.daggerworkbench.sink.BatchHook"]


def register(spark: SparkSession, hook: BatchHook) -> str:
    """Register ``hook`` with the JVM; returns its key (the sink's ``hook`` option)."""
    from pyspark.java_gateway import ensure_callback_server_started

    gateway, jvm = spark.sparkContext._gateway, spark._jvm
    assert gateway is not None and jvm is not None, "a classic (not Spark Connect) session"
    ensure_callback_server_started(gateway)
    key = uuid.uuid4().hex
    jvm.io.daggerworkbench.sink.FileSinkProvider.register(key, hook)
    return key


def unregister(spark: SparkSession, key: str) -> None:
    jvm = spark._jvm
    if jvm is not None:
        jvm.io.daggerworkbench.sink.FileSinkProvider.unregister(key)
