"""Sink targets: one job writes each folder, measurement and topic.

A sink's :meth:`~workbench.sinks.registry.SinkConfig.target` says what it writes (a
Parquet or Delta folder, an InfluxDB database and measurement, a Kafka topic). A new
version, or a start, is refused when one of its targets is written by another job that
should be running: two writers of one folder fail one another at the sink's guard, and
two writers of one measurement or topic mix their rows. The refusal names the other job
when the user may see it, and only says the target is taken when it is another team's.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from workbench.exceptions import JobConflictError
from workbench.jobs import authz, versioning
from workbench.jobs.db import Job


def of(spec: Any) -> list[str]:
    """The targets the spec's sinks write (a spec without sinks writes none)."""
    found = (sink.target() for sink in getattr(spec, "sinks", None) or [])
    return [t for t in found if t is not None]


def check(s: Session, who: authz.Principal, job_name: str, spec: Any) -> None:
    """Refuse (JobConflictError) ``spec`` for the job ``job_name`` when another job that
    should be running writes one of its targets."""
    mine = set(of(spec))
    if not mine:
        return
    query = select(Job).where(Job.name != job_name, Job.desired == "running")
    for other in s.scalars(query.order_by(Job.id)):
        current = versioning.version(s, other.id, other.current_version)
        if current is None:
            continue
        taken = sorted(mine & set(of(versioning.parse_spec(current.spec_yaml))))
        if taken:
            raise JobConflictError(_taken(who, other, taken[0]))


def _taken(who: authz.Principal, other: Job, target: str) -> str:
    if not authz.can_see(who, other.team):
        return (
            f"{target[0].upper()}{target[1:]} is taken: another job writes it. Write your "
            "sink somewhere else."
        )
    return (
        f"{target[0].upper()}{target[1:]} is written by job '{other.name}' (team "
        f"{other.team}). Write your sink somewhere else, or stop '{other.name}' first."
    )
