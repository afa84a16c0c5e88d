"""A throwaway Kafka broker pre-loaded with seeded booking events, for the streaming benchmark.

:func:`local_broker` runs a :class:`~workbench.dev.kafka.Broker` on free ports in a
temporary folder and always stops it. :func:`preload` publishes ``count`` BookingLogMessage
records from the seeded :class:`~workbench.dev.generator.Generator` as fast as the producer
takes them. Encoding with ``json_format.ParseDict`` (what ``Generator.records`` does) costs
~100 µs an event, so :class:`FastGenerator` builds the message objects directly (~10 µs);
:func:`check_encoding` proves on a sample that the bytes are the same as ParseDict's.
"""

from __future__ import annotations

import calendar
import contextlib
import shutil
import tempfile
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from workbench.dev.generator import MESSAGES, Generator, Record, encode, malformed_bytes
from workbench.dev.kafka import Broker
from workbench.dev.ports import free_ports
from workbench.dev.producer import Published, publish
from workbench.kafka.admin import create_topics
from workbench.schemas.registry import SchemaRegistry, default_registry

KIND = "bookings"
MESSAGE = MESSAGES[KIND]


class FastGenerator(Generator):
    """The same events as :class:`Generator`, encoded by building the message directly."""

    def __init__(self, *args: Any, registry: SchemaRegistry | None = None, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._class = (registry or default_registry()).message_class(MESSAGE)
        self._seconds: dict[str, int] = {}

    def records(self, kind: str, n: int, registry: Any = None) -> list[Record]:
        assert kind == KIND, f"FastGenerator makes {KIND} only"
        rng = self._malformed.setdefault(kind, self._rng(f"{kind}:malformed"))
        out = []
        for arrival, event in self.timed(kind, n):
            bad = rng.random() < self.malformed_fraction
            payload = malformed_bytes(rng) if bad else self.encode(event)
            out.append(Record(arrival, event, payload, bad))
        return out

    def encode(self, event: dict[str, Any]) -> bytes:
        fields = dict(event)
        stamp = fields.pop("event_timestamp")  # '2024-05-01T08:00:01.250Z'
        message = self._class(**fields)
        message.event_timestamp.seconds = self._epoch(stamp[:19])
        message.event_timestamp.nanos = int(stamp[20:23]) * 1_000_000
        return message.SerializeToString()

    def _epoch(self, second: str) -> int:
        value = self._seconds.get(second)
        if value is None:
            value = calendar.timegm(time.strptime(second, "%Y-%m-%dT%H:%M:%S"))
            self._seconds[second] = value
        return value


def check_encoding(seed: int, start: datetime, sample: int = 500) -> None:
    """Fail unless FastGenerator's bytes equal ``json_format.ParseDict``'s on ``sample`` events."""
    registry = default_registry()
    fast = FastGenerator(seed=seed, start=start, registry=registry)
    for _, event in fast.timed(KIND, sample):
        if fast.encode(event) != encode(event, MESSAGE, registry):
            raise AssertionError(f"FastGenerator encodes differently from ParseDict: {event}")


def preload(
    bootstrap: str,
    topic: str,
    count: int,
    *,
    seed: int,
    start: datetime,
    partitions: int = 4,
    out_of_order_seconds: float = 5.0,
    malformed: float = 0.0,
) -> Published:
    """Create ``topic`` and publish ``count`` bookings (lz4, keyed by order, as ``publish``)."""
    check_encoding(seed, start)
    create_topics(bootstrap, {topic: partitions})
    generator = FastGenerator(
        seed=seed,
        start=start,
        out_of_order_seconds=out_of_order_seconds,
        malformed_fraction=malformed,
    )
    return publish(bootstrap, KIND, topic=topic, count=count, generator=generator, speedup=None)


@contextlib.contextmanager
def local_broker() -> Iterator[Broker]:
    """A fresh broker on free ports in a temporary folder, stopped and removed on exit."""
    state = Path(tempfile.mkdtemp(prefix="bench-kafka-"))
    port, controller = free_ports(2)
    broker = Broker(state, port=port, controller_port=controller)
    try:
        broker.start()
        yield broker
    finally:
        broker.stop()
        shutil.rmtree(state, ignore_errors=True)
