"""Reading exact offset ranges of Kafka partitions with confluent-kafka, by partition
**assignment**: never a consumer group (the ``group.id`` librdkafka insists on is a
throwaway ``workbench-sample-<uuid>``), never a stored or committed offset.

:class:`PartitionReader` finds a stream's partitions (topics or a regex), turns "the last
N", "a time range" (``offsets_for_times``) or "from now on" into ``[start, end)`` ranges
and reads them, reporting :class:`SampleProgress`. :mod:`workbench.lab.sampling` builds
samples on it.
"""

from __future__ import annotations

import functools
import re
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from workbench.exceptions import UnknownNameError, WorkbenchError
from workbench.kafka.admin import LOG
from workbench.moments import epoch_ms

if TYPE_CHECKING:
    from workbench.spec import StreamSpec

#: Records asked for per consume call.
FETCH = 5000


class SampleError(WorkbenchError):
    """A sample that cannot be taken or read again (broker, offsets, options)."""


@dataclass(frozen=True)
class Record:
    """One Kafka record as read; ``timestamp`` in epoch milliseconds (None: the topic has none)."""

    topic: str
    partition: int
    offset: int
    timestamp: int | None
    key: bytes | None
    value: bytes | None


@dataclass(frozen=True)
class SampleProgress:
    """How far a read is: ``total`` is None for a tail (unbounded until ``deadline_s``)."""

    read: int
    total: int | None
    elapsed_s: float
    duration_s: float | None = None

    @property
    def fraction(self) -> float:
        if self.duration_s:
            return min(self.elapsed_s / self.duration_s, 1.0)
        return self.read / self.total if self.total else 1.0


Progress = Callable[[SampleProgress], None]


Partition = tuple[str, int]


class PartitionReader:
    """A confluent-kafka consumer that only ever assigns partitions and never commits."""

    def __init__(self, bootstrap: str, stream: StreamSpec, timeout_s: float = 30.0):
        from confluent_kafka import Consumer, KafkaException

        self.bootstrap, self.stream, self.timeout_s = bootstrap, stream, timeout_s
        config: dict[str, Any] = {
            key.removeprefix("kafka."): value for key, value in stream.kafka_options.items()
        }
        config.update(
            {
                "bootstrap.servers": bootstrap,
                "group.id": f"workbench-sample-{uuid.uuid4().hex}",  # librdkafka needs one
                "enable.auto.commit": False,
                "enable.auto.offset.store": False,
                "enable.partition.eof": True,
                "auto.offset.reset": "error",  # offsets gone (retention): say so, never skip
                "isolation.level": "read_uncommitted",  # as Spark's Kafka source reads
                "fetch.max.bytes": 52_428_800,
                "logger": LOG,
            }
        )
        try:
            self.consumer = Consumer(config)
        except KafkaException as err:
            raise SampleError(f"cannot create a Kafka consumer for {bootstrap}: {err}") from None

    def __enter__(self) -> PartitionReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.consumer.close()  # nothing to commit: auto-commit is off and nothing is stored

    def partitions(self) -> list[Partition]:
        metadata = self._call(lambda: self.consumer.list_topics(timeout=self.timeout_s))
        known = sorted(t for t in metadata.topics if not t.startswith("_"))  # internal topics
        if self.stream.topics:
            names = list(self.stream.topics)
            for name in names:
                if name not in metadata.topics or metadata.topics[name].error is not None:
                    raise UnknownNameError("topic", name, known, where=f"at {self.bootstrap}")
        else:
            pattern = re.compile(str(self.stream.topic_pattern))
            names = [t for t in known if pattern.fullmatch(t)]
            if not names:
                raise SampleError(
                    f"no topic at {self.bootstrap} matches '{pattern.pattern}'. Topics: "
                    f"{', '.join(known) or '(none)'}."
                )
        return [(t, p) for t in names for p in sorted(metadata.topics[t].partitions)]

    def watermarks(self, partitions: list[Partition]) -> dict[Partition, tuple[int, int]]:
        from confluent_kafka import TopicPartition

        def marks(tp: Partition) -> tuple[int, int]:
            return self.consumer.get_watermark_offsets(TopicPartition(*tp), timeout=self.timeout_s)

        return {tp: self._call(functools.partial(marks, tp)) for tp in partitions}

    def last(self, partitions: list[Partition], n: int) -> dict[Partition, tuple[int, int]]:
        if n < 0:
            raise SampleError(f"last={n}: give a number of messages per partition, 0 or more")
        marks = self.watermarks(partitions)
        return {tp: (max(low, high - n), high) for tp, (low, high) in marks.items()}

    def between(
        self, partitions: list[Partition], start: Any, end: Any
    ) -> dict[Partition, tuple[int, int]]:
        marks = self.watermarks(partitions)
        first = self._times(partitions, start, marks, lambda low, high: low)
        stop = self._times(partitions, end, marks, lambda low, high: high)
        return {tp: (first[tp], max(first[tp], stop[tp])) for tp in partitions}

    def _times(self, partitions, moment, marks, default) -> dict[Partition, int]:
        """The first offset at or after ``moment`` per partition (the end when none is)."""
        from confluent_kafka import TopicPartition

        if moment is None:
            return {tp: default(*marks[tp]) for tp in partitions}
        try:
            ms = epoch_ms(moment)
        except ValueError as err:
            raise SampleError(str(err)) from None
        asked = [TopicPartition(t, p, ms) for t, p in partitions]
        found = self._call(lambda: self.consumer.offsets_for_times(asked, timeout=self.timeout_s))
        out = {}
        for tp in found:
            low, high = marks[(tp.topic, tp.partition)]
            out[(tp.topic, tp.partition)] = high if tp.offset < 0 else max(low, tp.offset)
        return out

    def read(
        self, ranges: Mapping[Partition, tuple[int, int]], progress: Progress | None
    ) -> list[Record]:
        """Every record of ``ranges`` (each ``[start, end)``), in partition order."""
        todo = {tp: end for tp, (start, end) in ranges.items() if end > start}
        total = sum(end - start for start, end in ranges.values())
        records = self._consume(ranges, todo, total, None, progress)
        if todo:
            missing = ", ".join(f"{t}[{p}]" for t, p in sorted(todo))
            raise SampleError(
                f"reading the sample's offsets from {self.bootstrap} timed out on {missing} "
                f"after {self.timeout_s:g}s without a record"
            )
        return records

    def tail(
        self, partitions: list[Partition], seconds: float, progress: Progress | None
    ) -> tuple[dict[Partition, tuple[int, int]], list[Record]]:
        """What arrives in the next ``seconds``, from each partition's current end."""
        from confluent_kafka import TopicPartition

        marks = self.watermarks(partitions)
        ranges = {tp: (high, high) for tp, (_, high) in marks.items()}
        todo: dict[Partition, int | None] = dict.fromkeys(partitions)
        records = self._consume(ranges, todo, None, seconds, progress)
        positions = self.consumer.position([TopicPartition(t, p) for t, p in partitions])
        ends = {(tp.topic, tp.partition): tp.offset for tp in positions}
        last = {(r.topic, r.partition): r.offset + 1 for r in records}
        return {
            tp: (start, max(start, ends.get(tp, -1), last.get(tp, start)))
            for tp, (start, _) in ranges.items()
        }, records

    def _consume(self, ranges, todo, total, duration_s, progress) -> list[Record]:
        from confluent_kafka import KafkaError, TopicPartition

        assigned = [TopicPartition(t, p, ranges[(t, p)][0]) for t, p in todo]
        if not assigned:
            return []
        self.consumer.assign(assigned)
        records: list[Record] = []
        t0 = idle_since = time.monotonic()
        while todo:
            now = time.monotonic()
            if duration_s is not None and now - t0 >= duration_s:
                break
            if duration_s is None and now - idle_since > self.timeout_s:
                break
            wait = 0.2 if duration_s is None else max(0.0, min(0.2, duration_s - (now - t0)))
            batch = self.consumer.consume(FETCH, timeout=wait)
            if batch:
                idle_since = time.monotonic()
            for message in batch:
                tp = (message.topic(), message.partition())
                error = message.error()
                if error is not None:
                    if error.code() != KafkaError._PARTITION_EOF:
                        raise SampleError(f"reading {tp[0]}[{tp[1]}] failed: {error.str()}")
                    if duration_s is None:
                        todo.pop(tp, None)  # at the end, which is past the range's end
                    continue
                if tp not in todo:
                    continue
                end: int | None = todo[tp]
                offset = message.offset()
                assert offset is not None  # a record (not an event) has one
                if end is not None and offset >= end:
                    todo.pop(tp)
                    continue
                records.append(_record(message))
                if end is not None and offset + 1 >= end:
                    todo.pop(tp)
            if progress is not None:
                progress(SampleProgress(len(records), total, time.monotonic() - t0, duration_s))
        # fetches interleave partitions in arrival order; a sample's order must not depend on it
        records.sort(key=lambda r: (r.topic, r.partition, r.offset))
        return records

    def _call(self, fn: Callable[[], Any]) -> Any:
        from confluent_kafka import KafkaException

        try:
            return fn()
        except KafkaException as err:
            raise SampleError(f"Kafka at {self.bootstrap}: {err.args[0].str()}") from None


def _record(message: Any) -> Record:
    kind, stamp = message.timestamp()
    return Record(
        message.topic(),
        message.partition(),
        message.offset(),
        stamp if kind else None,  # TIMESTAMP_NOT_AVAILABLE is 0
        message.key(),
        message.value(),
    )
