"""One flush of a group: the notification a receiver gets for one rule of one job now.

As Alertmanager's aggregation group and dedup stage do, the notification holds every
alert of the group the receiver should know of, each fingerprint once:

- the pending outbox rows, oldest first, one per alert (a later row of the same alert, a
  resolved after its firing, waits for the next flush, so the receiver sees them in
  order);
- the group's other alerts still firing that the receiver was told of (a repeat, or a
  new alert of the group, carries the whole group).

Its status is firing while any of its alerts fires; its reason
(:func:`~workbench.notify.notification.reason`) compares it with what the receiver was
last told. Silences: a muted firing row is not sent (``silenced``); a resolved row whose
firing was never delivered is needless (``skipped``); a resolved row of an alert the
receiver was told is firing is *held* while a silence mutes it (pending, looked at again
every :data:`HOLD_S` seconds) and sent once the silence ends: a delivered firing always
gets its resolved.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from workbench.alertmanager import outbox, silences
from workbench.alerts.rules import AlertRule
from workbench.jobs.alert_tables import SILENCED, SKIPPED, AlertRow, OutboxRow, Silence
from workbench.jobs.db import Job, now
from workbench.notify.notification import FIRING, Alert, Notification, reason

#: seconds between looks at a resolved row held by a silence (the silence may end early)
HOLD_S = 5.0


@dataclass
class Flush:
    """What one notification of a group delivers."""

    rows: list[OutboxRow] = field(default_factory=list)  # marked sent once delivered
    waiting: list[OutboxRow] = field(default_factory=list)  # for a later flush
    alerts: list[Alert] = field(default_factory=list)
    reason: str = ""

    def notification(self, receiver: str, group_key: str, link: str) -> Notification:
        status = FIRING if any(a.status == FIRING for a in self.alerts) else "resolved"
        return Notification(receiver, group_key, self.alerts, status, link, reason=self.reason)


def flush(
    s: Session, job: Job | None, rule: AlertRule | None, rows: list[OutboxRow], link: str
) -> Flush | None:
    """The flush of ``rows`` (the pending rows of one group and receiver, oldest first);
    None when nothing is to be sent now."""
    if not rows:
        return None
    first = rows[0]
    muting = silences.active(s, first.team)
    known = outbox.told(s, first.receiver, first.job_id, first.rule)
    out, held = Flush(), set[str]()
    chosen: dict[str, Alert] = {}
    for row in rows:
        if row.fingerprint in chosen or row.fingerprint in held:
            out.waiting.append(row)
            continue
        alert = Notification.from_dict(outbox.payload(row)).alerts[0]
        muted = silences.silenced(muting, row.rule, {**alert.labels, "job": alert.job})
        if row.kind == FIRING and muted is not None:
            row.status, row.last_error = SILENCED, f"silence {muted.id}"
        elif row.kind != FIRING and known.get(row.fingerprint) != FIRING:
            row.status, row.last_error = SKIPPED, "its firing notification was not sent"
        elif row.kind != FIRING and muted is not None:
            _hold(row, muted)
            held.add(row.fingerprint)
        else:
            chosen[row.fingerprint] = alert
            out.rows.append(row)
    if not chosen:
        return None
    skip = chosen.keys() | held
    extra = _firing(s, job, rule, known, skip, muting, link) if job and rule else []
    out.alerts = sorted([*chosen.values(), *extra], key=lambda a: sorted(a.labels.items()))
    told_firing = {fp for fp, kind in known.items() if kind == FIRING}
    firing = {a.fingerprint for a in out.alerts if a.status == FIRING}
    out.reason = reason(told_firing, firing, {a.fingerprint for a in out.alerts} - firing)
    return out


def _hold(row: OutboxRow, silence: Silence) -> None:
    until: datetime = min(silence.until, now() + timedelta(seconds=HOLD_S))
    row.next_attempt_at = until
    row.last_error = f"held by silence {silence.id} until it ends"


def _firing(
    s: Session,
    job: Job,
    rule: AlertRule,
    known: dict[str, str],
    skip: set[str],
    muting: list[Silence],
    link: str,
) -> list[Alert]:
    """The group's alerts firing now that the receiver was told of, besides ``skip``, and
    not muted."""
    query = select(AlertRow).where(
        AlertRow.job_id == job.id, AlertRow.rule == rule.name, AlertRow.status == FIRING
    )
    out = []
    for row in s.scalars(query):
        if row.fingerprint in skip or known.get(row.fingerprint) != FIRING:
            continue
        labels = json.loads(row.labels_json or "{}")
        if silences.silenced(muting, rule.name, {**labels, "job": job.name}) is not None:
            continue
        values = json.loads(row.last_value_json or "{}")
        fp = row.fingerprint
        out.append(
            outbox.make_alert(job, rule, fp, labels, FIRING, row.starts_at, None, values, link)
        )
    return out
