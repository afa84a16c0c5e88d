"""Quality: the topics the service's ``quality:`` step has handled (jobs/quality_tables.py).

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "quality_topics",
        sa.Column("source", sa.String(500), primary_key=True),
        sa.Column("topic", sa.String(300), primary_key=True),
        sa.Column("job", sa.String(200), nullable=False),
        sa.Column("handled_at", sa.DateTime, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("quality_topics")
