"""MirrorMaker 2 between two real clusters: topics copied under their own names, a
consumer group's committed offsets translated into the standby's checkpoints topic."""

from __future__ import annotations

import time
import uuid

from confluent_kafka import Consumer, Producer, TopicPartition
from polling import wait_for

from workbench.kafka import mm2 as mm2_checkpoints
from workbench.kafka.admin import create_topics, list_topics


def test_topics_and_group_offsets_reach_the_standby(kafka_mirror):
    primary, standby = kafka_mirror.primary.bootstrap, kafka_mirror.standby.bootstrap
    topic, group = f"mirrored-{uuid.uuid4().hex[:8]}", f"workbench-{uuid.uuid4().hex[:6]}"
    create_topics(primary, {topic: 3})
    producer = Producer({"bootstrap.servers": primary, "acks": "all"})
    wait_for(lambda: topic in list_topics(standby), 60, "the topic on the standby")
    for round_ in range(3):  # a stream, not one burst: MM2 throttles its offset syncs
        for i in range(99):
            producer.produce(topic, value=f"{round_}-{i}".encode(), partition=i % 3)
        assert producer.flush(30) == 0
        time.sleep(1.5)

    committer = Consumer({"bootstrap.servers": primary, "group.id": group})
    committed = [TopicPartition(topic, p, 60) for p in range(3)]
    committer.commit(offsets=committed, asynchronous=False)
    committer.close()

    def translated():
        found = mm2_checkpoints.read(standby, "primary", group, timeout_s=10)
        return found if len(found.get(topic, {})) == 3 else None

    offsets = wait_for(translated, 90, "MM2's checkpoints of the group's three partitions")
    assert all(0 <= offset <= 60 for offset in offsets[topic].values())  # never past it
    assert mm2_checkpoints.read(standby, "primary", "workbench-nobody") == {}
