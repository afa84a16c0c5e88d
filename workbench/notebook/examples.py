"""What the example notebooks and the "new dagger" template call before the dagger itself:
a Kafka broker to talk to, demo events in a topic, and a bundled dagger spec.

    bootstrap = examples.kafka(bootstrap_servers)       # None: the local broker, started
    sent = examples.demo_events(bootstrap, "bookings", topic="booking-log", events=3000)
    spec = examples.bundled("surge-pricing", topic="booking-log")

Demo events are seeded (:class:`workbench.generator.Generator`): the same ``seed``,
``start``, ``rate_per_s`` and ``malformed`` always give the same events, so a test can
compute the expected result on its own.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.exceptions import UnknownNameError

if TYPE_CHECKING:
    from workbench.producer import Published
    from workbench.spec import DaggerSpec

#: Partitions of a topic :func:`demo_events` creates.
PARTITIONS = 3


def kafka(bootstrap_servers: str | None = None) -> str:
    """``bootstrap_servers``, or the local broker's address after starting it if needed
    (as ``workbench dev kafka up`` does)."""
    if bootstrap_servers:
        return bootstrap_servers
    from workbench.infra.kafka import Broker

    broker = Broker()
    broker.start()
    return broker.bootstrap


def default_start() -> datetime:
    """Two hours ago on the hour: recent, and whole minutes."""
    return datetime.now(UTC).replace(minute=0, second=0, microsecond=0) - timedelta(hours=2)


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
) -> Published:
    """Publish ``events`` seeded demo events of ``kind`` to ``topic`` (created with
    :data:`PARTITIONS` partitions if missing), as fast as the broker takes them."""
    from workbench.generator import Generator
    from workbench.infra.kafka import create_topics
    from workbench.producer import publish

    if isinstance(start, str):
        start = datetime.fromisoformat(start)
    create_topics(bootstrap, {topic: PARTITIONS})
    generator = Generator(
        seed=seed,
        start=start or default_start(),
        rate_per_s=rate_per_s,
        malformed_fraction=malformed,
    )
    return publish(bootstrap, kind, topic=topic, count=events, generator=generator, speedup=None)


def bundled_names() -> list[str]:
    return sorted(p.stem for p in _daggers().glob("*.yaml"))


def bundled(name: str, *, topic: str | None = None) -> DaggerSpec:
    """The bundled dagger ``name`` (see :func:`bundled_names`); ``topic`` replaces its
    stream's topics."""
    from workbench.spec import load

    path = _daggers() / f"{name}.yaml"
    if not path.exists():
        raise UnknownNameError("bundled dagger", name, bundled_names())
    spec = load(path)
    if topic is None:
        return spec
    streams = [s.model_copy(update={"topics": [topic]}) for s in spec.streams]
    return spec.model_copy(update={"streams": streams})


def _daggers() -> Path:
    from workbench.paths import PACKAGE_DIR

    return PACKAGE_DIR / "data" / "daggers"
