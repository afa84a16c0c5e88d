"""Streaming daggers end to end on the real broker: generator → Kafka → job → every sink.

Each sink is read back through its own API and compared with an independent
computation over the generated events (``geo_reference.surge_windows``) and with
``workbench replay`` over the same events.
"""

from __future__ import annotations

import json
import time
import uuid
from collections import Counter

import pytest
from geo_reference import surge_windows
from readback import kafka_messages, vm_export
from streaming import (
    START,
    closed,
    influx_v1_rows,
    influx_v1_sink,
    kafka_sink,
    new_topic,
    publish_events,
    surge_rows,
    surge_spec,
    to_ms,
)

from workbench.dev.generator import Generator, encode, iso, write_jsonl
from workbench.dev.producer import publish
from workbench.lab.replay import replay
from workbench.spec import parse
from workbench.streaming.job import StreamingJob

pytestmark = pytest.mark.unit


def test_generator_to_every_sink(spark, kafka_broker, influxdb_v1, victoria_metrics, tmp_path):
    bootstrap = kafka_broker.bootstrap
    topic = new_topic(bootstrap, "bookings")
    out_topic = new_topic(bootstrap, "surge-out")
    sent = publish_events(bootstrap, topic, 4000, malformed=0.01)
    assert sent.malformed > 10
    influx = influx_v1_sink(influxdb_v1)
    measurement = f"surge_{uuid.uuid4().hex[:6]}"
    spec = surge_spec(
        bootstrap,
        topic,
        tmp_path,
        [
            influx,
            {
                "type": "influx",
                "api": 2,
                "url": victoria_metrics.url,
                "bucket": "dagger",
                "measurement": measurement,
            },
            kafka_sink(bootstrap, out_topic),
            {"type": "parquet", "path": str(tmp_path / "parquet")},
        ],
    )
    job = StreamingJob(spec, spark, available_now=True, emit=None)
    totals = job.run()

    expected = closed(surge_windows(sent.events), sent.events)
    assert len(expected) > 100

    parquet = spark.read.parquet(str(tmp_path / "parquet")).collect()
    assert surge_rows(r.asDict() for r in parquet) == expected
    for r in parquet:  # the warehouse layout: dt=YYYY-MM-DD/hour=HH of the window
        assert (str(r.dt), f"{int(r.hour):02d}") == (
            r.window_timestamp.strftime("%Y-%m-%d"),
            r.window_timestamp.strftime("%H"),
        )

    assert influx_v1_rows(influxdb_v1, influx) == expected

    series = vm_export(victoria_metrics, measurement)
    vm = {}
    for (name, labels), samples in series.items():
        tags = dict(labels)
        for ts, value in samples:
            key = (tags["tag_s2id"], tags["tag_vehicle_type"], ts)
            vm.setdefault(key, {})[name.removeprefix(measurement + "_")] = int(value)
    assert {k: (v["bookings"], v["unique_customers"]) for k, v in vm.items()} == expected

    messages = kafka_messages(bootstrap, out_topic)
    rows = [json.loads(m.value()) for m in messages]
    assert surge_rows(rows) == expected
    for m, row in zip(messages, rows, strict=True):
        key = f"{row['tag_s2id']}|{row['tag_vehicle_type']}|"
        assert m.key().decode().startswith(key)

    dead = spark.read.parquet(str(tmp_path / "dead-letters")).collect()
    assert len(dead) == sent.malformed == totals.dead_letters
    assert all("esb.booking.BookingLogMessage" in d.error for d in dead)
    raw = {(m.partition(), m.offset()): m.value() for m in kafka_messages(bootstrap, topic)}
    assert all(raw[(d.partition, d.offset)] == bytes(d.value) for d in dead)
    assert {d.topic for d in dead} == {topic}

    recording = tmp_path / "bookings.jsonl"
    write_jsonl(recording, sent.events)
    replay(spark, {"booking": str(recording)}, tmp_path / "replay.jsonl", spec=spec)
    replayed = [json.loads(line) for line in (tmp_path / "replay.jsonl").read_text().splitlines()]
    assert closed(surge_rows(replayed), sent.events) == expected


def test_interval_join_of_two_streams(spark, kafka_broker, tmp_path):
    bootstrap = kafka_broker.bootstrap
    bookings, payments = new_topic(bootstrap, "join-bookings"), new_topic(bootstrap, "join-pay")
    generator = Generator(seed=3, start=START, rate_per_s=5.0, out_of_order_seconds=4.0)
    sent_b = publish(
        bootstrap,
        "bookings",
        topic=bookings,
        count=3000,
        generator=generator,
        speedup=None,
        keep_events=True,
    )
    sent_p = publish(
        bootstrap,
        "payments",
        topic=payments,
        count=300,
        generator=generator,
        speedup=None,
        keep_events=True,
    )
    sql = """
        SELECT b.order_number, p.payment_id, p.amount,
               b.event_timestamp AS booked, p.event_timestamp AS paid
        FROM booking AS b JOIN payment AS p
          ON b.order_number = p.order_number
         AND p.rowtime BETWEEN b.rowtime AND b.rowtime + INTERVAL '10' MINUTE
        WHERE b.status = 'COMPLETED'"""
    stream = {"bootstrap_servers": bootstrap, "starting_offsets": "earliest"}
    spec = parse(
        {
            "name": "booking-payments",
            "streams": [
                {
                    "table": "booking",
                    "message": "esb.booking.BookingLogMessage",
                    "topics": [bookings],
                    **stream,
                },
                {"table": "payment", "message": "PaymentMessage", "topics": [payments], **stream},
            ],
            "sql": sql,
            "sinks": [{"type": "parquet", "path": str(tmp_path / "out"), "time_column": "booked"}],
            "checkpoint": str(tmp_path / "checkpoint"),
            "dead_letter": {"path": str(tmp_path / "dead")},
        }
    )
    StreamingJob(spec, spark, available_now=True, emit=None).run()

    def key(order, payment, amount, booked, paid):
        return (order, payment, round(float(amount), 2), to_ms(booked), to_ms(paid))

    expected = Counter(
        key(
            b["order_number"],
            p["payment_id"],
            p["amount"],
            b["event_timestamp"],
            p["event_timestamp"],
        )
        for b in sent_b.events
        if b["status"] == "COMPLETED"
        for p in sent_p.events
        if p["order_number"] == b["order_number"]
        and 0 <= to_ms(p["event_timestamp"]) - to_ms(b["event_timestamp"]) <= 600_000
    )
    assert len(expected) > 100
    got = Counter(
        key(r.order_number, r.payment_id, r.amount, r.booked, r.paid)
        for r in spark.read.parquet(str(tmp_path / "out")).collect()
    )
    assert got == expected


def test_late_records_are_counted_and_change_nothing(spark, kafka_broker, tmp_path):
    bootstrap = kafka_broker.bootstrap
    topic = new_topic(bootstrap, "late")
    sent = publish_events(bootstrap, topic, 2000)
    spec = surge_spec(
        bootstrap, topic, tmp_path, [{"type": "parquet", "path": str(tmp_path / "p")}]
    )
    first = StreamingJob(spec, spark, available_now=True, emit=None).run()
    assert first.late_rows == 0
    before = spark.read.parquet(str(tmp_path / "p")).collect()

    created = [e for e in sent.events if e["status"] == "CREATED"][:25]
    late = [  # an hour behind the watermark
        {**e, "event_timestamp": iso(to_ms(e["event_timestamp"]) / 1000 - 3600)} for e in created
    ]
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap})
    for e in late:
        producer.produce(topic, encode(e, "esb.booking.BookingLogMessage"), partition=0)
    producer.flush(30)
    second = StreamingJob(spec, spark, available_now=True, emit=None).run()
    # Spark counts late rows where its stateful operator drops them: after the partial
    # aggregation of each input partition, so one per (cell, vehicle, minute) here.
    assert second.input_rows == len(late) == 25
    assert second.late_rows == len(surge_windows(late)) > 15
    after = spark.read.parquet(str(tmp_path / "p")).collect()
    assert surge_rows(r.asDict() for r in after) == surge_rows(r.asDict() for r in before)


def test_early_updates_rewrite_windows_until_final(spark, kafka_broker, influxdb_v1, tmp_path):
    bootstrap = kafka_broker.bootstrap
    topic, out_topic = new_topic(bootstrap, "updates"), new_topic(bootstrap, "updates-out")
    sent = publish_events(bootstrap, topic, 3000)
    influx = influx_v1_sink(influxdb_v1)
    spec = surge_spec(
        bootstrap,
        topic,
        tmp_path,
        [
            influx,
            kafka_sink(bootstrap, out_topic),
        ],
        stream_options={"max_offsets_per_trigger": 300},
        emit="updates",
    )
    StreamingJob(spec, spark, available_now=True, emit=None).run()
    everything = surge_windows(sent.events)
    expected = closed(everything, sent.events)

    messages = kafka_messages(bootstrap, out_topic)
    latest = {m.key(): json.loads(m.value()) for m in messages}  # a compacted topic's view
    assert len(messages) > len(latest)  # windows were updated before they were final
    final = surge_rows(latest.values())
    assert {k: v for k, v in final.items() if k in expected} == expected
    assert all(everything[k] == v for k, v in final.items() if k[2] > max(expected)[2])

    rewritten = influx_v1_rows(influxdb_v1, influx)
    assert {k: v for k, v in rewritten.items() if k in expected} == expected


def test_with_bootstrap_moves_every_kafka_address_and_nothing_else(tmp_path):
    from workbench.streaming.job import with_bootstrap

    spec = parse(
        {
            "name": "moved",
            "streams": [{"table": "booking", "message": "BookingLogMessage", "topics": ["t"]}],
            "sql": "SELECT * FROM booking",
            "sinks": [
                {"type": "kafka", "topic": "out"},
                {"type": "parquet", "path": str(tmp_path / "p")},
            ],
            "dead_letter": {"type": "kafka", "topic": "dlq"},
        }
    )
    moved = with_bootstrap(spec, "broker:1234")
    assert moved.streams[0].bootstrap_servers == "broker:1234"
    assert moved.sinks[0].bootstrap_servers == "broker:1234"  # type: ignore[attr-defined]
    assert moved.sinks[1] == spec.sinks[1]
    assert moved.dead_letter.bootstrap_servers == "broker:1234"


def test_job_state_is_resolved_once_and_shared_by_every_writer(
    spark, kafka_broker, tmp_path, monkeypatch
):
    from workbench import streams

    bootstrap = kafka_broker.bootstrap
    topic, out_topic = new_topic(bootstrap, "shared"), new_topic(bootstrap, "shared-out")
    sent = publish_events(bootstrap, topic, 800, malformed=0.02)
    resolved = []
    real = streams.registry_for
    monkeypatch.setattr(streams, "registry_for", lambda spec: resolved.append(spec) or real(spec))
    sinks = [{"type": "parquet", "path": str(tmp_path / "p")}, kafka_sink(bootstrap, out_topic)]
    spec = surge_spec(
        bootstrap, topic, tmp_path, sinks, dead_letter={"type": "kafka", "topic": f"{topic}-dlq"}
    )
    job = StreamingJob(spec, spark, available_now=True, emit=None).start()
    contexts = {id(writer.ctx) for _, writer in job._writers} | {id(job._dead.ctx)}  # type: ignore[union-attr]
    assert contexts == {id(job.context)}
    totals = job.run()
    assert len(resolved) == 1  # one schema registry for the plan and every writer
    assert totals.dead_letters == sent.malformed
    assert len(kafka_messages(bootstrap, f"{topic}-dlq")) == sent.malformed


def test_a_lone_one_pass_writer_is_the_querys_sink_and_computes_each_batch_once(
    spark, kafka_broker, tmp_path, monkeypatch
):
    """One Parquet sink and no rules: the query writes into the folder itself (no
    foreachBatch, no cache), and the job counts its rows and dead letters from what the write
    computed (no count of its own). Computed twice, a batch's observed metrics would double
    and disagree with the folders."""
    from pyspark.sql import DataFrame

    bootstrap = kafka_broker.bootstrap
    topic = new_topic(bootstrap, "bookings")
    sent = publish_events(bootstrap, topic, 3000, malformed=0.01)
    assert sent.malformed > 10
    spec = surge_spec(
        bootstrap,
        topic,
        tmp_path,
        [{"type": "parquet", "path": str(tmp_path / "parquet")}],
        stream_options={"max_offsets_per_trigger": 1000},
    )
    persisted = []
    persist = DataFrame.persist
    monkeypatch.setattr(
        DataFrame, "persist", lambda self, *a: persisted.append(self) or persist(self, *a)
    )
    job = StreamingJob(spec, spark, available_now=True, emit=None)
    totals = job.run()

    assert totals.batches >= 3 and not persisted
    sink = job.queries[0].lastProgress["sink"]["description"]
    assert sink == f"DaggerFileSink[{tmp_path / 'parquet'}]"
    parquet = spark.read.parquet(str(tmp_path / "parquet")).collect()
    expected = closed(surge_windows(sent.events), sent.events)
    assert surge_rows(r.asDict() for r in parquet) == expected
    assert totals.rows_written == {f"parquet {tmp_path / 'parquet'}": len(parquet)}
    dead = spark.read.parquet(str(tmp_path / "dead-letters")).collect()
    assert len(dead) == sent.malformed == totals.dead_letters


def test_stopping_now_leaves_a_query_whose_broker_is_gone_to_the_process_end(spark, tmp_path):
    """Spark's Kafka source closes its admin client on the query's thread, and that waits out
    the requests to a broker that is gone (11-14 s measured): a run process told to stop now
    (a Kafka failover) waits ``abandon_after_s`` for it, no longer, and says so."""
    from polling import wait_for

    from workbench.dev.kafka import Broker
    from workbench.dev.ports import free_ports

    broker = Broker(tmp_path / "kafka", *free_ports(2))
    broker.start()
    try:
        topic = new_topic(broker.bootstrap, "gone")
        publish_events(broker.bootstrap, topic, 300)
        spec = surge_spec(broker.bootstrap, topic, tmp_path, [{"type": "log"}])
        job = StreamingJob(spec, spark, checkpoint=tmp_path / "checkpoint").start()
        wait_for(lambda: job.totals.records_read >= 300, 120, "the records read")
    finally:
        broker.stop()
    query = job.queries[0]
    wait_for(lambda: "offsets" in query.status["message"], 60, "a batch asking the dead broker")
    started = time.monotonic()
    job.stop(graceful=False, abandon_after_s=2.0)
    took = time.monotonic() - started
    assert job.abandoned, f"the query stopped in {took:.1f} s: its source did not hang"
    assert took < 10, f"stop took {took:.1f} s"
    # the session outlives the test (a run process would end here): with its broker back
    # the abandoned stop ends; until it has, Spark's query manager is locked and the next
    # call on it (the teardown's) waited minutes
    broker.start()
    try:
        wait_for(lambda: not stopping(), 120, "the abandoned stop to end")
        assert not query.isActive
    finally:
        broker.stop()


def stopping() -> bool:
    """Whether a stop of a query left behind (:func:`workbench.streaming.job._stopped_within`)
    runs."""
    import threading

    from workbench.streaming.job import STOP_THREAD

    return any(t.name == STOP_THREAD and t.is_alive() for t in threading.enumerate())
