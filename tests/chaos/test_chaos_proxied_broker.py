"""A real broker advertising a fault proxy's port: clients bootstrapped at the broker's own
port still talk through the proxy, and its latency and partitions reach them."""

from __future__ import annotations

import time
import uuid

import pytest
from confluent_kafka import KafkaException, Producer

from workbench.kafka.admin import create_topics


def produce_one(bootstrap: str, topic: str, timeout_ms: int = 10000) -> float:
    """Seconds one acknowledged produce takes (the connection is set up first)."""
    producer = Producer(
        {"bootstrap.servers": bootstrap, "linger.ms": 0, "message.timeout.ms": timeout_ms}
    )
    producer.list_topics(topic, 10)
    producer.produce(topic, b"warm")
    producer.flush(15)
    errors = []
    t0 = time.monotonic()
    producer.produce(topic, b"x", on_delivery=lambda err, _m: err and errors.append(err))
    left = producer.flush(timeout_ms / 1000 + 5)
    if errors or left:
        raise KafkaException(errors[0] if errors else "not delivered")
    return time.monotonic() - t0


def test_clients_reach_the_broker_through_the_proxy(chaos_broker):
    broker, proxy = chaos_broker
    topic = f"chaos-{uuid.uuid4().hex[:8]}"
    create_topics(broker.bootstrap, {topic: 1})
    before = proxy.stats.up
    assert produce_one(broker.bootstrap, topic) < 0.5  # bootstrapped at the real port
    assert proxy.stats.up > before, "metadata sent the client to the proxy's port"
    proxy.set(latency_ms=200)
    assert produce_one(broker.bootstrap, topic) >= 0.4


def test_a_blackhole_partition_times_produces_out(chaos_broker):
    broker, proxy = chaos_broker
    topic = f"chaos-{uuid.uuid4().hex[:8]}"
    create_topics(broker.bootstrap, {topic: 1})
    produce_one(broker.bootstrap, topic)
    producer = Producer({"bootstrap.servers": f"127.0.0.1:{proxy.port}", "linger.ms": 0})
    producer.list_topics(topic, 10)
    proxy.set(partition="blackhole")
    producer.produce(topic, b"held")
    assert producer.flush(2) == 1  # not acknowledged while partitioned
    proxy.heal()
    assert producer.flush(20) == 0
    with pytest.raises(KafkaException):
        proxy.set(partition="refuse")
        produce_one(f"127.0.0.1:{proxy.port}", topic, timeout_ms=3000)
