"""MM2 checkpoint records decoded as Kafka's Checkpoint class writes them, and a group's
translated offsets (the latest record per partition, other groups ignored)."""

from __future__ import annotations

import struct

import pytest

from workbench.exceptions import WorkbenchError
from workbench.kafka.mm2 import Checkpoint, decode, topic_of, translate

pytestmark = pytest.mark.unit


def string(text: str) -> bytes:
    data = text.encode()
    return struct.pack(">h", len(data)) + data


def record(group: str, topic: str, partition: int, up: int, down: int, meta: str = ""):
    """Key and value as ``Checkpoint.recordKey()`` / ``recordValue()`` (version 0)."""
    key = string(group) + string(topic) + struct.pack(">i", partition)
    value = struct.pack(">hqq", 0, up, down) + string(meta)
    return key, value


def test_a_record_decodes_to_its_fields():
    key, value = record("workbench-surge", "booking-log", 2, 1_000, 998, "héllo")
    assert decode(key, value) == Checkpoint(
        "workbench-surge", "booking-log", 2, 1_000, 998, "héllo"
    )
    assert topic_of("primary") == "primary.checkpoints.internal"


def test_the_latest_checkpoint_of_each_partition_of_the_group_wins():
    records = [
        decode(*record("workbench-surge", "booking-log", 0, 10, 9)),
        decode(*record("workbench-other", "booking-log", 0, 99, 99)),
        decode(*record("workbench-surge", "booking-log", 1, 20, 20)),
        decode(*record("workbench-surge", "booking-log", 0, 50, 48)),
    ]
    assert translate(records, "workbench-surge") == {"booking-log": {"0": 48, "1": 20}}
    assert translate(records, "nobody") == {}


@pytest.mark.parametrize(
    ("key", "value"),
    [
        (b"\x00", struct.pack(">hqq", 0, 1, 1) + string("")),  # a key cut short
        (record("g", "t", 0, 1, 1)[0], struct.pack(">hqq", 1, 1, 1) + string("")),  # v1
        (string("g") + string("t"), b""),  # no partition, no value
    ],
)
def test_what_is_not_a_checkpoint_is_refused(key, value):
    with pytest.raises(WorkbenchError, match="checkpoint"):
        decode(key, value)
