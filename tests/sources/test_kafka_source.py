"""The Kafka source: reader options from the spec, and Kafka metadata columns in SQL."""

from __future__ import annotations

import json
import uuid

import pytest
from readback import kafka_messages
from streaming import publish_events

from workbench.kafka.admin import create_topics
from workbench.schemas import default_registry
from workbench.sources.kafka import reader_options
from workbench.spec import StreamSpec, parse
from workbench.streaming.job import StreamingJob

pytestmark = pytest.mark.unit


def stream(**keys) -> StreamSpec:
    return StreamSpec(table="booking", message="BookingLogMessage", **keys)


@pytest.mark.parametrize(
    ("keys", "expected"),
    [
        ({"topics": ["a", "b"]}, {"subscribe": "a,b", "startingOffsets": "latest"}),
        (
            {"topic_pattern": "booking-.*", "starting_offsets": "earliest"},
            {"subscribePattern": "booking-.*", "startingOffsets": "earliest"},
        ),
        (
            {"topics": ["a"], "starting_offsets": {"a": {"0": 42, "1": -2}}},
            {"startingOffsets": '{"a": {"0": 42, "1": -2}}'},
        ),
        (
            {"topics": ["a"], "starting_offsets": 1795222800000},
            {"startingTimestamp": "1795222800000", "startingOffsetsByTimestampStrategy": "latest"},
        ),
        (
            {"topics": ["a"], "starting_offsets": "2026-11-21T08:00:00Z"},
            {"startingTimestamp": "1795248000000"},
        ),
        (
            {"topics": ["a"], "max_offsets_per_trigger": 1000, "group_id": "surge"},
            {"maxOffsetsPerTrigger": "1000", "groupIdPrefix": "surge"},
        ),
        (
            {
                "topics": ["a"],
                "kafka_options": {"security.protocol": "SASL_SSL", "kafka.sasl.mechanism": "PLAIN"},
            },
            {"kafka.security.protocol": "SASL_SSL", "kafka.sasl.mechanism": "PLAIN"},
        ),
    ],
)
def test_reader_options(keys, expected):
    options = reader_options(stream(bootstrap_servers="h:9", **keys))
    assert options["kafka.bootstrap.servers"] == "h:9"
    assert expected.items() <= options.items()


def test_kafka_timeouts_are_bounded_unless_the_spec_sets_them():
    bounded = reader_options(stream(topics=["a"]))
    assert bounded["kafka.default.api.timeout.ms"] == "20000"
    assert bounded["kafka.request.timeout.ms"] == "10000"
    given = reader_options(stream(topics=["a"], kafka_options={"request.timeout.ms": "90000"}))
    assert given["kafka.request.timeout.ms"] == "90000"
    assert "kafka.default.api.timeout.ms" not in given  # Kafka's own, kept above the request's


def test_a_fetch_past_the_end_of_the_log_is_held_briefly_unless_the_spec_says():
    assert reader_options(stream(topics=["a"]))["kafka.fetch.max.wait.ms"] == "10"
    given = reader_options(stream(topics=["a"], kafka_options={"fetch.max.wait.ms": "500"}))
    assert given["kafka.fetch.max.wait.ms"] == "500"


def test_a_bad_start_time_is_a_spec_error():
    from workbench.exceptions import SpecError

    with pytest.raises(SpecError, match=r"streams\[0\]\.starting_offsets"):
        parse(
            {
                "name": "x",
                "sql": "SELECT 1",
                "streams": [
                    {"table": "b", "message": "m", "topics": ["t"], "starting_offsets": "yesterday"}
                ],
            }
        )


def test_regex_topics_and_kafka_metadata_columns(spark, kafka_broker, tmp_path):
    bootstrap = kafka_broker.bootstrap
    prefix = f"meta-{uuid.uuid4().hex[:6]}"
    topics = [f"{prefix}-a", f"{prefix}-b"]
    create_topics(bootstrap, {t: 2 for t in topics})
    for i, topic in enumerate(topics):
        publish_events(bootstrap, topic, 150, seed=i)
    out = f"{prefix}-out"
    spec = parse(
        {
            "name": "metadata",
            "streams": [
                {
                    "table": "booking",
                    "message": "BookingLogMessage",
                    "bootstrap_servers": bootstrap,
                    "topic_pattern": f"{prefix}-[ab]",
                    "starting_offsets": "earliest",
                }
            ],
            "sql": "SELECT kafka_topic, kafka_partition, kafka_offset, kafka_timestamp, "
            "order_number FROM booking",
            "sinks": [{"type": "kafka", "bootstrap_servers": bootstrap, "topic": out}],
            "checkpoint": str(tmp_path / "checkpoint"),
            "dead_letter": {"path": str(tmp_path / "dead")},
        }
    )
    StreamingJob(spec, spark, available_now=True, emit=None).run()

    cls = default_registry().message_class("esb.booking.BookingLogMessage")
    expected = {
        (t, m.partition(), m.offset()): cls.FromString(m.value()).order_number
        for t in topics
        for m in kafka_messages(bootstrap, t)
    }
    rows = [json.loads(m.value()) for m in kafka_messages(bootstrap, out)]
    got = {
        (r["kafka_topic"], r["kafka_partition"], r["kafka_offset"]): r["order_number"] for r in rows
    }
    assert len(rows) == len(expected) == 300
    assert got == expected
    assert all(r["kafka_timestamp"].endswith("Z") for r in rows)
