"""Moving a job to another Spark cluster, by hand or by the supervisor.

``workbench jobs move JOB --cluster NAME`` (``POST jobs/{ref}/move``) and the supervisor's
rescheduling (:mod:`workbench.jobs.reschedule`) both call :func:`move`: the job's cluster
becomes NAME and its restart token changes, so its live run is no longer wanted. A move by
hand stops that run as any restart does (``STOP`` after the current micro-batch, then
signals); the supervisor, moving away from a cluster that stopped answering, kills it at
once. The next run starts on NAME from the same checkpoint (the version's folder: on
shared storage, HDFS or S3A, for real clusters), and the checkpoint lease
(:mod:`workbench.jobs.lease`) keeps the old driver and the new one from ever writing it
together. The move is a ``moved`` event: ``{from, to, why}`` by its actor.
"""

from __future__ import annotations

from sqlalchemy.orm import Session

from workbench.exceptions import JobServiceError
from workbench.jobs.config import ServiceConfig
from workbench.jobs.db import Job, add_event

MOVED = "moved"


def check_cluster(config: ServiceConfig, team: str, name: str | None, admin: bool) -> str:
    """The configured cluster ``name`` (None: the first) if ``team`` may run jobs on it
    (admins may use any); else :class:`JobServiceError` naming the ones it may use."""
    name, cluster = config.cluster(name)
    if not cluster.may_use(team) and not admin:
        raise JobServiceError(
            f"Team '{team}' may not run jobs on cluster '{name}'; use one of "
            f"{config.clusters_for(team)}."
        )
    return name


def move(s: Session, job: Job, target: str, actor: str, why: str) -> None:
    """Send ``job`` to the cluster ``target`` (checked by the caller); its live run, if
    any, is stopped by the supervisor and the next one starts there."""
    if target == job.cluster:
        raise JobServiceError(
            f"Job '{job.name}' runs on cluster '{target}' already; name another one."
        )
    source = job.cluster
    job.cluster = target
    job.restart_token += 1
    job.next_attempt_at = None  # a backing-off job starts on the new cluster at once
    add_event(s, job.id, actor, MOVED, **{"from": source, "to": target, "why": why})
