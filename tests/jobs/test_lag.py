"""Offsets behind latest from the brokers (:mod:`workbench.jobs.lag`), on the session broker."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pyspark.sql.streaming.listener import StreamingQueryProgress
from streaming import new_topic, publish_events

from workbench.jobs.lag import BrokerLag
from workbench.notebook.examples import end_offsets
from workbench.spec import StreamSpec
from workbench.streaming.progress import report

pytestmark = pytest.mark.unit

RECORDED = json.loads((Path(__file__).parents[1] / "fixtures/jobs/progress.json").read_text())


def stream(bootstrap: str, topic: str) -> StreamSpec:
    return StreamSpec(table="booking", message="esb.booking.BookingLogMessage",
                      bootstrap_servers=bootstrap, topics=[topic])  # fmt: skip


def test_records_published_after_the_last_batch_are_behind(kafka_broker):
    topic = new_topic(kafka_broker.bootstrap, "lag")
    publish_events(kafka_broker.bootstrap, topic, 40)
    ends = {str(p): o for p, o in end_offsets(kafka_broker.bootstrap, topic).items()}
    lag = BrokerLag([stream(kafka_broker.bootstrap, topic)])
    try:
        assert lag.behind({topic: dict.fromkeys(ends, 0)}) == 40
        assert lag.behind({topic: ends}) == 0  # a batch that read everything
        publish_events(kafka_broker.bootstrap, topic, 25, seed=12)
        assert lag.behind({topic: ends}) == 25  # published since: Spark would say 0
        assert lag.behind({"another-topic": ends}) is None  # not a stream of the job
        assert lag.behind(None) is None
    finally:
        lag.close()


def test_an_unreachable_broker_is_unknown():
    lag = BrokerLag([stream("127.0.0.1:1", "bookings")])
    assert lag.behind({"bookings": {"0": 5}}) is None
    lag.close()


def test_reports_carry_the_offsets_each_batch_read_up_to():
    reports = [report(StreamingQueryProgress.fromJson(p)) for p in RECORDED]
    [source] = RECORDED[1]["sources"]
    assert reports[1].end_offsets == source["endOffset"]
