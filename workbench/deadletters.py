"""Dead letters: records that did not decode (or had no event time), kept with their origin.

The Kafka source hands each micro-batch's dead letters out of the plan through a tap per
stream (:mod:`workbench.sources.letters`), so Kafka is scanned once per batch;
:func:`collected` takes them as rows once the batch has been computed. Gathering them
on the driver is bounded by the batch size: set ``max_offsets_per_trigger`` on streams
whose records may all be bad.

Every dead letter carries its stream table, topic, partition, offset, Kafka timestamp,
key, raw bytes and the error. They go to the spec's ``dead_letter`` sink, a dead-letter
type of the sink registry (:meth:`workbench.sinks.registry.SinkRegistry.letters_sink`):
Parquet (:mod:`workbench.sinks.dead_parquet`) or a Kafka topic
(:mod:`workbench.sinks.dead_kafka`). Either way a dead letter is written once.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from workbench.sinks.registry import SINKS

if TYPE_CHECKING:
    from workbench.sources.letters import LetterTap
    from workbench.spec import DaggerSpec


def describe(spec: DaggerSpec) -> str:
    """Where ``spec``'s dead letters go, for people (``parquet PATH``, ``kafka topic T``)."""
    return SINKS.letters_sink(spec).describe()


def collected(taps: Iterable[LetterTap]) -> list[dict[str, Any]]:
    """The dead letters ``taps`` collected since they were last drained, as plain rows (no
    Spark job), the taps left empty. Call it inside foreachBatch, after the batch has been
    computed. A record collected twice (a retried task) is kept once."""
    letters: dict[tuple[str, int, int], dict[str, Any]] = {}
    for tap in taps:
        for item in tap.drain():
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
