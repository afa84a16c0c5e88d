"""Version handoff: v1 stops, v2 (other SQL) continues on a NEW checkpoint; every window
is in InfluxDB exactly once: those closed by v1's watermark from v1's SQL, the rest from
v2's, compared with an independent computation. Plus the rule on synthetic Spark logs."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime

import pytest
from geo_reference import s2_id
from runfolder import Process, make_run
from streaming import (
    START,
    SURGE_SQL,
    WATERMARK_MS,
    event_ms,
    influx_v1_rows,
    influx_v1_sink,
    new_topic,
    surge_spec,
)

from workbench.dev.generator import Generator
from workbench.dev.producer import publish
from workbench.jobs import handoff

pytestmark = pytest.mark.unit

ALL_STATUSES_SQL = SURGE_SQL.replace("WHERE status = 'CREATED'", "")


def windows(events, keep) -> dict:
    """{(cell, vehicle, window end ms): (bookings, unique customers)}, 60 s tumbling."""
    groups: dict = {}
    for e in events:
        if keep(e):
            end = (event_ms(e) // 60_000 + 1) * 60_000
            key = (s2_id(e["pickup_lat"], e["pickup_long"], 13), e["vehicle_type"], end)
            groups.setdefault(key, []).append(e["customer_id"])
    return {k: (len(v), len(set(v))) for k, v in groups.items()}


def test_sql_change_hands_off_every_window_exactly_once(kafka_broker, influxdb_v1, tmp_path):
    bootstrap = kafka_broker.bootstrap
    topic = new_topic(bootstrap, "handoff")
    generator = Generator(seed=21, start=START, rate_per_s=40.0, out_of_order_seconds=5.0)
    events: list[dict] = []

    def send(count):
        out = publish(
            bootstrap, "bookings", topic=topic, count=count, generator=generator,
            speedup=None, keep_events=True,
        )  # fmt: skip
        events.extend(out.events)

    sink1 = influx_v1_sink(influxdb_v1)
    sink2 = {**sink1, "measurement": "surge_v2"}
    options = {"max_offsets_per_trigger": 1000}
    v1 = surge_spec(bootstrap, topic, tmp_path, [sink1], options, name="surge-handoff")
    v2 = surge_spec(
        bootstrap, topic, tmp_path, [sink2], options, name="surge-handoff", sql=ALL_STATUSES_SQL
    )
    send(6000)
    first = Process(make_run(tmp_path, v1.to_yaml(), tmp_path / "ckpt-v1"))
    try:
        first.wait_for(
            lambda: (b := first.run.read_heartbeat()) and b["metrics"]["records"] == 6000,
            240,
            "v1 to read the first part",
        )
        time.sleep(5)  # a batch more: v1 closes what its watermark allows
        assert first.stop() == 0, first.log()[-3000:]
    finally:
        first.kill()

    plan = handoff.plan(tmp_path / "ckpt-v1", v1, v2)
    last = handoff.committed(tmp_path / "ckpt-v1")[-1]
    watermark = last.watermark_ms  # v1 wrote exactly the windows ending by here
    floor = handoff.ms_of_iso(plan["min_rowtime"])
    assert floor == watermark // 60_000 * 60_000 and 0 < watermark - floor < 60_000
    start = plan["starting_offsets"]["booking"][topic]
    assert sum(start.values()) < sum(last.end[topic].values())  # open windows are re-read
    send(6000)

    second = Process(make_run(tmp_path, v2.to_yaml(), tmp_path / "ckpt-v2", plan, version=2))
    final = max(event_ms(e) for e in events) - WATERMARK_MS
    created = windows(events, lambda e: e["status"] == "CREATED")
    every = windows(events, lambda e: True)
    expected1 = {k: v for k, v in created.items() if k[2] <= watermark}
    expected2 = {k: v for k, v in every.items() if watermark < k[2] <= final}
    try:
        second.wait_for(
            lambda: len(influx_v1_rows(influxdb_v1, sink2, mid_write=True)) >= len(expected2),
            300,
            "v2's windows in InfluxDB",
        )
        time.sleep(5)  # one more trigger: nothing more may arrive
        assert second.stop() == 0, second.log()[-3000:]
    finally:
        second.kill()

    assert len(expected1) > 20 and len(expected2) > 20
    assert influx_v1_rows(influxdb_v1, sink1) == expected1
    assert influx_v1_rows(influxdb_v1, sink2) == expected2
    open_at_switch = [k for k in expected2 if k[2] == floor + 60_000]
    assert open_at_switch  # windows spanning the switch were recomputed whole by v2
    assert f"rows from {datetime.fromtimestamp(floor / 1000, UTC).isoformat()}" in second.log()


def _write_log(ckpt, batches, first):
    """Spark's offset/commit logs as the Kafka source writes them."""
    query = ckpt / "sinks"
    for folder in ("offsets", "commits", "sources/0"):
        (query / folder).mkdir(parents=True)
    (query / "sources/0/0").write_bytes(b"\x00v1\n" + json.dumps(first).encode())
    for n, (wm, next_wm, end) in enumerate(batches):
        meta = {"batchWatermarkMs": wm, "batchTimestampMs": 1, "conf": {}}
        (query / "offsets" / str(n)).write_text(f"v1\n{json.dumps(meta)}\n{json.dumps(end)}")
        (query / "commits" / str(n)).write_text(
            f"v1\n{json.dumps({'nextBatchWatermarkMs': next_wm})}"
        )


def test_rule_on_recorded_logs(tmp_path):
    spec = surge_spec("127.0.0.1:1", "t", tmp_path, [])  # watermark delay 10 s
    stateless = spec.model_copy(update={"sql": "SELECT * FROM booking"})
    minute = 60_000
    ends = [{"t": {"0": 10 * (n + 1), "1": 20 * (n + 1)}} for n in range(4)]
    # watermarks: batch 1 ran at 1:40, 2 at 2:05, 3 at 2:30; after 3: 2:50
    marks = [(0, 100_000), (100_000, 125_000), (125_000, 150_000), (150_000, 170_000)]
    batches = [(wm, nxt, end) for (wm, nxt), end in zip(marks, ends, strict=True)]
    _write_log(tmp_path / "ck", batches, {"t": {"0": 0, "1": 0}})
    plan = handoff.plan(tmp_path / "ck", spec, spec)
    # W = 2:30 -> floor 2:00; the latest batch with wm + 10 s < 2:00 is batch 1 (1:40)
    assert plan["min_rowtime"] == handoff.iso_ms(2 * minute)
    assert plan["starting_offsets"] == {"booking": {"t": {"0": 10, "1": 20}}}
    assert handoff.plan(tmp_path / "ck", spec, stateless) == {
        "starting_offsets": {"booking": {"t": {"0": 40, "1": 80}}},
        "min_rowtime": None,
    }
    # a longer old delay: only batch 0 fits -> the first offsets
    assert handoff.plan(tmp_path / "ck", spec, spec, old_delay_ms=30_000)["starting_offsets"] == {
        "booking": {"t": {"0": 0, "1": 0}}
    }
    assert handoff.grain_ms(SURGE_SQL) == minute
    hop = "SELECT count(1) AS n FROM booking GROUP BY HOP(rowtime, INTERVAL '10' SECOND, "
    hop += "INTERVAL '1' MINUTE)"
    assert handoff.grain_ms(hop) == 10_000
