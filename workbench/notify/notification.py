"""What a notifier sends: :class:`Alert` (one alert of a rule, firing or resolved) and
:class:`Notification` (the alerts of one group, for one receiver).

Both are plain frozen dataclasses; :meth:`Notification.to_dict` and
:meth:`Notification.from_dict` make a JSON-safe copy (times as RFC 3339 text) so the job
service can keep an undelivered notification in its outbox. :func:`rfc3339` writes a time
the way Alertmanager (Go's ``time.RFC3339Nano``) does.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from typing import Any

FIRING, RESOLVED = "firing", "resolved"
#: what Go writes for a zero time: Alertmanager's ``endsAt`` of an alert with no end
ZERO_TIME = "0001-01-01T00:00:00Z"


@dataclass(frozen=True)
class Alert:
    """One alert: a rule's label set, firing or resolved.

    ``labels`` are the rule's ``group_by`` columns (strings); ``annotations`` hold the
    rendered ``summary`` and ``description``; ``values`` the observed values (column ->
    number or text); ``generator_url`` links to the job (its health page)."""

    fingerprint: str
    rule: str
    job: str
    team: str
    status: str  # "firing" | "resolved"
    labels: dict[str, str]
    annotations: dict[str, str]
    severity: str  # critical | error | warning | info
    starts_at: datetime
    ends_at: datetime | None
    generator_url: str
    values: dict[str, Any]

    @property
    def all_labels(self) -> dict[str, str]:
        """The labels a receiver sees: the rule's labels plus ``alertname`` (the rule),
        ``job``, ``team`` and ``severity`` (these four win over a column of the same name)."""
        identity = {
            "alertname": self.rule,
            "job": self.job,
            "team": self.team,
            "severity": self.severity,
        }
        return {str(k): str(v) for k, v in self.labels.items()} | identity

    @property
    def summary(self) -> str:
        return str(self.annotations.get("summary") or f"{self.rule} on {self.job}")

    @property
    def value_text(self) -> str:
        """The observed values as ``name=value`` pairs (``-`` when there are none)."""
        return ", ".join(f"{k}={_number(v)}" for k, v in self.values.items()) or "-"


@dataclass(frozen=True)
class Notification:
    """The alerts of one group (one rule of one job, see the job service's grouping), sent
    to one receiver (a notifier's name): all of the group's alerts, firing and newly
    resolved, each fingerprint once; ``status`` is firing while any alert fires.
    ``group_key`` identifies the group across notifications; ``external_url`` links to
    the job service; ``test`` marks a notification sent by ``workbench alerts test
    --send``."""

    receiver: str
    group_key: str
    alerts: list[Alert]
    status: str  # "firing" | "resolved"
    external_url: str
    test: bool = False
    #: why it is sent (Alertmanager's ``notification_reason``, :func:`reason`); "" = as the
    #: alerts alone tell it
    reason: str = ""

    @property
    def firing(self) -> list[Alert]:
        return [a for a in self.alerts if a.status == FIRING]

    @property
    def resolved(self) -> list[Alert]:
        return [a for a in self.alerts if a.status == RESOLVED]

    @property
    def title(self) -> str:
        """Alertmanager's subject line: ``[FIRING:2] hot-cell surge`` (rule, job),
        ``[RESOLVED] hot-cell surge``; ``[TEST]`` in front of a test."""
        state = f"FIRING:{len(self.firing)}" if self.firing else "RESOLVED"
        names = dict.fromkeys(f"{a.rule} {a.job}" for a in self.alerts)
        test = "[TEST] " if self.test else ""
        return f"{test}[{state}] {', '.join(names)}"

    def only_firing(self) -> Notification:
        """This notification without its resolved alerts (for ``send_resolved: false``)."""
        return replace(self, alerts=self.firing, status=FIRING)

    def labels_of(self, alert: Alert) -> dict[str, str]:
        """``alert``'s labels as sent, with ``test="true"`` on a test notification."""
        labels = alert.all_labels
        return labels | {"test": "true"} if self.test else labels

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for alert in data["alerts"]:
            alert["starts_at"] = rfc3339(alert["starts_at"])
            alert["ends_at"] = rfc3339(alert["ends_at"]) if alert["ends_at"] else None
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Notification:
        alerts = [
            Alert(**(a | {"starts_at": parse_time(a["starts_at"]), "ends_at": _maybe(a)}))
            for a in data["alerts"]
        ]
        return cls(**(data | {"alerts": alerts}))


def reason(told: set[str] | frozenset[str], firing: set[str], resolved: set[str]) -> str:
    """Why a group's notification is sent, as Alertmanager's dedup stage names it: ``told``
    are the fingerprints the receiver was last told were firing, ``firing`` and
    ``resolved`` those of the notification ("" when it need not be sent)."""
    if firing and not told:
        return "first notification"
    if not firing <= told:
        return "new alerts added"
    if not firing:
        return "all alerts resolved" if told and resolved else ""
    return "some alerts resolved" if resolved else "repeat interval elapsed"


def rfc3339(when: datetime) -> str:
    """``when`` as Go's RFC3339Nano in UTC: ``2026-11-24T20:08:13.5Z`` (naive = UTC)."""
    when = when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)
    text = when.strftime("%Y-%m-%dT%H:%M:%S")
    fraction = f"{when.microsecond:06d}".rstrip("0")
    return f"{text}.{fraction}Z" if fraction else f"{text}Z"


def parse_time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _maybe(alert: dict[str, Any]) -> datetime | None:
    return parse_time(alert["ends_at"]) if alert.get("ends_at") else None


def _number(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)
