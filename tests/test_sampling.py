"""Samples of a real broker: last N, a time range, a live tail; exact offsets; no commits.

Expected values come from what the test published (counts, Kafka timestamps taken around
the publishing) and from the broker's own high watermarks, never from the sampler.
"""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime

import pytest
from streaming import new_topic, publish_events

from workbench.exceptions import UnknownNameError
from workbench.lab.sampling import Sample, SampleError, sample
from workbench.spec import StreamSpec

MESSAGE = "esb.booking.BookingLogMessage"


def booking_stream(bootstrap: str, topic: str) -> StreamSpec:
    return StreamSpec(table="booking", message=MESSAGE, bootstrap_servers=bootstrap, topics=[topic])


def high_watermarks(bootstrap: str, topic: str) -> dict[int, int]:
    from confluent_kafka import TopicPartition
    from confluent_kafka.admin import AdminClient, OffsetSpec

    admin = AdminClient({"bootstrap.servers": bootstrap})
    partitions = admin.list_topics(topic, timeout=10).topics[topic].partitions
    asked = {TopicPartition(topic, p): OffsetSpec.latest() for p in partitions}
    found = admin.list_offsets(asked)
    return {tp.partition: future.result().offset for tp, future in found.items()}


@pytest.fixture(scope="module")
def bookings(kafka_broker):
    """Two bursts of bookings into a 3-partition topic, with the wall time between them."""
    bootstrap = kafka_broker.bootstrap
    topic = new_topic(bootstrap, "sample", partitions=3)
    first = publish_events(bootstrap, topic, 300, seed=1, malformed=0.02)
    time.sleep(1.5)
    middle = datetime.now(UTC)
    time.sleep(1.5)
    second = publish_events(bootstrap, topic, 200, seed=2, malformed=0.02)
    return {"topic": topic, "first": first, "second": second, "middle": middle}


def test_last_n_per_partition(kafka_broker, bookings):
    bootstrap, topic = kafka_broker.bootstrap, bookings["topic"]
    seen = []
    got = sample(booking_stream(bootstrap, topic), last=40, progress=seen.append)
    highs = high_watermarks(bootstrap, topic)
    assert sum(highs.values()) == 500
    assert got.offsets == {topic: {p: (max(0, h - 40), h) for p, h in highs.items()}}
    assert len(got) == sum(min(40, h) for h in highs.values())
    for partition, (start, end) in got.offsets[topic].items():
        offsets = [r.offset for r in got.records if r.partition == partition]
        assert offsets == list(range(start, end))
    assert seen and seen[-1].read == len(got) and seen[-1].fraction == 1.0
    assert got.bootstrap == bootstrap and got.table == "booking" and got.message == MESSAGE


def test_time_range_uses_kafka_timestamps(kafka_broker, bookings):
    bootstrap, topic, middle = kafka_broker.bootstrap, bookings["topic"], bookings["middle"]
    stream = booking_stream(bootstrap, topic)
    before = sample(stream, start=0, end=middle)
    after = sample(stream, start=middle.isoformat())
    assert len(before) == bookings["first"].sent == 300
    assert len(after) == bookings["second"].sent == 200
    middle_ms = int(middle.timestamp() * 1000)
    assert all(r.timestamp < middle_ms for r in before.records)
    assert all(r.timestamp >= middle_ms for r in after.records)
    for partition, (start, end) in after.offsets[topic].items():
        assert before.offsets[topic][partition] == (0, start)
        assert end == high_watermarks(bootstrap, topic)[partition]


def test_tail_reads_what_arrives(kafka_broker):
    bootstrap = kafka_broker.bootstrap
    topic = new_topic(bootstrap, "tail", partitions=2)
    publish_events(bootstrap, topic, 50, seed=3)  # already there: not in the tail
    before = high_watermarks(bootstrap, topic)

    def later() -> None:
        time.sleep(1.0)
        publish_events(bootstrap, topic, 120, seed=4)

    publisher = threading.Thread(target=later)
    publisher.start()
    got = sample(booking_stream(bootstrap, topic), tail_s=5.0)
    publisher.join()
    after = high_watermarks(bootstrap, topic)
    assert len(got) == 120
    assert got.offsets == {topic: {p: (before[p], after[p]) for p in before}}
    assert got.mode.startswith("tail 5s")


def test_saved_sample_reads_the_same_records(kafka_broker, bookings, tmp_path):
    bootstrap, topic = kafka_broker.bootstrap, bookings["topic"]
    got = sample(booking_stream(bootstrap, topic), last=25)
    path = got.save(tmp_path / "s.json")
    publish_events(bootstrap, topic, 30, seed=5)  # newer records must not leak in
    again = Sample.load(path)
    assert again.offsets == got.offsets and again.key == got.key
    assert again.records == got.records
    assert got.resample().records == got.records
    assert Sample.load(path, read=False).records == []


def test_decoding_counts_undecodable_like_dead_letters(spark, kafka_broker, bookings):
    bootstrap, topic = kafka_broker.bootstrap, bookings["topic"]
    got = sample(booking_stream(bootstrap, topic), start=0, end=bookings["middle"])
    decoded = got.decoded(spark)
    assert decoded.records == 300
    assert decoded.undecodable == bookings["first"].malformed > 0
    assert decoded.decoded == len(bookings["first"].events)
    assert decoded.rows.count() == decoded.decoded
    assert {"kafka_topic", "kafka_partition", "kafka_offset", "kafka_timestamp"} <= set(
        decoded.rows.columns
    )
    assert got.decoded(spark) is decoded  # cached by offsets


def test_unknown_topic_lists_the_known_ones(kafka_broker, bookings):
    stream = booking_stream(kafka_broker.bootstrap, "no-such-topic")
    with pytest.raises(UnknownNameError, match="Known: ") as unknown:
        sample(stream, last=1)
    assert "_dagger_sink_commits" not in str(unknown.value)  # internal topics are not offered
    typo = booking_stream(kafka_broker.bootstrap, bookings["topic"][:-1])
    with pytest.raises(UnknownNameError, match=f"Did you mean '?{bookings['topic']}"):
        sample(typo, last=1)
    with pytest.raises(SampleError, match="give one of"):
        sample(booking_stream(kafka_broker.bootstrap, bookings["topic"]))


def test_sampling_never_commits(kafka_broker, bookings):
    from confluent_kafka import ConsumerGroupTopicPartitions
    from confluent_kafka.admin import AdminClient

    sample(booking_stream(kafka_broker.bootstrap, bookings["topic"]), last=5)
    admin = AdminClient({"bootstrap.servers": kafka_broker.bootstrap})
    groups = [g.group_id for g in admin.list_consumer_groups().result(timeout=10).valid]
    assert not [g for g in groups if g.startswith("workbench-sample")]
    for group in groups:
        request = [ConsumerGroupTopicPartitions(group)]
        for future in admin.list_consumer_group_offsets(request).values():
            committed = future.result(timeout=10).topic_partitions or []
            assert not [tp for tp in committed if tp.topic == bookings["topic"]], group


def test_given_offsets_read_exactly_those_records(kafka_broker, bookings):
    """What ``examples.demo_events`` published, by its offsets: none of the topic's others."""
    from workbench.notebook.examples import demo_events, end_offsets

    bootstrap, topic = kafka_broker.bootstrap, bookings["topic"]
    before = end_offsets(bootstrap, topic)
    published = demo_events(bootstrap, "bookings", topic=topic, events=90, seed=9)
    assert published.offsets == {
        topic: {p: (before[p], end) for p, end in high_watermarks(bootstrap, topic).items()}
    }
    got = sample(booking_stream(bootstrap, topic), offsets=published.offsets)
    assert len(got) == 90 and got.offsets == published.offsets
    assert all(r.offset >= before[r.partition] for r in got.records)

    with pytest.raises(SampleError, match=r"offsets for .*\[7\]: not a partition"):
        sample(booking_stream(bootstrap, topic), offsets={topic: {7: (0, 1)}})
