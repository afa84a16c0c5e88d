"""Kafka sink configuration: rows as JSON or as a protobuf message, keyed by columns."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from workbench.sinks.registry import SINKS, SinkConfig


class KafkaConfig(SinkConfig):
    type: Literal["kafka"] = "kafka"
    bootstrap_servers: str = "127.0.0.1:9092"
    topic: str
    format: Literal["json", "proto"] = "json"
    message: str | None = Field(None, description="protobuf message name when format is proto")
    key_columns: list[str] = Field(default_factory=list)
    kafka_options: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _proto_needs_message(self) -> KafkaConfig:
        if self.format == "proto" and not self.message:
            raise ValueError("format 'proto' needs 'message' (a protobuf message name)")
        return self


SINKS.add("kafka", KafkaConfig)
