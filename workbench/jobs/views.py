"""What the job service answers with: job, version and event rows as JSON-able dicts.

A job's ``metrics`` come from its live run's ``heartbeat.json`` (the run folder contract);
``alerts_firing`` counts its alerts firing now (:mod:`workbench.alerts`). A listing
(:func:`job_views`) costs a constant number of queries, not a few per job.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import and_, func, select
from sqlalchemy.orm import Session

from workbench.jobs.alert_tables import AlertRow
from workbench.jobs.db import Event, Job, Run, Version
from workbench.jobs.metrics import KEYS
from workbench.jobs.rundir import RunDir

ERROR_ACTIONS = ("run-failed", "lease-held", "handoff-failed", "failed", "waiting")
#: an event saying a later run is healthy: the error before it is no longer the job's
CLEARED = "healthy"
#: jobs per query when listing (well under any database's limit on bound parameters)
BATCH = 500


def iso(moment: datetime | None) -> str | None:
    return moment.isoformat().replace("+00:00", "Z") if moment else None


def epoch(stamp: Any) -> float | None:
    """Epoch seconds of an ISO-8601 time as :func:`iso` writes it (``Z`` or an offset);
    None for none or for text that is not a time."""
    if not stamp:
        return None
    try:
        return datetime.fromisoformat(str(stamp).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def heartbeat(run: Run | None) -> dict | None:
    return RunDir(Path(run.run_dir)).read_heartbeat() if run else None


def metrics(beat: dict | None) -> dict:
    values = (beat or {}).get("metrics") or {}
    return {key: values.get(key) for key in KEYS}


def live_run(session: Session, job_id: int) -> Run | None:
    query = select(Run).where(Run.job_id == job_id, Run.ended_at.is_(None))
    return session.scalars(query.order_by(Run.id.desc())).first()


def latest_run(session: Session, job_id: int) -> Run | None:
    return session.scalars(select(Run).where(Run.job_id == job_id).order_by(Run.id.desc())).first()


def live_runs(session: Session, job_ids: list[int]) -> dict[int, Run]:
    """Each job's live run (the newest not ended), in one query."""
    query = select(Run).where(Run.job_id.in_(job_ids), Run.ended_at.is_(None))
    return {run.job_id: run for run in session.scalars(query.order_by(Run.id))}


def last_errors(session: Session, job_ids: list[int]) -> dict[int, dict[str, Any]]:
    """Each job's last error, from its newest error event unless a later run was healthy
    since: ``{error, at, run}``, in one query."""
    newest = (
        select(func.max(Event.id))
        .where(Event.job_id.in_(job_ids), Event.action.in_((*ERROR_ACTIONS, CLEARED)))
        .group_by(Event.job_id)
    )
    query = select(Event).where(Event.id.in_(newest), Event.action != CLEARED)
    found = {}
    for event in session.scalars(query):
        detail = json.loads(event.detail_json)
        found[event.job_id] = {
            "error": detail.get("error"),
            "at": iso(event.time),
            "run": detail.get("run"),
        }
    return found


def firing_counts(session: Session, job_ids: list[int]) -> dict[int, int]:
    """How many of each job's alerts fire now, in one query."""
    query = (
        select(AlertRow.job_id, func.count())
        .where(AlertRow.job_id.in_(job_ids), AlertRow.status == "firing")
        .group_by(AlertRow.job_id)
    )
    return {job_id: int(count) for job_id, count in session.execute(query)}


def job_view(session: Session, job: Job) -> dict[str, Any]:
    return job_views(session, [job])[0]


def job_views(session: Session, jobs: list[Job]) -> list[dict[str, Any]]:
    """The jobs' views in a constant number of queries (one per table and
    :data:`BATCH` jobs), whatever their number: the panel lists them every few seconds."""
    runs: dict[int, Run] = {}
    errors: dict[int, dict[str, Any]] = {}
    firing: dict[int, int] = {}
    pins: dict[int, int | None] = {}
    for start in range(0, len(jobs), BATCH):
        ids = [job.id for job in jobs[start : start + BATCH]]
        runs |= live_runs(session, ids)
        errors |= last_errors(session, ids)
        firing |= firing_counts(session, ids)
        pins |= schema_pins(session, ids)
    return [
        {
            **_job_view(job, runs.get(job.id), errors.get(job.id), firing.get(job.id, 0)),
            "schema_version": pins.get(job.id),
        }
        for job in jobs
    ]


def schema_pins(session: Session, job_ids: list[int]) -> dict[int, int | None]:
    """The schema version each job's current version is pinned to, in one query."""
    current = and_(Job.id == Version.job_id, Job.current_version == Version.number)
    query = (
        select(Version.job_id, Version.schema_version)
        .join(Job, current)
        .where(Version.job_id.in_(job_ids))
    )
    return {job_id: pin for job_id, pin in session.execute(query)}


def _job_view(job: Job, run: Run | None, error: dict | None, firing: int) -> dict[str, Any]:
    error = error or {}
    return {
        "id": job.id,
        "name": job.name,
        "team": job.team,
        "status": job.status,
        "desired": job.desired,
        "version": job.current_version,
        "cluster": job.cluster,
        "created_by": job.created_by,
        "created_at": iso(job.created_at),
        "updated_at": iso(job.updated_at),
        "checkpoint": job.checkpoint,
        "failures": job.failures,
        "next_attempt_at": iso(job.next_attempt_at),
        "run": run_view(run) if run else None,
        "metrics": metrics(heartbeat(run)),
        "last_error": error.get("error"),
        "last_error_at": error.get("at"),
        "last_error_run": error.get("run"),
        "alerts_firing": firing,
    }


def run_view(run: Run) -> dict[str, Any]:
    return {
        "id": run.run_id,
        "pid": run.pid,
        "started_at": iso(run.started_at),
        "attempt": run.attempt,
        "version": run.version,
        #: the shared Spark application running it (``pid`` is that application's); None
        #: when the run is its own process
        "host": Path(run.host).name if run.host else None,
    }


def version_view(version: Version, current: int) -> dict[str, Any]:
    return {
        "number": version.number,
        "author": version.author,
        "created_at": iso(version.created_at),
        "spec_hash": version.spec_hash,
        "spec_yaml": version.spec_yaml,
        "notebook_sha256": version.notebook_sha256,
        "parity": json.loads(version.parity_json) if version.parity_json else None,
        "checkpoint": version.checkpoint,
        "continues_from": version.continues_from,
        "handoff": json.loads(version.handoff_json) if version.handoff_json else None,
        "note": version.note,
        "schema_version": version.schema_version,
        "current": version.number == current,
    }


def event_view(event: Event) -> dict[str, Any]:
    return {
        "time": iso(event.time),
        "actor": event.actor,
        "action": event.action,
        "detail": json.loads(event.detail_json),
    }
