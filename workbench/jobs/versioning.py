"""A job's versions: validating a spec, adding an immutable version, choosing its checkpoint.

A version whose :func:`workbench.streaming.checkpoints.spec_hash` equals the current version's keeps
the current checkpoint (the query's state layout is unchanged). Any other version gets a
new checkpoint folder ``$STATE/checkpoints/<job>/v<N>`` that *continues* the previous one:
when it first starts, :func:`plan_handoff` turns the old checkpoint's committed offsets
into the new run's starting offsets and row-time floor.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from workbench import secrets
from workbench.jobs import authz, handoff
from workbench.jobs.db import Job, Version
from workbench.kinds import KINDS
from workbench.spec import DaggerSpec
from workbench.streaming.checkpoints import has_progress
from workbench.yamlsafe import load_text

#: ``add_version``'s ``schema_version`` default: keep the current version's pin
KEEP = -1


def parse_spec(spec_yaml: str, source: str = "spec") -> DaggerSpec:
    """The spec in ``spec_yaml`` (secret references left as written), of any kind
    (:mod:`workbench.kinds`: a quality spec runs and is supervised like a dagger);
    SpecError if invalid."""

    secrets.check(spec_yaml)
    return KINDS.parse(load_text(spec_yaml, source), source)  # type: ignore[return-value]


def spec_hash(spec: DaggerSpec) -> str:

    return KINDS.shape_hash(spec)


def versions_of(session: Session, job_id: int) -> list[Version]:
    query = select(Version).where(Version.job_id == job_id).order_by(Version.number)
    return list(session.scalars(query))


def visible_current(session: Session, who: Any) -> Iterator[tuple[Job, Version]]:
    """Each job ``who`` may see with its current version, by job id."""

    for job in session.scalars(select(Job).order_by(Job.id)):
        current = version(session, job.id, job.current_version)
        if current is not None and authz.can_see(who, job.team):
            yield job, current


def version(session: Session, job_id: int, number: int) -> Version | None:
    query = select(Version).where(Version.job_id == job_id, Version.number == number)
    return session.scalars(query).first()


def has_commits(checkpoint: str | Path) -> bool:
    """Whether a job's checkpoint folder holds a committed micro-batch (in its query's
    Spark checkpoint, ``<checkpoint>/<QUERY>/commits``)."""

    return has_progress(Path(checkpoint))


def add_version(
    session: Session,
    job: Job,
    state_dir: Path,
    spec_yaml: str,
    spec: DaggerSpec,
    author: str,
    *,
    notebook: tuple[str, str] | None = None,
    parity: dict | None = None,
    note: str = "",
    new_checkpoint: bool = False,
    schema_version: int | None = KEEP,
) -> Version:
    """A new version of ``job`` (made current) with ``spec_yaml`` as written, ``spec`` being
    its parsed form (:func:`parse_spec`); ``notebook``: (record path, sha256).
    ``new_checkpoint``: a new checkpoint even when the query's shape is unchanged (a
    failover: the old one's offsets belong to another Kafka cluster). ``schema_version``:
    the schema version it is pinned to (None: the bundled schemas); by default the
    current version's."""
    digest = spec_hash(spec)
    previous = version(session, job.id, job.current_version) if job.current_version else None
    number = (previous_number(session, job.id) or 0) + 1
    if previous is not None and previous.spec_hash == digest and not new_checkpoint:
        checkpoint, continues = previous.checkpoint, None
    else:
        checkpoint = str(state_dir / "checkpoints" / job.name / f"v{number}")
        continues = _continued(session, previous)
    record = Version(
        job_id=job.id,
        number=number,
        spec_yaml=spec_yaml,
        spec_hash=digest,
        notebook_path=notebook[0] if notebook else None,
        notebook_sha256=notebook[1] if notebook else None,
        parity_json=json.dumps(parity) if parity is not None else None,
        author=author,
        checkpoint=checkpoint,
        continues_from=continues,
        note=note,
        schema_version=previous.schema_version
        if schema_version == KEEP and previous is not None
        else (None if schema_version == KEEP else schema_version),
    )
    session.add(record)
    job.current_version, job.checkpoint = number, checkpoint
    return record


def previous_number(session: Session, job_id: int) -> int | None:
    numbers = [v.number for v in versions_of(session, job_id)]
    return max(numbers) if numbers else None


def _continued(session: Session, previous: Version | None) -> int | None:
    """The version whose checkpoint a new one continues: the current one, or, when that
    never committed a batch, the one it would itself have continued."""
    while previous is not None and not has_commits(previous.checkpoint):
        if previous.continues_from is None:
            return None
        previous = version(session, previous.job_id, previous.continues_from)
    return previous.number if previous is not None else None


def notebook_record(state_dir: Path, job: str, number: int, content: bytes) -> tuple[str, str]:
    """Where version ``number``'s executed notebook is kept, and its sha256."""
    path = state_dir / "records" / job / f"v{number}.ipynb"
    return str(path), hashlib.sha256(content).hexdigest()


#: How a new checkpoint's start is planned from the one it continues (swappable in tests).
planner: Callable[[Path, DaggerSpec, DaggerSpec], Any] = handoff.plan


def plan_handoff(session: Session, current: Version) -> dict | None:
    """The run.json ``handoff`` for ``current``: computed once, at its first start."""
    if current.handoff_json is not None:
        return json.loads(current.handoff_json)
    if current.continues_from is None or has_commits(current.checkpoint):
        return None
    old = version(session, current.job_id, current.continues_from)
    if old is None:
        return None
    plan = planner(Path(old.checkpoint), parse_spec(old.spec_yaml), parse_spec(current.spec_yaml))
    if plan is not None:
        current.handoff_json = json.dumps(plan)
    return plan
