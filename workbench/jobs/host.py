"""One shared Spark application: ``python -m workbench.jobs.host HOST_DIR``.

The supervisor spawns it in its own process group for one team on one cluster
(:mod:`workbench.jobs.hosting`) and hands it runs through its folder
(:mod:`workbench.jobs.hostdir`). It starts one Spark driver (the cluster's master, the
FAIR scheduler) and runs each handed run in a thread as a :class:`HostedRun`: the same
steps as a run process (:class:`~workbench.jobs.runner.Runner`: secrets, handoff, lease,
heartbeat, progress, ``STOP``, ``exit.json``), its dagger in its own Spark session
(``newSession``: its own SQL settings, views, functions and listeners, in its own
scheduler pool) of the shared driver. A run that fails ends alone; the host goes on.

SIGTERM or SIGINT stops every run after its micro-batch. ``STOP`` in the folder ends the
host once its runs have ended.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import TYPE_CHECKING, TextIO

from workbench.exceptions import SparkConfError
from workbench.jobs.hostdir import HostDir
from workbench.jobs.rundir import RunConfig, RunDir
from workbench.jobs.runner import Runner, jvm_ignores_sigterm, process_main
from workbench.runtime import jvm_log
from workbench.runtime.spark import new_session, session

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from workbench.spec import DaggerSpec

POLL_S = 0.5
#: the shared driver's settings: its jobs take turns fairly, one scheduler pool each
HOST_CONF = {"spark.scheduler.mode": "FAIR"}


class HostedRun(Runner):
    """One run inside the host: its lines go to its own run log, its dagger to a session of
    the host's driver."""

    owns_process = False  # the host's JVM serves other runs: a query is never left behind

    def __init__(self, run_dir: RunDir, host: Host):
        super().__init__(run_dir)
        self.host = host
        self._out: TextIO = open(run_dir.log, "a", encoding="utf-8")  # noqa: SIM115 (closed in run)

    def say(self, line: str) -> None:
        self._out.write(self.mask(line) + "\n")
        self._out.flush()

    def run(self) -> int:
        try:
            return super().run()
        finally:
            self._out.close()

    def _session(self, spec: DaggerSpec, config: RunConfig) -> SparkSession:

        spark = new_session(self.host.session())
        spark.sparkContext.setLocalProperty("spark.scheduler.pool", config.job)
        host = self.host
        self.say(f"in shared Spark application {host.config.host_id} (its log: {host.dir.log})")
        return spark

    def _start(self, spec, config, floor):  # type: ignore[no-untyped-def]
        try:
            return super()._start(spec, config, floor)
        except SparkConfError as err:
            raise SparkConfError(err.job, err.differing, shared=True) from None


class Host:
    """The shared application (see the module docstring)."""

    def __init__(self, host_dir: HostDir):
        self.dir = host_dir
        self.config = host_dir.read_config()
        self.runs: dict[str, tuple[HostedRun, threading.Thread]] = {}
        self._taken: set[str] = set()  # every run id taken, ended ones too: read once
        self._spark: SparkSession | None = None
        self._spark_error: BaseException | None = None
        self._ready = threading.Event()
        self._stop = threading.Event()

    def say(self, line: str) -> None:
        print(f"host {self.config.host_id}: {line}", flush=True)

    def stop_soon(self) -> None:
        self._stop.set()

    def session(self) -> SparkSession:
        """The shared driver's session, once the main thread has started it."""
        self._ready.wait()
        if self._spark is None:
            raise RuntimeError(f"the shared Spark application did not start: {self._spark_error}")
        return self._spark

    def run(self) -> int:
        self.say(f"team {self.config.team}, cluster {self.config.cluster}, pid {os.getpid()}")
        self._take_runs()  # they beat STARTING while the driver starts
        self._start_spark()
        beat_at = 0.0
        while True:
            self._take_runs()
            self._forget_ended()
            if self._stop.is_set():
                for runner, _ in self.runs.values():
                    runner.stop_soon()
            now = time.monotonic()
            if now - beat_at >= self.config.heartbeat_s:
                self.dir.write_heartbeat(sorted(self.runs))
                beat_at = now
            ending = self._stop.is_set() or self.dir.stop_requested() or self._spark is None
            if ending and not self.runs:
                break
            time.sleep(POLL_S)
        if self._spark is not None:
            self._spark.stop()
        self.say("ended")
        return 0

    def _start_spark(self) -> None:

        try:
            jvm_log.to_file(self.dir.log)
            with jvm_ignores_sigterm():
                self._spark = session(
                    master=self.config.spark_master,
                    app_name=f"daggers-{self.config.team}-{self.config.host_id}",
                    conf={**self.config.spark_conf, **HOST_CONF},
                )
        except Exception as err:  # noqa: BLE001 - each hosted run fails with it
            self._spark_error = err
            self.say(f"Spark did not start: {err}")
        finally:
            self._ready.set()

    def _take_runs(self) -> None:
        for run_id, folder in self.dir.assigned(self._taken).items():
            self._taken.add(run_id)
            if RunDir(folder).read_exit() is not None:
                continue
            runner = HostedRun(RunDir(folder), self)
            thread = threading.Thread(target=runner.run, name=f"run-{run_id}", daemon=True)
            self.runs[run_id] = (runner, thread)
            thread.start()
            self.say(f"took run {run_id}")

    def _forget_ended(self) -> None:
        for run_id, (_, thread) in list(self.runs.items()):
            if not thread.is_alive():
                del self.runs[run_id]
                self.say(f"run {run_id} ended")


def main(argv: list[str] | None = None) -> int:
    usage = "python -m workbench.jobs.host HOST_DIR"
    return process_main(argv, usage, lambda folder: Host(HostDir(folder)))


if __name__ == "__main__":
    sys.exit(main())
