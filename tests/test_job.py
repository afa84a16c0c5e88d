"""Streaming daggers end to end on the real broker: generator → Kafka → job → every sink.

Each sink is read back through its own API and compared with an independent
computation over the generated events (``geo_reference.surge_windows``) and with
``workbench replay`` over the same events.
"""

from __future__ import annotations

import json
import uuid

from geo_reference import surge_windows
from readback import influx_points, influxql, kafka_messages, vm_export
from streaming import closed, new_topic, publish_events, surge_rows, surge_spec

from workbench.generator import write_jsonl
from workbench.job import StreamingJob
from workbench.replay import replay


def test_generator_to_every_sink(spark, kafka_broker, influxdb_v1, victoria_metrics, tmp_path):
    bootstrap = kafka_broker.bootstrap
    topic = new_topic(bootstrap, "bookings")
    out_topic = new_topic(bootstrap, "surge-out")
    sent = publish_events(bootstrap, topic, 4000, malformed=0.01)
    assert sent.malformed > 10
    database = f"surge_{uuid.uuid4().hex[:8]}"
    influxql(influxdb_v1, f'CREATE DATABASE "{database}"')
    measurement = f"surge_{uuid.uuid4().hex[:6]}"
    spec = surge_spec(
        bootstrap,
        topic,
        tmp_path,
        [
            {
                "type": "influx",
                "api": 1,
                "url": influxdb_v1.url,
                "database": database,
                "measurement": "surge",
            },
            {
                "type": "influx",
                "api": 2,
                "url": victoria_metrics.url,
                "bucket": "dagger",
                "measurement": measurement,
            },
            {
                "type": "kafka",
                "bootstrap_servers": bootstrap,
                "topic": out_topic,
                "key_columns": ["tag_s2id", "tag_vehicle_type", "window_timestamp"],
            },
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

    v1 = influx_points(influxdb_v1, database, "surge")
    assert surge_rows({**p, "window_timestamp": _iso(p["time"])} for p in v1) == expected

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


def _iso(ms: int) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(ms / 1000, UTC).isoformat()
