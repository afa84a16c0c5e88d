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

import base64
import json
import shutil
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.paths import subdir
from workbench.sources.kafka import DECODED

if TYPE_CHECKING:
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


def _metrics(query: StreamingQuery, tables: Iterable[str]) -> list:
    """The ``decoded_<table>`` metrics (JVM rows) of ``query``'s current micro-batch."""
    metrics = query._jsq.streamingQuery().lastExecution().observedMetrics()  # type: ignore[attr-defined]
    found = (metrics.get(f"{DECODED}{table}") for table in tables)
    return [f.get() for f in found if f.isDefined()]


def observed_count(query: StreamingQuery, tables: Iterable[str]) -> int:
    """How many records of ``query``'s current micro-batch did not decode."""
    return sum(int(row.getAs("dead")) for row in _metrics(query, tables))


def observed(query: StreamingQuery, tables: Iterable[str]) -> list[dict[str, Any]]:
    """The dead letters of ``query``'s current micro-batch, from the ``decoded_<table>``
    metrics its plan observed, as plain rows (no Spark job). Call it inside foreachBatch,
    after the batch has been computed. A record observed twice (a retried task) is kept once."""
    letters: dict[tuple[str, int, int], dict[str, Any]] = {}
    for metric in _metrics(query, tables):
        if metric.getAs("dead") > 0:
            for item in json.loads(metric.getAs("letters")):
                letter = _letter(item)
                letters[(letter["topic"], letter["partition"], letter["offset"])] = letter
    return list(letters.values())


def _letter(item: dict[str, Any]) -> dict[str, Any]:
    """One dead letter from Spark's JSON (binary as base64, timestamps ISO-8601)."""
    key, value, stamp = item.get("key"), item.get("value"), item.get("kafka_timestamp")
    return {
        "table": item["table"],
        "topic": item["topic"],
        "partition": int(item["partition"]),
        "offset": int(item["offset"]),
        "kafka_timestamp": None if stamp is None else datetime.fromisoformat(stamp),
        "key": None if key is None else base64.b64decode(key),
        "value": None if value is None else base64.b64decode(value),
        "error": item["error"],
    }


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

    def write(self, letters: list[dict[str, Any]], batch_id: int) -> int:
        """Write one micro-batch's dead letters (:func:`observed`); a replayed batch id
        overwrites its folder or is skipped as a committed transaction."""
        query = self.ctx.query_id
        if self._kafka is not None:
            if self._kafka.committed(query, batch_id):
                return 0
            return self._kafka.write((_kafka_record(x) for x in letters), query, batch_id)
        folder = self.path / f"run={query}" / f"batch={batch_id}"
        shutil.rmtree(folder, ignore_errors=True)
        if letters:
            import pyarrow as pa
            import pyarrow.parquet as pq

            folder.mkdir(parents=True)
            table = pa.Table.from_pylist(letters, schema=_arrow_schema())
            pq.write_table(table, folder / "part-00000.parquet")
        return len(letters)

    def close(self) -> None:
        if self._kafka is not None:
            self._kafka.close()


def _kafka_record(letter: dict[str, Any]) -> tuple[bytes | None, bytes | None, list]:
    """The raw bytes as the value; where they came from and the error as ``dlq.*`` headers."""
    stamp = letter["kafka_timestamp"]
    headers = [
        ("dlq.table", letter["table"]),
        ("dlq.topic", letter["topic"]),
        ("dlq.partition", str(letter["partition"])),
        ("dlq.offset", str(letter["offset"])),
        ("dlq.kafka_timestamp", "" if stamp is None else stamp.isoformat()),
        ("dlq.error", letter["error"]),
    ]
    return letter["key"], letter["value"], [(k, v.encode()) for k, v in headers]


def _arrow_schema() -> Any:
    import pyarrow as pa

    return pa.schema(
        [
            ("table", pa.string()),
            ("topic", pa.string()),
            ("partition", pa.int32()),
            ("offset", pa.int64()),
            ("kafka_timestamp", pa.timestamp("us", tz="UTC")),
            ("key", pa.binary()),
            ("value", pa.binary()),
            ("error", pa.string()),
        ]
    )
