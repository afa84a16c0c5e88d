"""``--send``: test-fired windows reach the spec's notifiers, one notification per rule
(group) and window, labelled test="true" and with the spec's team (a real HTTP receiver
standing in for an Alertmanager webhook)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from workbench.alerts.state import fingerprint
from workbench.alerts.testfire import evaluate, send
from workbench.exceptions import WorkbenchError
from workbench.spec import parse

T0 = datetime(2026, 11, 24, 8, 0, tzinfo=UTC)


def spec_with(url: str, notify: list[str]):
    return parse({
        "name": "surge-test",
        "team": "pricing",
        "streams": [{"table": "booking", "message": "esb.booking.BookingLogMessage",
                     "topics": ["booking-log"]}],
        "sql": "SELECT 1 AS x FROM booking",
        "alerts": [{"name": "hot-cell", "when": "bookings > 300", "group_by": ["tag_s2id"],
                    "severity": "critical", "summary": "{tag_s2id}: {bookings}",
                    "notify": notify}],
        "notifiers": {"oncall": {"type": "webhook", "url": url}},
    })  # fmt: skip


def test_send_delivers_each_window_as_one_test_notification_per_group(spark, http_receiver):
    """Cells a and b fire in the first window (one POST with both), b resolves in the
    second while a fires on (one POST: a firing, b resolved), a resolves in the third."""
    hook = http_receiver.endpoint("testfire")
    spec = spec_with(hook.url, ["oncall"])
    minute = timedelta(minutes=1)
    rows = [(T0, "a", 350), (T0, "b", 400), (T0 + minute, "a", 310), (T0 + minute, "b", 20),
            (T0 + 2 * minute, "a", 20), (T0 + 2 * minute, "b", 20)]  # fmt: skip
    frame = spark.createDataFrame(
        rows, "window_timestamp timestamp, tag_s2id string, bookings long"
    )
    test = evaluate(frame, spec.alerts, spec.name)
    said: list[str] = []
    assert send(test, spec, out=said.append) == 3
    first, second, third = (r.json for r in hook.wait_for(3))
    assert [p["status"] for p in (first, second, third)] == ["firing", "firing", "resolved"]
    assert [p["notification_reason"] for p in (first, second, third)] == [
        "first notification", "some alerts resolved", "all alerts resolved"
    ]  # fmt: skip
    assert {p["groupKey"] for p in (first, second, third)} == {"test/surge-test/hot-cell"}
    states = [{a["labels"]["tag_s2id"]: a["status"] for a in p["alerts"]} for p in (second, third)]
    assert states == [{"a": "firing", "b": "resolved"}, {"a": "resolved"}]
    alert = next(a for a in first["alerts"] if a["labels"]["tag_s2id"] == "a")
    assert alert["labels"]["test"] == "true" and alert["labels"]["team"] == "pricing"
    assert alert["labels"]["alertname"] == "hot-cell" and alert["labels"]["severity"] == "critical"
    assert first["commonLabels"]["team"] == "pricing"
    assert alert["annotations"]["summary"] == "a: 350"
    assert alert["fingerprint"] == fingerprint("surge-test", "hot-cell", {"tag_s2id": "a"})
    assert alert["startsAt"] == "2026-11-24T08:00:00Z"
    assert third["alerts"][0]["endsAt"] == "2026-11-24T08:02:00Z"
    assert said == ["sent hot-cell (2 firing) to oncall",
                    "sent hot-cell (1 firing, 1 resolved) to oncall",
                    "sent hot-cell (1 resolved) to oncall"]  # fmt: skip


def test_send_refuses_a_notifier_the_spec_does_not_define(spark, http_receiver):
    spec = spec_with(http_receiver.endpoint("none").url, ["team-pager"])
    frame = spark.createDataFrame([(T0, "a", 999)], "window_timestamp timestamp, tag_s2id string, "
                                  "bookings long")  # fmt: skip
    with pytest.raises(WorkbenchError, match="notifies 'team-pager', which is not in the spec"):
        send(evaluate(frame, spec.alerts, spec.name), spec)
