"""The webhook notifier sends Alertmanager's v4 webhook JSON, key by key, to a real server."""

from __future__ import annotations

import re
from datetime import datetime

import pytest
from notekit import ENDS, JOB_URL, alert, note

from workbench.exceptions import NotifyError
from workbench.notify.registry import NOTIFIERS, deliver

pytestmark = pytest.mark.unit

# Alertmanager's notify/webhook Message (template.Data + version, groupKey, truncatedAlerts)
MESSAGE_KEYS = [
    "receiver",
    "status",
    "alerts",
    "notification_reason",
    "groupLabels",
    "commonLabels",
    "commonAnnotations",
    "routeLabels",
    "externalURL",
    "version",
    "groupKey",
    "truncatedAlerts",
]
ALERT_KEYS = [
    "status",
    "labels",
    "annotations",
    "startsAt",
    "endsAt",
    "generatorURL",
    "fingerprint",
]
RFC3339 = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?(Z|[+-]\d\d:\d\d)$")


def webhook(url: str, **keys):
    return NOTIFIERS.config({"type": "webhook", "url": url, **keys})


def string_map(value) -> bool:
    return isinstance(value, dict) and all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    )


def test_a_firing_group_is_alertmanagers_v4_message(http_receiver):
    hook = http_receiver.endpoint("webhook")
    deliver(webhook(hook.url), note(alert("1234", bookings=412), alert("5678", bookings=350)))
    (request,) = hook.wait_for(1)
    assert request.method == "POST"
    assert request.headers["content-type"] == "application/json"
    assert request.headers["user-agent"] == "dagger-workbench"
    body = request.json
    assert list(body) == MESSAGE_KEYS
    assert body["version"] == "4"
    assert body["receiver"] == "pricing-oncall"
    assert body["status"] == "firing"
    assert body["groupKey"] == '{}:{alertname="hot-cell", job="surge"}'
    assert body["truncatedAlerts"] == 0
    assert body["externalURL"] == "http://127.0.0.1:8888/workbench"
    assert body["notification_reason"] == "first notification"
    identity = {"alertname": "hot-cell", "job": "surge", "team": "pricing"}
    assert body["groupLabels"] == identity
    assert body["commonLabels"] == identity | {"severity": "warning"}
    assert body["commonAnnotations"] == {"description": ""}
    assert body["routeLabels"] == {}
    for key in ("groupLabels", "commonLabels", "commonAnnotations", "routeLabels"):
        assert string_map(body[key]), key

    first, second = body["alerts"]
    assert list(first) == ALERT_KEYS
    assert first["status"] == "firing"
    assert first["labels"] == identity | {"severity": "warning", "tag_s2id": "1234"}
    assert first["annotations"] == {"summary": "1234: 412 bookings a minute", "description": ""}
    assert first["startsAt"] == "2026-11-24T20:01:30.25Z"
    assert first["endsAt"] == "0001-01-01T00:00:00Z"  # Go's zero time: no end yet
    assert first["generatorURL"] == JOB_URL
    assert re.fullmatch(r"[0-9a-f]{16}", first["fingerprint"])
    assert second["labels"]["tag_s2id"] == "5678"
    assert second["fingerprint"] != first["fingerprint"]
    for a in body["alerts"]:
        assert string_map(a["labels"]) and string_map(a["annotations"])
        assert RFC3339.match(a["startsAt"]) and RFC3339.match(a["endsAt"])


def test_a_resolved_alert_has_its_end_and_a_test_is_labelled(http_receiver):
    hook = http_receiver.endpoint("webhook")
    deliver(webhook(hook.url), note(alert("1234", status="resolved"), test=True))
    (body,) = [r.json for r in hook.wait_for(1)]
    assert body["status"] == "resolved"
    assert body["notification_reason"] == "all alerts resolved"
    (sent,) = body["alerts"]
    assert sent["status"] == "resolved"
    assert datetime.fromisoformat(sent["endsAt"].replace("Z", "+00:00")) == ENDS
    assert sent["labels"]["test"] == "true"
    assert body["commonLabels"]["test"] == "true"


def test_max_alerts_truncates_and_counts(http_receiver):
    hook = http_receiver.endpoint("webhook")
    deliver(webhook(hook.url, max_alerts=2), note(*(alert(str(c)) for c in range(5))))
    (body,) = [r.json for r in hook.wait_for(1)]
    assert len(body["alerts"]) == 2
    assert body["truncatedAlerts"] == 3


def test_send_resolved_false_drops_resolved_alerts(http_receiver):
    hook = http_receiver.endpoint("webhook")
    config = webhook(hook.url, send_resolved=False)
    deliver(config, note(alert("1", status="resolved")))
    deliver(config, note(alert("2"), alert("3", status="resolved")))
    (body,) = [r.json for r in hook.wait_for(1)]
    assert [a["labels"]["tag_s2id"] for a in body["alerts"]] == ["2"]
    assert len(hook.attempts()) == 1  # nothing at all was sent for the resolved-only group


def test_a_500_raises_with_the_receivers_status_and_answer(http_receiver):
    hook = http_receiver.endpoint("webhook").fail(500, times=1)
    with pytest.raises(NotifyError) as err:
        deliver(webhook(hook.url), note())
    assert err.value.status == 500 and err.value.retryable
    assert err.value.answer == "receiver failure (test)"
    assert err.value.receiver == "pricing-oncall"
    message = str(err.value)
    assert message.startswith(f"notifier 'pricing-oncall' (webhook at {hook.url}): ")
    assert "answered HTTP 500: receiver failure (test)" in message
    assert "check its logs; a later attempt may succeed" in message
    deliver(webhook(hook.url), note())  # the failure was for one request only
    assert [r.status for r in hook.attempts()] == [500, 200]


def test_a_4xx_is_not_retryable_and_says_what_to_check(http_receiver):
    hook = http_receiver.endpoint("webhook").reply(404, "no such hook")
    with pytest.raises(NotifyError) as err:
        deliver(webhook(hook.url), note())
    assert err.value.status == 404 and not err.value.retryable
    assert "check the notifier's URL" in str(err.value)


def test_a_receiver_that_is_not_listening_raises_connection_refused():
    from workbench.dev.ports import free_port

    url = f"http://127.0.0.1:{free_port()}/hook"
    with pytest.raises(NotifyError) as err:
        deliver(webhook(url), note())
    assert err.value.status is None and err.value.retryable
    assert "could not connect (Connection refused)" in str(err.value)
    assert "check that the receiver is up" in str(err.value)


def test_a_slow_receiver_times_out(http_receiver):
    hook = http_receiver.endpoint("webhook").delay(1.0)
    with pytest.raises(NotifyError) as err:
        deliver(webhook(hook.url), note(), timeout_s=0.2)
    assert "no answer within 0.2s" in str(err.value) and err.value.retryable


def test_headers_carry_a_token_resolved_at_send_time(http_receiver, monkeypatch):
    hook = http_receiver.endpoint("webhook").reply(401, "bad token")
    monkeypatch.setenv("WB_HOOK_TOKEN", "t0k3n-wrong")
    config = webhook(hook.url, headers={"Authorization": "Bearer ${env:WB_HOOK_TOKEN}"})
    assert "headers={'Authorization': 'Bearer ${env:WB_HOOK_TOKEN}'}" in repr(config)
    with pytest.raises(NotifyError) as err:
        deliver(config, note())
    assert err.value.status == 401 and "check the notifier's token or key" in str(err.value)
    assert hook.attempts()[0].headers["authorization"] == "Bearer t0k3n-wrong"
    literal = webhook(hook.url, headers={"Authorization": "Bearer t0k3n"})
    assert "t0k3n" not in repr(literal) and "'Authorization': '***'" in repr(literal)
