"""The ledger: produced per window, made again from the seed, equals what the real broker
holds (undecodable records planted by the seed, windowed by their Kafka timestamp);
planted losses, duplicates and duplicated keys are listed by window and fail the verdict;
an InfluxDB sink is read per window."""

from __future__ import annotations

import uuid
from collections import Counter
from datetime import UTC, datetime

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import requests
from confluent_kafka import Consumer
from google.protobuf import json_format
from google.protobuf.message import DecodeError

from workbench.chaos.ledger import (
    balance,
    landed_influx,
    landed_windows,
    produced_windows,
    scenario_ledger,
    window_of,
)
from workbench.chaos.load import LoadPlan, drive
from workbench.chaos.report import render
from workbench.chaos.scenario import InfluxSink, LedgerSpec
from workbench.dev.generator import MESSAGES
from workbench.schemas.registry import default_registry

pytestmark = pytest.mark.unit

WINDOW_S = 2.0


def windows_on_topic(bootstrap: str, topic: str, count: int) -> tuple[Counter, Counter]:
    """Event-time windows of the ``count`` bookings ``topic`` holds: decoded ones by their
    event time, undecodable ones by their Kafka timestamp (also counted apart)."""
    message = default_registry().message_class(MESSAGES["bookings"])
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": topic, "auto.offset.reset": "earliest"}
    )
    consumer.subscribe([topic])
    counts: Counter[int] = Counter()
    bad: Counter[int] = Counter()
    try:
        while sum(counts.values()) < count:
            got = consumer.poll(10)
            assert got is not None, f"only {sum(counts.values())} of {count} records"
            try:
                event = json_format.MessageToDict(message.FromString(got.value()))
            except DecodeError:
                window = window_of(got.timestamp()[1] / 1000, WINDOW_S)
                bad[window] += 1
            else:
                stamp = datetime.fromisoformat(event["eventTimestamp"].replace("Z", "+00:00"))
                window = window_of(stamp.timestamp(), WINDOW_S)
            counts[window] += 1
    finally:
        consumer.close()
    return counts, bad


def test_produced_windows_match_the_topic_and_plants_are_listed(kafka_broker):
    topic = f"ledger-{uuid.uuid4().hex[:8]}"
    plan = LoadPlan(topic, "bookings", rate=200, duration_s=3, seed=11, malformed=0.05)
    result = drive(kafka_broker.bootstrap, plan)
    start = datetime.fromisoformat(result.started_at)
    planted: Counter[int] = Counter()
    produced = produced_windows("bookings", 11, start, 200, plan.count, WINDOW_S, 0.05, planted)
    on_topic, undecodable = windows_on_topic(kafka_broker.bootstrap, topic, plan.count)
    assert on_topic == produced and sum(produced.values()) == 600
    # the undecodable records, windowed by their Kafka timestamp, are the seed's plants
    assert undecodable == planted and sum(planted.values()) == result.malformed > 10
    ledger = balance(produced, on_topic - undecodable, WINDOW_S, undecodable, planted)
    assert ledger.passed and ledger.verdict().startswith("pass")
    assert ledger.totals()["dead_letters"] == ledger.totals()["malformed"] == result.malformed

    first, second, *_ = sorted(produced)
    landed = Counter(on_topic)
    landed[first] -= 3  # lost ...
    landed[second] += 2  # ... doubled ...
    dead = {second: 1}  # ... and a dead letter on top
    ledger = balance(produced, landed, WINDOW_S, dead)
    assert [(r.missing, r.duplicates) for r in ledger.lost] == [(3, 0)]
    assert [(r.missing, r.duplicates, r.dead_letters) for r in ledger.doubled] == [(0, 3, 1)]
    report = ledger.as_dict()
    assert report["totals"]["missing"] == 3 and report["totals"]["duplicates"] == 3
    assert not report["passed"] and report["verdict"].startswith("fail: 1 window(s) lost")


def test_a_per_record_sink_lists_each_key_landed_twice(tmp_path):
    rows = [  # window 10 holds a twice, window 12 holds b twice and c once
        {"at": 10.5, "id": "a"}, {"at": 11.0, "id": "a"}, {"at": 12.1, "id": "b"},
        {"at": 12.2, "id": "c"}, {"at": 13.9, "id": "b"},
    ]  # fmt: skip
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "part-0.parquet")
    keys: dict = {}
    landed = landed_windows(tmp_path, "at", 2.0, key_column="id", keys=keys)
    ledger = balance({10: 1, 12: 2}, landed, 2.0, keys=keys)
    assert [(r.window[-9:], r.duplicates) for r in ledger.doubled] == [
        ("00:00:10Z", 1), ("00:00:12Z", 1),
    ]  # fmt: skip
    assert ledger.as_dict()["duplicate_keys"] == {
        "1970-01-01T00:00:10Z": ["a"], "1970-01-01T00:00:12Z": ["b"],
    }  # fmt: skip


def test_an_influx_sink_counts_its_points_per_window(influxdb_v1):
    database = f"ledger_{uuid.uuid4().hex[:8]}"
    requests.post(influxdb_v1.url + "/query", params={"q": f'CREATE DATABASE "{database}"'})
    lines = [  # a window's point written twice is one point (the last value)
        "counts,tag_cell=a bookings=3i 10000", "counts,tag_cell=b bookings=4i 10000",
        "counts,tag_cell=a bookings=5i 12000", "counts,tag_cell=a bookings=5i 12000",
    ]  # fmt: skip
    answer = requests.post(
        influxdb_v1.url + "/write", params={"db": database, "precision": "ms"},
        data="\n".join(lines),
    )  # fmt: skip
    assert answer.status_code == 204, answer.text
    sink = InfluxSink(url=influxdb_v1.url, database=database, measurement="counts")
    assert landed_influx(sink, 2.0, "bookings") == {10: 7, 12: 5}
    assert landed_influx(sink, 2.0) == {10: 2, 12: 1}  # points as rows
    assert landed_influx(sink, 2.0, "bookings", marks_end=True) == {8: 7, 10: 5}


def test_a_window_the_jobs_watermark_has_not_closed_is_open_not_lost(tmp_path):
    """As an operator met it: the scenario's ledger gave no ``watermark_delay`` (or a
    shorter one than the job's), the last load's final windows were still open under the
    job's watermark, so the sink held none of their rows yet, and the ledger called them
    lost. Only the windows the job's watermark closed count; the others are open."""
    start = datetime(2026, 12, 7, 6, 0, 0, tzinfo=UTC)
    load = {"kind": "bookings", "seed": 5, "started_at": start.isoformat(), "topic": "t",
            "target_rate": 100, "sent": 1000, "seconds": 10.0}  # fmt: skip
    produced = produced_windows("bookings", 5, start, 100, 1000, WINDOW_S)
    mark = start.timestamp() + 6  # the job's watermark: 6 s into the load
    closed = {w: n for w, n in produced.items() if w + WINDOW_S <= mark}
    assert 2 <= len(closed) < len(produced) - 1
    rows = [  # the sink: a count per closed window, stamped with the window's end
        {"window_timestamp": datetime.fromtimestamp(w + WINDOW_S, UTC), "bookings": n}
        for w, n in closed.items()
    ]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "part-0.parquet")
    spec = LedgerSpec(parquet=str(tmp_path), count_column="bookings", window="2s", wait="0s")

    ledger = scenario_ledger([{"load": load}], spec, lambda: mark)
    assert ledger.passed, ledger.as_dict()
    assert [r.window for r in ledger.rows] == [_window(w) for w in sorted(closed)]
    assert [r.window for r in ledger.open] == [
        _window(w) for w in sorted(produced) if w not in closed
    ]
    assert sum(r.produced for r in ledger.open) == 1000 - sum(closed.values())
    report = ledger.as_dict()
    assert report["lost"] == [] and report["watermark"] == "2026-12-07T06:00:06Z"
    assert report["verdict"] == (
        f"pass: all {len(closed)} windows balance; {len(report['open'])} window(s) still open "
        "under the job's watermark at 2026-12-07T06:00:06Z"
    )
    page = render({"scenario": {"name": "s"}, "runs": [], "ledgers": [report]})
    assert "Lost windows: none" in page and "Open windows, not counted" in page

    # a closed window that misses rows is still lost
    short = [{**rows[0], "bookings": rows[0]["bookings"] - 4}, *rows[1:]]
    pq.write_table(pa.Table.from_pylist(short), tmp_path / "part-0.parquet")
    ledger = scenario_ledger([{"load": load}], spec, lambda: mark)
    assert [(r.window, r.missing) for r in ledger.lost] == [(_window(min(closed)), 4)]


def _window(epoch: int) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat().replace("+00:00", "Z")
