"""Everything the health page shows about one job, gathered in the service's process.

:func:`collect` checks the caller may read the job (another team's job is not found,
as for the API), then reads: the job (status, metrics of its live run), its events, the
``progress.jsonl`` of the latest runs of its current version, its recent alerts and the
output series of its InfluxDB sinks (:mod:`workbench.server.sink_series`).

Alerts come from the ``alerts`` table of the alerting work (issue 11, service side) when
the database has it; until then :attr:`Health.alerts` is None and the page says so.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import inspect, select, text
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from workbench.exceptions import WorkbenchError
from workbench.jobs import versioning
from workbench.jobs.db import Run
from workbench.jobs.rundir import PROGRESS_KEPT, RunDir
from workbench.server.sink_series import Output, outputs

log = logging.getLogger("workbench.server")

MAX_RUNS = 10  # the latest runs of the current version whose batches are charted
MAX_EVENTS = 300
MAX_ALERTS = 20
ALERTS_QUERY = text(
    "SELECT rule, status, labels_json, starts_at, ends_at, last_value_json, updated_at "
    "FROM alerts WHERE job_id = :job ORDER BY updated_at DESC LIMIT :limit"
)


@dataclass(frozen=True)
class Health:
    job: dict[str, Any]
    events: list[dict[str, Any]]
    #: (run id, its progress records), oldest run first
    runs: list[tuple[str, list[dict[str, Any]]]]
    #: recent alerts, newest first; None: this service keeps no alerts (yet)
    alerts: list[dict[str, Any]] | None
    outputs: list[Output] = field(default_factory=list)


def collect(service: Any, who: Any, ref: int | str) -> Health:
    """The job ``ref``'s health as ``who`` may see it (JobNotFoundError otherwise)."""
    job = service.get_job(who, ref)
    events = service.events(who, job["id"], last=MAX_EVENTS)
    with service.db.session() as s:
        runs = latest_runs(s, job["id"], job["version"])
        version = versioning.version(s, job["id"], job["version"])
        spec_yaml = version.spec_yaml if version is not None else ""
    progress = [
        (run_id, RunDir(Path(folder)).tail_progress(PROGRESS_KEPT)) for run_id, folder in runs
    ]
    return Health(job, events, progress, recent_alerts(service.db, job["id"]), sinks(spec_yaml))


def latest_runs(s: Session, job_id: int, version: int) -> list[tuple[str, str]]:
    """(run id, run folder) of the version's latest :data:`MAX_RUNS` runs, oldest first."""
    query = select(Run).where(Run.job_id == job_id, Run.version == version)
    found = s.scalars(query.order_by(Run.id.desc()).limit(MAX_RUNS))
    return [(run.run_id, run.run_dir) for run in reversed(list(found))]


def recent_alerts(db: Any, job_id: int) -> list[dict[str, Any]] | None:
    """The job's latest alerts from the ``alerts`` table; None when there is no such table."""
    try:
        with db.session() as s:
            if not inspect(s.connection()).has_table("alerts"):
                return None
            rows = s.execute(ALERTS_QUERY, {"job": job_id, "limit": MAX_ALERTS}).mappings()
            return [_alert(dict(row)) for row in rows]
    except SQLAlchemyError:
        log.warning("the alerts table cannot be read as expected", exc_info=True)
        return None


def _alert(row: dict[str, Any]) -> dict[str, Any]:
    for key in ("labels_json", "last_value_json"):
        try:
            row[key.removesuffix("_json")] = json.loads(row.pop(key) or "{}")
        except (TypeError, ValueError):
            row[key.removesuffix("_json")] = {}
    return row


def sinks(spec_yaml: str) -> list[Output]:
    if not spec_yaml:
        return []
    try:
        return outputs(spec_yaml)
    except WorkbenchError as err:  # a stored version was valid when stored; say what changed
        return [Output("spec", "", problem=f"the job's spec cannot be read now: {err}")]
