"""The job service: every operation on jobs, authorization-checked and recorded as events.

Actions set what a job should be doing (``desired``: running or stopped, a restart
token, its current version); the supervisor (:mod:`workbench.service.supervisor`) makes the
processes follow. ``JobService`` is what the HTTP handlers and the CLI call::

    svc = JobService(ServiceConfig.load())
    who = svc.principal("bob")
    svc.submit(who, name="surge", team="pricing", spec_yaml=text)
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from workbench.alertmanager.queries import AlertQueries
from workbench.exceptions import (
    AdminOnlyError,
    JobConflictError,
    JobNotFoundError,
    JobServiceError,
)
from workbench.jobs import (
    admission,
    authz,
    clusters,
    failover,
    moves,
    probes,
    schema_pins,
    spec_check,
    targets,
    versioning,
)
from workbench.jobs.config import ServiceConfig
from workbench.jobs.db import Event, Job, Run, add_event, open_database
from workbench.jobs.rundir import RunDir
from workbench.jobs.views import (
    event_view,
    job_view,
    job_views,
    latest_run,
    live_run,
    version_view,
)
from workbench.schemas.versions import SchemaVersions
from workbench.service.reload import reload_config
from workbench.settings import child_env

RUNNING, STOPPED = "running", "stopped"
#: desired states of a job put away: archived (hidden from lists, kept whole) and deleted
#: (gone from every read, its name free again; its rows and events stay for the audit)
ARCHIVED, DELETED = "archived", "deleted"
#: the actor of what the service decides itself (a job accepted as WAITING)
ACTOR_SERVICE = "service"


class JobService(AlertQueries):
    def __init__(self, config: ServiceConfig, config_file: Path | None = None):
        self.config = config
        self.config_file = config_file  # what reload_config reads (None: STATE/service.yaml)
        # validate's checks in Spark, one warm process for all submits, edits and starts
        self.checker = spec_check.Checker(config.validate_command, child_env())
        self.db = open_database(config.database_url)
        self.teams = authz.Teams.load(config.teams_file)
        self.schemas = SchemaVersions()  # the published schema versions jobs pin
        self._supervisor: Any = None

    # -- supervision ------------------------------------------------------------------
    def start_supervisor(self) -> bool:
        """Run the reconcile loop in a thread; False while another process supervises this
        state (this one then stands by and takes over when that process ends)."""
        from workbench.service.supervisor import Supervisor

        if self._supervisor is None:
            self._supervisor = Supervisor(self.config, self.db, self)
            return bool(self._supervisor.start())
        return self.supervising

    @property
    def supervising(self) -> bool:
        """Whether this process supervises the jobs now."""
        return self._supervisor is not None and self._supervisor.supervising

    def stop_supervisor(self) -> None:
        """Stop the reconcile loop (the jobs keep running; a new supervisor re-attaches)."""
        if self._supervisor is not None:
            self._supervisor.stop()
            self._supervisor = None

    def close(self) -> None:
        self.stop_supervisor()
        self.checker.close()
        self.db.dispose()

    # -- reads ------------------------------------------------------------------------
    def principal(self, user: str | None) -> authz.Principal:
        return authz.principal(self.teams, user)

    def list_jobs(
        self, who: authz.Principal, team: str | None = None, archived: bool = False
    ) -> list[dict]:
        """The jobs ``who`` may see (``archived``: the archived ones too)."""
        with self.db.snapshot() as s:
            hidden = [DELETED] if archived else [DELETED, ARCHIVED]
            query = select(Job).where(Job.desired.not_in(hidden)).order_by(Job.id)
            if team is not None:
                query = query.where(Job.team == team)
            jobs = [j for j in s.scalars(query) if authz.can_see(who, j.team)]
            return job_views(s, jobs)

    def get_job(self, who: authz.Principal, ref: int | str) -> dict:
        with self.db.snapshot() as s:
            return job_view(s, self._visible(s, who, ref))

    def versions(self, who: authz.Principal, ref: int | str) -> list[dict]:
        with self.db.snapshot() as s:
            job = self._visible(s, who, ref)
            return [version_view(v, job.current_version) for v in versioning.versions_of(s, job.id)]

    def notebook(self, who: authz.Principal, ref: int | str, version: int) -> bytes:
        with self.db.snapshot() as s:
            job = self._visible(s, who, ref)
            record = versioning.version(s, job.id, int(version))
            if record is None or not record.notebook_path:
                raise JobNotFoundError(f"{job.name} v{version} notebook")
            return Path(record.notebook_path).read_bytes()

    def events(self, who: authz.Principal, ref: int | str, last: int = 100) -> list[dict]:
        with self.db.snapshot() as s:
            job = self._visible(s, who, ref)
            query = select(Event).where(Event.job_id == job.id).order_by(Event.id.desc())
            return [event_view(e) for e in reversed(list(s.scalars(query.limit(last))))]

    def logs(
        self,
        who: authz.Principal,
        ref: int | str,
        *,
        run: str | None = None,
        offset: int = 0,
        limit_bytes: int = 65536,
    ) -> dict:
        """Text of a run's log (the latest run by default) from byte ``offset``."""
        with self.db.snapshot() as s:
            found = self._run(s, self._visible(s, who, ref), run)
        if found is None:
            return {"run": None, "offset": 0, "next_offset": 0, "text": "", "running": False}
        try:
            with open(found.log_path, "rb") as log:
                log.seek(max(offset, 0))
                chunk = log.read(max(limit_bytes, 0))
        except FileNotFoundError:
            chunk = b""
        text = chunk.decode("utf-8", errors="replace")
        return {
            "run": found.run_id,
            "offset": offset,
            "next_offset": offset + len(chunk),
            "text": text,
            "running": found.ended_at is None,
        }

    def progress(self, who: authz.Principal, ref: int | str, last: int = 20) -> list[dict]:
        """The last micro-batch reports of the job's latest run."""
        with self.db.snapshot() as s:
            found = latest_run(s, self._visible(s, who, ref).id)
        if found is None:
            return []
        return RunDir(Path(found.run_dir)).tail_progress(last)

    # -- actions ----------------------------------------------------------------------
    def submit(
        self,
        who: authz.Principal,
        *,
        name: str,
        team: str,
        spec_yaml: str,
        cluster: str | None = None,
        notebook: bytes | None = None,
        parity: dict | None = None,
        note: str = "",
        schema_version: int | None = None,
        spark_check: bool = True,
    ) -> dict:
        """A new job (version 1), or a new version of the job called ``name``; starts it.
        ``spark_check``: run ``validate``'s checks in Spark first (off for the service's own
        specs made from a template, the quality auto-jobs: the supervisor's tick makes them).
        It is pinned to ``schema_version``, else to the latest published one (refused when
        that breaks what the job's current version reads: :mod:`workbench.jobs.schema_pins`)."""
        authz.check_team(self.teams, who, team, "submit a job")
        spec = versioning.parse_spec(spec_yaml)  # a bad spec is refused before anything is stored
        pin = schema_pins.for_submit(self.schemas, schema_version)
        with self.db.snapshot() as s:  # the quick checks first, then Spark's
            job = admission.existing(s, who, name, team)
            if job is None:
                self._check_new(name, team, cluster, who)
            self._vet(s, who, job, name, spec, pin)
        if spark_check:
            self._validate(name, spec_yaml)
        waiting = probes.waiting_for(self.config, spec, job.cluster if job else cluster)
        with self._writing() as s:
            job = admission.existing(s, who, name, team) or self._new_job(
                s, who, name, team, cluster
            )
            self._vet(s, who, job, name, spec, pin)
            record = self._add_version(s, who, job, spec_yaml, spec, notebook, parity, note, pin)
            self._want_running(job)
            add_event(s, job.id, who.user, "submit", version=record.number, note=note)
            self._wait(s, job, waiting)
            return self._view(s, job)

    def edit(
        self,
        who: authz.Principal,
        ref: int | str,
        spec_yaml: str,
        note: str = "",
        schema_version: int | None = None,
    ) -> dict:
        """A new version with ``spec_yaml``; a running job restarts on it. It keeps the
        current version's schema pin unless ``schema_version`` asks for another. A spec
        named otherwise than the job, or writing another job's sink target, is refused."""
        with self.db.snapshot() as s:
            job = self._acting(s, who, ref, "edit")  # who may edit before what they send
            spec = versioning.parse_spec(spec_yaml)
            admission.check_spec_name(s, job, spec)
            if schema_version is not None:
                self.schemas.get(schema_version)
            pin = self._pin_of(s, job) if schema_version is None else schema_version
            self._vet(s, who, job, job.name, spec, pin)
            name = job.name
        self._validate(name, spec_yaml)
        with self._writing() as s:
            job = self._acting(s, who, ref, "edit")
            self._vet(s, who, job, job.name, spec, pin)
            record = self._add_version(s, who, job, spec_yaml, spec, None, None, note, pin)
            add_event(s, job.id, who.user, "edit", version=record.number, note=note)
            return self._view(s, job)

    def rollback(self, who: authz.Principal, ref: int | str, version: int) -> dict:
        """Make version ``version``'s spec current again, as a new version (its checkpoint
        is chosen as for an edit)."""
        with self._writing() as s:
            job = self._acting(s, who, ref, "roll back")
            old = versioning.version(s, job.id, int(version))
            if old is None:
                numbers = [v.number for v in versioning.versions_of(s, job.id)]
                raise JobServiceError(
                    f"Job '{job.name}' has no version {version}; its versions: {numbers}."
                )
            if old.number == job.current_version:
                raise JobConflictError(f"Version {version} of '{job.name}' is already current.")
            record = versioning.add_version(
                s,
                job,
                self.config.state_dir,
                old.spec_yaml,
                versioning.parse_spec(old.spec_yaml),
                who.user,
                notebook=(old.notebook_path, old.notebook_sha256 or "")
                if old.notebook_path
                else None,
                parity=json.loads(old.parity_json) if old.parity_json else None,
                note=f"rollback to v{old.number}",
                schema_version=old.schema_version,  # the schemas it ran on
            )
            add_event(s, job.id, who.user, "rollback", to=old.number, version=record.number)
            return self._view(s, job)

    def failover(
        self, who: authz.Principal, ref: int | str, kafka_cluster: str, reason: str = ""
    ) -> dict:
        """Move the job's streams to the Kafka cluster ``kafka_cluster`` (a mirror of the
        one they read): a new version, with a new checkpoint planned from the old one and
        MirrorMaker 2's offset translations when it first runs (:mod:`workbench.jobs.failover`)."""

        self.config.kafka_cluster(kafka_cluster)  # a 404 naming the known ones
        with self.db.snapshot() as s:  # which clusters it leaves, asked before it moves
            job = self._acting(s, who, ref, "fail over")
            current = versioning.version(s, job.id, job.current_version)
            leaving = (
                failover.failover_spec(
                    current.spec_yaml, self.config.kafka_clusters, kafka_cluster
                )[1]
                if current
                else []
            )
        gone = self._gone(leaving)
        with self._writing() as s:
            job = self._acting(s, who, ref, "fail over")
            failover.fail_over(s, job, self.config, kafka_cluster, who.user, reason or "asked")
            self._want_running(job)
            if gone:  # its run waits on the dead cluster: stopped now, as the automatic one
                failover.stop_now(s, job, who.user, gone)
            return self._view(s, job)

    def _gone(self, clusters: list[str]) -> str | None:
        """Why a Kafka cluster a failover leaves is gone (it does not answer), or None."""
        timeout_s = self.config.policy.probe_timeout_s or probes.SPARK_TIMEOUT_S
        for name in clusters:
            down = probes.kafka_down(self.config, name, timeout_s)
            if down:
                return down
        return None

    def stop(self, who: authz.Principal, ref: int | str) -> dict:
        with self._writing() as s:
            job = self._acting(s, who, ref, "stop")
            job.desired = STOPPED
            add_event(s, job.id, who.user, "stop")
            return self._view(s, job)

    def start(self, who: authz.Principal, ref: int | str) -> dict:
        """Run the job's current version, checked as a submit checks it; WAITING with the
        reason while its Kafka cluster or Spark master does not answer."""
        with self.db.snapshot() as s:
            job = self._acting(s, who, ref, "start")
            current = versioning.version(s, job.id, job.current_version)
            spec = versioning.parse_spec(current.spec_yaml) if current else None
            if current is not None:
                self._vet(s, who, job, job.name, spec, current.schema_version, same=True)
            name, spec_yaml = job.name, current.spec_yaml if current else None
        if spec_yaml is not None:
            self._validate(name, spec_yaml)
        waiting = probes.waiting_for(self.config, spec, job.cluster) if spec else None
        with self._writing() as s:
            job = self._acting(s, who, ref, "start")
            self._want_running(job)
            add_event(s, job.id, who.user, "start")
            self._wait(s, job, waiting)
            return self._view(s, job)

    def restart(self, who: authz.Principal, ref: int | str) -> dict:
        """Stop the job's run (gracefully) and start a new one."""
        with self._writing() as s:
            job = self._acting(s, who, ref, "restart")
            job.restart_token += 1
            self._want_running(job)
            add_event(s, job.id, who.user, "restart")
            return self._view(s, job)

    # -- putting jobs away -------------------------------------------------------------
    def archive(self, who: authz.Principal, ref: int | str) -> dict:
        """Hide a job that does not run from lists (``jobs list --all`` shows it); its
        versions, runs and checkpoint stay, and ``unarchive`` brings it back stopped."""
        with self._writing() as s:
            job = self._idle(s, who, ref, "archive")
            job.desired = ARCHIVED
            add_event(s, job.id, who.user, "archive")
            return self._view(s, job)

    def unarchive(self, who: authz.Principal, ref: int | str) -> dict:
        with self._writing() as s:
            job = self._acting(s, who, ref, "unarchive")
            if job.desired != ARCHIVED:
                raise JobConflictError(f"Job '{job.name}' is not archived.")
            job.desired = STOPPED
            add_event(s, job.id, who.user, "unarchive")
            return self._view(s, job)

    def delete(self, who: authz.Principal, ref: int | str) -> dict:
        """Remove a job that does not run: it is gone from every read and its name is free
        for a new job. Its rows stay (renamed ``NAME~deleted-ID``) with a ``delete`` event,
        the audit trail; run folders and checkpoints on disk are left as they are."""
        with self._writing() as s:
            job = self._idle(s, who, ref, "delete")
            name = job.name
            job.desired, job.name = DELETED, f"{name}~deleted-{job.id}"
            add_event(s, job.id, who.user, "delete", name=name)
            return {"id": job.id, "name": name, "team": job.team, "deleted": True}

    def _idle(self, s: Session, who: authz.Principal, ref: int | str, verb: str) -> Job:
        """The job ``who`` may act on, refused (409) while it runs or should run."""
        job = self._acting(s, who, ref, verb)
        if job.desired == RUNNING or live_run(s, job.id) is not None:
            raise JobConflictError(
                f"Job '{job.name}' is running: stop it first (workbench jobs stop "
                f"{job.name}), then {verb} it."
            )
        return job

    # -- the service's own config ------------------------------------------------------
    def reload_config(self, who: authz.Principal) -> dict:
        """Read service.yaml again and apply its clusters, teams and tokens
        (:mod:`workbench.service.reload`); admins only."""
        if not who.admin:
            raise AdminOnlyError(who.user, "reload the service's config")
        return reload_config(self, self.config_file)

    # -- clusters (:mod:`workbench.jobs.clusters`, :mod:`workbench.jobs.moves`) ---------
    def list_clusters(self, who: authz.Principal) -> list[dict]:
        with self.db.snapshot() as s:
            return clusters.list_clusters(s, self.config, who)

    def get_cluster(self, who: authz.Principal, name: str) -> dict:
        with self.db.snapshot() as s:
            return clusters.get_cluster(s, self.config, who, name)

    def move(self, who: authz.Principal, ref: int | str, cluster: str) -> dict:
        """Stop the job's run (gracefully) and start it on ``cluster`` from its checkpoint."""
        with self._writing() as s:
            job = self._acting(s, who, ref, "move")
            target = moves.check_cluster(self.config, job.team, cluster, who.admin)
            moves.move(s, job, target, who.user, "asked")
            return self._view(s, job)

    # -- helpers ----------------------------------------------------------------------
    @contextmanager
    def _writing(self) -> Iterator[Session]:
        """A session for an action; two requests changing one job at once: 409."""
        try:
            with self.db.session() as s:
                yield s
        except IntegrityError:
            raise JobConflictError(
                "The job was changed by another request at the same moment; try again."
            ) from None

    def _find(self, s: Session, ref: int | str) -> Job | None:
        if isinstance(ref, int) or str(ref).isdigit():
            number = int(ref)
            job = s.get(Job, number) if 0 < number < 2**63 else None  # no id overflows
            return None if job is None or job.desired == DELETED else job
        return s.scalars(select(Job).where(Job.name == str(ref))).first()

    def _visible(self, s: Session, who: authz.Principal, ref: int | str) -> Job:
        job = self._find(s, ref)
        if job is None:
            raise JobNotFoundError(ref)
        authz.check_read(who, job.team, ref)
        return job

    def _acting(self, s: Session, who: authz.Principal, ref: int | str, verb: str) -> Job:
        job = self._find(s, ref)
        if job is None:
            raise JobNotFoundError(ref)
        authz.check_read(who, job.team, ref, verb)  # another team's: 404, as a read
        return job

    def _new_job(
        self, s: Session, who: authz.Principal, name: str, team: str, cluster: str | None
    ) -> Job:

        admission.check_job_name(name)
        cluster_name = moves.check_cluster(self.config, team, cluster, who.admin)
        job = Job(
            name=name,
            team=team,
            cluster=cluster_name,
            status="SUBMITTED",
            desired=RUNNING,
            current_version=0,
            checkpoint="",
            failures=0,
            created_by=who.user,
            restart_token=0,
        )
        s.add(job)
        s.flush()
        return job

    def _add_version(
        self,
        s: Session,
        who: authz.Principal,
        job: Job,
        spec_yaml: str,
        spec: Any,
        notebook: bytes | None,
        parity: dict | None,
        note: str,
        schema_version: int | None,
    ) -> Any:
        """The new version of ``spec_yaml`` (``spec``: parsed once, by the caller); its
        notebook record is written once the row is in (so a request losing a race never
        overwrites the winner's record)."""
        record = None
        if notebook is not None:
            number = (versioning.previous_number(s, job.id) or 0) + 1
            record = versioning.notebook_record(self.config.state_dir, job.name, number, notebook)
        version = versioning.add_version(
            s,
            job,
            self.config.state_dir,
            spec_yaml,
            spec,
            who.user,
            notebook=record,
            parity=parity,
            note=note,
            schema_version=schema_version,
        )
        s.flush()
        if notebook is not None and version.notebook_path:
            path = Path(version.notebook_path)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(notebook)
        return version

    def _vet(
        self,
        s: Session,
        who: authz.Principal,
        job: Job | None,
        name: str,
        spec: Any,
        pin: int | None,
        same: bool = False,
    ) -> None:
        """The checks of a new version (``same``: of the current one, at a start) that
        need no Spark: its schema pin, the names it reads, and its sinks' targets."""
        if job is not None and not same:
            self._check_pin(s, job, spec, pin)
            self._check_names(s, job, spec, pin)
        else:
            schema_pins.check_names(self.schemas, name, spec, pin)
        targets.check(s, who, name, spec)

    def _validate(self, name: str, spec_yaml: str) -> None:
        """``workbench validate``'s checks of the spec, in Spark
        (:mod:`workbench.jobs.spec_check`)."""
        self.checker.check(spec_yaml, name)

    @staticmethod
    def _wait(s: Session, job: Job, reason: str | None) -> None:
        """Accept the job as WAITING for ``reason`` (a cluster that does not answer): the
        supervisor starts it once its probes pass (:mod:`workbench.jobs.probes`)."""
        if reason is None or job.desired != RUNNING:
            return
        job.status = "WAITING"
        add_event(s, job.id, ACTOR_SERVICE, "waiting", error=reason)

    def _check_new(self, name: str, team: str, cluster: str | None, who: authz.Principal) -> None:
        """What :meth:`_new_job` refuses, before any slower check."""
        admission.check_job_name(name)
        moves.check_cluster(self.config, team, cluster, who.admin)

    @staticmethod
    def _pin_of(s: Session, job: Job) -> int | None:
        current = versioning.version(s, job.id, job.current_version)
        return current.schema_version if current is not None else None

    def _check_pin(self, s: Session, job: Job, spec: Any, pin: int | None) -> None:
        """Refuse a new version whose schema pin breaks what the current version reads."""
        if job.current_version:
            schema_pins.check(self.schemas, job.name, spec, self._pin_of(s, job), pin)

    def _check_names(self, s: Session, job: Job, spec: Any, pin: int | None) -> None:
        """Refuse a spec naming what its pinned set lacks (or what the job's current set
        has and that one does not)."""
        today = self._pin_of(s, job) if job.current_version else False
        schema_pins.check_names(self.schemas, job.name, spec, pin, today)

    @staticmethod
    def _want_running(job: Job) -> None:
        job.desired = RUNNING
        job.failures = 0
        job.next_attempt_at = None
        if job.status in ("FAILED", "STOPPED"):
            job.status = "SUBMITTED"

    @staticmethod
    def _run(s: Session, job: Job, run_id: str | None) -> Run | None:
        if run_id is None:
            return latest_run(s, job.id)
        found = s.scalars(
            select(Run).where(Run.job_id == job.id, Run.run_id == str(run_id))
        ).first()
        if found is None:
            raise JobNotFoundError(f"{job.name} run {run_id}")
        return found

    @staticmethod
    def _view(s: Session, job: Job) -> dict:
        s.flush()
        return job_view(s, job)
