"""Helpers of the chaos tests."""

from __future__ import annotations

from confluent_kafka import Consumer, TopicPartition


def topic_size(bootstrap: str, topic: str) -> int:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "size"})
    try:
        parts = consumer.list_topics(topic, 10).topics[topic].partitions
        marks = [consumer.get_watermark_offsets(TopicPartition(topic, p), 10) for p in parts]
        return sum(high - low for low, high in marks)
    finally:
        consumer.close()
