"""Spec validation: every problem names its key and says what is expected."""

from __future__ import annotations

import pytest

from workbench import spec
from workbench.exceptions import SpecError

BASE = {
    "name": "surge",
    "streams": [
        {"table": "booking", "message": "esb.booking.BookingLogMessage", "topics": ["booking-log"]}
    ],
    "sql": "SELECT 1 AS x FROM booking",
}


def _error(data: dict) -> SpecError:
    with pytest.raises(SpecError) as info:
        spec.parse(data, "s.yaml")
    return info.value


def test_minimal_spec_gets_defaults():
    parsed = spec.parse(BASE)
    assert (parsed.emit, parsed.watermark_delay_ms, parsed.trigger_interval_ms) == (
        "final",
        10_000,
        10_000,
    )
    assert parsed.streams[0].event_timestamp_field == "event_timestamp"
    assert parsed.rowtime_attribute == "rowtime"


def test_unknown_top_level_key_suggests_the_right_one():
    err = _error({**BASE, "streems": []})
    assert err.key == "streems"
    assert "Did you mean 'streams'?" in str(err)


def test_unknown_stream_key_is_located():
    stream = {**BASE["streams"][0], "topc": "x"}
    err = _error({**BASE, "streams": [stream]})
    assert err.key == "streams[0].topc"
    assert "Did you mean 'topics'?" in str(err)


@pytest.mark.parametrize(
    ("change", "key", "text"),
    [
        ({"sql": None}, "sql", "Input should be a valid string"),
        ({"emit": "early"}, "emit", "'final' or 'updates'"),
        ({"watermark_delay": "ten seconds"}, "watermark_delay", "is not a duration"),
        ({"name": "1st"}, "name", "starting with a letter"),
        ({"streams": []}, "streams", "at least 1 item"),
    ],
)
def test_bad_values_name_key_and_expectation(change, key, text):
    err = _error({**BASE, **change})
    assert err.key == key and text in str(err)


def test_stream_needs_exactly_one_topic_form():
    stream = {k: v for k, v in BASE["streams"][0].items() if k != "topics"}
    assert "exactly one of 'topics'" in str(_error({**BASE, "streams": [stream]}))
    both = {**stream, "topics": ["a"], "topic_pattern": "a.*"}
    assert "exactly one of 'topics'" in str(_error({**BASE, "streams": [both]}))


def test_topic_pattern_must_be_a_regex():
    stream = {**BASE["streams"][0], "topics": None, "topic_pattern": "booking-(log"}
    assert "not a valid regular expression" in str(_error({**BASE, "streams": [stream]}))


def test_two_streams_need_distinct_tables():
    err = _error({**BASE, "streams": BASE["streams"] * 2})
    assert "stream tables must differ" in str(err)


def test_sinks_are_validated_by_their_registered_config():
    err = _error({**BASE, "sinks": [{"type": "influxdb"}]})
    assert err.key == "sinks[0].type" and "Did you mean influx?" in str(err)
    err = _error({**BASE, "sinks": [{"type": "influx", "measurement": "m", "api": 1}]})
    assert "needs 'database'" in str(err)
    err = _error({**BASE, "sinks": [{"type": "parquet", "pth": "x"}]})
    assert "sinks[0].path" in str(err) and "Did you mean 'path'?" in str(err)


def test_valid_sinks_parse_into_their_types():
    parsed = spec.parse(
        {
            **BASE,
            "sinks": [
                {"type": "influx", "measurement": "surge", "bucket": "b"},
                {"type": "kafka", "topic": "out", "format": "proto", "message": "esb.x.Y"},
                {"type": "parquet", "path": "/tmp/x"},
                {"type": "log"},
            ],
        }
    )
    assert [s.type for s in parsed.sinks] == ["influx", "kafka", "parquet", "log"]
    assert parsed.sinks[2].partition_by == ["dt", "hour"]


def test_yaml_round_trip(tmp_path):
    parsed = spec.parse({**BASE, "sinks": [{"type": "log", "rows": 5}]})
    path = tmp_path / "s.yaml"
    path.write_text(parsed.to_yaml())
    assert spec.load(path) == parsed


def test_unreadable_yaml_is_reported(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text("name: [unclosed\n")
    with pytest.raises(SpecError, match="not valid YAML"):
        spec.load(path)
