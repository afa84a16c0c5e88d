"""What the example notebooks and the "new dagger" template call before the dagger itself:
a Kafka broker to talk to, demo events in a topic, and a bundled dagger spec.

    bootstrap = examples.kafka(bootstrap_servers)       # None: the local broker, started
    sent = examples.demo_events(bootstrap, "bookings", topic="example-surge-pricing",
                                events=3000)
    spec = examples.bundled("surge-pricing", topic="example-surge-pricing")
    wb.sample("booking", offsets=sent.offsets)          # exactly what was published

Demo events are seeded (:class:`workbench.dev.generator.Generator`): the same ``seed``,
``start``, ``rate_per_s`` and ``malformed`` always give the same events, so a test can
compute the expected result on its own. :attr:`DemoEvents.offsets` are the offsets they
took, so a notebook samples exactly them, never other events of the same topic (another
run's, or ``workbench demo``'s from another time).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.dev.kafka import Broker
from workbench.exceptions import UnknownNameError
from workbench.kafka.admin import LOG, create_topics
from workbench.spec import load, parse

if TYPE_CHECKING:
    from workbench.dev.producer import Published
    from workbench.spec import DaggerSpec

#: Partitions of a topic :func:`demo_events` creates.
PARTITIONS = 3


def kafka(bootstrap_servers: str | None = None) -> str:
    """``bootstrap_servers``, or the local broker's address after starting it if needed
    (as ``workbench dev kafka up`` does)."""
    if bootstrap_servers:
        return bootstrap_servers

    broker = Broker()
    broker.start()
    return broker.bootstrap


def default_start() -> datetime:
    """Two hours ago on the hour: recent, and whole minutes."""
    return datetime.now(UTC).replace(minute=0, second=0, microsecond=0) - timedelta(hours=2)


@dataclass(frozen=True)
class DemoEvents:
    """What :func:`demo_events` published, and the offsets it took."""

    published: Published
    offsets: dict[str, dict[int, tuple[int, int]]]  # {topic: {partition: (start, end)}}

    @property
    def sent(self) -> int:
        return self.published.sent

    def __str__(self) -> str:
        parts = self.offsets[self.published.topic]
        ranges = ", ".join(f"[{p}] {a:,}-{b:,}" for p, (a, b) in sorted(parts.items()))
        return f"{self.sent:,} {self.published.kind} to {self.published.topic}: offsets {ranges}"


def demo_events(
    bootstrap: str,
    kind: str,
    *,
    topic: str,
    events: int,
    seed: int = 7,
    start: str | datetime | None = None,
    rate_per_s: float = 20.0,
    malformed: float = 0.0,
) -> DemoEvents:
    """Publish ``events`` seeded demo events of ``kind`` to ``topic`` (created with
    :data:`PARTITIONS` partitions if missing), as fast as the broker takes them. The
    offsets are exact when nothing else writes to ``topic`` meanwhile."""
    from workbench.dev.generator import Generator
    from workbench.dev.producer import publish

    if isinstance(start, str):
        start = datetime.fromisoformat(start)
    create_topics(bootstrap, {topic: PARTITIONS})
    generator = Generator(
        seed=seed,
        start=start or default_start(),
        rate_per_s=rate_per_s,
        malformed_fraction=malformed,
    )
    before = end_offsets(bootstrap, topic)
    sent = publish(bootstrap, kind, topic=topic, count=events, generator=generator, speedup=None)
    after = end_offsets(bootstrap, topic)
    ranges = {p: (before.get(p, 0), end) for p, end in after.items()}
    return DemoEvents(sent, {topic: ranges})


def end_offsets(bootstrap: str, topic: str, timeout_s: float = 30.0) -> dict[int, int]:
    """The end offset of every partition of ``topic``. A topic created a moment ago may
    answer "not leader" for a while after its leaders show in the metadata: retried."""
    from confluent_kafka import Consumer, KafkaException, TopicPartition

    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "workbench-offsets", "logger": LOG}
    )
    deadline = time.monotonic() + timeout_s
    try:
        partitions = consumer.list_topics(topic, timeout=timeout_s).topics[topic].partitions
        while True:
            try:
                return {
                    p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=timeout_s)[
                        1
                    ]
                    for p in sorted(partitions)
                }
            except KafkaException as err:
                if not _settling(err.args[0]) or time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
    finally:
        consumer.close()


def _settling(error: Any) -> bool:
    from confluent_kafka import KafkaError

    codes = (KafkaError.NOT_LEADER_FOR_PARTITION, KafkaError.LEADER_NOT_AVAILABLE,
             KafkaError.UNKNOWN_TOPIC_OR_PART)  # fmt: skip
    return bool(error.retriable()) or error.code() in codes


def bundled_names() -> list[str]:
    return sorted(p.stem for p in _daggers().glob("*.yaml"))


def bundled(name: str, *, topic: str | None = None, sinks: list[dict] | None = None) -> DaggerSpec:
    """The bundled dagger ``name`` (see :func:`bundled_names`); ``topic`` replaces its
    stream's topics, ``sinks`` (sink dicts, as in a spec) its sinks."""

    path = _daggers() / f"{name}.yaml"
    if not path.exists():
        raise UnknownNameError("bundled dagger", name, bundled_names())
    spec = load(path)
    if topic is not None:
        streams = [s.model_copy(update={"topics": [topic]}) for s in spec.streams]
        spec = spec.model_copy(update={"streams": streams})
    if sinks is None:
        return spec
    data = spec.model_dump(mode="json", exclude_defaults=True) | {"sinks": sinks}
    return parse(data, f"{path.name} with the sinks given")


def _daggers() -> Path:
    from workbench.paths import PACKAGE_DIR

    return PACKAGE_DIR / "data" / "daggers"
