"""The job service's first schema: jobs, versions, runs, events.

Revision ID: 0001
Revises:
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "jobs",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(200), nullable=False, unique=True),
        sa.Column("team", sa.String(200), nullable=False, index=True),
        sa.Column("cluster", sa.String(200), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("desired", sa.String(20), nullable=False),
        sa.Column("current_version", sa.Integer, nullable=False),
        sa.Column("checkpoint", sa.Text, nullable=False),
        sa.Column("failures", sa.Integer, nullable=False),
        sa.Column("next_attempt_at", sa.DateTime, nullable=True),
        sa.Column("created_by", sa.String(200), nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("updated_at", sa.DateTime, nullable=False),
        sa.Column("restart_token", sa.Integer, nullable=False),
    )
    op.create_table(
        "versions",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("job_id", sa.Integer, sa.ForeignKey("jobs.id"), nullable=False, index=True),
        sa.Column("number", sa.Integer, nullable=False),
        sa.Column("spec_yaml", sa.Text, nullable=False),
        sa.Column("spec_hash", sa.String(64), nullable=False),
        sa.Column("notebook_path", sa.Text, nullable=True),
        sa.Column("notebook_sha256", sa.String(64), nullable=True),
        sa.Column("parity_json", sa.Text, nullable=True),
        sa.Column("author", sa.String(200), nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("checkpoint", sa.Text, nullable=False),
        sa.Column("continues_from", sa.Integer, nullable=True),
        sa.Column("handoff_json", sa.Text, nullable=True),
        sa.Column("note", sa.Text, nullable=False),
        sa.UniqueConstraint("job_id", "number", name="uq_versions_job_number"),
    )
    op.create_table(
        "runs",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("job_id", sa.Integer, sa.ForeignKey("jobs.id"), nullable=False, index=True),
        sa.Column("run_id", sa.String(100), nullable=False, unique=True),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("attempt", sa.Integer, nullable=False),
        sa.Column("run_dir", sa.Text, nullable=False),
        sa.Column("pid", sa.Integer, nullable=True),
        sa.Column("started_at", sa.DateTime, nullable=False),
        sa.Column("ended_at", sa.DateTime, nullable=True),
        sa.Column("exit_code", sa.Integer, nullable=True),
        sa.Column("end_reason", sa.String(40), nullable=True),
        sa.Column("log_path", sa.Text, nullable=False),
        sa.Column("restart_token", sa.Integer, nullable=False),
        sa.Column("stop_requested_at", sa.DateTime, nullable=True),
        sa.Column("term_sent_at", sa.DateTime, nullable=True),
    )
    op.create_table(
        "events",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("job_id", sa.Integer, sa.ForeignKey("jobs.id"), nullable=False, index=True),
        sa.Column("time", sa.DateTime, nullable=False),
        sa.Column("actor", sa.String(200), nullable=False),
        sa.Column("action", sa.String(40), nullable=False),
        sa.Column("detail_json", sa.Text, nullable=False),
    )


def downgrade() -> None:
    for table in ("events", "runs", "versions", "jobs"):
        op.drop_table(table)
