"""Dead letters: records that did not decode (or had no event time), kept with their origin.

The Kafka source hands each micro-batch's dead letters out of the plan through a tap per
stream (:mod:`workbench.sources.letters`), so Kafka is scanned once per batch;
:func:`collected` takes them once the batch has been computed: the letters the taps held
whole, as plain rows, and the ones they spilled (past the taps' memory budget: a flood of
undecodable records) as a Spark DataFrame that reads them again from Kafka. A writer
iterates them (:meth:`Letters.rows`, in bounded memory) or writes the DataFrame in parallel.

Every dead letter carries its stream table, topic, partition, offset, Kafka timestamp,
key, raw bytes and the error. They go to the spec's ``dead_letter`` sink, a dead-letter
type of the sink registry (:meth:`workbench.sinks.registry.SinkRegistry.letters_sink`):
Parquet (:mod:`workbench.sinks.dead_parquet`) or a Kafka topic
(:mod:`workbench.sinks.dead_kafka`). Either way a dead letter is written once.
"""

from __future__ import annotations

import base64
import functools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from workbench.sinks.registry import SINKS

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from workbench.sources.letters import LetterTap
    from workbench.spec import DaggerSpec

#: A dead letter's fields, in order (a held letter's keys, a spilled one's columns).
COLUMNS = ("table", "topic", "partition", "offset", "kafka_timestamp", "key", "value", "error")


def describe(spec: DaggerSpec) -> str:
    """Where ``spec``'s dead letters go, for people (``parquet PATH``, ``kafka topic T``)."""
    return SINKS.letters_sink(spec).describe()


@dataclass(frozen=True)
class Letters:
    """One micro-batch's dead letters: ``held``, plain rows in memory, and ``spilled``, a
    batch DataFrame of :data:`COLUMNS` reading the rest again from Kafka (None: none)."""

    held: list[dict[str, Any]]
    spilled: DataFrame | None = None
    #: how many the taps spilled (a retried task's letters may be counted twice)
    spilled_count: int = 0

    def __bool__(self) -> bool:
        return bool(self.held) or self.spilled is not None

    @property
    def size(self) -> int:
        """How many letters (no Spark job: the spilled ones as the taps counted them)."""
        return len(self.held) + self.spilled_count

    def rows(self) -> Iterator[dict[str, Any]]:
        """Every letter as a plain row: the held ones, then the spilled ones, streamed a Spark
        partition at a time (so at most ~50,000 records in memory)."""
        yield from self.held
        if self.spilled is not None:
            for row in self.spilled.toLocalIterator():
                yield _spilled_row(row.asDict())

    @functools.cached_property
    def exact_count(self) -> int:
        """How many letters, exactly (a Spark job reading the spilled ones again, if any)."""
        return len(self.held) + (0 if self.spilled is None else self.spilled.count())


def collected(taps: Iterable[LetterTap]) -> Letters:
    """The dead letters ``taps`` collected since they were last drained (no Spark job), the
    taps left empty. Call it inside foreachBatch, after the batch has been computed. A record
    collected twice (a retried task) is kept once."""
    letters: dict[tuple[str, str, int, int], dict[str, Any]] = {}
    rereads: list[DataFrame] = []
    spilled_count = 0
    for tap in taps:
        drained = tap.drain()
        for item in drained.held:
            letter = _letter(item)
            if not any(span.holds(*_place(letter)) for span in drained.spilled):
                letters[(letter["table"], *_place(letter))] = letter  # else read again
        if drained.spilled:
            assert tap.reread is not None, f"stream {tap.table}'s tap cannot read letters again"
            rereads.append(tap.reread(drained.spilled))
            spilled_count += sum(span.count for span in drained.spilled)
    spilled = functools.reduce(lambda a, b: a.unionByName(b), rereads) if rereads else None
    return Letters(list(letters.values()), spilled, spilled_count)


def discard(taps: Iterable[LetterTap]) -> None:
    """Empty ``taps`` (what an attempt of a batch that failed left in them)."""
    for tap in taps:
        tap.drain()


def _place(letter: dict[str, Any]) -> tuple[str, int, int]:
    return letter["topic"], letter["partition"], letter["offset"]


def _spilled_row(row: dict[str, Any]) -> dict[str, Any]:
    """A letter read again by Spark: timestamps in UTC (PySpark gives local naive ones),
    binary as bytes."""
    stamp, key, value = row["kafka_timestamp"], row["key"], row["value"]
    return row | {
        "kafka_timestamp": None if stamp is None else stamp.astimezone(UTC),
        "key": None if key is None else bytes(key),
        "value": None if value is None else bytes(value),
    }


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
