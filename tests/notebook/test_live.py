"""Live preview on the real broker: the in-memory table holds the query's windows, the caps
stop the query by themselves, and a stopped preview leaves no streaming query behind."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from geo_reference import surge_windows
from streaming import START, closed, new_topic, publish_events, surge_rows, surge_spec

from workbench.lab.sampling import sample
from workbench.notebook import live as live_module
from workbench.notebook.live import LivePreview, group_keys, live_spec

pytestmark = [pytest.mark.unit, pytest.mark.timeout(300)]


@pytest.fixture
def bookings(kafka_broker):
    """A fresh topic holding 1,200 generated bookings over 2.5 minutes (3 partitions), 2% of
    them malformed."""
    topic = new_topic(kafka_broker.bootstrap, "live-bookings")
    sent = publish_events(kafka_broker.bootstrap, topic, 1200, seed=21, rate_per_s=8.0,
                          malformed=0.02)  # fmt: skip
    assert sent.malformed > 0
    return topic, sent


def _spec(kafka_broker, topic, tmp_path: Path, **extra):
    return surge_spec(kafka_broker.bootstrap, topic, tmp_path, [], **extra)


def _live_queries(spark, preview: LivePreview) -> list:
    return [q for q in spark.streams.active if preview.query and q.id == preview.query.id]


def test_append_mode_holds_the_closed_windows(spark, kafka_broker, bookings, tmp_path):
    topic, sent = bookings
    expected = closed(surge_windows(sent.events), sent.events)
    assert len(expected) > 50
    preview = LivePreview(
        _spec(kafka_broker, topic, tmp_path),
        spark=spark,
        start="earliest",
        mode="append",
        max_rows=10_000,
        trigger_s=1,
    ).start()
    try:
        assert preview.wait(rows=len(expected), timeout_s=120), preview.status()
    finally:
        preview.stop()
    assert surge_rows(preview.rows.to_dict("records")) == expected
    assert preview.status()["undecodable"] == sent.malformed
    assert preview.status()["state"] == "stopped"
    assert not _live_queries(spark, preview)
    assert preview.checkpoint is not None and not preview.checkpoint.exists()
    assert not Path(tmp_path / "checkpoint").exists()  # never the production checkpoint


def test_update_mode_upserts_each_window(spark, kafka_broker, tmp_path):
    """Read in small micro-batches, windows are updated several times; the table keeps one
    row per window with its latest value (no jitter, so no event is late)."""
    topic = new_topic(kafka_broker.bootstrap, "live-updates")
    sent = publish_events(kafka_broker.bootstrap, topic, 1200, seed=22, out_of_order_seconds=0)
    expected = surge_windows(sent.events)  # every window, open ones included
    preview = LivePreview(
        _spec(kafka_broker, topic, tmp_path, emit="updates"),
        spark=spark,
        start="earliest",
        max_rows=10_000,
        trigger_s=0.5,
        max_offsets_per_trigger=150,
    ).start()
    assert preview.mode == "update"
    assert preview.keys == ["tag_s2id", "tag_vehicle_type", "window_timestamp"]
    try:
        assert preview.wait(rows=len(expected), timeout_s=120), preview.status()
        for _ in range(120):
            if surge_rows(preview.rows.to_dict("records")) == expected:
                break
            preview.wait(timeout_s=1)
    finally:
        preview.stop()
    assert preview.batches >= 8  # 1,200 records, 150 per micro-batch
    assert surge_rows(preview.rows.to_dict("records")) == expected  # one row per window


def test_starts_from_a_samples_offsets(spark, kafka_broker, bookings, tmp_path):
    """Started from a sample taken at the end of the topic, the preview sees exactly the
    events published after it."""
    topic, _ = bookings
    spec = _spec(kafka_broker, topic, tmp_path)
    at_end = sample(spec.streams[0], bootstrap=kafka_broker.bootstrap, last=0)
    later = publish_events(
        kafka_broker.bootstrap, topic, 900, seed=23, start=START + timedelta(minutes=30)
    )
    expected = closed(surge_windows(later.events), later.events)
    starting = live_spec(spec, {"booking": at_end}).streams[0].starting_offsets
    assert starting == {topic: {str(p): e for p, (_, e) in at_end.offsets[topic].items()}}
    preview = LivePreview(spec, spark=spark, start={"booking": at_end}, trigger_s=1).start()
    try:
        assert preview.wait(rows=len(expected), timeout_s=120), preview.status()
    finally:
        preview.stop()
    assert surge_rows(preview.rows.to_dict("records")) == expected


def test_row_cap_stops_the_query(spark, kafka_broker, bookings, tmp_path):
    topic, _ = bookings
    preview = LivePreview(
        _spec(kafka_broker, topic, tmp_path, emit="updates"),
        spark=spark,
        start="earliest",
        max_rows=25,
        trigger_s=1,
    ).start()
    assert preview.wait(timeout_s=120), "the row cap did not stop the preview"
    assert preview.stopped_reason == "row cap reached (25 rows)"
    assert len(preview.rows) == 25
    assert not _live_queries(spark, preview)


def test_duration_cap_stops_the_query(spark, kafka_broker, bookings, tmp_path):
    topic, _ = bookings
    preview = LivePreview(
        _spec(kafka_broker, topic, tmp_path), spark=spark, duration_s=3, trigger_s=1
    ).start()  # latest: nothing arrives
    assert preview.active
    assert preview.wait(timeout_s=60), "the duration cap did not stop the preview"
    assert preview.stopped_reason == "duration cap reached (3s)"
    assert preview.rows.empty
    assert not _live_queries(spark, preview)


def test_stop_replace_and_kernel_exit_leave_no_query(spark, kafka_broker, bookings, tmp_path):
    topic, _ = bookings
    spec = _spec(kafka_broker, topic, tmp_path)
    first = LivePreview(spec, spark=spark, trigger_s=1).start()
    assert _live_queries(spark, first)
    second = LivePreview(spec, spark=spark, trigger_s=1).start()
    assert first.stopped_reason == "replaced by a new live preview"
    assert not _live_queries(spark, first) and _live_queries(spark, second)
    assert live_module.current() is second
    live_module.stop_current()  # what atexit runs when the kernel exits
    assert second.stopped_reason == "the kernel stopped"
    assert live_module.current() is None
    third = LivePreview(spec, spark=spark, trigger_s=1).start()
    third.stop()
    third.stop()  # idempotent
    assert third.stopped_reason == "stopped"
    assert not [q for q in spark.streams.active if q.name.startswith("live-")]


def test_live_spec_never_uses_the_production_group_or_checkpoint(kafka_broker, tmp_path):
    spec = surge_spec(
        kafka_broker.bootstrap,
        "t",
        tmp_path,
        [{"type": "log"}],
        stream_options={"group_id": "dagger-prod", "kafka_options": {"group.id": "prod"}},
    )
    live = live_spec(spec, "latest")
    stream = live.streams[0]
    assert stream.group_id == "workbench-live" and "group.id" not in stream.kafka_options
    assert stream.starting_offsets == "latest"
    assert live.sinks == [] and live.checkpoint is None


def test_group_keys_are_the_projections_without_aggregates():
    assert group_keys(
        "SELECT a, count(1) AS n, DistinctCount(c) AS d, TUMBLE_END(rowtime, "
        "INTERVAL '1' MINUTE) AS w FROM t GROUP BY a, TUMBLE(rowtime, INTERVAL '1' MINUTE)"
    ) == ["a", "w"]
    assert group_keys("SELECT a, b FROM t") == []


def test_chart_of_a_metric(spark, kafka_broker, bookings, tmp_path):
    topic, _ = bookings
    preview = LivePreview(
        _spec(kafka_broker, topic, tmp_path, emit="updates"),
        spark=spark,
        start="earliest",
        trigger_s=1,
        refresh_s=0.5,
    ).start()
    seen = []
    preview.on_update(seen.append)
    view = preview.widget()
    try:
        assert preview.wait(rows=20, timeout_s=120)
    finally:
        preview.stop()
    assert seen and not seen[-1].empty  # the map/table callbacks got the rows
    chart = preview.chart("bookings")
    per_window = preview.rows.groupby("window_timestamp")["bookings"].sum().sort_index()
    assert chart.time == "window_timestamp"
    assert chart.data["bookings"].tolist() == per_window.tolist()
    assert "<svg" in chart._repr_svg_()
    status, table = view.children[0].children[0], view.children[1]
    assert "stopped" in status.value and "tag_s2id" in table.value
