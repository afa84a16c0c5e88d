"""One job process: ``python -m workbench.jobs.runner RUN_DIR``.

The supervisor prepares the run folder (:mod:`workbench.jobs.rundir`) and spawns this in
its own process group. The runner:

1. reads ``run.json`` and ``spec.yaml``; checks the spec as written, then resolves its
   secrets (:mod:`workbench.secrets`) in memory only: no resolved value is printed,
   logged or written (each line it prints is masked too);
2. applies the version handoff (:mod:`workbench.jobs.handoff`): each stream's
   ``starting_offsets`` and the ``min_rowtime`` floor (they matter only for a new
   checkpoint: a restart continues from the checkpoint's offsets);
3. takes the checkpoint lease (:mod:`workbench.jobs.lease`): held by another live
   driver means exit code 3 at once;
4. starts the job (its kind's class: a dagger's :class:`~workbench.streaming.job.StreamingJob`) on
   the run's Spark master with its cluster's settings (resources, conf) under the spec's
   ``resources`` and ``spark_conf``, the JVM's output into the run's ``log``;
5. writes ``heartbeat.json`` every ``heartbeat_s`` and after each micro-batch (state
   STARTING, RUNNING, STOPPING, with :mod:`~workbench.jobs.metrics`) and one
   ``progress.jsonl`` line per micro-batch; with metric alert rules in the spec, one
   ``alerts.jsonl`` line per micro-batch too (:meth:`Runner.on_rows`), and commits its
   restart offsets to the group ``workbench-JOB`` (:mod:`~workbench.jobs.group_commits`,
   for a Kafka failover);
6. stops after the current micro-batch when ``STOP`` appears or on SIGTERM/SIGINT, and
   writes ``exit.json``: code 0 (stopped) or 1 (failed, with the error in one paragraph,
   as ``workbench run`` prints it; the trace goes to the log).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench import secrets
from workbench.alerts.observe import observe
from workbench.alerts.rules import in_job
from workbench.exceptions import LeaseHeldError, SpecError, WorkbenchError
from workbench.jobs import metrics
from workbench.jobs.group_commits import GroupCommits
from workbench.jobs.lag import BrokerLag
from workbench.jobs.lease import Lease
from workbench.jobs.reschedule import answers as master_answers
from workbench.jobs.rundir import (
    EXIT_FAILED,
    EXIT_INVALID,
    EXIT_LEASE_HELD,
    EXIT_STOPPED,
    RunConfig,
    RunDir,
)
from workbench.kinds import KINDS, kind_of
from workbench.runtime import jvm_log
from workbench.runtime.errors import deterministic
from workbench.runtime.spark import session
from workbench.runtime.spark_errors import summary, text_of
from workbench.settings import set_default
from workbench.yamlsafe import read_yaml

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from workbench.alerts.rules import AlertRule
    from workbench.spec import DaggerSpec
    from workbench.streaming.job import StreamingJob
    from workbench.streaming.progress import BatchReport

POLL_S = 0.5
#: told to stop now (``KILL``), how long a run process waits for its query to stop before
#: leaving it to the process's end (its Kafka source may hang closing on a dead cluster)
STOP_NOW_WAIT_S = 5.0
#: what Kafka's admin client says when no bootstrap server answers
NO_BROKER = "Timed out waiting for a node assignment"


def load_spec(path: Path) -> tuple[DaggerSpec, Callable[[str], str]]:
    """The spec with its secrets resolved, and a function masking their values.

    A spec invalid once resolved is reported as written (with the reference text) when
    that is invalid too, else by key only: no error quotes a resolved value."""

    source = str(path)
    data = read_yaml(path, what="spec")  # size and alias limits as for any spec
    secrets.check(path.read_text(encoding="utf-8"))
    found: dict[str, str] = {}
    resolved = secrets.resolve(data, found)
    mask = secrets.redact(found.values())
    try:
        return KINDS.parse(resolved, source), mask  # type: ignore[return-value]
    except SpecError as err:
        KINDS.parse(data, source)  # raises the error as written, if there is one
        refs = secrets.references(str(_at(data, err.key))) or secrets.references(str(data))
        raise SpecError(
            err.key,
            f"not valid once {', '.join(refs)} is resolved; check the value it stands for",
            source,
        ) from None


def _at(data: Any, key: str) -> Any:
    """The value at a spec key path such as ``sinks[0].url`` (None if there is none)."""
    import re

    for part in re.findall(r"[^.\[\]]+", key):
        try:
            data = data[int(part)] if isinstance(data, list) else data[part]
        except (KeyError, IndexError, TypeError, ValueError):
            return None
    return data


def apply_handoff(
    spec: DaggerSpec, handoff: dict[str, Any] | None
) -> tuple[DaggerSpec, datetime | None]:
    """The spec with each stream's handed-off starting offsets, and the rowtime floor."""
    if not handoff:
        return spec, None
    offsets = handoff.get("starting_offsets") or {}
    streams = [
        s.model_copy(update={"starting_offsets": offsets[s.table]}) if s.table in offsets else s
        for s in spec.streams
    ]
    floor = handoff.get("min_rowtime")
    moment = datetime.fromisoformat(floor.replace("Z", "+00:00")) if floor else None
    return spec.model_copy(update={"streams": streams}), moment


class Runner:
    """One run of a job version in this process (see the module docstring)."""

    #: the run is the whole process (its JVM ends with it); not for a shared application's run
    owns_process = True

    def __init__(self, run_dir: RunDir):
        self.dir = run_dir
        self.started_at = time.time()
        self.state = "STARTING"
        self.mask: Callable[[str], str] = lambda text: text
        self.job: StreamingJob | None = None
        self.lag: BrokerLag | None = None
        self.commits: GroupCommits | None = None  # restart offsets for a Kafka failover
        self._last: BatchReport | None = None
        self._last_at: float | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._done = threading.Event()
        self._beater: threading.Thread | None = None
        self._stopped = False
        self._alerting: tuple[RunConfig, list[AlertRule]] | None = None

    # --- output ---
    def say(self, line: str) -> None:
        """One line (or paragraph) for the run's log, secrets masked."""
        print(self.mask(line), flush=True)

    def metrics(self) -> dict[str, Any]:
        from workbench.streaming.progress import Totals

        totals = self.job.totals if self.job is not None else Totals()
        out = metrics.snapshot(self._last, totals, self._last_at)
        if self.lag is not None and self._last is not None:  # Spark's figure is 0 when
            behind = self.lag.behind(self._last.end_offsets)  # batches read all they see
            if behind is not None:
                out["offsets_behind_latest"] = behind
        return out

    def beat(self) -> None:
        values = self.metrics()  # outside the lock: it may ask the brokers
        with self._lock:
            self.dir.write_heartbeat(self.state, self.started_at, values)

    def _beating(self, every_s: float) -> None:
        while not self._done.wait(every_s):
            self.beat()

    def on_batch(self, report: BatchReport) -> None:
        now = time.time()
        self._last, self._last_at = report, now
        with self._lock:
            totals = self.job.totals if self.job is not None else None
            self.dir.append_progress(metrics.record(report, now, totals))
        self.beat()
        if self.commits is not None:
            self.commits.after_batch()

    def on_rows(self, batch: DataFrame, batch_id: int) -> None:
        """One ``alerts.jsonl`` line: the metric rules' observations of the batch's rows
        (fingerprints of the service's job name). Rules that fail to evaluate write the
        error instead; the job goes on."""

        assert self._alerting is not None
        config, rules = self._alerting
        line: dict[str, Any] = {"batch_id": batch_id, "checkpoint": config.checkpoint}
        try:
            found = [o.to_dict() for o in observe(batch, rules, config.job)]
            line.update(time=time.time(), observations=found)
        except Exception as err:  # noqa: BLE001 - alerts must not stop the job
            from workbench.runtime.spark_errors import summary, text_of

            error = self.mask(summary(text_of(err)))
            line.update(time=time.time(), observations=[], error=error)
            self.say(f"alert rules not evaluated for batch {batch_id}: {error}")
        with self._lock:
            self.dir.append_alerts(line)

    # --- the run ---
    def stop_soon(self) -> None:
        """Stop after the current micro-batch (what SIGTERM and SIGINT ask)."""
        self._stop.set()

    def run(self) -> int:
        lease, config = None, None
        try:
            config = self.dir.read_run_config()
            self._beat_every(config.heartbeat_s)
            lease = Lease(config.checkpoint)
            code, error = self._run(config, lease), None
        except LeaseHeldError as err:
            code, error = EXIT_LEASE_HELD, str(err)
        except Exception as err:  # noqa: BLE001 - every failure ends the run with its reason
            code = EXIT_INVALID if deterministic(err) else EXIT_FAILED
            error = self._paragraph(err)
            down = master_down(config.spark_master) if config and config.spark_master else None
            if down:  # the root cause, not what Spark says of the context it stopped
                error = f"{down}; {error}"
        self._finish(lease)
        if error is not None:
            self.say(f"error: {error}")
        reason = "stopped" if code == EXIT_STOPPED else "failed"
        self.dir.write_exit(code, reason, None if error is None else self.mask(error))
        if self._abandoned:  # its query, lease and Kafka clients end with the process, as a
            sys.stdout.flush()  # kill would end them; nothing waits on a cluster that is gone
            os._exit(code)
        return code

    def _beat_every(self, every_s: float) -> None:
        self.beat()
        self._beater = threading.Thread(target=self._beating, args=(every_s,), daemon=True)
        self._beater.start()

    def _run(self, config: RunConfig, lease: Lease) -> int:
        spec, self.mask = load_spec(self.dir.path / config.spec)
        spec, floor = apply_handoff(spec, config.handoff)
        lease.acquire(config.run_id)
        self.lag = BrokerLag(spec.streams)
        if self._stop_asked():
            return EXIT_STOPPED
        job = self._start(spec, config, floor)
        self.commits = GroupCommits(spec, config.checkpoint, config.job, self.say)
        self.state = "RUNNING"
        self.beat()
        self.say(f"run {config.run_id}: {kind_of(spec)} '{spec.name}' v{config.version} running")
        while not self._stop.wait(POLL_S):
            job.poll()
            if self._stop_asked():
                break
        self.state = "STOPPING"
        self.beat()
        now = self.dir.kill_requested()
        self.say("stopping now" if now else "stopping after the current micro-batch")
        wait = STOP_NOW_WAIT_S if self.owns_process else None
        job.stop(give_up=self.dir.kill_requested, abandon_after_s=wait)
        self._stopped = True
        if job.abandoned:
            self.say(
                f"stopped now: the query was still closing its sources after {wait:.0f} s "
                "(a Kafka cluster that is gone?); it ends with this process"
            )
        job.poll()
        totals = job.totals
        self.say(
            f"stopped: {totals.records_read:,} records read, {totals.late_rows:,} late, "
            f"{totals.dead_letters:,} dead letters; rows written: {totals.written_summary()}"
        )
        return EXIT_STOPPED

    def _stop_asked(self) -> bool:
        return self._stop.is_set() or self.dir.stop_requested()

    def _start(self, spec: DaggerSpec, config: RunConfig, floor: datetime | None) -> StreamingJob:
        from workbench.jobs.schema_pins import registry_for_run

        spark = self._session(spec, config)
        rules = in_job(spec.alerts)
        self._alerting = (config, rules) if rules else None
        self.job = KINDS.job_class(spec)(  # a dagger, or a quality job (kind: quality)
            spec,
            spark,
            checkpoint=config.checkpoint,
            emit=self.say,
            min_rowtime=floor,
            on_batch=self.on_batch,
            on_rows=self.on_rows if rules else None,
            registry=registry_for_run(config.schema_set, spec),
        )
        schemas = config.schema_version or "bundled"
        self.say(
            f"run {config.run_id}: starting {kind_of(spec)} '{spec.name}' v{config.version} "
            "on schema "
            f"version {schemas}, checkpoint "
            f"{config.checkpoint}" + (f", rows from {floor.isoformat()}" if floor else "")
        )
        return self.job.start()

    def _session(self, spec: DaggerSpec, config: RunConfig) -> SparkSession:
        """This run's own Spark driver, its log into the run's ``log``."""

        jvm_log.to_file(self.dir.log)
        with jvm_ignores_sigterm():
            conf = {**config.spark_conf, **spec.session_conf()}  # the job's own win
            return session(master=config.spark_master, app_name=f"dagger-{spec.name}", conf=conf)

    @property
    def _abandoned(self) -> bool:
        """A query was left stopping (:meth:`StreamingJob.stop`): the process ends now."""
        return self.job is not None and self.job.abandoned

    def _finish(self, lease: Lease | None) -> None:
        self._done.set()
        if self._abandoned:  # the lease is held, and the Kafka clients (the heartbeat's lag
            return  # query, the group commits) would wait on the cluster that is gone
        if self._beater is not None:
            self._beater.join(10)
        if self.job is not None and self.job.queries and not self._stopped:
            with contextlib.suppress(Exception):  # already failing: the first error is reported
                self.job.stop(graceful=False)
        if lease is not None:
            lease.release()
        if self.lag is not None:
            self.lag.close()
        if self.commits is not None:
            self.commits.close()

    def _paragraph(self, err: BaseException) -> str:
        from workbench.streaming.job import JobFailedError

        trace = "".join(traceback.format_exception(err))
        self.say(trace)  # the whole story stays in the log
        if isinstance(err, JobFailedError | WorkbenchError):
            text = str(err)
        else:
            text = summary(text_of(err))
        job = self.job
        where = (
            f"{kind_of(job.spec)} '{job.spec.name}' (checkpoint {job.checkpoint}) stopped: "
            if job
            else ""
        )
        if job is not None and NO_BROKER in text:
            servers = ", ".join(sorted({s.bootstrap_servers for s in job.spec.streams}))
            text = (
                f"{text.rstrip('.')}: no Kafka broker answered at {servers}; check the streams' "
                "bootstrap_servers and that the brokers are up and reachable from here"
            )
        return self.mask(f"{where}{text.rstrip('.')}.")


def master_down(master: str, timeout_s: float = 2.0) -> str | None:
    """What a run failing while its standalone (or k8s) Spark master does not answer
    failed on: Spark then only says its context was stopped ("Cannot call methods on a
    stopped SparkContext"), and its log "All masters are unresponsive"."""
    if master_answers(master, timeout_s):
        return None
    return f"Spark master {master}: all masters are unresponsive"


@contextlib.contextmanager
def jvm_ignores_sigterm() -> Iterator[None]:
    """Start the JVM with SIGTERM ignored (a disposition kept across exec, and one the JVM
    leaves as it is): the supervisor's SIGTERM to the process group then reaches only this
    process, which stops the query after its micro-batch and ends the JVM itself, instead of
    the JVM's shutdown hooks killing the query mid-batch. A SIGTERM during these seconds
    is lost (the supervisor escalates to SIGKILL); SIGINT the JVM ignores already (PySpark)."""
    previous = signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def process_main(argv: list[str] | None, usage: str, make: Callable[[Path], Any]) -> int:
    """``main`` of a supervised process taking one folder: ``make(folder)`` gives what to
    run (with ``stop_soon`` for SIGTERM and SIGINT, and ``run`` giving the exit code)."""
    from workbench.streaming.job import on_signals

    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print(f"usage: {usage}", file=sys.stderr)
        return 2
    set_default("PYTHONUNBUFFERED", "1")
    process = make(Path(args[0]).resolve())
    on_signals(process.stop_soon)
    return int(process.run())


def main(argv: list[str] | None = None) -> int:
    usage = "python -m workbench.jobs.runner RUN_DIR"
    return process_main(argv, usage, lambda folder: Runner(RunDir(folder)))


if __name__ == "__main__":
    sys.exit(main())
