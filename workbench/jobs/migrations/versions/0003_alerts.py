"""Alerts: alert state and history, ingestion cursors, silences and the notification outbox.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def _job_id(primary_key: bool = False) -> sa.Column:
    return sa.Column(
        "job_id",
        sa.Integer,
        sa.ForeignKey("jobs.id"),
        nullable=False,
        primary_key=primary_key,
        index=not primary_key,
    )


def upgrade() -> None:
    op.create_table(
        "alerts",
        sa.Column("fingerprint", sa.String(32), primary_key=True),
        _job_id(),
        sa.Column("team", sa.String(200), nullable=False, index=True),
        sa.Column("rule", sa.String(200), nullable=False),
        sa.Column("labels_json", sa.Text, nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("starts_at", sa.DateTime, nullable=False),
        sa.Column("ends_at", sa.DateTime, nullable=True),
        sa.Column("last_value_json", sa.Text, nullable=False),
        sa.Column("updated_at", sa.DateTime, nullable=False),
    )
    op.create_table(
        "alert_events",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("fingerprint", sa.String(32), nullable=False, index=True),
        _job_id(),
        sa.Column("rule", sa.String(200), nullable=False),
        sa.Column("labels_json", sa.Text, nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("at", sa.DateTime, nullable=False),
        sa.Column("values_json", sa.Text, nullable=False),
    )
    op.create_table(
        "alert_cursors",
        _job_id(primary_key=True),
        sa.Column("rule", sa.String(200), primary_key=True),
        sa.Column("checkpoint", sa.Text, nullable=False),
        sa.Column("batch_id", sa.Integer, nullable=True),
        sa.Column("state_json", sa.Text, nullable=False),
    )
    op.create_table(
        "silences",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("team", sa.String(200), nullable=False, index=True),
        sa.Column("rule", sa.String(200), nullable=False),
        sa.Column("matchers_json", sa.Text, nullable=False),
        sa.Column("until", sa.DateTime, nullable=False),
        sa.Column("author", sa.String(200), nullable=False),
        sa.Column("comment", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
    )
    op.create_table(
        "outbox",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("receiver", sa.String(200), nullable=False),
        sa.Column("team", sa.String(200), nullable=False),
        _job_id(),
        sa.Column("rule", sa.String(200), nullable=False),
        sa.Column("fingerprint", sa.String(32), nullable=False, index=True),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("group_key", sa.String(300), nullable=False),
        sa.Column("payload_json", sa.Text, nullable=False),
        sa.Column("status", sa.String(20), nullable=False, index=True),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("next_attempt_at", sa.DateTime, nullable=False),
        sa.Column("last_error", sa.Text, nullable=True),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("sent_at", sa.DateTime, nullable=True),
    )


def downgrade() -> None:
    for table in ("outbox", "silences", "alert_cursors", "alert_events", "alerts"):
        op.drop_table(table)
