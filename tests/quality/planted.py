"""A producer of bookings with planted faults at known event and publish times.

Every record is a BookingLogMessage with an ``order_number`` (the business key); its
Kafka timestamp is set explicitly: event time + 1 s when on time, + 5 min when late.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from workbench.dev.generator import encode

MESSAGE = "esb.booking.BookingLogMessage"
ON_TIME_MS = 1_000
LATE_MS = 5 * 60_000
#: Two hours ago on a 10-minute boundary: windows in the past, closed by nothing.
T0 = datetime.now(UTC).replace(second=0, microsecond=0) - timedelta(hours=2)
T0 = T0.replace(minute=T0.minute - T0.minute % 10)
T0_MS = int(T0.timestamp() * 1000)
WINDOW_MS = 600_000


def booking(order: str, event_ms: int, status: str = "CREATED") -> bytes:
    stamp = datetime.fromtimestamp(event_ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return encode({"order_number": order, "status": status, "event_timestamp": stamp}, MESSAGE)


@dataclass
class Planter:
    """Sends records to ``topic`` and remembers the next offset of each partition."""

    bootstrap: str
    topic: str
    partitions: int = 2
    sent: int = 0
    offsets: dict[int, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        from confluent_kafka import Producer

        self._producer = Producer({"bootstrap.servers": self.bootstrap, "linger.ms": 5})

    def send(self, value: bytes, publish_ms: int, partition: int | None = None) -> None:
        part = self.sent % self.partitions if partition is None else partition
        self._producer.produce(self.topic, value, partition=part, timestamp=publish_ms)
        self.offsets[part] = self.offsets.get(part, 0) + 1
        self.sent += 1

    def bookings(
        self,
        first: int,
        count: int,
        window: int,
        *,
        every_ms: int = 1_500,
        late: bool = False,
        duplicate_every: int = 0,
        partition: int | None = None,
    ) -> int:
        """``count`` bookings ``first..`` in window ``window`` (each ``duplicate_every``-th
        sent twice, same bytes and timestamp); returns how many duplicates were sent."""
        duplicates = 0
        for i in range(first, first + count):
            event = T0_MS + window * WINDOW_MS + (i - first) * every_ms % WINDOW_MS
            value = booking(f"order-{i}", event)
            publish = event + (LATE_MS if late else ON_TIME_MS)
            self.send(value, publish, partition)
            if duplicate_every and (i - first) % duplicate_every == duplicate_every - 1:
                self.send(value, publish, partition)
                duplicates += 1
        return duplicates

    def garbage(self, count: int, window: int) -> None:
        """``count`` distinct records no message parses (a length past the end)."""
        for i in range(count):
            self.send(b"\x0a\x64" + f"bad-{i}".encode(), T0_MS + window * WINDOW_MS + 60_000)

    def flush(self) -> None:
        assert self._producer.flush(30) == 0


def delete_before(bootstrap: str, topic: str, partition: int, offset: int) -> None:
    """Delete the records of ``partition`` before ``offset`` (its log start moves there)."""
    from confluent_kafka import TopicPartition
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.delete_records([TopicPartition(topic, partition, offset)])
    for future in futures.values():
        future.result(30)
