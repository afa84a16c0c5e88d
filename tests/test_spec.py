"""Spec validation: every problem names its key and says what is expected."""

from __future__ import annotations

import pytest

from workbench import spec
from workbench.exceptions import SpecError

pytestmark = pytest.mark.unit

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


def test_an_alias_bomb_is_refused_at_once_without_echoing_it():
    import time
    from pathlib import Path

    bomb = Path(__file__).parent / "fixtures" / "bad" / "specs" / "yaml-bomb.yaml"
    started = time.monotonic()  # 9**9 values under `description`, as users met it
    with pytest.raises(SpecError, match="too large") as info:
        spec.load(bomb)
    assert time.monotonic() - started < 5
    assert len(str(info.value)) < 300


def test_a_long_value_is_clipped_in_the_error():
    err = _error({**BASE, "emit": "x" * 100_000})
    assert "more characters)" in str(err) and len(str(err)) < 400


def test_name_is_capped_and_checkpoint_must_not_be_a_file(tmp_path):
    assert "at most 100 characters" in str(_error({**BASE, "name": "n" * 101}))
    spec.parse({**BASE, "name": "n" * 100})
    file = tmp_path / "cp"
    file.write_text("")
    err = _error({**BASE, "checkpoint": str(file)})
    assert err.key == "checkpoint" and "is a file; give a folder" in str(err)
    spec.parse({**BASE, "checkpoint": str(tmp_path / "new")})


def test_deduplicate_needs_keys_and_a_positive_span():
    parsed = spec.parse({**BASE, "deduplicate": {"keys": ["x"], "within": "10m"}})
    assert parsed.deduplicate.within_ms == 600_000
    assert _error({**BASE, "deduplicate": {"keys": [], "within": "1m"}}).key == "deduplicate.keys"
    err = _error({**BASE, "deduplicate": {"keys": ["x"], "within": 0}})
    assert err.key == "deduplicate.within"


@pytest.mark.parametrize("url", ["file:///etc/passwd", "http://[::1", "http://", "http://a b"])
def test_influx_url_must_be_http(url):
    sink = {"type": "influx", "api": 1, "database": "d", "measurement": "m", "url": url}
    assert _error({**BASE, "sinks": [sink]}).key == "sinks[0].url"


def test_did_you_mean_lists_at_most_forty_known_names():
    from workbench.exceptions import UnknownNameError

    err = UnknownNameError("field", "colum_7", [f"column_{i}" for i in range(5000)])
    assert "Did you mean column_7" in str(err)
    assert "(4960 more)" in str(err) and len(str(err)) < 1000
