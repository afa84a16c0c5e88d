"""``workbench generate``: demo events published to Kafka at a chosen rate.

Events come from :class:`workbench.dev.generator.Generator` (seeded, around Jakarta's
hotspots, with out-of-order, late and malformed events as asked). ``rate_per_s`` is
in event time; ``speedup`` publishes event time faster than the wall clock (10 means
ten minutes of events per wall minute), so windows close quickly in demos.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from workbench.dev.generator import Generator, Record
from workbench.kafka.admin import LOG

#: default topic per event kind (what the bundled specs read)
TOPICS = {
    "bookings": "booking-log",
    "payments": "payment-log",
    "driver_pings": "driver-location",
    "api_logs": "api-log",
}
_KEYS = ("order_number", "driver_id", "request_id")
CHUNK = 500


@dataclass
class Published:
    """What a :func:`publish` call sent."""

    kind: str
    topic: str
    sent: int = 0
    malformed: int = 0
    events: list[dict[str, Any]] = field(default_factory=list)  # the valid ones, if kept
    first_arrival: datetime | None = None
    last_arrival: datetime | None = None


def publish(
    bootstrap_servers: str,
    kind: str,
    *,
    topic: str | None = None,
    count: int | None = None,
    duration_s: float | None = None,
    generator: Generator | None = None,
    speedup: float | None = 1.0,
    keep_events: bool = False,
    stop: Callable[[], bool] = lambda: False,
    on_progress: Callable[[Published], None] | None = None,
    event_time_stamps: bool = False,
) -> Published:
    """Publish ``count`` events (or for ``duration_s`` wall seconds) of ``kind``.

    ``speedup=None`` publishes as fast as possible (for pre-loading benchmarks).
    ``event_time_stamps``: each record's Kafka timestamp is its event's time (a malformed
    record's too), not the producer's clock: a record that does not decode still has
    its event-time window.
    """
    from confluent_kafka import Producer

    if count is None and duration_s is None:
        raise ValueError("give count or duration_s")
    gen = generator or Generator(start=datetime.now(UTC))
    out = Published(kind, topic or TOPICS[kind])
    producer = Producer(
        {
            "bootstrap.servers": bootstrap_servers,
            "linger.ms": 50,
            "compression.type": "lz4",
            "enable.idempotence": True,
            "queue.buffering.max.messages": 500_000,
            "logger": LOG,
        }
    )
    errors: list[str] = []
    wall0, t0 = time.monotonic(), gen.start.timestamp()
    for records in _chunks(gen, kind, count):
        for record in records:
            if speedup:
                ahead = (record.arrival.timestamp() - t0) / speedup - (time.monotonic() - wall0)
                if ahead > 0:
                    producer.poll(0)
                    time.sleep(ahead)
            _send(producer, out.topic, record, errors, event_time_stamps)
            _count(out, record, keep_events)
        if on_progress is not None:
            on_progress(out)
        done = duration_s is not None and time.monotonic() - wall0 >= duration_s
        if done or stop() or errors:
            break
    producer.flush(60)
    if errors:
        from workbench.exceptions import WorkbenchError

        raise WorkbenchError(f"publishing to '{out.topic}' failed: {errors[0]}")
    return out


def _chunks(gen: Generator, kind: str, count: int | None) -> Iterator[list[Record]]:
    left = count
    while left is None or left > 0:
        n = CHUNK if left is None else min(CHUNK, left)
        yield gen.records(kind, n)
        if left is not None:
            left -= n


def _send(
    producer: Any, topic: str, record: Record, errors: list[str], event_time: bool = False
) -> None:
    key = next((str(record.event[k]) for k in _KEYS if record.event.get(k)), None)
    stamp = {"timestamp": _event_ms(record)} if event_time else {}

    def delivered(err: Any, _msg: Any) -> None:
        if err is not None:
            errors.append(str(err))

    while True:
        try:
            producer.produce(topic, record.payload, key=key, on_delivery=delivered, **stamp)
            return
        except BufferError:
            producer.poll(0.1)


def _event_ms(record: Record) -> int:
    """The record's event time in epoch milliseconds (its arrival when it has none)."""
    text = record.event.get("event_timestamp")
    when = datetime.fromisoformat(text.replace("Z", "+00:00")) if text else record.arrival
    return round(when.timestamp() * 1000)


def _count(out: Published, record: Record, keep: bool) -> None:
    out.sent += 1
    out.first_arrival = out.first_arrival or record.arrival
    out.last_arrival = record.arrival
    if record.malformed:
        out.malformed += 1
    elif keep:
        out.events.append(record.event)
