"""Preview over samples of a real broker, against two independent answers.

* ``geo_reference.surge_windows`` over the events the test published (plain Python);
* ``workbench replay --sample`` over the sample's saved offsets: Spark's Kafka batch source
  rather than confluent-kafka, sharing only the translation and the decoder.
"""

from __future__ import annotations

import json
from datetime import datetime

import pytest
from geo_reference import surge_windows
from streaming import SURGE_SQL, new_topic, publish_events, surge_rows, surge_spec

from workbench.cli.main import main
from workbench.exceptions import SqlError
from workbench.lab.preview import preview
from workbench.lab.sampling import sample
from workbench.schemas import default_registry

MESSAGE = "esb.booking.BookingLogMessage"


@pytest.fixture(scope="module")
def surge(kafka_broker, tmp_path_factory):
    bootstrap = kafka_broker.bootstrap
    topic = new_topic(bootstrap, "preview", partitions=3)
    sent = publish_events(bootstrap, topic, 3000, seed=21, malformed=0.01, late_fraction=0.03)
    spec = surge_spec(bootstrap, topic, tmp_path_factory.mktemp("surge"), sinks=[])
    whole = sample(spec, last=1_000_000)
    return {"spec": spec, "sent": sent, "sample": whole, "topic": topic}


def test_preview_equals_the_reference_computation(spark, surge):
    sent = surge["sent"]
    got = preview(surge["spec"], {"booking": surge["sample"]}, spark=spark)
    assert surge_rows(got.rows.to_dict("records")) == surge_windows(sent.events)
    assert got.counts["records"] == sent.sent == 3000
    assert got.counts["undecodable"] == sent.malformed > 0
    assert got.counts["decoded"] == len(sent.events)
    assert got.counts["rows"] == len(got.rows) > 0
    assert "dagger_s2id" in got.spark_sql.lower() or "s2" in got.spark_sql.lower()
    assert got.elapsed_s > 0


def test_preview_equals_replay_over_the_sample_offsets(spark, surge, tmp_path):
    part = sample(surge["spec"], last=400)  # a part of the topic: offsets matter
    assert 0 < len(part) < surge["sent"].sent
    saved = part.save(tmp_path / "sample.json")
    spec_file = tmp_path / "surge.yaml"
    spec_file.write_text(surge["spec"].to_yaml())
    out = tmp_path / "replay.jsonl"

    got = preview(surge["spec"], part, spark=spark)
    assert main(["replay", str(spec_file), "--sample", str(saved), "--out", str(out)]) == 0

    replayed = [json.loads(line) for line in out.read_text().splitlines()]
    assert surge_rows(got.rows.to_dict("records")) == surge_rows(replayed)
    assert list(got.rows.columns) == list(replayed[0])
    key = lambda r: json.dumps(r, sort_keys=True)  # noqa: E731
    assert sorted(map(key, map(_plain, got.rows.to_dict("records")))) == sorted(map(key, replayed))


def test_rows_are_ordered_by_window_then_keys(spark, surge):
    """Every preview, not only the examples': windows in time order, then the group keys
    (the SELECT lists the window last)."""
    got = preview(surge["spec"], surge["sample"], spark=spark)
    windows = list(got.rows["window_timestamp"])
    assert windows == sorted(windows) and len(set(windows)) > 1
    keys = list(zip(windows, got.rows["tag_s2id"], got.rows["tag_vehicle_type"], strict=True))
    assert keys == sorted(keys)


def _plain(row: dict) -> dict:
    out = {}
    for key, value in row.items():
        if isinstance(value, datetime):
            value = value.strftime("%Y-%m-%dT%H:%M:%S.") + f"{value.microsecond // 1000:03d}Z"
        out[key] = value.item() if hasattr(value, "item") else value
    return out


def test_late_records_are_what_the_job_would_drop(spark, surge):
    """Late = the record's one-minute window had closed when it arrived: the window's end
    is at or before the watermark, the latest event time of the records that arrived
    before it (an earlier Kafka timestamp: records stamped alike arrived together) minus
    the 10 s delay. Decoded here with Python's protobuf."""
    from itertools import groupby

    from google.protobuf.message import DecodeError

    cls = default_registry().message_class(MESSAGE)
    stamped = []
    for record in surge["sample"].records:
        try:
            message = cls.FromString(record.value)
        except DecodeError:
            continue
        if message.HasField("event_timestamp"):
            stamped.append((record.timestamp, message.event_timestamp.ToMilliseconds()))
    latest, late = None, 0
    for _, together in groupby(sorted(stamped), key=lambda r: r[0]):
        times = [ms for _, ms in together]
        if latest is not None:
            late += sum(1 for ms in times if (ms // 60_000 + 1) * 60_000 <= latest - 10_000)
        latest = max([*times, *([latest] if latest is not None else [])])
    got = preview(surge["spec"], surge["sample"], spark=spark)
    assert got.counts["late"] == late > 0
    assert preview(SURGE_SQL, surge["sample"], spark=spark, watermark="1h").counts["late"] == 0


def test_rendering_and_chart(spark, surge):
    got = preview(surge["spec"], surge["sample"], spark=spark)
    html = got._repr_html_()
    first = got.rows.iloc[0]
    assert f"<td>{first['tag_s2id']}</td>" in html and "undecodable" in html
    chart = got.chart("bookings")
    per_window = got.rows.groupby("window_timestamp")["bookings"].sum()
    assert chart.data["bookings"].to_dict() == per_window.to_dict()
    assert "<svg" in chart._repr_svg_()
    by_vehicle = got.chart("bookings", by="tag_vehicle_type", top=2)
    assert len(by_vehicle.data.columns) == 2


def test_bad_sql_names_line_and_column(spark, surge):
    with pytest.raises(SqlError) as err:
        preview("SELECT pickup_lat,\n  no_such_field\nFROM booking", surge["sample"], spark=spark)
    assert (err.value.line, err.value.column) == (2, 3)


@pytest.mark.parametrize(
    "sql, where, reason",
    [
        (  # issue 36: MISSING_AGGREGATION had no position
            "SELECT service_area_id, status, count(*) AS n\nFROM booking\nGROUP BY service_area_id",
            (1, 25, 6),
            'or use "any_value(status)"',
        ),
        (  # issue 36: "line 1 pos 133" of the translated SQL
            "SELECT order_number\nFROM booking\nWHERE status = 'COMPLETED' AND rowtime > amount",
            (3, 32, 16),
            "DATATYPE_MISMATCH.BINARY_OP_DIFF_TYPES",
        ),
        (  # issue 36: the closest column first, not every column
            "SELECT order_number, pickup_lattitude FROM booking",
            (1, 22, 16),
            "Unknown column 'pickup_lattitude'. Did you mean pickup_lat? Known: ",
        ),
        (  # a text that does not cast fails as the query runs: mapped back too
            "SELECT service_area_id,\n  sum(order_number) AS s\nFROM booking GROUP BY 1",
            (2, 3, 17),
            "Spark cannot run the query: [CAST_INVALID_INPUT] The value ",
        ),
        (  # issue 36: was an Arrow UserWarning and a NumberFormatException stack
            "SELECT order_number FROM booking WHERE amount > 'expensive'",
            (1, 49, 11),
            "'expensive' cannot be compared with amount (DOUBLE): give a number",
        ),
    ],
)
def test_spark_errors_point_at_the_users_sql(spark, surge, capfd, sql, where, reason):
    """Spark's analysis and run-time errors as one SqlError at the user's line and column
    (never the translated SQL's), and no warning or Java stack from PySpark."""
    with pytest.raises(SqlError) as err:
        preview(sql, surge["sample"], spark=spark)
    line, column, length = where
    assert (err.value.line, err.value.column) == (line, column)
    shown = str(err.value)
    assert reason in err.value.reason
    assert shown.splitlines()[-1].strip() == "^" * length
    assert "pos " not in shown and "SQLSTATE" not in shown and "__preview" not in shown
    printed = capfd.readouterr().err
    assert "UserWarning" not in printed and "Traceback" not in printed
