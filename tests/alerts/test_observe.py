"""Observations of result rows in Spark: every window a point, matching label sets listed
with their values, all rules in one query."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from workbench.alerts.observe import check, observe
from workbench.alerts.rules import AlertRule
from workbench.alerts.state import fingerprint
from workbench.exceptions import SpecError

T0 = datetime(2026, 11, 24, 8, 0, tzinfo=UTC)
MIN = 60_000
T0_MS = int(T0.timestamp() * 1000)


def rule(**keys) -> AlertRule:
    return AlertRule.model_validate(
        {"name": "hot", "when": "bookings > 300", "group_by": ["tag_s2id"], **keys}
    )


@pytest.fixture(scope="module")
def windows(spark):
    """Three one-minute windows of two cells; nothing crosses 300 in the last one."""
    from datetime import timedelta

    rows = [
        (T0, "a", 350, 9.5),
        (T0, "b", 120, 7.0),
        (T0 + timedelta(minutes=1), "a", 310, 9.0),
        (T0 + timedelta(minutes=1), "b", 420, 8.0),
        (T0 + timedelta(minutes=2), "a", 20, 6.0),
        (T0 + timedelta(minutes=2), None, 500, 1.0),  # a null label
        (None, "a", 999, 1.0),  # no time: no point
    ]
    schema = "window_timestamp timestamp, tag_s2id string, bookings long, avg_fare double"
    return spark.createDataFrame(rows, schema)


def test_points_labels_and_values(windows):
    got = observe(windows, [rule(summary="{avg_fare}")], "surge")
    assert [(o.rule, o.at) for o in got] == [("hot", T0_MS + i * MIN) for i in range(3)]
    fp = fingerprint("surge", "hot", {"tag_s2id": "a"})
    assert got[0].firing == {fp: {"labels": {"tag_s2id": "a"},
                                  "values": {"bookings": 350, "avg_fare": 9.5}}}  # fmt: skip
    assert sorted(h["labels"]["tag_s2id"] for h in got[1].firing.values()) == ["a", "b"]
    assert [h["labels"] for h in got[2].firing.values()] == [{"tag_s2id": ""}]


def test_a_point_with_no_match_is_listed_empty(windows):
    got = observe(windows, [rule(when="bookings > 1000")], "surge")
    assert [(o.at, o.firing) for o in got] == [(T0_MS + i * MIN, {}) for i in range(3)]


def test_rules_are_sorted_by_point_then_name(windows):
    rules = [rule(name="z-all", when="bookings > 0", group_by=[]), rule(name="a-low")]
    got = observe(windows, rules, "surge")
    assert [(o.at, o.rule) for o in got] == [
        (T0_MS + i * MIN, name) for i in range(3) for name in ("a-low", "z-all")
    ]
    everything = got[1].firing
    assert list(everything) == [fingerprint("surge", "z-all", {})]


def test_health_rules_and_no_rules_observe_nothing(windows):
    health = AlertRule.model_validate({"name": "down", "health": "no_data"})
    assert observe(windows, [health], "surge") == []
    assert observe(windows.limit(0), [rule()], "surge") == []


def test_time_columns_of_other_types(spark):
    frame = spark.createDataFrame(
        [(T0_MS, "a", 400), (T0_MS + MIN, "a", 1)], "at_ms long, tag_s2id string, bookings long"
    )
    got = observe(frame, [rule(time="at_ms")], "surge")
    assert [(o.at, len(o.firing)) for o in got] == [(T0_MS, 1), (T0_MS + MIN, 0)]


def test_one_query_for_all_rules(spark, windows):
    """Twenty rules cost the Spark jobs of one: the rules share a single scan and grouping."""

    def jobs(rules) -> int:
        group = f"observe-{len(rules)}"
        spark.sparkContext.setJobGroup(group, group)
        try:
            observe(windows, rules, "surge")
        finally:
            spark.sparkContext.setLocalProperty("spark.jobGroup.id", None)
        return len(spark.sparkContext.statusTracker().getJobIdsForGroup(group))

    many = [rule(name=f"r{i}", when=f"bookings > {i * 20}") for i in range(20)]
    assert jobs(many) == jobs([rule()]) >= 1


@pytest.mark.parametrize(
    ("when", "text"),
    [
        ("bookings + 1", "'bookings + 1' is a bigint, not a condition"),
        ("no_such_fn(bookings) > 1", "no_such_fn"),
        ("bookngs > 1", "Unknown column 'bookngs'"),
    ],
)
def test_check_refuses_what_spark_cannot_evaluate_as_a_condition(windows, when, text):
    with pytest.raises(SpecError) as info:
        check(windows, [rule(when=when)])
    assert info.value.key == "alerts[0].when" and text in str(info.value)


def test_odd_column_names_and_label_values(spark):
    frame = spark.createDataFrame(
        [(T0, 'o\'k \\ "x"', 400)], "window_timestamp timestamp, `it's cell` string, `n`` n` long"
    )
    odd = rule(when="`n`` n` > 1", group_by=["it's cell"], summary="{value}")
    [point] = observe(frame, [odd], "surge")
    [hit] = point.firing.values()
    assert hit == {"labels": {"it's cell": 'o\'k \\ "x"'}, "values": {"n` n": 400}}
