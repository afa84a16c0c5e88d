"""Dead letters: records that did not decode (or had no event time), kept with their origin.

The Kafka source hands each micro-batch's dead letters out of the plan as an observed
metric (see :mod:`workbench.sources.kafka`), so Kafka is scanned once per batch;
:func:`observed` reads them back as rows once the batch has been computed. Gathering them
on the driver is bounded by the batch size: set ``max_offsets_per_trigger`` on streams
whose records may all be bad.

Every dead letter carries its stream table, topic, partition, offset, Kafka timestamp,
key, raw bytes and the error. They go to Parquet (``<path>/run=<query>/batch=<id>``:
a replayed micro-batch overwrites its own folder) or to a Kafka topic (raw bytes as
the value, origin and error as ``dlq.*`` headers, one transaction per micro-batch, as
in :mod:`workbench.sinks.transactional`). Either way a dead letter is written once.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.paths import subdir
from workbench.sources.kafka import DEAD_LETTER_DDL, DECODED

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming import StreamingQuery

    from workbench.sinks.registry import SinkContext
    from workbench.spec import DaggerSpec, DeadLetterSpec


def default_path(job: str) -> Path:
    return subdir("dead-letters") / job


def describe(spec: DaggerSpec) -> str:
    dead = spec.dead_letter
    if dead.type == "kafka":
        return f"kafka topic {dead.topic or _topic(spec.name)}"
    return f"parquet {dead.path or default_path(spec.name)}"


def observed(spark: SparkSession, query: StreamingQuery, tables: Iterable[str]) -> DataFrame | None:
    """The dead letters of ``query``'s current micro-batch (``None`` if there are none),
    from the ``decoded_<table>`` metrics its plan observed. Call it inside foreachBatch, after
    the batch has been computed. A record observed twice (a retried task) appears once."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import ArrayType

    metrics = query._jsq.streamingQuery().lastExecution().observedMetrics()  # type: ignore[attr-defined]
    texts = []
    for table in tables:
        found = metrics.get(f"{DECODED}{table}")
        if found.isDefined() and found.get().getAs("dead") > 0:
            texts.append((found.get().getAs("letters"),))
    if not texts:
        return None
    letter = spark.createDataFrame([], DEAD_LETTER_DDL).schema
    return (
        spark.createDataFrame(texts, "letters STRING")
        .select(F.explode(F.from_json("letters", ArrayType(letter))).alias("d"))
        .select("d.*")
        .dropDuplicates(["topic", "partition", "offset"])
    )


def _topic(job: str) -> str:
    return f"{job}-dead-letters"


class DeadLetterWriter:
    def __init__(self, spec: DaggerSpec, ctx: SinkContext):
        self.dead: DeadLetterSpec = spec.dead_letter
        self.ctx = ctx
        self.path = Path(self.dead.path) if self.dead.path else default_path(spec.name)
        self._kafka = None
        if self.dead.type == "kafka":
            from workbench.sinks.transactional import TransactionalWriter

            self._kafka = TransactionalWriter(
                self.dead.bootstrap_servers or spec.streams[0].bootstrap_servers,
                self.dead.topic or _topic(spec.name),
                f"dagger-{spec.name}-dead-letters",
            )

    def write(self, batch: DataFrame, batch_id: int) -> int:
        query = self.ctx.query_id
        if self._kafka is not None:
            if self._kafka.committed(query, batch_id):
                return 0
            records = (
                (
                    None if row["key"] is None else bytes(row["key"]),
                    None if row["value"] is None else bytes(row["value"]),
                    [
                        ("dlq.table", row["table"].encode()),
                        ("dlq.topic", row["topic"].encode()),
                        ("dlq.partition", str(row["partition"]).encode()),
                        ("dlq.offset", str(row["offset"]).encode()),
                        ("dlq.kafka_timestamp", row["kafka_timestamp"].isoformat().encode()),
                        ("dlq.error", row["error"].encode()),
                    ],
                )
                for row in batch.toLocalIterator()
            )
            return self._kafka.write(records, query, batch_id)
        batch = batch.persist()
        try:
            count = batch.count()
            if count:
                folder = self.path / f"run={query}" / f"batch={batch_id}"
                batch.write.mode("overwrite").parquet(str(folder))
            return count
        finally:
            batch.unpersist()

    def close(self) -> None:
        if self._kafka is not None:
            self._kafka.close()
