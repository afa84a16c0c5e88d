"""The supervisor: a reconcile loop that makes each job's run process follow its desired state.

Every tick (``tick_s``, 0.5 s) each job is compared with its runs:

- desired running, no live run, not backing off → spawn a run (``STARTING``);
- a live run → its heartbeat gives ``STARTING``/``RUNNING``; ``LAGGING`` when
  ``offsets_behind_latest`` passes ``policy.lagging_offsets``; no heartbeat for
  ``heartbeat_timeout_s`` → the run is killed as hung. A run healthy for
  ``healthy_after_s`` that has completed a micro-batch clears the job's failure count (a
  query that starts but never gets a batch through, e.g. its broker is unreachable, keeps
  counting towards ``FAILED``);
- a run that should not be running (stop, restart, a new version) → ``STOPPING``: the
  ``STOP`` file, SIGTERM to its group after ``stop_grace_s``, SIGKILL after ``kill_grace_s``;
- a run that died unasked (no ``exit.json``, or a non-zero code) → one more failure:
  ``BACKING_OFF`` for ``backoff_s * 2^(failures-1)`` (capped at ``backoff_max_s``), then a
  new run from the checkpoint; after ``max_failures`` in a row ``FAILED`` (the error in an
  event). Exit code 3 (checkpoint lease held) backs off too, never a second driver at once.

A job on a cluster with ``jobs_per_app`` above 1 runs as a query of a shared application
of its team instead of a process of its own (:mod:`workbench.jobs.hosting`): the same
states and run folder; its stop escalates to ``KILL`` (stop now) instead of signals, and
a hung one is killed with its application.

Before the jobs, each tick moves the jobs of a cluster whose master stopped answering to
its ``standby`` (:mod:`workbench.jobs.reschedule`). After the jobs, each tick ingests
their alert observations and evaluates their health rules (:mod:`workbench.alertmanager.alerting`);
the supervising process also runs the thread delivering notifications.

Runs are separate sessions that outlive the service; a supervisor starting again finds
live runs by pid and run folder and re-attaches. One supervisor per state folder
(``flock`` on ``$STATE/supervisor.lock``); other service processes serve the API and
stand by, one of them taking over when the supervising process ends.
"""

from __future__ import annotations

import fcntl
import logging
import os
import signal
import subprocess
import threading
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from workbench.alertmanager.alerting import Alerting
from workbench.exceptions import SchemaVersionError
from workbench.jobs import failover, kafka_clusters, procs, schema_pins, versioning
from workbench.jobs.config import ServiceConfig
from workbench.jobs.db import Database, Job, Run, add_event, each_job, now
from workbench.jobs.hostdir import HostDir
from workbench.jobs.hosting import Hosts, run_alive
from workbench.jobs.kafka_watch import KafkaWatch
from workbench.jobs.probes import Waiting
from workbench.jobs.reschedule import Rescheduler
from workbench.jobs.rundir import EXIT_INVALID, EXIT_LEASE_HELD, RunConfig, RunDir
from workbench.jobs.views import heartbeat, last_errors, live_run
from workbench.paths import home
from workbench.quality.auto import QualityAuto
from workbench.schemas.versions import SchemaVersions
from workbench.settings import child_env, variable

if TYPE_CHECKING:
    from workbench.service.job_service import JobService

LOG = logging.getLogger(__name__)
ACTOR = "supervisor"


def wanted(job: Job, run: Run) -> bool:
    """Whether ``run`` is what ``job`` should be running now."""
    return (
        job.desired == "running"
        and run.version == job.current_version
        and run.restart_token == job.restart_token
    )


def _exit_code(child: subprocess.Popen | None, timeout_s: float = 10.0) -> int | None:
    """The exit code of a child whose process looks gone (:func:`procs.alive`), or None
    without a child. Its command line empties as it exits, a moment before the kernel
    makes it a zombie that ``waitpid`` can reap: so wait for that moment, not just poll."""
    if child is None:
        return None
    try:
        return child.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return None


def exit_text(code: int) -> str:
    """How a run's process ended, for its ``run-failed`` event: a negative code is the
    signal that killed it (``subprocess``), named, since what the log says last is then
    only what the process was doing when it died."""
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"the run was killed by {name} (code {code})"
    return f"the run exited with code {code}"


class Supervisor:
    def __init__(self, config: ServiceConfig, db: Database, service: JobService):
        self.config, self.db, self.policy = config, db, config.policy
        self.runs_dir = config.state_dir / "runs"
        self.hosts = Hosts(config.state_dir / "hosts", config.host_command, self._env())
        self.alerting = Alerting(config, db)
        self.rescheduler = Rescheduler(config)
        self.kafka_watch = KafkaWatch(config, db)  # automatic Kafka failover
        self.quality_auto = QualityAuto(service)  # quality jobs for new topics
        self.waiting = Waiting(config)  # probes of the jobs waiting for their clusters
        self._reasons: dict[int, str] = {}  # job id: why it waits, as last recorded
        self._clear_when_healthy: set[int] = set()  # jobs started after waiting
        self._children: dict[int, subprocess.Popen] = {}
        self._killed: dict[str, str] = {}  # run id: why this supervisor killed it
        self._lock: IO[str] | None = None
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    # -- life cycle -------------------------------------------------------------------
    def start(self) -> bool:
        """Run the loop in a thread. It supervises while it holds the state folder's lock;
        while another process holds it, it stands by and takes over when that process
        ends. True when it supervises now."""
        supervising = self._take_over()
        self._thread = threading.Thread(target=self._loop, name="workbench-supervisor", daemon=True)
        self._thread.start()
        return supervising

    @property
    def supervising(self) -> bool:
        return self._lock is not None

    def _take_over(self) -> bool:
        if not self.acquire():
            return False
        self.hosts.find()
        self.reattach()
        self.alerting.start()
        self.kafka_watch.start()
        return True

    def acquire(self) -> bool:
        self.config.state_dir.mkdir(parents=True, exist_ok=True)
        lock = open(self.config.state_dir / "supervisor.lock", "a+")  # noqa: SIM115 (held)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.close()
            return False
        lock.seek(0)
        lock.truncate()
        lock.write(f"{os.getpid()}\n")
        lock.flush()
        self._lock = lock
        return True

    def stop(self) -> None:
        """End the loop and release the lock; the runs keep running."""
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
        self.alerting.stop()
        self.kafka_watch.stop()
        self.waiting.close()
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    def _loop(self) -> None:
        while not self._stopping.is_set():
            if self.supervising or self._take_over():
                self.tick()
            self._stopping.wait(self.config.tick_s)

    # -- reconciling ------------------------------------------------------------------
    def reattach(self) -> None:
        """Record which live runs this supervisor takes over (the tick handles dead ones)."""
        with self.db.session() as s:
            for run in s.scalars(select(Run).where(Run.ended_at.is_(None))):
                if run_alive(run):
                    add_event(s, run.job_id, ACTOR, "reattach", run=run.run_id, pid=run.pid)

    def tick(self) -> None:
        """One pass over every job."""
        self._guarded(self.rescheduler.tick, self.db, self._kill)  # Spark clusters that are down
        each_job(self.db, self.reconcile, "supervising")
        self._guarded(lambda: self.hosts.tend(self._host_load()))  # shared applications
        self._guarded(self.alerting.tick)
        self._guarded(self.kafka_watch.tick)  # jobs of a Kafka cluster down go to its standby
        self._guarded(self.quality_auto.tick)  # a quality job per new matching topic

    @staticmethod
    def _guarded(step: Callable[..., Any], *args: Any) -> None:
        """``step(*args)``; an error is logged, and the tick goes on."""
        try:
            step(*args)
        except Exception:
            LOG.exception("supervisor step %s", getattr(step, "__qualname__", step))

    def _host_load(self, s: Session | None = None) -> dict[str, int]:
        """Live runs per shared application's folder."""
        if s is None:
            with self.db.session() as own:
                return self._host_load(own)
        query = select(Run.host, func.count()).where(Run.ended_at.is_(None), Run.host.is_not(None))
        return {str(host): int(n) for host, n in s.execute(query.group_by(Run.host))}

    def reconcile(self, s: Session, job: Job) -> None:
        run = live_run(s, job.id)
        if run is not None:
            if run_alive(run):
                self._watch(s, job, run)
            else:
                self._ended(s, job, run)
        elif job.desired != "running":
            job.status = "STOPPED"
        elif job.status == "FAILED":
            return
        elif job.status == "WAITING":
            self._waiting(s, job)
        elif job.next_attempt_at is not None and now() < job.next_attempt_at:
            job.status = "BACKING_OFF"
        else:
            self._spawn(s, job)

    def _waiting(self, s: Session, job: Job) -> None:
        """A job accepted as WAITING (its Kafka cluster or Spark master did not answer):
        started once its probes pass (:mod:`workbench.jobs.probes`); a new reason is an
        event (its ``last_error``)."""
        version = versioning.version(s, job.id, job.current_version)
        if version is None:
            return
        ready, reason = self.waiting.ready(job.id, version.spec_yaml, job.cluster)
        if ready:
            add_event(s, job.id, ACTOR, "ready", why="its clusters answer")
            self._clear_when_healthy.add(job.id)
            self._spawn(s, job)
        elif reason is not None and reason != self._reasons.get(job.id):
            self._reasons[job.id] = reason
            said = (last_errors(s, [job.id]).get(job.id) or {}).get("error")
            if reason != said:  # not what the submit or start said already
                add_event(s, job.id, ACTOR, "waiting", error=reason)

    def _watch(self, s: Session, job: Job, run: Run) -> None:
        if not wanted(job, run):
            self._stop_run(s, job, run)
            return
        beat = heartbeat(run)
        last = float(beat.get("time", 0)) if beat else run.started_at.timestamp()
        silent = now().timestamp() - last
        if silent > self.policy.heartbeat_timeout_s:
            why = f"no heartbeat for {silent:.0f} s: killed as hung"
            if run.run_id not in self._killed:
                add_event(s, job.id, ACTOR, "hung", run=run.run_id, error=why)
            self._kill(run, why)
            return
        status = self._status(beat)
        if status != job.status and status in ("RUNNING", "LAGGING"):
            add_event(s, job.id, ACTOR, status.lower(), run=run.run_id)
        job.status = status
        healthy = now() - run.started_at >= timedelta(seconds=self.policy.healthy_after_s)
        healthy = healthy and bool(((beat or {}).get("metrics") or {}).get("batches"))
        erred = job.failures or job.id in self._clear_when_healthy
        if job.status in ("RUNNING", "LAGGING") and erred and healthy:
            add_event(s, job.id, ACTOR, "healthy", run=run.run_id, cleared=job.failures)
            job.failures = 0  # and its last error is cleared (views.CLEARED)
            self._clear_when_healthy.discard(job.id)

    def _status(self, beat: dict | None) -> str:
        state = (beat or {}).get("state")
        if state == "STOPPING":
            return "STOPPING"
        if state != "RUNNING":
            return "STARTING"
        behind = ((beat or {}).get("metrics") or {}).get("offsets_behind_latest") or 0
        return "LAGGING" if behind > self.policy.lagging_offsets else "RUNNING"

    def _stop_run(self, s: Session, job: Job, run: Run) -> None:
        """Stop escalation: STOP file, then SIGTERM, then SIGKILL to the run's group."""
        job.status = "STOPPING"
        moment = now()
        if run.stop_requested_at is None:
            RunDir(run.run_dir).request_stop()
            run.stop_requested_at = moment
            add_event(s, job.id, ACTOR, "stop-requested", run=run.run_id)
        elif run.term_sent_at is None:
            if moment - run.stop_requested_at >= timedelta(seconds=self.policy.stop_grace_s):
                run.term_sent_at = moment
                if run.host is not None:  # a signal would reach every job of the host
                    RunDir(run.run_dir).request_kill()
                    add_event(s, job.id, ACTOR, "stop-now", run=run.run_id, host=run.host)
                    return
                procs.signal_group(run.pid, signal.SIGTERM)
                add_event(s, job.id, ACTOR, "sigterm", run=run.run_id, pid=run.pid)
        elif moment - run.term_sent_at >= timedelta(seconds=self.policy.kill_grace_s):
            if run.run_id not in self._killed:
                add_event(s, job.id, ACTOR, "sigkill", run=run.run_id, pid=run.pid)
            self._kill(run, "killed after the stop grace periods")

    def _kill(self, run: Run, why: str) -> None:
        self._killed[run.run_id] = why
        if run.host is not None:
            self.hosts.kill(run.host)  # and so the other jobs it hosts
        else:
            procs.signal_group(run.pid, signal.SIGKILL)

    # -- a run's end ------------------------------------------------------------------
    def _ended(self, s: Session, job: Job, run: Run) -> None:
        """Close a run whose process is gone, and decide what the job does next."""
        exit = RunDir(Path(run.run_dir)).read_exit()
        child = None if run.host else self._children.pop(run.pid or 0, None)
        code = exit.get("code") if exit else _exit_code(child)
        if run.host is None:
            procs.kill_leftovers(run.pid)  # e.g. the JVM of a driver killed alone
        run.ended_at, run.exit_code = now(), code
        run.end_reason = str(exit.get("reason")) if exit else ("killed" if child else "lost")
        killed = self._killed.pop(run.run_id, None)
        asked = run.stop_requested_at is not None or not wanted(job, run)
        if asked or (exit and code == 0):
            add_event(s, job.id, ACTOR, "run-stopped", run=run.run_id, code=code)
            if not asked:  # it stopped by itself (e.g. a STOP file made by hand)
                job.desired = "stopped"
            job.status = "STOPPED" if job.desired != "running" else "STOPPING"
            return
        error = (exit or {}).get("error") or killed or self._why(run, code)
        detail = {"run": run.run_id, "code": code, "reason": run.end_reason}
        action = "lease-held" if code == EXIT_LEASE_HELD else "run-failed"
        self._failed(s, job, error, action, final=code == EXIT_INVALID, **detail)

    def _why(self, run: Run, code: int | None) -> str:
        if run.host is not None:
            what = (
                f"the shared Spark application running it ({run.host}) ended without the run's "
                "exit record (killed, out of memory or hung, maybe because of another of its jobs)"
            )
            tail = procs.log_tail(HostDir(run.host).log)
            return f"{what}; last lines of its log:\n{tail}" if tail else what
        tail = procs.log_tail(run.log_path)
        if code is None:
            what = "the run's process is gone without an exit record (killed, or a reboot)"
        else:
            what = exit_text(code)
        return f"{what}; last log lines:\n{tail}" if tail else what

    def _failed(
        self, s: Session, job: Job, error: str, action: str, final: bool = False, **detail: Any
    ) -> None:
        """One more failure: back off, or ``FAILED`` after ``max_failures`` in a row, or at
        once when ``final`` (an error no retry mends: :mod:`workbench.runtime.errors`)."""
        job.failures += 1
        add_event(s, job.id, ACTOR, action, error=error, failures=job.failures, **detail)
        if final or job.failures >= self.policy.max_failures:
            job.status = "FAILED"
            add_event(s, job.id, ACTOR, "failed", error=error, failures=job.failures)
            return
        delay = self.policy.backoff(job.failures)
        job.status, job.next_attempt_at = "BACKING_OFF", now() + timedelta(seconds=delay)
        add_event(s, job.id, ACTOR, "backoff", seconds=delay, failures=job.failures)

    # -- a run's start ----------------------------------------------------------------
    def _spawn(self, s: Session, job: Job) -> None:
        version = versioning.version(s, job.id, job.current_version)
        if version is None:
            return
        attempt = (s.scalar(select(func.count()).where(Run.job_id == job.id)) or 0) + 1
        run_id = f"{job.id}-{attempt}"
        run_dir = self.runs_dir / run_id
        try:
            handoff = failover.plan_handoff(s, version, self.config)
        except Exception as err:  # the old checkpoint cannot be continued
            self._failed(s, job, f"handoff from v{version.continues_from}: {err}", "handoff-failed")
            return
        try:
            schema_set = schema_pins.set_path(SchemaVersions(), version.schema_version)
        except SchemaVersionError as err:  # its pinned schema version's file is gone
            self._failed(s, job, str(err), "run-failed")
            return
        Path(version.checkpoint).mkdir(parents=True, exist_ok=True)
        spec_yaml = kafka_clusters.bind(version.spec_yaml, self.config.kafka_clusters)
        config = self._run_config(job, version, run_id, handoff, schema_set)
        RunDir(run_dir).write_run_config(config, spec_yaml)
        pid, host = self._start_run(s, job, run_id, run_dir)
        s.add(Run(
            job_id=job.id, run_id=run_id, version=version.number, attempt=attempt,
            run_dir=str(run_dir), pid=pid, log_path=str(RunDir(run_dir).log),
            restart_token=job.restart_token, host=host,
        ))  # fmt: skip
        job.status, job.next_attempt_at = "STARTING", None
        where = {"host": host} if host else {}
        add_event(s, job.id, ACTOR, "spawn", run=run_id, pid=pid, version=version.number, **where)

    def _start_run(
        self, s: Session, job: Job, run_id: str, run_dir: Path
    ) -> tuple[int, str | None]:
        """Start the prepared run: its own process, or a query of a shared application of
        its team (:mod:`workbench.jobs.hosting`). Its pid, and its host's folder."""
        name, cluster = self.config.cluster(job.cluster)
        if not cluster.shared:
            child = procs.spawn(self.config.runner_command, run_dir, self._env())
            self._children[child.pid] = child
            return child.pid, None
        host = self.hosts.place(
            job.team, name, cluster.jobs_per_app, self._host_load(s),
            cluster.master, self.config.heartbeat_s, cluster.spark_conf(),
        )  # fmt: skip
        host.dir.assign(run_id, run_dir)
        return host.pid, host.key

    def _run_config(
        self, job: Job, version: Any, run_id: str, handoff: dict | None, schema_set: str | None
    ) -> RunConfig:
        name, cluster = self.config.cluster(job.cluster)
        return RunConfig(
            run_id=run_id,
            job_id=job.id,
            job=job.name,
            team=job.team,
            version=version.number,
            checkpoint=str(version.checkpoint),
            handoff=handoff,
            heartbeat_s=self.config.heartbeat_s,
            spark_master=cluster.master,
            cluster=name,
            spark_conf=cluster.spark_conf(),
            schema_version=version.schema_version,
            schema_set=schema_set,
        )

    @staticmethod
    def _env() -> dict[str, str]:

        return child_env({variable("home"): str(home())})
