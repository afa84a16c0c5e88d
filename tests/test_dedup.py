"""``deduplicate`` (Dagger's DeDuplicationTransformer): each key of the result once.

Streaming on the real broker: the same bookings published twice (and again after a
restart from the checkpoint) come out of the job once per order; replay keeps one row
per key of the recording.
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import timedelta

import pytest
from streaming import START, new_topic, publish_events, surge_spec

from workbench.dev.generator import write_jsonl
from workbench.exceptions import SpecError
from workbench.lab.preview import preview
from workbench.lab.replay import replay
from workbench.lab.sampling import sample
from workbench.streaming.job import StreamingJob

SQL = "SELECT order_number, customer_id, rowtime AS event_time FROM booking"


def dedup_spec(bootstrap, topic, tmp_path, sql=SQL, within="1h"):
    return surge_spec(
        bootstrap,
        topic,
        tmp_path,
        sinks=[{"type": "parquet", "path": str(tmp_path / "out"), "time_column": "event_time"}],
        name="dedup-orders",
        sql=sql,
        watermark_delay="10s",
        trigger_interval="1s",
        deduplicate={"keys": ["order_number"], "within": within},
    )


def written(spark, tmp_path) -> Counter:
    rows = spark.read.parquet(str(tmp_path / "out")).collect()
    return Counter(r.order_number for r in rows)


def test_duplicates_published_to_kafka_come_out_once(spark, kafka_broker, tmp_path):
    bootstrap = kafka_broker.bootstrap
    topic = new_topic(bootstrap, "dedup")
    first = publish_events(bootstrap, topic, 300, seed=3)
    publish_events(bootstrap, topic, 300, seed=3)  # the same 300 bookings again
    spec = dedup_spec(bootstrap, topic, tmp_path)
    StreamingJob(spec, spark, available_now=True, emit=None).run()
    orders = {e["order_number"] for e in first.events}
    assert len(orders) == 300
    assert written(spark, tmp_path) == Counter(orders)
    # a preview over both copies keeps one row per key too, as the job does (promote's
    # parity check compares the two)
    shown = preview(spec, sample(spec, last=10_000), spark=spark)
    assert Counter(shown.rows["order_number"]) == Counter(orders)

    # after a restart from the checkpoint the keys are still remembered: a third copy of
    # the same bookings and 100 new ones (later in event time) give only the new ones
    publish_events(bootstrap, topic, 300, seed=3)
    later = START + timedelta(minutes=20)
    fresh = publish_events(bootstrap, topic, 100, seed=4, start=later)
    StreamingJob(spec, spark, available_now=True, emit=None).run()
    new_orders = {e["order_number"] for e in fresh.events} - orders
    assert new_orders
    assert written(spark, tmp_path) == Counter(orders | new_orders)


def test_without_the_event_time_among_the_columns_says_what_to_add(spark, kafka_broker, tmp_path):
    topic = new_topic(kafka_broker.bootstrap, "dedup")
    spec = dedup_spec(
        kafka_broker.bootstrap, topic, tmp_path, sql="SELECT order_number FROM booking"
    )
    with pytest.raises(SpecError, match="add 'rowtime' to the SELECT list"):
        StreamingJob(spec, spark, available_now=True, emit=None).plan()


def test_replay_keeps_one_row_per_key(spark, tmp_path):
    from workbench.dev.generator import Generator

    bookings = Generator(seed=9, start=START, rate_per_s=5).take("bookings", 200)
    write_jsonl(tmp_path / "booking.jsonl", bookings + bookings[:50])
    spec = dedup_spec("127.0.0.1:1", "unused", tmp_path)
    result = replay(
        spark, {"booking": str(tmp_path / "booking.jsonl")}, tmp_path / "o.jsonl", spec=spec
    )
    orders = Counter(json.loads(line)["order_number"] for line in result.out.open())
    assert orders == Counter({b["order_number"] for b in bookings})
