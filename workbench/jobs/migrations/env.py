"""Alembic environment: runs on the connection :func:`workbench.jobs.db.migrate` passes in."""

from __future__ import annotations

from alembic import context

from workbench.jobs.db import Base

connection = context.config.attributes["connection"]
context.configure(
    connection=connection,
    target_metadata=Base.metadata,
    render_as_batch=connection.dialect.name == "sqlite",
)
with context.begin_transaction():
    context.run_migrations()
