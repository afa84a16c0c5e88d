"""The alerting tables of the job service's database (made by migration 0003).

- ``alerts``: one row per alert (fingerprint), its current status (``firing`` or
  ``resolved``), the start and end of its current or last episode, its last values;
- ``alert_events``: the history, one row per transition;
- ``alert_cursors``: per job and rule, the state machine's persisted state and, for a
  metric rule, the checkpoint and the last micro-batch id ingested from ``alerts.jsonl``;
- ``silences``: per team, a rule and label matchers muted until a time;
- ``outbox``: one row per alert and receiver to notify; the dispatcher groups the pending
  rows into notifications and marks them ``sent`` (or ``silenced``, ``skipped``), or
  retries them later. Nothing leaves the outbox undelivered by accident.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from workbench.jobs.db import Base, UtcDateTime, now

PENDING, SENT, SILENCED, SKIPPED = "pending", "sent", "silenced", "skipped"


class AlertRow(Base):
    __tablename__ = "alerts"
    fingerprint: Mapped[str] = mapped_column(String(32), primary_key=True)
    job_id: Mapped[int] = mapped_column(ForeignKey("jobs.id"), index=True)
    team: Mapped[str] = mapped_column(String(200), index=True)
    rule: Mapped[str] = mapped_column(String(200))
    labels_json: Mapped[str] = mapped_column(Text, default="{}")
    status: Mapped[str] = mapped_column(String(20))
    starts_at: Mapped[datetime] = mapped_column(UtcDateTime)
    ends_at: Mapped[datetime | None] = mapped_column(UtcDateTime, nullable=True)
    last_value_json: Mapped[str] = mapped_column(Text, default="{}")
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime, default=now, onupdate=now)


class AlertEvent(Base):
    __tablename__ = "alert_events"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    fingerprint: Mapped[str] = mapped_column(String(32), index=True)
    job_id: Mapped[int] = mapped_column(ForeignKey("jobs.id"), index=True)
    rule: Mapped[str] = mapped_column(String(200))
    labels_json: Mapped[str] = mapped_column(Text, default="{}")
    status: Mapped[str] = mapped_column(String(20))
    at: Mapped[datetime] = mapped_column(UtcDateTime)
    values_json: Mapped[str] = mapped_column(Text, default="{}")


class AlertCursor(Base):
    __tablename__ = "alert_cursors"
    job_id: Mapped[int] = mapped_column(ForeignKey("jobs.id"), primary_key=True)
    rule: Mapped[str] = mapped_column(String(200), primary_key=True)
    checkpoint: Mapped[str] = mapped_column(Text, default="")
    batch_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    state_json: Mapped[str] = mapped_column(Text, default="{}")


class Silence(Base):
    __tablename__ = "silences"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    team: Mapped[str] = mapped_column(String(200), index=True)
    rule: Mapped[str] = mapped_column(String(200))
    matchers_json: Mapped[str] = mapped_column(Text, default="{}")
    until: Mapped[datetime] = mapped_column(UtcDateTime)
    author: Mapped[str] = mapped_column(String(200))
    comment: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime, default=now)


class OutboxRow(Base):
    __tablename__ = "outbox"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    receiver: Mapped[str] = mapped_column(String(200))
    team: Mapped[str] = mapped_column(String(200))
    job_id: Mapped[int] = mapped_column(ForeignKey("jobs.id"), index=True)
    rule: Mapped[str] = mapped_column(String(200))
    fingerprint: Mapped[str] = mapped_column(String(32), index=True)
    #: firing or resolved: the notification this row joins
    kind: Mapped[str] = mapped_column(String(20))
    #: rows of one group (job, rule, kind) and receiver are sent as one notification
    group_key: Mapped[str] = mapped_column(String(300))
    payload_json: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(20), default=PENDING, index=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime] = mapped_column(UtcDateTime)
    last_error: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime, default=now)
    sent_at: Mapped[datetime | None] = mapped_column(UtcDateTime, nullable=True)
