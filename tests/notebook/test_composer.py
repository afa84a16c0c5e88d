"""The Composer driven from Python: values set on its widgets, its buttons clicked, against
the real broker; errors read from the inline error lines next to their fields."""

from __future__ import annotations

import pytest
from geo_reference import surge_windows
from streaming import SURGE_SQL, new_topic, publish_events, surge_rows

from workbench import notebook
from workbench.notebook.composer import Composer
from workbench.spec import load, parse

pytestmark = [pytest.mark.unit, pytest.mark.timeout(300)]

BOOKING = "esb.booking.BookingLogMessage"
DRIVER = "esb.driver.DriverLocationMessage"


def _fill(composer: Composer, topic: str, name: str = "surge-composed") -> None:
    """What an analyst does: name, message, topic from the list, the SQL."""
    composer.name.input.value = name
    form = composer.streams[0]
    form.refresh.click()
    form.message.input.value = BOOKING
    form.topics.input.value = (topic,)
    composer.sql.input.value = SURGE_SQL


def test_compose_check_fix_and_save(spark, kafka_broker, tmp_path):
    topic = new_topic(kafka_broker.bootstrap, "composer")
    composer = Composer(bootstrap=kafka_broker.bootstrap)
    form = composer.streams[0]
    assert topic in form.topics.input.options  # listed from the real broker
    _fill(composer, topic)
    # picking the message shows its field tree, its timestamp fields and a table name
    assert "pickup_lat" in form.field_tree.value and "BIKE" in form.field_tree.value
    assert form.event_time.input.options == ("event_timestamp",)
    assert form.table.input.value == "booking"
    form.group.input.value = "dagger-surge-composed"

    composer.sql.input.value = SURGE_SQL.replace("pickup_long, 13)", "pickup_lng, 13)", 1)
    composer.check_button.click()
    assert composer.report is None
    assert composer.sql.message.startswith("Unknown column 'pickup_lng'.")
    assert "Line 1, Col: 25." in composer.sql.message
    assert "^^^^^^^^^^" in composer.sql.message  # the fault underlined
    assert composer.status.value == ""  # not a traceback anywhere else

    composer.sql.input.value = SURGE_SQL
    composer.check_button.click()
    assert composer.sql.message == ""
    assert composer.report is not None
    assert [f.name for f in composer.report.output.fields] == [
        "tag_s2id",
        "tag_vehicle_type",
        "bookings",
        "unique_customers",
        "window_timestamp",
    ]

    composer.advanced.selected_index = 0
    composer.trigger_interval.input.value = "5s"
    composer.watermark_delay.input.value = "20s"
    composer.emit.input.value = "updates"
    composer.parallelism.input.value = 8
    composer.sink.kind.input.value = "influx"
    composer.sink.keys["measurement"].input.value = "surge"
    composer.sink.keys["api"].input.value = "1"
    composer.sink.keys["database"].input.value = "dagger"

    path = tmp_path / "out" / "surge.yaml"
    composer.path.value = str(path)
    composer.save_button.click()
    assert "saved" in composer.status.value
    saved = load(path)
    assert saved == composer.spec
    assert saved.streams[0].topics == [topic]
    assert saved.streams[0].group_id == "dagger-surge-composed"
    assert saved.streams[0].bootstrap_servers == kafka_broker.bootstrap
    assert (saved.trigger_interval, saved.watermark_delay, saved.emit) == ("5s", "20s", "updates")
    assert saved.spark_conf == {"spark.sql.shuffle.partitions": "8"}
    (sink,) = saved.sinks
    assert (sink.type, sink.measurement, sink.api, sink.database) == (
        "influx",
        "surge",
        1,
        "dagger",
    )

    # a saved spec opens in the Composer again, unchanged
    assert Composer(saved, bootstrap=kafka_broker.bootstrap).spec == saved


def test_spec_errors_show_next_to_their_fields(spark, kafka_broker, tmp_path):
    topic = new_topic(kafka_broker.bootstrap, "composer-errors")
    composer = Composer(bootstrap=kafka_broker.bootstrap)
    _fill(composer, topic, name="1-bad-name")
    form = composer.streams[0]
    form.topics.input.value = ()
    composer.watermark_delay.input.value = "ten seconds"
    composer.sink.kind.input.value = "influx"
    composer.sink.keys["measurement"].input.value = "surge"
    composer.sink.keys["api"].input.value = "1"
    composer.save_button.click()  # nothing saved: every problem shown where it is

    assert composer.name.message.startswith("a dagger name is letters, digits")
    assert "give exactly one of 'topics'" in form.topics.message
    assert "'ten seconds' is not a duration" in composer.watermark_delay.message
    assert "needs 'database'" in composer.sink.keys["database"].message
    assert composer.advanced.selected_index == 0  # opened, so the errors are seen
    assert composer.sql.message == ""
    assert "saved" not in composer.status.value

    # a spec whose event-time field the message does not have: shown in the stream's box
    composer.name.input.value = "surge-fixed"
    composer.watermark_delay.input.value = "10s"
    composer.sink.kind.input.value = "(none)"
    spec = parse(
        {
            "name": "surge-fixed",
            "streams": [
                {
                    "table": "booking",
                    "message": BOOKING,
                    "topics": [topic],
                    "event_timestamp_field": "created_at",
                }
            ],
            "sql": SURGE_SQL,
        }
    )
    composer.load(spec)
    composer.check_button.click()
    assert form.event_time.message.startswith("Unknown field 'created_at'")
    assert "Known: " in form.event_time.message and "event_timestamp" in form.event_time.message

    # an unknown message, as a loaded spec may name one
    composer.load(spec.model_copy(update={"streams": [spec.streams[0].model_copy(
        update={"message": "esb.booking.BookingMessage", "event_timestamp_field": "event_timestamp"}
    )]}))  # fmt: skip
    composer.check_button.click()
    assert form.message.message.startswith("Unknown message 'esb.booking.BookingMessage'")
    assert "Did you mean" in form.message.message


def test_two_streams(spark, kafka_broker, tmp_path):
    bookings = new_topic(kafka_broker.bootstrap, "composer-bookings")
    pings = new_topic(kafka_broker.bootstrap, "composer-pings")
    composer = Composer(bootstrap=kafka_broker.bootstrap)
    _fill(composer, bookings, name="two-streams")
    composer.add_button.click()
    assert len(composer.streams) == 2 and composer.add_button.disabled
    composer.add_button.click()
    assert len(composer.streams) == 2  # a dagger reads at most two streams

    second = composer.streams[1]
    assert {bookings, pings} <= set(second.topics.input.options)
    second.message.input.value = BOOKING
    second.topics.input.value = (pings,)
    composer.check_button.click()  # both read into 'booking'
    assert "already reads into table 'booking'" in second.table.message

    second.table.input.value = ""
    second.message.input.value = DRIVER
    assert second.table.input.value == "driver_location"
    second.table.input.value = "driver"
    composer.sql.input.value = (
        "SELECT d.driver_id, count(1) AS bookings, TUMBLE_END(b.rowtime, INTERVAL '60' SECOND)"
        " AS window_timestamp\nFROM booking b JOIN driver d ON b.driver_id = d.driver_id\n"
        "GROUP BY d.driver_id, TUMBLE(b.rowtime, INTERVAL '60' SECOND)"
    )
    composer.check_button.click()
    assert composer.report is not None, composer.status.value
    assert second.messages() == {} and composer.streams[0].messages() == {}
    spec = composer.spec
    assert [(s.table, s.message, s.topics) for s in spec.streams] == [
        ("booking", BOOKING, [bookings]),
        ("driver", DRIVER, [pings]),
    ]
    path = composer.save(tmp_path / "two.yaml")
    assert path is not None and load(path) == spec
    composer.remove_button.click()
    assert len(composer.streams) == 1 and not composer.add_button.disabled


def test_preview_counts_match_the_published_events(spark, kafka_broker, tmp_path):
    topic = new_topic(kafka_broker.bootstrap, "composer-preview")
    sent = publish_events(kafka_broker.bootstrap, topic, 900, seed=31, malformed=0.02)
    assert sent.malformed > 5
    composer = Composer(bootstrap=kafka_broker.bootstrap, sample_size=1000)
    _fill(composer, topic, name="surge-preview")

    composer.preview_button.click()
    shown = composer.last_preview
    assert shown is not None, composer.status.value
    # the whole topic (< 1000 per partition) was sampled: counts equal what was published
    assert shown.counts["records"] == sent.sent
    assert shown.counts["undecodable"] == sent.malformed
    assert shown.counts["decoded"] == len(sent.events)
    # and the rows equal an independent computation over the published events
    assert surge_rows(shown.rows.to_dict("records")) == surge_windows(sent.events)
    assert f"{len(shown.rows):,} rows" in composer.result.value
    assert composer.metric.value == "bookings"
    assert "unique_customers" in composer.metric.options
    (chart,) = composer.chart.children
    assert "<svg" in chart.value
    assert notebook.samples["booking"] is next(iter(shown.samples.values()))

    # re-preview reuses the sample; a smaller N per partition takes a new one
    first_sample = notebook.samples["booking"]
    composer.preview_button.click()
    assert notebook.samples["booking"] is first_sample
    composer.sample_size.value = 50
    composer.preview_button.click()
    assert composer.last_preview.counts["records"] == 150  # 3 partitions x 50
    composer.metric.value = "unique_customers"
    assert "unique_customers" in composer.chart.children[0].value

    # live from the preview's sample: the same 150 records, now streamed
    composer.live_from.value = "sample"
    live = composer.start_live(mode="update", trigger_s=1)
    assert live is not None, composer.status.value
    try:
        assert live.wait(rows=len(composer.last_preview.rows), timeout_s=120), live.status()
    finally:
        live.stop()
    assert surge_rows(live.rows.to_dict("records")) == surge_rows(
        composer.last_preview.rows.to_dict("records")
    )


def test_live_button_starts_and_stops_a_live_preview(spark, kafka_broker, tmp_path):
    topic = new_topic(kafka_broker.bootstrap, "composer-live")
    composer = Composer(bootstrap=kafka_broker.bootstrap)
    _fill(composer, topic, name="surge-live")
    composer.live_button.click()
    live = composer.live
    assert live is not None and live.active, composer.status.value
    assert composer.live_box.children  # its table and chart are shown
    assert any(q.name.startswith("live-surge-live") for q in spark.streams.active)
    composer.stop_button.click()
    assert not live.active and live.stopped_reason == "stopped"
    assert not [q for q in spark.streams.active if q.name.startswith("live-")]


def test_no_broker_is_said_under_the_topics():
    composer = Composer(bootstrap="127.0.0.1:1")
    form = composer.streams[0]
    assert form.topics.input.options == ()
    assert form.topics.message.startswith("No Kafka broker answers at 127.0.0.1:1.")


AREA_SQL = """SELECT service_area_id AS tag_service_area_id,
       vehicle_type AS tag_vehicle_type,
       count(1) AS bookings,
       TUMBLE_END(rowtime, INTERVAL '60' SECOND) AS window_timestamp
FROM booking
GROUP BY service_area_id, vehicle_type, TUMBLE(rowtime, INTERVAL '60' SECOND)"""


def test_rough_edges_seen_by_a_new_analyst(spark, kafka_broker, tmp_path):
    """Issue 9, item 5: the chart's metric is a measure, never an id; the live chart's
    metric is chosen; labels are distinct and explained; the live table says how many rows
    it shows; an error clears the old preview; the SQL is saved as a YAML block."""
    topic = new_topic(kafka_broker.bootstrap, "composer-edges")
    publish_events(kafka_broker.bootstrap, topic, 1200, seed=33, rate_per_s=8.0)  # 3 windows
    composer = Composer(bootstrap=kafka_broker.bootstrap, sample_size=1000)
    _fill(composer, topic, name="areas")
    composer.sql.input.value = AREA_SQL

    labels = {
        name: getattr(composer, name).input
        for name in ("trigger_interval", "watermark_delay", "emit", "parallelism")
    }
    shown = [w.description for w in labels.values()]
    assert len(set(shown)) == len(shown) and all(len(label) <= 15 for label in shown)
    assert "FLINK_WATERMARK_INTERVAL_MS" in labels["trigger_interval"].tooltip
    assert "FLINK_WATERMARK_DELAY_MS" in labels["watermark_delay"].tooltip
    assert all(w.style.description_width == "9.5em" for w in labels.values())

    composer.preview_button.click()
    rows = composer.last_preview.rows
    assert rows["tag_service_area_id"].dtype.kind == "i" and len(rows) > 20
    assert composer.metric.value == "bookings"
    assert list(composer.metric.options) == ["bookings", "tag_service_area_id"]

    composer.live_from.value = "sample"
    live = composer.start_live(mode="update", trigger_s=1)
    assert live is not None, composer.status.value
    try:
        assert live.wait(rows=len(rows), timeout_s=120), live.status()
    finally:
        live.stop()  # draws the widget a last time
    _, table, metric, chart = composer.live_box.children[0].children
    assert metric.value == "bookings" and metric.options[0] == "bookings"
    assert chart.children
    assert f"latest 20 of {len(rows):,} rows" in table.value

    composer.sql.input.value = AREA_SQL.replace("vehicle_type AS", "vehcle_type AS")
    composer.preview_button.click()
    assert "Unknown column 'vehcle_type'" in composer.sql.message
    assert composer.result.value == "" and composer.chart.children == ()
    assert composer.last_preview is None and composer.metric.options == ()

    composer.sql.input.value = AREA_SQL + "  \n"
    saved = composer.save(tmp_path / "areas.yaml")
    assert saved is not None, composer.status.value
    text = saved.read_text()
    assert "sql: |\n  SELECT service_area_id AS tag_service_area_id,\n" in text
    assert load(saved).sql.strip() == AREA_SQL
