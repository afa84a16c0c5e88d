"""A job's restart offsets committed to its group on the real broker (what MM2 mirrors),
from Spark logs recorded by hand; a cluster that does not answer is said once, never
raised."""

from __future__ import annotations

import pytest
from confluent_kafka import Consumer, TopicPartition
from streaming import new_topic, surge_spec
from test_handoff import _write_log

from workbench.jobs.group_commits import GroupCommits

pytestmark = pytest.mark.unit


def committed(bootstrap: str, group: str, topic: str) -> dict[str, int]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        found = consumer.committed([TopicPartition(topic, p) for p in range(2)], timeout=10)
        return {str(tp.partition): tp.offset for tp in found}
    finally:
        consumer.close()


def test_the_restart_offsets_reach_the_group(kafka_broker, tmp_path):
    topic = new_topic(kafka_broker.bootstrap, "restart", partitions=2)
    spec = surge_spec(kafka_broker.bootstrap, topic, tmp_path, [])  # 1-minute windows
    ends = [{topic: {"0": 10 * (n + 1), "1": 20 * (n + 1)}} for n in range(4)]
    marks = [(0, 100_000), (100_000, 125_000), (125_000, 150_000), (150_000, 170_000)]
    batches = [(wm, nxt, end) for (wm, nxt), end in zip(marks, ends, strict=True)]
    _write_log(tmp_path / "ck", batches, {topic: {"0": 0, "1": 0}})
    said: list[str] = []
    commits = GroupCommits(spec, tmp_path / "ck", "surge-restart", said.append)
    try:
        # the handoff rule's start (batch 1's end), not the last batch's end (40, 80)
        assert commits.commit() == {"booking": {topic: {"0": 10, "1": 20}}}
    finally:
        commits.close()
    assert committed(kafka_broker.bootstrap, "workbench-surge-restart", topic) == {"0": 10, "1": 20}
    assert not said


def test_a_cluster_that_does_not_answer_is_said_once(tmp_path):
    spec = surge_spec("127.0.0.1:1", "t", tmp_path, [])
    spec = spec.model_copy(
        update={"streams": [spec.streams[0].model_copy(update={"kafka_options": {"x.y": "1"}})]}
    )
    _write_log(tmp_path / "ck", [(0, 1, {"t": {"0": 5}})], {"t": {"0": 0}})
    said: list[str] = []
    commits = GroupCommits(spec, tmp_path / "ck", "surge", said.append)
    try:
        assert commits.commit() == {} and commits.commit() == {}
    finally:
        commits.close()
    [line] = said
    assert "offsets of 'booking' not committed to group workbench-surge" in line
