"""Dead letters: records that did not decode (or had no event time), kept with their origin.

The Kafka source hands each micro-batch's dead letters out of the plan as an observed
metric (see :mod:`workbench.sources.kafka`), so Kafka is scanned once per batch;
:func:`observed` reads them back as rows once the batch has been computed. Gathering them
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
import json
from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from workbench.observed import metrics as observed_metrics
from workbench.sinks.registry import SINKS
from workbench.sources.kafka import DECODED

if TYPE_CHECKING:
    from pyspark.sql.streaming import StreamingQuery

    from workbench.spec import DaggerSpec


def describe(spec: DaggerSpec) -> str:
    """Where ``spec``'s dead letters go, for people (``parquet PATH``, ``kafka topic T``)."""
    return SINKS.letters_sink(spec).describe()


def names(tables: Iterable[str]) -> list[str]:
    """The observed metrics holding the dead letters of stream ``tables``."""
    return [f"{DECODED}{table}" for table in tables]


def _metrics(query: StreamingQuery, tables: Iterable[str]) -> list:
    """The ``decoded_<table>`` metrics (JVM rows) of ``query``'s current micro-batch."""
    return observed_metrics(query, names(tables))


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
