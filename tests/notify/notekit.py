"""Alerts and notifications for the notifier tests (what the job service would send)."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime

from workbench.notify.registry import Alert, Notification

STARTS = datetime(2026, 11, 24, 20, 1, 30, 250000, tzinfo=UTC)
ENDS = datetime(2026, 11, 24, 20, 7, 0, tzinfo=UTC)
JOB_URL = "http://127.0.0.1:8888/workbench/jobs/surge/health"


def alert(cell: str = "1234", status: str = "firing", bookings: float = 412, **kw) -> Alert:
    fields = {
        "fingerprint": hashlib.sha256(cell.encode()).hexdigest()[:16],
        "rule": "hot-cell",
        "job": "surge",
        "team": "pricing",
        "status": status,
        "labels": {"tag_s2id": cell},
        "annotations": {"summary": f"{cell}: {bookings:g} bookings a minute", "description": ""},
        "severity": "warning",
        "starts_at": STARTS,
        "ends_at": ENDS if status == "resolved" else None,
        "generator_url": JOB_URL,
        "values": {"bookings": bookings},
    }
    return Alert(**(fields | kw))


def problems(err) -> dict[str, str]:
    """A pydantic ValidationError's messages by field: ``{"routing_key": "Value error, ..."}``."""
    return {".".join(str(p) for p in e["loc"]): e["msg"] for e in err.errors()}


def note(*alerts: Alert, receiver: str = "pricing-oncall", test: bool = False) -> Notification:
    alerts = alerts or (alert(),)
    firing = any(a.status == "firing" for a in alerts)
    return Notification(
        receiver=receiver,
        group_key='{}:{alertname="hot-cell", job="surge"}',
        alerts=list(alerts),
        status="firing" if firing else "resolved",
        external_url="http://127.0.0.1:8888/workbench",
        test=test,
    )
