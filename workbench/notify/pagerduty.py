"""PagerDuty notifier: Events API v2, one event per alert.

A firing alert is a ``trigger`` and a resolved one a ``resolve``, both with
``dedup_key`` = the alert's fingerprint, so PagerDuty opens one incident per alert and
closes it on recovery (sending a trigger again only updates the open incident: a retried
notification never opens a second one). The trigger's ``payload`` has the required
``summary`` (at most 1024 characters), ``source`` (the job) and ``severity`` (the rule's:
critical, error, warning, info), and ``timestamp``, ``component`` (the rule), ``group``
(the team), ``class`` and ``custom_details`` (labels, values, description). The
``routing_key`` (the integration key) must be a secret reference.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from workbench.notify.http import post_json
from workbench.notify.notification import FIRING, Alert, Notification, rfc3339
from workbench.notify.registry import NOTIFIERS, NotifierConfig, url_target

EVENTS_URL = "https://events.pagerduty.com/v2/enqueue"
SUMMARY_CHARS = 1024
SEVERITIES = {"critical": "critical", "error": "error", "warning": "warning", "info": "info"}
CLIENT = "Dagger Workbench"


class PagerDutyConfig(NotifierConfig):
    secret_fields: ClassVar[tuple[str, ...]] = ("routing_key",)
    reference_fields: ClassVar[tuple[str, ...]] = ("routing_key",)

    type: Literal["pagerduty"] = "pagerduty"
    routing_key: str  # "${env:PD_KEY}": the Events API v2 integration key
    url: str = EVENTS_URL

    def target(self) -> str:
        return url_target(self.url)

    def send(self, note: Notification, timeout_s: float) -> None:
        for event in events(note, self.routing_key):
            post_json(note.receiver, self.type, self.url, event, timeout_s)


def events(note: Notification, routing_key: str) -> list[dict[str, Any]]:
    """The Events API v2 events of ``note``: one per alert, in its order."""
    return [
        _trigger(note, alert, routing_key)
        if alert.status == FIRING
        else {"routing_key": routing_key, "event_action": "resolve", "dedup_key": alert.fingerprint}
        for alert in note.alerts
    ]


def _trigger(note: Notification, alert: Alert, routing_key: str) -> dict[str, Any]:
    summary = ("[TEST] " if note.test else "") + alert.summary
    details: dict[str, Any] = {
        "labels": note.labels_of(alert),
        "values": alert.values,
        "description": alert.annotations.get("description", ""),
    }
    links = [{"href": alert.generator_url, "text": f"Job {alert.job}"}]
    return {
        "routing_key": routing_key,
        "event_action": "trigger",
        "dedup_key": alert.fingerprint,
        "payload": {
            "summary": summary[:SUMMARY_CHARS],
            "source": alert.job,
            "severity": SEVERITIES.get(alert.severity, "error"),
            "timestamp": rfc3339(alert.starts_at),
            "component": alert.rule,
            "group": alert.team,
            "class": alert.rule,
            "custom_details": details,
        },
        "client": CLIENT,
        "client_url": note.external_url or alert.generator_url,
        "links": links if alert.generator_url else [],
    }


NOTIFIERS.add("pagerduty", PagerDutyConfig)
