"""Generic webhook notifier: POSTs the Alertmanager webhook JSON (version 4), so receivers
written for Alertmanager work unchanged.

The payload is what Alertmanager's ``notify/webhook`` encodes (its ``Message``: the
template ``Data`` plus ``version``, ``groupKey``, ``truncatedAlerts``), keys in its order.
An alert's labels are its rule's labels plus ``alertname``, ``job``, ``team`` and
``severity`` (and ``test="true"`` on a test); ``groupLabels`` are those of ``alertname``,
``job`` and ``team`` that all alerts share; ``endsAt`` of a firing alert is Go's zero time.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field

from workbench.notify.http import post_json
from workbench.notify.notification import FIRING, RESOLVED, ZERO_TIME, Notification, rfc3339
from workbench.notify.registry import NOTIFIERS, NotifierConfig, url_target

GROUP_LABELS = ("alertname", "job", "team")


class WebhookConfig(NotifierConfig):
    secret_fields: ClassVar[tuple[str, ...]] = ("headers",)

    type: Literal["webhook"] = "webhook"
    url: str
    max_alerts: int = Field(0, ge=0)  # alerts in one message (0: all); others in truncatedAlerts
    #: sent with each POST, e.g. {Authorization: "Bearer ${env:HOOK_TOKEN}"}
    headers: dict[str, str] = Field(default_factory=dict)

    def target(self) -> str:
        return url_target(self.url)

    def send(self, note: Notification, timeout_s: float) -> None:
        payload = message(note, self.max_alerts)
        post_json(note.receiver, self.type, self.url, payload, timeout_s, self.headers)


def message(note: Notification, max_alerts: int = 0) -> dict[str, Any]:
    """The Alertmanager v4 webhook message of ``note``."""
    alerts = note.alerts[:max_alerts] if max_alerts else note.alerts
    labels = [note.labels_of(a) for a in note.alerts]
    annotations = [{k: str(v) for k, v in a.annotations.items()} for a in note.alerts]
    common = _common(labels)
    return {
        "receiver": note.receiver,
        "status": FIRING if note.firing else RESOLVED,
        "alerts": [
            {
                "status": a.status,
                "labels": note.labels_of(a),
                "annotations": {k: str(v) for k, v in a.annotations.items()},
                "startsAt": rfc3339(a.starts_at),
                "endsAt": rfc3339(a.ends_at) if a.ends_at else ZERO_TIME,
                "generatorURL": a.generator_url,
                "fingerprint": a.fingerprint,
            }
            for a in alerts
        ],
        "notification_reason": note.reason or _reason(note),
        "groupLabels": {k: v for k, v in common.items() if k in GROUP_LABELS},
        "commonLabels": common,
        "commonAnnotations": _common(annotations),
        "routeLabels": {},
        "externalURL": note.external_url,
        "version": "4",
        "groupKey": note.group_key,
        "truncatedAlerts": len(note.alerts) - len(alerts),
    }


def _common(maps: list[dict[str, str]]) -> dict[str, str]:
    """The pairs every map has (Alertmanager's commonLabels / commonAnnotations)."""
    if not maps:
        return {}
    first, *rest = maps
    return {k: v for k, v in first.items() if all(m.get(k) == v for m in rest)}


def _reason(note: Notification) -> str:
    """Alertmanager's ``notification_reason`` as far as one notification tells it."""
    if not note.firing:
        return "all alerts resolved"
    return "some alerts resolved" if note.resolved else "first notification"


NOTIFIERS.add("webhook", WebhookConfig)
