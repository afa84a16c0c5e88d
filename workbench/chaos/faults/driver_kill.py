"""``driver_kill``: SIGKILL the driver process (the job service's run ``pid``) of each job
in the case's blast radius (the job, the team's or the cluster's jobs); the
supervisor notices the lost heartbeat and restarts the job from its checkpoint, so the
revert has nothing to do but the probes watch the recovery. A job hosted in a shared
Spark application has that application's pid: killing it hits every job it hosts
(blast radius ``cluster``)."""

from __future__ import annotations

import os
import signal

from workbench.chaos.faults import FAULTS, Fault
from workbench.exceptions import ChaosError


class DriverKill(Fault):
    name, type = "driver_kill", "spark"
    needs = ("client",)
    playbook = (
        "The driver died: `workbench jobs events JOB` shows the supervisor's restart; if it "
        "is in backoff or FAILED, read `workbench jobs logs JOB` and `workbench jobs start JOB`. "
        "Exactly-once sinks skip the replayed batch; others may double it."
    )

    def apply(self, env, params):
        env.need("client", self.name)
        runs = {ref: view.get("run") or {} for ref, view in env.job_views().items()}
        idle = [ref for ref, run in runs.items() if not run.get("pid")]
        if idle or not runs:
            raise ChaosError(
                f"Job(s) {', '.join(idle) or '(none given)'} have no running driver to kill; "
                "start them first (workbench jobs start JOB)."
            )
        pids = sorted({int(run["pid"]) for run in runs.values()})  # a shared app once
        for pid in pids:
            os.kill(pid, signal.SIGKILL)
        return {"pids": pids, "jobs": list(runs)}

    def revert(self, record, env):
        """Nothing: the supervisor restarts the job."""


FAULTS.add(DriverKill.name, DriverKill())
