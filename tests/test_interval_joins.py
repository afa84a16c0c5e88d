"""Time-only interval joins (Dagger's own join example) run as streaming jobs on the real
broker, with the same rows as plain batch Spark SQL computes from the same events."""

from __future__ import annotations

from collections import Counter

import pytest
from streaming import START, new_topic

from workbench.dev.generator import Generator, write_jsonl
from workbench.dev.producer import publish
from workbench.rowtime import with_rowtime
from workbench.sources import bounded
from workbench.spec import parse
from workbench.streaming.job import StreamingJob

JOINS = {
    "between": """
        SELECT s0.order_number, s1.payment_id, s0.rowtime AS window_timestamp
        FROM booking AS s0 JOIN payment AS s1
          ON s1.rowtime BETWEEN s0.rowtime AND s0.rowtime + INTERVAL '5' SECOND""",
    "reversed comparisons": """
        SELECT s0.order_number, s1.payment_id, s0.rowtime AS window_timestamp
        FROM booking AS s0 JOIN payment AS s1
          ON s0.rowtime + INTERVAL '3' SECOND >= s1.rowtime
         AND s1.rowtime > s0.rowtime - INTERVAL '2' SECOND""",
}


@pytest.fixture(scope="module")
def published(kafka_broker, tmp_path_factory):
    bootstrap = kafka_broker.bootstrap
    topics = {
        "booking": new_topic(bootstrap, "tj-bookings"),
        "payment": new_topic(bootstrap, "tj-pay"),
    }
    generator = Generator(seed=5, start=START, rate_per_s=5.0, out_of_order_seconds=4.0)
    folder = tmp_path_factory.mktemp("recorded")
    recordings = {}
    for table, kind in (("booking", "bookings"), ("payment", "payments")):
        sent = publish(
            bootstrap,
            kind,
            topic=topics[table],
            count=300,
            generator=generator,
            speedup=None,
            keep_events=True,
        )
        recordings[table] = folder / f"{table}.jsonl"
        write_jsonl(recordings[table], sent.events)
    return topics, recordings


def _spec(bootstrap, topics, sql, tmp_path):
    stream = {"bootstrap_servers": bootstrap, "starting_offsets": "earliest"}
    return parse(
        {
            "name": "time-join",
            "streams": [
                {
                    "table": "booking",
                    "message": "BookingLogMessage",
                    "topics": [topics["booking"]],
                    **stream,
                },
                {
                    "table": "payment",
                    "message": "PaymentMessage",
                    "topics": [topics["payment"]],
                    **stream,
                },
            ],
            "sql": sql,
            "watermark_delay": "1h",
            "sinks": [{"type": "parquet", "path": str(tmp_path / "out")}],
            "checkpoint": str(tmp_path / "checkpoint"),
            "dead_letter": {"path": str(tmp_path / "dead")},
        }
    )


def _batch(spark, recordings, sql) -> Counter:
    """The join as plain batch Spark SQL (no rewrite) over the same events."""
    for table, path in recordings.items():
        frame = with_rowtime(bounded.read(spark, str(path)).frame, "event_timestamp")
        frame.createOrReplaceTempView(table)
    return Counter((r.order_number, r.payment_id) for r in spark.sql(sql).collect())


@pytest.mark.parametrize("name", list(JOINS))
def test_time_only_join_streams_with_batch_results(name, spark, kafka_broker, published, tmp_path):
    topics, recordings = published
    sql = JOINS[name]
    StreamingJob(
        _spec(kafka_broker.bootstrap, topics, sql, tmp_path), spark, available_now=True, emit=None
    ).run()
    streamed = Counter(
        (r.order_number, r.payment_id) for r in spark.read.parquet(str(tmp_path / "out")).collect()
    )
    expected = _batch(spark, recordings, sql)
    assert len(expected) > 500
    assert streamed == expected


def test_the_rewritten_join_keeps_state_bounded_by_the_watermarks(spark, tmp_path):
    """Spark drops join state by the range condition: both sides get a value predicate."""
    from datetime import datetime

    from workbench import engine

    inputs = []
    for table in ("s0", "s1"):
        path = str(tmp_path / table)
        rows = [("o1", datetime(2026, 11, 21, 10, 0))]
        spark.createDataFrame(rows, "order_number string, event_timestamp timestamp").write.parquet(
            path
        )
        frame = spark.readStream.schema("order_number string, event_timestamp timestamp")
        inputs.append(engine.Input(table, frame.parquet(path)))
    sql = """SELECT s0.order_number, s1.order_number AS other FROM s0 JOIN s1
             ON s1.rowtime BETWEEN s0.rowtime AND s0.rowtime + INTERVAL '5' SECOND"""
    plan = engine.build(spark, sql, inputs, job="state", watermark_delay_ms=10_000)
    query = (
        plan.result.writeStream.format("noop")
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(120)
    explained = query._jsq.explainInternal(False)
    query.stop()
    assert "StreamingSymmetricHashJoin" in explained
    assert "state cleanup [ left value predicate" in explained
    assert "right value predicate" in explained
