"""Alert rules and notifiers in a spec: parsed, checked, located when wrong."""

from __future__ import annotations

import pytest
import yaml

from workbench import spec
from workbench.alerts.rules import AlertRule, check_columns, parse_health, render
from workbench.exceptions import SpecError
from workbench.streaming.checkpoints import spec_hash

pytestmark = pytest.mark.unit

BASE = {
    "name": "surge",
    "streams": [
        {"table": "booking", "message": "esb.booking.BookingLogMessage", "topics": ["booking-log"]}
    ],
    "sql": "SELECT 1 AS x FROM booking",
}
HOT = {
    "name": "hot-cell",
    "when": "bookings > 300",
    "group_by": ["tag_s2id"],
    "for": "2m",
    "keep_firing_for": "1m",
    "severity": "warning",
    "summary": "{tag_s2id}: {bookings} bookings a minute",
    "notify": ["pricing-oncall"],
}
ONCALL = {"pricing-oncall": {"type": "webhook", "url": "http://127.0.0.1/x", "send_resolved": True}}
COLUMNS = ["window_timestamp", "tag_s2id", "bookings", "avg_fare"]


def parsed(**keys) -> spec.DaggerSpec:
    return spec.parse({**BASE, **keys}, "s.yaml")


def error(**keys) -> SpecError:
    with pytest.raises(SpecError) as info:
        parsed(**keys)
    return info.value


def test_the_issue_example_parses_with_defaults():
    s = parsed(alerts=[HOT, {"name": "down", "health": "status in (FAILED, BACKING_OFF)"}],
               notifiers=ONCALL)  # fmt: skip
    hot, down = s.alerts
    assert (hot.kind, hot.for_ms, hot.keep_firing_for_ms, hot.time) == (
        "metric", 120_000, 60_000, "window_timestamp"
    )  # fmt: skip
    assert (hot.group_wait_ms, hot.repeat_interval_ms) == (10_000, 4 * 3_600_000)
    assert hot.when_columns == ["bookings"] and hot.value_columns == ["bookings"]
    assert down.kind == "health" and down.condition is not None
    assert down.condition.statuses == ("FAILED", "BACKING_OFF")
    assert s.notifiers["pricing-oncall"]["url"] == "http://127.0.0.1/x"


def test_spec_round_trips_through_yaml_with_the_for_key():
    s = parsed(alerts=[HOT], notifiers=ONCALL)
    text = s.to_yaml()
    assert "for: 2m" in text and "for_" not in text
    assert spec.parse(yaml.safe_load(text)) == s


@pytest.mark.parametrize(
    ("alert", "key", "text"),
    [
        ({**HOT, "when": "bookings >"}, "alerts[0].when", "Line 1, Col: 10"),
        ({**HOT, "fro": "1m"}, "alerts[0].fro", "Did you mean 'for'?"),
        ({**HOT, "for": "soon"}, "alerts[0].for", "is not a duration"),
        ({**HOT, "name": "Hot Cell"}, "alerts[0].name", "lower-case letters"),
        ({**HOT, "severity": "page"}, "alerts[0].severity", "'critical'"),
        ({**HOT, "summary": "{tag_s2id"}, "alerts[0].summary", "expected '}'"),
        ({"name": "x"}, "alerts[0]", "exactly one of 'when'"),
        ({"name": "x", "when": "a > 1", "health": "no_data"}, "alerts[0]", "exactly one"),
        ({"name": "x", "health": "status in (FAILD)"}, "alerts[0].health", "Did you mean FAILED?"),
        ({"name": "x", "health": "lag > 5"}, "alerts[0].health", "offsets_behind_latest"),
        ({"name": "x", "health": "no data"}, "alerts[0].health", "no_sink_write"),
        ({"name": "x", "health": "no_data", "group_by": ["a"]}, "alerts[0]", "no group_by"),
    ],
)
def test_bad_rules_name_their_key(alert, key, text):
    err = error(alerts=[alert])
    assert err.key == key
    assert text in str(err)


def test_alert_names_are_unique():
    assert "'hot-cell' is repeated" in str(error(alerts=[HOT, HOT]))


@pytest.mark.parametrize(
    ("notifiers", "text"),
    [
        ([], "expected a mapping"),
        ({"a": {"url": "http://x"}}, "needs a 'type'"),
        ({"a b": {"type": "webhook"}}, "notifier name 'a b'"),
        ({"a": {"type": "webhook", "send_resolved": "maybe"}}, "valid boolean"),
    ],
)
def test_bad_notifiers(notifiers, text):
    err = error(notifiers=notifiers)
    assert err.key.startswith("notifiers") and text in str(err)
    if "a" in notifiers:
        assert err.key.startswith("notifiers.a")


@pytest.mark.parametrize(
    ("text", "status", "metrics", "holds"),
    [
        ("status in (FAILED, BACKING_OFF)", "BACKING_OFF", {}, True),
        ("status in ('FAILED')", "RUNNING", {}, False),
        ("offsets_behind_latest > 100000", "RUNNING", {"offsets_behind_latest": 100001}, True),
        ("offsets_behind_latest > 100000", "RUNNING", {"offsets_behind_latest": 100000}, False),
        ("dead_letter_ratio >= 0.01", "RUNNING", {"dead_letter_ratio": 0.01}, True),
        ("late_ratio > 0.05", "RUNNING", {}, False),
        ("no_data", "RUNNING", {"no_data": True}, True),
        ("no_sink_write", "RUNNING", {"no_sink_write": False}, False),
    ],
)
def test_health_conditions(text, status, metrics, holds):
    assert parse_health(text).holds(status, metrics) is holds


def test_check_columns_points_at_the_unknown_column():
    rule = AlertRule.model_validate({**HOT, "when": "bookings > 300 AND bookngs_x < 5"})
    with pytest.raises(SpecError) as info:
        check_columns([rule], COLUMNS)
    err = info.value
    assert err.key == "alerts[0].when"
    assert "Unknown column 'bookngs_x'" in str(err) and "Line 1, Col: 20" in str(err)
    assert "Known: avg_fare, bookings, tag_s2id, window_timestamp" in str(err)


@pytest.mark.parametrize(
    ("change", "key"),
    [
        ({"group_by": ["cell"]}, "alerts[0].group_by"),
        ({"time": "window_start"}, "alerts[0].time"),
        ({"summary": "{fare}"}, "alerts[0].summary"),
    ],
)
def test_check_columns_covers_labels_time_and_templates(change, key):
    with pytest.raises(SpecError) as info:
        check_columns([AlertRule.model_validate({**HOT, **change})], COLUMNS)
    assert info.value.key == key and "Known: avg_fare" in str(info.value)


def test_check_columns_accepts_good_rules_and_skips_health_rules():
    rules = [AlertRule.model_validate(HOT),
             AlertRule.model_validate({"name": "quiet", "health": "no_data"})]  # fmt: skip
    check_columns(rules, COLUMNS)


def test_annotations_fill_the_templates():
    rule = AlertRule.model_validate(
        {**HOT, "description": "{rule} on {job}: {value} (fare {avg_fare}, {unknown})"}
    )
    notes = rule.annotations("surge", {"tag_s2id": "3ac"}, {"bookings": 412, "avg_fare": 9.5})
    assert notes == {
        "summary": "3ac: 412 bookings a minute",
        "description": "hot-cell on surge: 412 (fare 9.5, {unknown})",
    }
    assert render("{a", {"a": 1}) == "{a"


def test_a_rule_without_a_summary_says_what_holds():
    bare = {k: v for k, v in HOT.items() if k != "summary"}
    notes = AlertRule.model_validate(bare).annotations("surge", {"tag_s2id": "3"}, {"bookings": 9})
    assert notes["summary"] == f"hot-cell on surge: {HOT['when']} (bookings=9)"
    quiet = AlertRule.model_validate({"name": "quiet", "health": "no_data"})
    assert quiet.default_summary("surge", {}) == "quiet on surge: no_data"


def test_alerts_and_notifiers_do_not_change_the_state_layout():
    """Editing a rule keeps the checkpoint: spec_hash leaves alerts and notifiers out."""
    assert spec_hash(parsed()) == spec_hash(parsed(alerts=[HOT], notifiers=ONCALL))


def test_a_spec_file_error_in_a_rule_names_its_line(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump({**BASE, "alerts": [HOT, {**HOT, "name": "b", "when": "a >"}]},
                                   sort_keys=False))  # fmt: skip
    with pytest.raises(SpecError) as info:
        spec.load(path)
    line = path.read_text().splitlines().index("  when: a >") + 1
    assert str(info.value).startswith(f"{path}, line {line}: spec key 'alerts[1].when'")
