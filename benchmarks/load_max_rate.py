"""The load generator's maximum rate on this machine, against a raw confluent-kafka loop.

``workbench load`` publishes through :func:`workbench.dev.producer.publish` with the seeded
:class:`~workbench.dev.generator.Generator`, which builds each event and encodes it with
``json_format.ParseDict``. Both runs publish the same ``--events`` bookings to a fresh
topic of a throwaway broker with the same producer settings (lz4, linger 50 ms,
idempotence, keyed): (a) the generator unpaced, as ``workbench load`` at an unreachable
rate would; (b) a raw ``Producer.produce`` loop over the payloads the generator made,
encoded beforehand. The ratio a/b says how much of the broker path the generator uses;
the best of ``--repeat`` runs counts.

    .venv/bin/python benchmarks/load_max_rate.py [--events 50000] [--repeat 2]
"""

from __future__ import annotations

import argparse
import time
import uuid
from datetime import UTC, datetime

from booking_preload import KIND, local_broker
from confluent_kafka import Producer

from workbench.dev.generator import Generator
from workbench.dev.producer import publish
from workbench.kafka.admin import LOG, create_topics

SEED = 42
CONF = {
    "linger.ms": 50,
    "compression.type": "lz4",
    "enable.idempotence": True,
    "queue.buffering.max.messages": 500_000,
    "logger": LOG,
}


def generator_rate(bootstrap: str, events: int) -> float:
    topic = f"load-gen-{uuid.uuid4().hex[:6]}"
    create_topics(bootstrap, {topic: 3})
    generator = Generator(seed=SEED, start=datetime.now(UTC))
    t0 = time.perf_counter()
    publish(bootstrap, KIND, topic=topic, count=events, generator=generator, speedup=None)
    return events / (time.perf_counter() - t0)


def raw_rate(bootstrap: str, events: int) -> float:
    payloads = Generator(seed=SEED, start=datetime.now(UTC)).encoded(KIND, events)
    keys = [str(i).encode() for i in range(events)]
    topic = f"load-raw-{uuid.uuid4().hex[:6]}"
    create_topics(bootstrap, {topic: 3})
    producer = Producer({"bootstrap.servers": bootstrap, **CONF})
    t0 = time.perf_counter()
    for key, payload in zip(keys, payloads, strict=True):
        while True:
            try:
                producer.produce(topic, payload, key=key)
                break
            except BufferError:
                producer.poll(0.1)
    assert producer.flush(60) == 0
    return events / (time.perf_counter() - t0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    with local_broker() as broker:
        raw_rate(broker.bootstrap, 5_000)  # warm the broker and the client
        gen = max(generator_rate(broker.bootstrap, args.events) for _ in range(args.repeat))
        raw = max(raw_rate(broker.bootstrap, args.events) for _ in range(args.repeat))
    print(f"events: {args.events:,} bookings, best of {args.repeat}")
    print(f"(a) workbench load's generator, unpaced: {gen:>12,.0f} events/s")
    print(f"(b) raw confluent-kafka produce loop:    {raw:>12,.0f} events/s")
    print(f"a/b: {gen / raw:.2f} (the generator's maximum rate as a share of the raw loop's)")


if __name__ == "__main__":
    main()
