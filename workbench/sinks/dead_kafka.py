"""Dead letters to a Kafka topic: the raw bytes as the value, origin and error as
``dlq.*`` headers, one transaction per micro-batch (:mod:`workbench.sinks.transactional`),
so a replayed batch is skipped. A letter whose record an earlier run of the job lettered
already (an edit, a rollback or a failover reads records again on a new checkpoint) is not
written again: the writer reads the job's letter index (:mod:`workbench.sinks.lettered`)
from the topic's ``dlq.*`` headers when it opens (``read_committed``; letters of other
jobs, by ``dlq.job``, do not count), so a dead letter is written once per (topic,
partition, offset). Spilled letters (a flood) stream from Spark's tasks to the driver's
producer a task at a time.

The default topic is ``<job>-dead-letters`` on the first stream's cluster.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from workbench.exceptions import SinkError
from workbench.kafka.admin import LOG
from workbench.sinks.lettered import Lettered
from workbench.sinks.registry import SINKS, LetterSinkConfig, SinkContext
from workbench.sinks.transactional import TransactionalWriter

if TYPE_CHECKING:
    from workbench.sinks.transactional import Record
    from workbench.spec import DaggerSpec, DeadLetterSpec
    from workbench.streaming.deadletters import Letters


class DeadKafkaConfig(LetterSinkConfig):
    type: Literal["kafka"] = "kafka"
    topic: str
    bootstrap_servers: str

    @classmethod
    def for_job(cls, dead: DeadLetterSpec, spec: DaggerSpec) -> DeadKafkaConfig:
        return cls(
            topic=dead.topic or f"{spec.name}-dead-letters",
            bootstrap_servers=dead.bootstrap_servers or spec.streams[0].bootstrap_servers,
        )

    def describe(self) -> str:
        return f"kafka topic {self.topic}"

    def open_letters(self, ctx: SinkContext) -> KafkaLetters:
        return KafkaLetters(self, ctx)


class KafkaLetters:
    def __init__(self, config: DeadKafkaConfig, ctx: SinkContext):

        self.ctx = ctx
        self._out = TransactionalWriter(
            config.bootstrap_servers, config.topic, f"dagger-{ctx.job}-dead-letters"
        )
        #: the letters the topic holds of this job (read once the topic surely exists)
        self.lettered = lettered_in(config.bootstrap_servers, config.topic, ctx.job)

    def write(self, letters: Letters, batch_id: int) -> int:
        query = self.ctx.query_id
        if self._out.committed(query, batch_id):
            return 0
        written: list[dict[str, Any]] = []

        def fresh() -> Iterator[Record]:
            for letter in self.lettered.fresh(letters.rows()):
                written.append(letter)
                yield _record(letter, self.ctx.job)

        count = self._out.write(fresh(), query, batch_id)
        for letter in written:  # committed: the index holds what the topic holds
            self.lettered.add(letter)
        return count

    def close(self) -> None:
        self._out.close()


def _record(letter: dict[str, Any], job: str) -> Record:
    """The raw bytes as the value; where they came from and the error as ``dlq.*`` headers."""
    stamp = letter["kafka_timestamp"]
    headers = [
        ("dlq.job", job),
        ("dlq.table", letter["table"]),
        ("dlq.topic", letter["topic"]),
        ("dlq.partition", str(letter["partition"])),
        ("dlq.offset", str(letter["offset"])),
        ("dlq.kafka_timestamp", "" if stamp is None else stamp.isoformat()),
        ("dlq.error", letter["error"]),
    ]
    return letter["key"], letter["value"], [(k, v.encode()) for k, v in headers]


def lettered_in(bootstrap_servers: str, topic: str, job: str) -> Lettered:
    """The letters of ``job`` that ``topic`` holds (committed), from their ``dlq.*`` headers;
    letters without ``dlq.job`` (written before it was) count as the job's."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, TopicPartition

    lettered = Lettered()
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap_servers,
            "group.id": f"dagger-{job}-letter-index",
            "isolation.level": "read_committed",
            "enable.auto.commit": False,
            "enable.partition.eof": True,
            "logger": LOG,
        }
    )
    try:
        partitions = consumer.list_topics(topic, timeout=30).topics[topic].partitions
        pending = set()
        for p in partitions:
            low, high = consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=30)
            if high > low:
                pending.add(p)
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in pending])
        while pending:
            msg = consumer.poll(30.0)
            if msg is None:  # never guess: a letter missed would be written twice
                raise SinkError(f"kafka topic {topic}", "no answer reading its dead letters")
            error = msg.error()
            if error is not None:
                if error.code() == KafkaError._PARTITION_EOF:
                    pending.discard(msg.partition())
                    continue
                raise SinkError(f"kafka topic {topic}", str(error))
            pairs: list[tuple[str, Any]] = list(msg.headers() or [])  # type: ignore[arg-type]
            headers = {k: _text(v) for k, v in pairs}
            if "dlq.offset" in headers and headers.get("dlq.job", job) == job:
                lettered.add(_place(headers))
    finally:
        consumer.close()
    return lettered


def _place(headers: dict[str, str]) -> dict[str, Any]:
    stamp = headers.get("dlq.kafka_timestamp")
    return {
        "topic": headers["dlq.topic"],
        "partition": int(headers["dlq.partition"]),
        "offset": int(headers["dlq.offset"]),
        "kafka_timestamp": datetime.fromisoformat(stamp) if stamp else None,
    }


SINKS.add("kafka", DeadKafkaConfig)


def _text(value: str | bytes | None) -> str:
    return value.decode() if isinstance(value, bytes) else (value or "")
