"""The PagerDuty notifier sends Events API v2 events (trigger with dedup_key = fingerprint,
resolve on recovery) to a real HTTP receiver standing in for events.pagerduty.com."""

from __future__ import annotations

import pytest
from notekit import JOB_URL, alert, note, problems
from pydantic import ValidationError

from workbench.exceptions import NotifyError
from workbench.notify.registry import NOTIFIERS, deliver

pytestmark = pytest.mark.unit

KEY = "R0UT1NGKEY0123456789abcdefABCDEF"  # 32 characters, like a real integration key
ACCEPTED = {"status": "success", "message": "Event processed", "dedup_key": "x"}
SEVERITIES = {"critical", "error", "warning", "info"}


@pytest.fixture
def events(http_receiver, monkeypatch):
    monkeypatch.setenv("WB_PD_KEY", KEY)
    return http_receiver.endpoint("v2-enqueue").reply(202, ACCEPTED)


def pagerduty(url: str):
    return NOTIFIERS.config({"type": "pagerduty", "routing_key": "${env:WB_PD_KEY}", "url": url})


def test_each_firing_alert_is_a_trigger_with_the_required_fields(events):
    deliver(pagerduty(events.url), note(alert("1234", severity="critical"), alert("5678")))
    first, second = (r.json for r in events.wait_for(2))
    assert set(first) == {
        "routing_key",
        "event_action",
        "dedup_key",
        "payload",
        "client",
        "client_url",
        "links",
    }
    assert first["routing_key"] == KEY
    assert first["event_action"] == "trigger"
    assert first["dedup_key"] == alert("1234").fingerprint
    payload = first["payload"]
    assert payload["summary"] == "1234: 412 bookings a minute"
    assert 1 <= len(payload["summary"]) <= 1024
    assert payload["source"] == "surge"
    assert payload["severity"] == "critical"
    assert payload["timestamp"] == "2026-11-24T20:01:30.25Z"
    assert (payload["component"], payload["group"], payload["class"]) == (
        "hot-cell",
        "pricing",
        "hot-cell",
    )
    details = payload["custom_details"]
    assert details["labels"]["tag_s2id"] == "1234" and details["values"] == {"bookings": 412}
    assert first["client"] == "Dagger Workbench"
    assert first["client_url"] == "http://127.0.0.1:8888/workbench"
    assert first["links"] == [{"href": JOB_URL, "text": "Job surge"}]
    assert second["dedup_key"] == alert("5678").fingerprint
    assert second["payload"]["severity"] == "warning"
    assert all(e["payload"]["severity"] in SEVERITIES for e in (first, second))


def test_a_resolved_alert_resolves_its_incident(events):
    deliver(pagerduty(events.url), note(alert("1234", status="resolved")))
    (event,) = (r.json for r in events.wait_for(1))
    assert event == {
        "routing_key": KEY,
        "event_action": "resolve",
        "dedup_key": alert("1234").fingerprint,
    }


def test_unknown_severities_map_to_error_and_tests_are_marked(events):
    deliver(pagerduty(events.url), note(alert("1", severity="page"), test=True))
    (event,) = (r.json for r in events.wait_for(1))
    assert event["payload"]["severity"] == "error"
    assert event["payload"]["summary"].startswith("[TEST] ")
    assert event["payload"]["custom_details"]["labels"]["test"] == "true"


def test_the_routing_key_must_be_a_secret_reference():
    with pytest.raises(ValidationError) as err:
        NOTIFIERS.config({"type": "pagerduty", "routing_key": KEY})
    assert "is a secret: write a reference" in problems(err.value)["routing_key"]
    assert KEY not in str(err.value)  # pydantic's message does not echo the input
    config = NOTIFIERS.config({"type": "pagerduty", "routing_key": "${env:PD_KEY}"})
    assert config.url == "https://events.pagerduty.com/v2/enqueue"


def test_an_invalid_event_answer_is_reported_without_the_key(events):
    invalid = {
        "status": "invalid event",
        "message": "Event object is invalid",
        "errors": [f"routing_key {KEY} is not an integration key"],
    }
    events.reply(400, invalid)
    with pytest.raises(NotifyError) as err:
        deliver(pagerduty(events.url), note())
    assert err.value.status == 400 and not err.value.retryable
    assert "Event object is invalid" in err.value.answer
    assert KEY not in f"{err.value} {err.value.answer} {err.value!r}"
    assert "routing_key *** is not" in err.value.answer


def test_throttling_is_retryable(events):
    events.reply(
        429, {"status": "throttle event", "message": "Requests for this service are throttled"}
    )
    with pytest.raises(NotifyError) as err:
        deliver(pagerduty(events.url), note())
    assert err.value.status == 429 and err.value.retryable
    assert "rate-limiting" in str(err.value)


def test_values_json_cannot_hold_are_sent_as_text(events):
    from decimal import Decimal

    deliver(pagerduty(events.url), note(alert("1", values={"bookings": Decimal("412.5")})))
    (event,) = (r.json for r in events.wait_for(1))
    assert event["payload"]["custom_details"]["values"] == {"bookings": "412.5"}
