"""The quality job against planted faults on the real broker: duplicates (1%), a range of
records deleted before the job read it (a consumer-side gap), late records (2%, by 5
minutes), undecodable records; the metrics equal what was planted, and the late window is
emitted again, corrected."""

from __future__ import annotations

from planted import LATE_MS, ON_TIME_MS, T0_MS, Planter, delete_before
from readback import influx_points
from streaming import influx_v1_sink, new_topic

from workbench.quality import metrics
from workbench.quality.job import QualityJob
from workbench.quality.spec import parse

W0, W1 = T0_MS, T0_MS + 600_000


def quality_spec(bootstrap, topic, tmp_path, **extra):
    return parse(
        {
            "kind": "quality",
            "name": "bookings-quality",
            "streams": [
                {
                    "topics": [topic],
                    "message": "esb.booking.BookingLogMessage",
                    "bootstrap_servers": bootstrap,
                }
            ],
            "business_key": "order_number",
            "sinks": [{"type": "parquet", "path": str(tmp_path / "metrics")}],
            "checkpoint": str(tmp_path / "checkpoint"),
            **extra,
        }
    )


def emitted(spark, tmp_path) -> dict[int, dict]:
    """The last emission of each window, by window start (ms)."""
    rows = metrics.latest(spark.read.parquet(str(tmp_path / "metrics"))).collect()
    return {int(r.window_timestamp.timestamp() * 1000): r.asDict() for r in rows}


def counts(row: dict) -> dict:
    return {k: row[k] for k in metrics.COUNTS}


def run(spec, spark):
    return QualityJob(spec, spark, available_now=True, emit=None).run()


def test_planted_faults_are_counted_exactly(spark, kafka_broker, influxdb_v1, tmp_path):
    bootstrap = kafka_broker.bootstrap
    influx = {**influx_v1_sink(influxdb_v1), "measurement": "quality"}
    topic = new_topic(bootstrap, "quality", partitions=2)
    planter = Planter(bootstrap, topic)
    dup0 = planter.bookings(0, 300, window=0, duplicate_every=100)  # 1% twice
    dup1 = planter.bookings(300, 300, window=1, duplicate_every=100)
    planter.flush()
    parquet = {"type": "parquet", "path": str(tmp_path / "metrics")}
    spec = quality_spec(bootstrap, topic, tmp_path, sinks=[parquet, influx])
    run(spec, spark)
    first = emitted(spark, tmp_path)
    assert counts(first[W0]) == {
        "total": 303,
        "unique": 303,
        "expected": 303,
        "missing": 0,
        "duplicates": dup0,
        "key_duplicates": dup0,
        "late": 0,
        "undecodable": 0,
    }
    assert dup0 == dup1 == 3 and first[W0]["score"] == round(100 * (1 - 3 / 303), 2)
    assert first[W0]["publish_latency_p50_ms"] == first[W0]["publish_latency_p99_ms"] == ON_TIME_MS

    # a gap: 20 records on partition 0 deleted before the job reads them
    doomed_from = planter.offsets[0]
    planter.bookings(1000, 20, window=1, partition=0)
    planter.flush()
    delete_before(bootstrap, topic, 0, doomed_from + 20)
    dup1 += planter.bookings(600, 100, window=1, duplicate_every=100, partition=0)
    planter.send(planted_key_duplicate(300), W1 + 400_000 + ON_TIME_MS)  # another status
    planter.send(planted_key_duplicate(301), W1 + 400_000 + ON_TIME_MS)
    planter.bookings(2000, 6, window=0, late=True)  # 2% of window 0's 300, 5 minutes late
    planter.garbage(5, window=1)
    planter.flush()
    run(spec, spark)
    second = emitted(spark, tmp_path)

    assert counts(second[W0]) == {  # corrected: emitted again with its late records
        "total": 309,
        "unique": 309,
        "expected": 309,
        "missing": 0,
        "duplicates": 3,
        "key_duplicates": 3,
        "late": 6,
        "undecodable": 0,
    }
    assert second[W0]["emitted_batch"] > first[W0]["emitted_batch"]
    assert second[W0]["publish_latency_p95_ms"] == ON_TIME_MS  # 6 of 309 late
    assert second[W0]["publish_latency_p99_ms"] == LATE_MS
    assert second[W0]["score"] < first[W0]["score"]
    total1 = 303 + 100 + dup1 - 3 + 2 + 5
    assert counts(second[W1]) == {
        "total": total1,
        "unique": total1,
        "expected": total1 + 20,
        "missing": 20,
        "duplicates": dup1,
        "key_duplicates": dup1 + 2,
        "late": 0,
        "undecodable": 5,
    }
    assert second[W1]["completeness"] == (total1) / (total1 + 20)
    assert second[W1]["score"] < 95

    # records of a window the watermark closed are dropped; closed windows stay as they were
    planter.bookings(3000, 3, window=-6)  # ends 50 min before W0; max event ~W1 + 10 min
    planter.flush()
    job = QualityJob(spec, spark, available_now=True, emit=None)
    job.run()
    third = emitted(spark, tmp_path)
    assert job.too_late == 3 and third == second and W0 - 6 * 600_000 not in third

    # InfluxDB: one point per (topic, window), overwritten when the window is emitted again
    points = influx_points(influxdb_v1, influx["database"], "quality")
    by_window = {p["time"]: p for p in points}
    assert len(points) == 2 and {p["tag_topic"] for p in points} == {topic}
    assert by_window[W0]["total"] == 309 and by_window[W0]["late"] == 6
    assert by_window[W1]["missing"] == 20 and by_window[W1]["score"] == second[W1]["score"]


def planted_key_duplicate(order: int) -> bytes:
    from planted import booking

    return booking(f"order-{order}", W1 + 400_000, status="CANCELLED")


def test_transaction_markers_and_aborted_records_are_not_missing(spark, kafka_broker, tmp_path):
    from confluent_kafka import Producer
    from planted import booking

    bootstrap = kafka_broker.bootstrap
    topic = new_topic(bootstrap, "quality-tx", partitions=1)
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": topic})
    producer.init_transactions(30)
    for n, commit in enumerate([True, False, True, True]):  # offsets skip markers and aborts
        producer.begin_transaction()
        for i in range(10):
            event = W0 + n * 10_000 + i * 100
            producer.produce(topic, booking(f"tx-{n}-{i}", event), timestamp=event + ON_TIME_MS)
        if commit:
            producer.commit_transaction(30)
        else:  # the aborted records reach the log first: an abort of nothing sent yet
            producer.flush(30)  # can fail with INVALID_TXN_STATE (librdkafka issue #4849)
            producer.abort_transaction(30)
    run(quality_spec(bootstrap, topic, tmp_path), spark)
    assert counts(emitted(spark, tmp_path)[W0]) == {
        "total": 30,
        "unique": 30,
        "expected": 30,
        "missing": 0,
        "duplicates": 0,
        "key_duplicates": 0,
        "late": 0,
        "undecodable": 0,
    }
