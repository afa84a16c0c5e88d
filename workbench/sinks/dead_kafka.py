"""Dead letters to a Kafka topic: the raw bytes as the value, origin and error as
``dlq.*`` headers, one transaction per micro-batch (:mod:`workbench.sinks.transactional`),
so a replayed batch is skipped and a dead letter is written once. Spilled letters (a flood)
stream from Spark's tasks to the driver's producer a task at a time.

The default topic is ``<job>-dead-letters`` on the first stream's cluster.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

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

    def write(self, letters: Letters, batch_id: int) -> int:
        query = self.ctx.query_id
        if self._out.committed(query, batch_id):
            return 0
        return self._out.write((_record(x) for x in letters.rows()), query, batch_id)

    def close(self) -> None:
        self._out.close()


def _record(letter: dict[str, Any]) -> Record:
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


SINKS.add("kafka", DeadKafkaConfig)
