"""Schema safety: the registry's schema version each job version is pinned to.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("versions") as versions:
        versions.add_column(sa.Column("schema_version", sa.Integer, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("versions") as versions:
        versions.drop_column("schema_version")
