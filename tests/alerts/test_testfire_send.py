"""``--send``: each test-fired transition reaches the spec's notifiers, labelled test="true"
(a real HTTP receiver standing in for an Alertmanager webhook)."""

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


def test_send_delivers_each_transition_as_a_test(spark, http_receiver):
    hook = http_receiver.endpoint("testfire")
    spec = spec_with(hook.url, ["oncall"])
    rows = [(T0, "a", 350), (T0 + timedelta(minutes=1), "a", 310),
            (T0 + timedelta(minutes=2), "a", 20)]  # fmt: skip
    frame = spark.createDataFrame(
        rows, "window_timestamp timestamp, tag_s2id string, bookings long"
    )
    test = evaluate(frame, spec.alerts, spec.name)
    said: list[str] = []
    assert send(test, spec, out=said.append) == 2
    firing, resolved = (r.json for r in hook.wait_for(2))
    assert [firing["status"], resolved["status"]] == ["firing", "resolved"]
    alert = firing["alerts"][0]
    assert alert["labels"]["test"] == "true" and alert["labels"]["tag_s2id"] == "a"
    assert alert["labels"]["alertname"] == "hot-cell" and alert["labels"]["severity"] == "critical"
    assert alert["annotations"]["summary"] == "a: 350"
    assert alert["fingerprint"] == fingerprint("surge-test", "hot-cell", {"tag_s2id": "a"})
    assert alert["startsAt"] == "2026-11-24T08:00:00Z"
    assert resolved["alerts"][0]["endsAt"] == "2026-11-24T08:02:00Z"
    assert said == ["sent firing hot-cell tag_s2id=a to oncall",
                    "sent resolved hot-cell tag_s2id=a to oncall"]  # fmt: skip


def test_send_refuses_a_notifier_the_spec_does_not_define(spark, http_receiver):
    spec = spec_with(http_receiver.endpoint("none").url, ["team-pager"])
    frame = spark.createDataFrame([(T0, "a", 999)], "window_timestamp timestamp, tag_s2id string, "
                                  "bookings long")  # fmt: skip
    with pytest.raises(WorkbenchError, match="notifies 'team-pager', which is not in the spec"):
        send(evaluate(frame, spec.alerts, spec.name), spec)
