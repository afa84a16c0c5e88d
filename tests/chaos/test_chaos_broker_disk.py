"""The data-disk failure on the real broker: moving its log folder away halts it; the
revert brings the folder back and the broker with every record it held."""

from __future__ import annotations

import time
import uuid

from chaoskit import topic_size
from confluent_kafka import Producer

from workbench.chaos.env import ChaosEnv
from workbench.chaos.faults import FAULTS
from workbench.kafka.admin import broker_ids, create_topics


def test_a_failed_disk_halts_the_broker_and_the_revert_restores_it(chaos_broker):
    broker, _ = chaos_broker
    topic = f"disk-{uuid.uuid4().hex[:8]}"
    create_topics(broker.bootstrap, {topic: 1})
    producer = Producer({"bootstrap.servers": broker.bootstrap, "acks": "all"})
    for i in range(100):
        producer.produce(topic, str(i).encode())
    assert producer.flush(30) == 0

    fault = FAULTS.get("broker_disk")
    record = fault.apply(ChaosEnv(broker.bootstrap, [broker]), {})
    deadline = time.monotonic() + 60
    while broker.status().running and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not broker.status().running, "the broker kept running without its disk"
    assert "log dirs" in broker.log_file.read_text(errors="replace")[-20000:]

    fault.revert(record, None)  # as the next run's journal replay does: the record alone
    assert broker.status().running and broker_ids(broker.bootstrap) == {1}
    assert topic_size(broker.bootstrap, topic) == 100
