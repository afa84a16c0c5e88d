"""Kafka failover: a job moves to a mirror of its Kafka cluster without losing or doubling
a window.

A failover is a new version of the job (:func:`failover_spec`: the streams that read the
failed cluster name the mirror instead) with a NEW checkpoint, whose start is planned
when it first runs, after the old run has stopped (:func:`plan_handoff`):

- the old checkpoint gives, as for an SQL change (:mod:`workbench.jobs.handoff`), the
  row-time floor ``M`` (windows ending at or before it were written by the old checkpoint
  and are never written again) and the offsets on the OLD cluster where a new checkpoint
  must start to recompute every window still open;
- those offsets mean nothing on the mirror. The job commits them, after every
  micro-batch, to the consumer group ``workbench-JOB`` on its cluster
  (:mod:`workbench.jobs.group_commits`); MirrorMaker 2 mirrors that group and writes its
  translated offsets to ``FAILED.checkpoints.internal`` on the mirror (``FAILED``: the
  failed cluster's name in ``kafka_clusters``, used as its MM2 alias), which
  :mod:`workbench.kafka.mm2` reads. A translation is never past the true position
  (MM2 rounds down), and a commit seen late is older: either way the new checkpoint reads
  records again, all older than ``M`` (the handoff rule), and the floor drops them;
- a partition with no translation starts at its earliest offset (the same argument); a
  table with no translation at all (no MM2 checkpoints topic, or MM2 never saw the group)
  starts from a time (:func:`start_time_ms`). Nothing is lost that the mirror holds; what
  MM2 had not copied when the cluster died is lost to the job, as to every consumer of
  the mirror.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench import secrets
from workbench.exceptions import JobServiceError
from workbench.jobs import handoff
from workbench.kafka import mm2 as mm2_checkpoints
from workbench.yamlsafe import load_text

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from workbench.jobs.config import ServiceConfig
    from workbench.jobs.db import Job, Version

Offsets = dict[str, dict[str, int]]  # topic -> partition -> offset
EARLIEST = -2  # Spark's JSON starting offsets: -2 earliest, -1 latest
PENDING = "failover"  # the handoff_json key of a failover not planned yet


def group_of(job: str) -> str:
    """The consumer group a job commits its restart offsets to (MM2 mirrors it)."""
    return f"workbench-{job}"


def failover_spec(spec_yaml: str, clusters: dict[str, Any], to: str) -> tuple[str, list[str]]:
    """``spec_yaml`` with the streams of the cluster(s) ``to`` stands by for reading
    ``to``, and the names of the clusters left. A stream of a cluster whose standby is
    ``to`` moves; when none is, every stream of the job's one other cluster moves."""
    import yaml

    data = load_text(spec_yaml)
    streams = data["streams"]
    names = [str(s.get("cluster", "local")) for s in streams]
    moving = {n for n in names if n != to and getattr(clusters.get(n), "standby", None) == to}
    if not moving and len(set(names) - {to}) == 1:
        moving = set(names) - {to}
    if not moving:
        where = ", ".join(sorted(set(names))) or "-"
        raise JobServiceError(
            f"No stream can fail over to Kafka cluster '{to}': the streams read {where}, and "
            f"none of those names '{to}' as its standby. Set 'standby: {to}' on the cluster "
            "in the service config, or fail over each cluster's streams one at a time."
        )
    for stream, name in zip(streams, names, strict=True):
        if name in moving:
            stream["cluster"] = to
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True), sorted(moving)


def fail_over(
    s: Session, job: Job, config: ServiceConfig, to: str, actor: str, why: str
) -> Version:
    """The failover version of ``job`` (made current), recorded as event ``failed over``."""
    from workbench.jobs import versioning
    from workbench.jobs.db import add_event

    current = versioning.version(s, job.id, job.current_version)
    if current is None:
        raise JobServiceError(f"Job '{job.name}' has no version to fail over.")
    spec_yaml, moved = failover_spec(current.spec_yaml, config.kafka_clusters, to)
    note = f"failover {', '.join(moved)} -> {to}"
    spec = versioning.parse_spec(spec_yaml)
    record = versioning.add_version(
        s, job, config.state_dir, spec_yaml, spec, actor, note=note, new_checkpoint=True
    )
    record.handoff_json = pending(job.name, moved, to)
    job.failures, job.next_attempt_at = 0, None  # failed for want of its cluster: anew
    if job.status == "FAILED" and job.desired == "running":
        job.status = "SUBMITTED"
    add_event(s, job.id, actor, "failed over", version=record.number, to=to, moved=moved, why=why)
    return record


def stop_now(s: Session, job: Job, actor: str, why: str) -> None:
    """The old run of a job failed over from a cluster that is gone: its micro-batch waits
    on that cluster and cannot finish, so it is told to stop now (``KILL``, read beside the
    ``STOP`` the supervisor sends next), not after that batch, nor after the stop grace
    periods and signals. Its checkpoint holds what it committed; the failover version
    plans its start from that."""
    from workbench.jobs.db import add_event
    from workbench.jobs.rundir import RunDir
    from workbench.jobs.views import live_run

    run = live_run(s, job.id)
    if run is not None:
        RunDir(Path(run.run_dir)).request_kill()
        add_event(s, job.id, actor, "stop-now", run=run.run_id, why=why)


def pending(job: str, moved_from: list[str], to: str) -> str:
    """The handoff_json of a failover version until it first runs."""
    return json.dumps({PENDING: {"job": job, "from": moved_from, "to": to}})


def plan_handoff(session: Session, version: Version, config: ServiceConfig) -> dict | None:
    """run.json's ``handoff`` for ``version``: a pending failover is planned now (and
    kept), anything else as :func:`workbench.jobs.versioning.plan_handoff` plans it."""
    from workbench.jobs import versioning

    found = json.loads(version.handoff_json) if version.handoff_json else None
    if not isinstance(found, dict) or PENDING not in found:
        return versioning.plan_handoff(session, version)
    old = versioning.version(session, version.job_id, version.continues_from or 0)
    plan = None
    if old is not None and versioning.has_commits(old.checkpoint):
        request = found[PENDING]
        translated = _translations(config, request)
        spec = versioning.parse_spec(old.spec_yaml)
        moved = {st.table for st in spec.streams if st.cluster in request["from"]}
        plan = plan_from(Path(old.checkpoint), spec, translated, moved)
    # kept, also when there is none ({}: the spec's own starting offsets), so that a
    # later start never plans it as an SQL change from the failed cluster's offsets
    version.handoff_json = json.dumps(plan or {})
    return plan


def _translations(config: ServiceConfig, request: dict) -> Offsets:
    """The job's group offsets MM2 translated onto the mirror, from each failed cluster."""

    mirror = config.kafka_cluster(request["to"])
    options = secrets.resolve(dict(mirror.security))
    found: Offsets = {}
    for alias in request["from"]:
        read = mm2_checkpoints.read(
            mirror.bootstrap_servers, alias, group_of(request["job"]), options
        )
        for topic, partitions in read.items():
            found.setdefault(topic, {}).update(partitions)
    return found


def plan_from(checkpoint: Path, spec: Any, translated: Offsets, moved: set[str]) -> dict[str, Any]:
    """The handoff of a new checkpoint of ``spec`` continuing ``checkpoint`` when the
    streams of the tables ``moved`` read a mirror: the handoff rule's floor and start
    offsets, translated for those tables (earliest for a partition without a
    translation; from a time, :func:`start_time_ms`, for a table with none at all)."""

    base = handoff.plan(checkpoint, spec, spec)
    starting: dict[str, Any] = {}
    for table, topics in base["starting_offsets"].items():
        if table not in moved:
            starting[table] = topics
        elif not any(translated.get(topic) for topic in topics):
            starting[table] = start_time_ms(checkpoint, spec)
        else:
            starting[table] = {
                topic: {p: translated.get(topic, {}).get(p, EARLIEST) for p in partitions}
                for topic, partitions in topics.items()
            }
    return {"starting_offsets": starting, "min_rowtime": base["min_rowtime"]}


def start_time_ms(checkpoint: Path, spec: Any) -> int:
    """Where a table MM2 translated nothing for starts on the mirror: the last committed
    batch's event time (its watermark plus the delay) minus the watermark delay and the
    longest window, i.e. the watermark minus one window. Every record of a window still
    open is at or after it, provided the records' Kafka timestamps are their event times
    (producers that set them so, or ``message.timestamp.type=CreateTime`` with event-time
    stamps); the floor drops what is read again, and idempotent sinks absorb the rest."""

    last = handoff.committed(checkpoint)[-1]
    window = handoff.grain_ms(spec.sql) or spec.watermark_delay_ms
    return max(last.watermark_ms - window, 0)
