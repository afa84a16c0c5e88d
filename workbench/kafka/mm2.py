"""MirrorMaker 2's checkpoints: a consumer group's offsets on the source cluster translated
to the target cluster, read as Kafka's ``RemoteClusterUtils.translateOffsets`` reads them.

MM2's checkpoint connector writes, on the TARGET cluster, the topic
``<source>.checkpoints.internal`` (``<source>``: the source cluster's alias in
``mm2.properties``): a record each time a mirrored group's committed offset moves. Key:
``{group: STRING, topic: STRING, partition: INT32}``; value: ``{version: INT16}`` (0) then
``{upstreamOffset: INT64, offset: INT64, metadata: STRING}``, in Kafka's protocol encoding
(big-endian; a STRING is an INT16 length, then UTF-8). ``offset`` is the group's position
on the target cluster, never past the record it had reached on the source (MM2 rounds
down to its last offset sync). The latest record of a partition wins.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from workbench.exceptions import WorkbenchError
from workbench.kafka.identity import LOG

Offsets = dict[str, dict[str, int]]  # topic -> partition -> offset


@dataclass(frozen=True)
class Checkpoint:
    group: str
    topic: str  # the topic's name on the target cluster
    partition: int
    upstream: int  # the group's committed offset on the source cluster
    downstream: int  # the same position on the target cluster
    metadata: str


def topic_of(source_alias: str) -> str:
    """Where MM2 writes the checkpoints of groups mirrored from ``source_alias``."""
    return f"{source_alias}.checkpoints.internal"


def decode(key: bytes, value: bytes) -> Checkpoint:
    """One checkpoint record; :class:`WorkbenchError` if it is not one (version 0)."""
    try:
        group, at = _string(key, 0)
        topic, at = _string(key, at)
        (partition,) = struct.unpack_from(">i", key, at)
        (version,) = struct.unpack_from(">h", value, 0)
        if version != 0:
            raise WorkbenchError(f"MM2 checkpoint version {version} is not known (0 is)")
        upstream, downstream = struct.unpack_from(">qq", value, 2)
        metadata, _ = _string(value, 18)
    except (struct.error, UnicodeDecodeError) as err:
        raise WorkbenchError(f"not an MM2 checkpoint record ({err})") from None
    return Checkpoint(group, topic, partition, upstream, downstream, metadata)


def _string(data: bytes, at: int) -> tuple[str, int]:
    (size,) = struct.unpack_from(">h", data, at)
    if size < 0:  # a null string
        return "", at + 2
    end = at + 2 + size
    if end > len(data):
        raise struct.error("string runs past the record")
    return data[at + 2 : end].decode("utf-8"), end


def translate(checkpoints: Iterable[Checkpoint], group: str) -> Offsets:
    """``group``'s positions on the target cluster, the latest checkpoint of each partition."""
    found: Offsets = {}
    for checkpoint in checkpoints:
        if checkpoint.group == group:
            found.setdefault(checkpoint.topic, {})[str(checkpoint.partition)] = (
                checkpoint.downstream
            )
    return found


def read(
    bootstrap: str,
    source_alias: str,
    group: str,
    options: Mapping[str, str] | None = None,
    timeout_s: float = 30.0,
) -> Offsets:
    """``group``'s translated positions, read from the target cluster at ``bootstrap`` up
    to the checkpoint topic's current end; empty when MM2 recorded none."""
    from confluent_kafka import Consumer, KafkaError, TopicPartition

    topic = topic_of(source_alias)
    consumer = Consumer(
        {
            **(options or {}),
            "bootstrap.servers": bootstrap,
            "group.id": f"workbench-failover-{group}",  # never committed to
            "enable.auto.commit": False,
            "enable.partition.eof": True,
            "auto.offset.reset": "earliest",
            "logger": LOG,
        }
    )
    try:
        metadata = consumer.list_topics(topic, timeout=timeout_s).topics.get(topic)
        if metadata is None or metadata.error is not None:
            return {}
        partitions = [TopicPartition(topic, p, 0) for p in metadata.partitions]
        consumer.assign(partitions)
        return translate(_records(consumer, len(partitions), timeout_s, KafkaError), group)
    finally:
        consumer.close()


def _records(consumer: Any, partitions: int, timeout_s: float, errors: Any) -> list[Checkpoint]:
    out, ended = [], 0
    while ended < partitions:
        msg = consumer.poll(timeout_s)
        if msg is None:
            raise WorkbenchError(f"no answer reading MM2's checkpoints within {timeout_s:.0f}s")
        if msg.error() is None:
            out.append(decode(msg.key() or b"", msg.value() or b""))
        elif msg.error().code() == errors._PARTITION_EOF:
            ended += 1
        else:
            raise WorkbenchError(f"reading MM2's checkpoints: {msg.error().str()}")
    return out
