"""What a job's new version must pass before the job service stores it, that needs neither
the schemas nor Spark: the job's name, which team a name belongs to, and a spec named as
its job (the schema checks are :mod:`workbench.jobs.schema_pins`, sink targets
:mod:`workbench.jobs.targets`, and ``validate``'s :mod:`workbench.jobs.spec_check`)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from workbench.exceptions import JobConflictError, JobServiceError, clip
from workbench.jobs import authz, versioning
from workbench.jobs.db import Job
from workbench.spec import _NAME, MAX_NAME


def existing(s: Session, who: authz.Principal, name: str, team: str) -> Job | None:
    """The job a submit of ``name`` for ``team`` adds a version to (None: a new one);
    JobConflictError when the name is another team's job."""
    job = s.scalars(select(Job).where(Job.name == name)).first()
    if job is not None and job.team != team:
        raise JobConflictError(
            f"The job name '{name}' is taken by a job of another team; choose "
            "another name (--name)."
            if not authz.can_see(who, job.team)
            else f"Job '{name}' belongs to team '{job.team}'; submit it with "
            f"--team {job.team}, or choose another name."
        )
    return job


def check_spec_name(s: Session, job: Job, spec: Any) -> None:
    """Refuse a spec named neither as the job nor as its current version's spec."""
    current = versioning.version(s, job.id, job.current_version)
    named = {job.name} | ({versioning.parse_spec(current.spec_yaml).name} if current else set())
    if spec.name not in named:
        raise JobConflictError(
            f"The spec is named '{clip(spec.name)}', not '{job.name}': it is another job's "
            f"spec. Edit '{job.name}' with its own spec, or submit this one as a job of "
            "its own (workbench jobs submit)."
        )


def check_job_name(name: str) -> None:
    if not _NAME.match(name) or len(name) > MAX_NAME:
        raise JobServiceError(
            f"'{clip(name)}' is not a job name: use letters, digits, '-' and '_', starting "
            f"with a letter, at most {MAX_NAME} characters."
        )
