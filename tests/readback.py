"""Reading results back from each sink through its own API, for exact comparisons."""

from __future__ import annotations

import json

import requests


def influxql(server, query, db=None):
    params = {"q": query, "epoch": "ms", **({"db": db} if db else {})}
    response = requests.post(server.url + "/query", params=params, timeout=10)
    response.raise_for_status()
    [result] = response.json()["results"]
    assert "error" not in result, result
    return result


def influx_points(server, db, measurement):
    """Every point of ``measurement`` as a dict with its tags (InfluxQL ``GROUP BY *``)."""
    result = influxql(server, f'SELECT * FROM "{measurement}" GROUP BY *', db)
    return [
        {**s.get("tags", {}), **dict(zip(s["columns"], v, strict=True))}
        for s in result.get("series", [])
        for v in s["values"]
    ]


def vm_export(server, measurement):
    """``{(series name, labels): [(timestamp, value), ...]}`` of the measurement's series."""
    server.flush()
    match = {"match[]": f'{{__name__=~"{measurement}_.*"}}'}
    response = requests.post(server.url + "/api/v1/export", data=match, timeout=10)
    response.raise_for_status()
    series = {}
    for line in response.text.splitlines():
        item = json.loads(line)
        labels = dict(item["metric"])
        name = labels.pop("__name__")
        samples = list(zip(item["timestamps"], item["values"], strict=True))
        series[(name, tuple(sorted(labels.items())))] = samples
    return series


def kafka_messages(bootstrap, topic, timeout_s=20.0):
    """Every committed message of ``topic`` (read_committed), from the beginning."""
    import uuid

    from confluent_kafka import Consumer, KafkaError

    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"readback-{uuid.uuid4().hex[:8]}",
            "auto.offset.reset": "earliest",
            "isolation.level": "read_committed",
            "enable.partition.eof": True,
            "enable.auto.commit": False,
        }
    )
    consumer.subscribe([topic])
    out, eof, partitions = [], set(), None
    try:
        while True:
            msg = consumer.poll(timeout_s)
            if msg is None:
                break
            if msg.error():
                if msg.error().code() != KafkaError._PARTITION_EOF:
                    raise AssertionError(str(msg.error()))
                eof.add(msg.partition())
                if partitions is None:
                    partitions = len(consumer.list_topics(topic).topics[topic].partitions)
                if len(eof) == partitions:
                    break
                continue
            out.append(msg)
    finally:
        consumer.close()
    return out


def ended_offsets(bootstrap: str, topic: str) -> int:
    """The sum of ``topic``'s end offsets over its partitions (equal on a mirror that has
    caught up)."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "e2e-ends"})
    try:
        parts = consumer.list_topics(topic, timeout=10).topics[topic].partitions
        return sum(
            consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in parts
        )
    finally:
        consumer.close()
