"""Shared Spark applications, as the supervisor keeps them.

One Spark driver per job costs ~1 GB and a JVM's share of two cores, which caps this
machine at a few jobs (``benchmarks/job_capacity.py``). A cluster with
``jobs_per_app: N`` (N > 1) instead runs the jobs of a team as streaming queries of shared
applications (:mod:`workbench.jobs.host`), up to N each, packed: a run goes to the
fullest application of its team and cluster that has room, else to a new one. An
application with no run left is asked to end.

What a job keeps when it shares: its own run folder, heartbeat, progress, log, status,
checkpoint and lease, backoff and ``FAILED``; its own Spark session (SQL settings, views,
functions, listeners) and scheduler pool; a query that fails or is stopped ends alone.
What it gives up (the isolation trade-off): one JVM heap and two cores for all of them, so
a job that exhausts memory or hangs the driver takes down its co-hosted jobs (they restart
from their checkpoints, counting a failure each); a stop that does not finish in time
ends the query at once (``KILL``), and a host that stops answering is killed with all its
jobs; ``spark_conf`` keys read at session start cannot differ per job. Applications
never mix teams, so a team's secrets and data stay in its own processes.
"""

from __future__ import annotations

import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from workbench.jobs import procs
from workbench.jobs.db import Run
from workbench.jobs.hostdir import HostConfig, HostDir
from workbench.jobs.rundir import RunDir

#: seconds a new host may go without a run before it counts as idle
IDLE_GRACE_S = 10.0


def run_alive(run: Run) -> bool:
    """Whether ``run`` is still running: its own process, or its host with no exit record."""
    if run.host is None:
        return procs.alive(run.pid, run.run_dir)
    return procs.alive(run.pid, run.host) and RunDir(run.run_dir).read_exit() is None


@dataclass
class Host:
    """One live shared application."""

    dir: HostDir
    config: HostConfig
    pid: int
    child: subprocess.Popen | None = None
    born: float = 0.0
    stopping: bool = False

    @property
    def key(self) -> str:
        return str(self.dir.path)

    def alive(self) -> bool:
        return procs.alive(self.pid, self.dir.path)


class Hosts:
    """The shared applications under ``$STATE/hosts``."""

    def __init__(self, folder: Path, command: list[str], env: dict[str, str]):
        self.folder, self.command, self.env = folder, command, env
        self.live: dict[str, Host] = {}

    def find(self) -> None:
        """Take over the live applications in the folder (after a restart of the service)."""
        for path in sorted(self.folder.glob("*/host.json")):
            folder = HostDir(path.parent)
            pid = folder.read_pid()
            host = Host(folder, folder.read_config(), pid or 0, born=time.monotonic())
            if pid and host.alive() and str(folder.path) not in self.live:
                host.stopping = folder.stop_requested()
                self.live[host.key] = host

    def place(
        self, team: str, cluster: str, jobs_per_app: int, load: dict[str, int],
        master: str | None, heartbeat_s: float, spark_conf: dict[str, str] | None = None,
    ) -> Host:  # fmt: skip
        """The application a new run of ``team`` on ``cluster`` goes to (``load``: live runs
        per host folder): the fullest with room, else a new one."""
        room = [
            h for h in self.live.values()
            if h.config.team == team and h.config.cluster == cluster and not h.stopping
            and load.get(h.key, 0) < jobs_per_app and h.alive()
        ]  # fmt: skip
        if room:
            return max(room, key=lambda h: (load.get(h.key, 0), -h.born))
        host_id = self._new_id(team, cluster)
        config = HostConfig(host_id, team, cluster, master, heartbeat_s, dict(spark_conf or {}))
        return self.spawn(config)

    def spawn(self, config: HostConfig) -> Host:
        folder = HostDir(self.folder / config.host_id)
        folder.write_config(config)
        child = procs.spawn(self.command, folder.path, self.env)
        folder.write_pid(child.pid)
        host = Host(folder, config, child.pid, child, born=time.monotonic())
        self.live[host.key] = host
        return host

    def tend(self, load: dict[str, int]) -> None:
        """Forget ended applications; ask idle ones (no live run) to end."""
        for key, host in list(self.live.items()):
            if not host.alive():
                if host.child is not None:
                    host.child.poll()  # reap it
                procs.kill_leftovers(host.pid)  # e.g. its JVM, when Python was killed alone
                del self.live[key]
            elif host.stopping or load.get(key):
                continue
            elif time.monotonic() - host.born >= IDLE_GRACE_S:
                host.dir.request_stop()
                host.stopping = True

    def kill(self, folder: str) -> None:
        """SIGKILL the application in ``folder`` and so every run it hosts."""
        import signal

        host = self.live.get(folder)
        pid = host.pid if host else HostDir(folder).read_pid()
        procs.signal_group(pid, signal.SIGKILL)

    def _new_id(self, team: str, cluster: str) -> str:
        self.folder.mkdir(parents=True, exist_ok=True)
        stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{team}-{cluster}")
        taken = {p.name for p in self.folder.iterdir()}
        n = len(taken) + 1
        while f"{stem}-{n}" in taken:
            n += 1
        return f"{stem}-{n}"
