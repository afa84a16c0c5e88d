"""Kafka sink: rows as JSON or as a protobuf message, keyed by columns, exactly once.

Each micro-batch is one Kafka transaction that also records the batch in a commit
topic (:mod:`workbench.sinks.transactional`), so a replayed batch is skipped and
``read_committed`` consumers never see a row twice. The key is the key columns'
values joined by ``|`` (no key when ``key_columns`` is empty). Timestamps are
ISO-8601 UTC in JSON; in protobuf they fill ``google.protobuf.Timestamp`` fields.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import date, datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, model_validator

from workbench.exceptions import SinkError
from workbench.sinks.registry import SINKS, SinkConfig, SinkContext, Written
from workbench.sinks.transactional import TransactionalWriter

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.types import StructType


class KafkaConfig(SinkConfig):
    type: Literal["kafka"] = "kafka"
    bootstrap_servers: str = "127.0.0.1:9092"
    topic: str
    format: Literal["json", "proto"] = "json"
    message: str | None = Field(None, description="protobuf message name when format is proto")
    key_columns: list[str] = Field(default_factory=list)
    partitions: int = Field(1, gt=0, description="partitions of the topic if it is created")
    kafka_options: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _proto_needs_message(self) -> KafkaConfig:
        if self.format == "proto" and not self.message:
            raise ValueError("format 'proto' needs 'message' (a protobuf message name)")
        return self

    def describe(self) -> str:
        return f"kafka {self.topic} ({self.format})"

    def target(self) -> str:
        return f"the Kafka topic '{self.topic}' at {self.bootstrap_servers}"

    def check(self, schema: StructType) -> None:
        columns = [f.name for f in schema.fields]
        missing = [c for c in self.key_columns if c not in columns]
        if missing:
            raise SinkError(
                self.describe(),
                f"key_columns {', '.join(missing)} are not columns of the query. "
                f"Columns: {', '.join(columns)}",
            )

    def open(self, ctx: SinkContext, index: int) -> KafkaWriter:
        return KafkaWriter(self, ctx, index)

    def with_bootstrap(self, servers: str) -> KafkaConfig:
        return self.model_copy(update={"bootstrap_servers": servers})


class KafkaWriter:
    def __init__(self, config: KafkaConfig, ctx: SinkContext, index: int):

        self.config, self.ctx = config, ctx
        self._encode = _proto_encoder(config, ctx) if config.format == "proto" else _json
        self._out = TransactionalWriter(
            config.bootstrap_servers,
            config.topic,
            f"dagger-{ctx.job}-sink-{index}",
            config.kafka_options,
            partitions=config.partitions,
        )

    def write(self, batch: DataFrame, batch_id: int) -> Written:
        query = self.ctx.query_id
        if self._out.committed(query, batch_id):  # a replay: its transaction committed
            return Written(0, skipped=batch.count())
        return Written(self._out.write(self._records(batch), query, batch_id))

    def _records(self, batch: DataFrame) -> Iterator[tuple[bytes | None, bytes, list]]:
        missing = [c for c in self.config.key_columns if c not in batch.columns]
        if missing:
            raise SinkError(
                self.config.describe(),
                f"key columns {missing} are not in the result (columns: {batch.columns})",
            )
        for row in batch.toLocalIterator():
            data = row.asDict(recursive=True)
            key = "|".join(str(data[c]) for c in self.config.key_columns)
            yield (key.encode() if self.config.key_columns else None), self._encode(data), []

    def close(self) -> None:
        self._out.close()


def plain(value: Any) -> Any:
    """A row value as JSON: timestamps ISO-8601 UTC, decimals as numbers."""
    if isinstance(value, datetime):
        text = value.isoformat(timespec="milliseconds")
        return text.replace("+00:00", "Z") if value.tzinfo else text + "Z"
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, bytes | bytearray):
        import base64

        return base64.b64encode(value).decode()
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def _json(data: dict[str, Any]) -> bytes:
    return json.dumps(plain(data), separators=(",", ":")).encode()


def _proto_encoder(config: KafkaConfig, ctx: SinkContext):
    from google.protobuf import json_format

    cls = ctx.registry.message_class(str(config.message))

    def encode(data: dict[str, Any]) -> bytes:
        values = {k: v for k, v in plain(data).items() if v is not None}
        try:
            return json_format.ParseDict(values, cls()).SerializeToString()
        except json_format.ParseError as err:
            fields = [f.name for f in cls.DESCRIPTOR.fields]
            raise SinkError(
                config.describe(),
                f"a row does not fit {cls.DESCRIPTOR.full_name}: {err}. Its fields: {fields}; "
                "name the SQL's columns after them",
            ) from None

    return encode


SINKS.add("kafka", KafkaConfig)
