"""``driver_kill``: SIGKILL the job's driver process (the job service's run ``pid``); the
supervisor notices the lost heartbeat and restarts the job from its checkpoint, so the
revert has nothing to do but the probes watch the recovery. A job hosted in a shared
Spark application has that application's pid: killing it hits every job it hosts
(blast radius ``cluster``)."""

from __future__ import annotations

import os
import signal

from workbench.chaos.faults import Fault
from workbench.exceptions import ChaosError


class DriverKill(Fault):
    name, type = "driver_kill", "spark"
    playbook = (
        "The driver died: `workbench jobs events JOB` shows the supervisor's restart; if it "
        "is in backoff or FAILED, read `workbench jobs logs JOB` and `workbench jobs start JOB`. "
        "Exactly-once sinks skip the replayed batch; others may double it."
    )

    def apply(self, env, params):
        run = (env.job_view() or {}).get("run") or {}
        pid = run.get("pid")
        if not pid:
            raise ChaosError(
                f"Job '{env.job}' has no running driver to kill; start it first "
                "(workbench jobs start JOB)."
            )
        os.kill(int(pid), signal.SIGKILL)
        return {"pid": int(pid), "host": run.get("host")}

    def revert(self, record, env):
        """Nothing: the supervisor restarts the job."""


FAULTS = [DriverKill]
