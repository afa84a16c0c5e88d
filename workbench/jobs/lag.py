"""Offsets behind latest, asked of the brokers.

Spark's progress gives each micro-batch's ``latestOffset`` as fetched when it planned the
batch, and without ``maxOffsetsPerTrigger`` the batch reads up to it: Spark's figure is then
always 0, however far behind a job falls. :class:`BrokerLag` asks the stream's brokers for
the partitions' end offsets now and subtracts the offsets the last batch read up to.
Options librdkafka does not know (a Java-only ``sasl.jaas.config``), a topic pattern or an
unreachable broker leave the answer unknown (None): the job then shows Spark's figure.
"""

from __future__ import annotations

import contextlib
import threading
import uuid
from typing import TYPE_CHECKING, Any

from workbench.kafka.admin import LOG

if TYPE_CHECKING:
    from workbench.spec import StreamSpec

TIMEOUT_S = 5.0


class BrokerLag:
    """One consumer per stream (never subscribing or committing), opened when first asked."""

    def __init__(self, streams: list[StreamSpec]):
        self._streams = {t: s for s in streams for t in s.topics or []}
        self._consumers: dict[int, Any] = {}
        self._lock = threading.Lock()  # asked from the heartbeat and the listener threads

    def behind(self, ends: dict[str, dict[str, int]] | None) -> int | None:
        """Records published after ``ends`` ({topic: {partition: offset}}), summed; None
        when a topic's brokers cannot be asked."""
        if not ends:
            return None
        total = 0
        for topic, partitions in ends.items():
            stream = self._streams.get(topic)
            with self._lock:
                latest = self._latest(stream, topic, partitions) if stream else None
            if latest is None:
                return None
            total += sum(max(latest[p] - end, 0) for p, end in partitions.items())
        return total

    def _latest(self, stream: StreamSpec, topic: str, partitions: dict) -> dict[str, int] | None:
        from confluent_kafka import TopicPartition

        try:
            consumer = self._consumer(stream)
            return {
                p: consumer.get_watermark_offsets(
                    TopicPartition(topic, int(p)), timeout=TIMEOUT_S, cached=False
                )[1]
                for p in partitions
            }
        except Exception:  # noqa: BLE001 - unknown is an answer; Spark reports broker trouble
            return None

    def _consumer(self, stream: StreamSpec) -> Any:
        from confluent_kafka import Consumer

        key = id(stream)
        if key not in self._consumers:
            conf: dict[str, Any] = {
                k.removeprefix("kafka."): v for k, v in stream.kafka_options.items()
            }
            conf |= {
                "bootstrap.servers": stream.bootstrap_servers,
                "group.id": f"workbench-lag-{uuid.uuid4().hex[:8]}",  # never joins or commits
                "enable.auto.commit": False,
                "logger": LOG,
            }
            self._consumers[key] = Consumer(conf)
        return self._consumers[key]

    def close(self) -> None:
        with self._lock:
            self._close()

    def _close(self) -> None:
        for consumer in self._consumers.values():
            with contextlib.suppress(Exception):
                consumer.close()
        self._consumers.clear()
