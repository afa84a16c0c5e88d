"""The outbox: notifications waiting to be delivered, one row per alert and receiver.

A transition (or a repeat of a still-firing alert) adds one ``pending`` row per notifier
its rule names, due after the rule's ``group_wait``; its payload is a one-alert
:class:`~workbench.notify.registry.Notification` as a dict. A group is one rule of one job
(``job_id``, ``rule``; ``group_key`` ``JOB_ID/RULE``): the dispatcher sends the pending
rows of one group and receiver, firing and resolved together, as one notification
(:mod:`workbench.alertmanager.flush`), then marks them ``sent``; a failed delivery leaves
them ``pending``, due again after a capped exponential backoff. The newest row ``sent``
of each alert and receiver is what the receiver was last told (:func:`told`), as
Alertmanager's notification log. Silenced and needless rows are marked ``silenced`` /
``skipped``; :func:`prune` deletes rows done for longer than the retention
(``alerting.retention_h``) once their alert is no longer firing, never a pending one.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from workbench.jobs.alert_tables import PENDING, SENT, AlertRow, OutboxRow
from workbench.jobs.config import ServiceConfig
from workbench.jobs.db import Job, now
from workbench.notify.registry import Alert, Notification

if TYPE_CHECKING:
    from workbench.alerts.rules import AlertRule
    from workbench.notify.registry import Alert


def moment(millis: int | None) -> datetime | None:
    """Epoch ms as an aware UTC datetime."""
    return None if millis is None else datetime.fromtimestamp(millis / 1000, UTC)


def base_url(config: ServiceConfig) -> str:
    """The service's public URL (``external_url``) with one trailing slash; "" when none is
    configured: never the address some process of the service happens to listen on (a
    CLI-started service on a random port is not where people look)."""
    return config.external_url.rstrip("/") + "/" if config.external_url else ""


def make_alert(
    job: Job,
    rule: AlertRule,
    fp: str,
    labels: dict[str, str],
    status: str,
    starts_at: datetime,
    ends_at: datetime | None,
    values: dict[str, Any],
    link: str,
) -> Alert:
    """One alert of ``rule`` as notifiers take it (templates rendered)."""

    return Alert(
        fingerprint=fp,
        rule=rule.name,
        job=job.name,
        team=job.team,
        status=status,
        labels=dict(labels),
        annotations=rule.annotations(job.name, labels, values),
        severity=rule.severity,
        starts_at=starts_at,
        ends_at=ends_at,
        generator_url=f"{link}workbench/jobs/{job.id}/health" if link else "",
        values=dict(values),
    )


def enqueue(
    s: Session, job: Job, rule: AlertRule, alert: Alert, link: str, receivers: Sequence[str]
) -> None:
    """One pending row per receiver, due after the rule's ``group_wait``."""

    due = now() + timedelta(milliseconds=rule.group_wait_ms)
    for receiver in receivers:
        note = Notification(receiver, f"{job.name}/{rule.name}", [alert], alert.status, link)
        s.add(
            OutboxRow(
                receiver=receiver,
                team=job.team,
                job_id=job.id,
                rule=rule.name,
                fingerprint=alert.fingerprint,
                kind=alert.status,
                group_key=f"{job.id}/{rule.name}",
                payload_json=json.dumps(note.to_dict()),
                status=PENDING,
                attempts=0,
                next_attempt_at=due,
            )
        )


def due_groups(s: Session, at: datetime | None = None) -> list[tuple[str, str, int, str]]:
    """(team, receiver, job id, rule) of every group with a pending row due at ``at``,
    oldest first."""
    query = (
        select(OutboxRow.team, OutboxRow.receiver, OutboxRow.job_id, OutboxRow.rule)
        .where(OutboxRow.status == PENDING, OutboxRow.next_attempt_at <= (at or now()))
        .order_by(OutboxRow.id)
    )
    groups: dict[tuple[str, str, int, str], None] = {}
    for team, receiver, job_id, rule in s.execute(query):
        groups.setdefault((team, receiver, job_id, rule), None)
    return list(groups)


def group_rows(s: Session, receiver: str, job_id: int, rule: str) -> list[OutboxRow]:
    """The pending rows of one group for one receiver, oldest first (due or not)."""
    query = select(OutboxRow).where(
        OutboxRow.status == PENDING,
        OutboxRow.receiver == receiver,
        OutboxRow.job_id == job_id,
        OutboxRow.rule == rule,
    )
    return list(s.scalars(query.order_by(OutboxRow.id)))


def told(s: Session, receiver: str, job_id: int, rule: str) -> dict[str, str]:
    """What ``receiver`` was last told of each alert of the group: fingerprint -> firing or
    resolved (the newest row sent)."""
    newest = (
        select(func.max(OutboxRow.id))
        .where(
            OutboxRow.status == SENT,
            OutboxRow.receiver == receiver,
            OutboxRow.job_id == job_id,
            OutboxRow.rule == rule,
        )
        .group_by(OutboxRow.fingerprint)
    )
    rows = s.execute(select(OutboxRow.fingerprint, OutboxRow.kind).where(OutboxRow.id.in_(newest)))
    return {fp: kind for fp, kind in rows}


def last_sent(s: Session) -> dict[tuple[int, str, str], datetime]:
    """When each group (job id, rule, receiver) was last notified."""
    query = (
        select(OutboxRow.job_id, OutboxRow.rule, OutboxRow.receiver, func.max(OutboxRow.sent_at))
        .where(OutboxRow.status == SENT)
        .group_by(OutboxRow.job_id, OutboxRow.rule, OutboxRow.receiver)
    )
    return {(j, r, to): at for j, r, to, at in s.execute(query) if at is not None}


def postpone(rows: Sequence[OutboxRow], until: datetime) -> None:
    """Make ``rows`` due no sooner than ``until``."""
    for row in rows:
        row.next_attempt_at = max(row.next_attempt_at, until)


def last_firing_rows(s: Session) -> dict[tuple[str, str], OutboxRow]:
    """The newest firing row per (fingerprint, receiver) of every alert firing now."""
    newest = (
        select(func.max(OutboxRow.id))
        .join(AlertRow, AlertRow.fingerprint == OutboxRow.fingerprint)
        .where(AlertRow.status == "firing", OutboxRow.kind == "firing")
        .group_by(OutboxRow.fingerprint, OutboxRow.receiver)
    )
    rows = s.scalars(select(OutboxRow).where(OutboxRow.id.in_(newest)))
    return {(r.fingerprint, r.receiver): r for r in rows}


def mark_sent(s: Session, ids: Sequence[int]) -> None:
    for row in rows(s, ids):
        row.status, row.sent_at, row.attempts = SENT, now(), row.attempts + 1


def mark_failed(
    s: Session, ids: Sequence[int], error: str, config: ServiceConfig, retryable: bool = True
) -> float:
    """Count a failed attempt on the rows; the seconds until they are due again (capped
    exponential backoff; the cap at once when ``retryable`` is false)."""
    policy = config.alerting
    delay = policy.retry_max_s
    for row in rows(s, ids):
        row.attempts += 1
        if retryable:
            delay = min(policy.retry_s * 2 ** (row.attempts - 1), policy.retry_max_s)
        row.next_attempt_at = now() + timedelta(seconds=delay)
        row.last_error = error[:2000]
    return delay


def prune(s: Session, retention_h: float, at: datetime | None = None) -> int:
    """Delete the rows done (sent, silenced, skipped) before ``retention_h`` hours ago whose
    alert is not firing (a firing alert's rows say whom to repeat and resolve to); how many."""
    firing = select(AlertRow.fingerprint).where(AlertRow.status == "firing")
    cutoff = (at or now()) - timedelta(hours=retention_h)
    done = delete(OutboxRow).where(
        OutboxRow.status != PENDING,
        OutboxRow.created_at < cutoff,
        OutboxRow.fingerprint.not_in(firing),
    )
    return int(s.execute(done).rowcount or 0)  # type: ignore[attr-defined]


def rows(s: Session, ids: Sequence[int]) -> list[OutboxRow]:
    if not ids:
        return []
    return list(s.scalars(select(OutboxRow).where(OutboxRow.id.in_(list(ids)))))


def payload(row: OutboxRow) -> dict[str, Any]:
    return json.loads(row.payload_json)
