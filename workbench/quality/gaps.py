"""Offsets the log no longer holds: how many records a gap between two consumed offsets lost.

Offsets of a partition are not contiguous in what a consumer reads: a transaction's commit
or abort marker takes an offset (and a ``read_committed`` reader skips aborted records),
and compaction removes records but keeps the offsets of the rest. Those gaps lie at or
above the partition's log start offset and hold no record to expect.

A gap *below* the log start offset is different: retention or ``delete_records`` removed
records the job had not read yet (the consumer fell behind). Those offsets were records,
so they count as **missing**: between a consumed offset ``previous`` and the next consumed
one ``current``, ``missing = max(0, min(current, log_start) - (previous + 1))``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Gap:
    """Offsets ``previous + 1 .. current - 1`` of a partition that the job did not read."""

    topic: str
    partition: int
    previous: int
    current: int

    @property
    def size(self) -> int:
        return self.current - self.previous - 1


def missing(gap: Gap, log_start: int) -> int:
    """Records of ``gap`` lost below ``log_start`` (0 for markers and compaction gaps)."""
    return max(0, min(gap.current, log_start) - (gap.previous + 1))


def lost(gaps: Iterable[Gap], log_start: Callable[[str, int], int]) -> dict[Gap, int]:
    """Each gap with its missing records (``log_start(topic, partition)`` asked once per
    partition)."""
    starts: dict[tuple[str, int], int] = {}
    out: dict[Gap, int] = {}
    for gap in gaps:
        where = (gap.topic, gap.partition)
        if where not in starts:
            starts[where] = log_start(*where)
        out[gap] = missing(gap, starts[where])
    return out


class LogStarts:
    """``log_start(topic, partition)``: the partition's first offset, asked of the brokers."""

    def __init__(self, bootstrap_servers: str, kafka_options: dict[str, str] | None = None):
        from confluent_kafka import Consumer

        conf = {"bootstrap.servers": bootstrap_servers, "group.id": "workbench-quality-gaps"}
        given = {k.removeprefix("kafka."): v for k, v in (kafka_options or {}).items()}
        self._consumer = Consumer({**conf, **given})

    def __call__(self, topic: str, partition: int) -> int:
        from confluent_kafka import TopicPartition

        low, _ = self._consumer.get_watermark_offsets(TopicPartition(topic, partition), 10)
        return int(low)

    def close(self) -> None:
        self._consumer.close()
