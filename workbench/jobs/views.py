"""What the job service answers with: job, version and event rows as JSON-able dicts.

A job's ``metrics`` come from its live run's ``heartbeat.json`` (the run folder contract);
``alerts_firing`` counts its alerts firing now (:mod:`workbench.alerts`).
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from workbench.alerts.tables import AlertRow
from workbench.jobs.db import Event, Job, Run, Version
from workbench.jobs.metrics import KEYS
from workbench.jobs.rundir import RunDir

ERROR_ACTIONS = ("run-failed", "lease-held", "handoff-failed", "failed")


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


def last_error(session: Session, job_id: int) -> str | None:
    query = select(Event).where(Event.job_id == job_id, Event.action.in_(ERROR_ACTIONS))
    event = session.scalars(query.order_by(Event.id.desc())).first()
    return json.loads(event.detail_json).get("error") if event else None


def firing_count(session: Session, job_id: int) -> int:
    """How many of the job's alerts fire now."""
    query = select(func.count()).where(AlertRow.job_id == job_id, AlertRow.status == "firing")
    return int(session.scalar(query) or 0)


def job_view(session: Session, job: Job) -> dict[str, Any]:
    run = live_run(session, job.id)
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
        "last_error": last_error(session, job.id),
        "alerts_firing": firing_count(session, job.id),
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
        "current": version.number == current,
    }


def event_view(event: Event) -> dict[str, Any]:
    return {
        "time": iso(event.time),
        "actor": event.actor,
        "action": event.action,
        "detail": json.loads(event.detail_json),
    }
