"""Rescheduling: jobs leave a Spark cluster whose master stopped answering.

A cluster with ``standby: OTHER`` in the service config is probed by the supervisor at
most every :data:`CHECK_S`: a ``spark://host:port`` master (any of ``h1:p1,h2:p2``)
answers when its RPC port accepts a TCP connection, a ``k8s://https://host:port`` one
when the API server's port does; ``local[N]`` and ``yarn`` are not probed (a local
master lives in the driver, YARN's resource managers fail over by themselves). Once the
master has not answered for the cluster's ``unreachable_after_s``, each job on it that
should run and has not ``FAILED`` moves to the standby (:func:`workbench.jobs.moves.move`,
actor ``supervisor``), if the standby answers and the job's team may use it; its run is
killed at once (its micro-batch cannot finish without the cluster), and the next run
starts on the standby from the same checkpoint. Jobs do not move back by themselves when
the cluster returns: ``workbench jobs move`` does that.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit

from sqlalchemy import select

from workbench.jobs.config import ServiceConfig
from workbench.jobs.db import Database, Job, Run
from workbench.jobs.moves import move
from workbench.jobs.views import live_run

LOG = logging.getLogger(__name__)
ACTOR = "supervisor"
#: seconds between two probes of one master
CHECK_S = 1.0
PROBE_TIMEOUT_S = 1.0


def endpoints(master: str) -> list[tuple[str, int]]:
    """The (host, port) pairs a master URL is reached at; [] when it is not probed."""
    if master.startswith("spark://"):
        pairs = master.removeprefix("spark://").split(",")
        out = []
        for pair in pairs:
            host, _, port = pair.rpartition(":")
            if host and port.isdigit():
                out.append((host.strip("[]"), int(port)))
        return out
    if master.startswith("k8s://"):
        url = urlsplit(master.removeprefix("k8s://"))
        if url.hostname:
            return [(url.hostname, url.port or (443 if url.scheme == "https" else 80))]
    return []


def answers(master: str, timeout: float = PROBE_TIMEOUT_S) -> bool:
    """Whether the master accepts connections (True for masters that are not probed)."""
    pairs = endpoints(master)
    for host, port in pairs:
        try:
            socket.create_connection((host, port), timeout=timeout).close()
            return True
        except OSError:
            continue
    return not pairs


class MasterProbes:
    """Each master's last probe in this process, so a view does not probe on every call:
    a master is probed again when its last probe is over ``ttl`` old, stale masters
    concurrently (N unreachable masters cost one timeout, not N); the supervisor's own
    probes are recorded here too, so while it supervises the view reads its results."""

    def __init__(self, ttl: float = 5.0, probe: Callable[[str], bool] = answers):
        self.ttl, self.probe = ttl, probe
        self._last: dict[str, tuple[float, bool]] = {}
        self._lock = threading.Lock()

    def record(self, master: str, ok: bool) -> None:
        with self._lock:
            self._last[master] = (time.monotonic(), ok)

    def answering(self, masters: Iterable[str]) -> dict[str, bool | None]:
        """{master: whether it answered at its last probe (None: not probed)}."""
        masters = list(masters)
        probed = {m for m in masters if endpoints(m)}
        now = time.monotonic()
        with self._lock:
            stale = sorted(
                m for m in probed if now - self._last.get(m, (-self.ttl, True))[0] >= self.ttl
            )
        if stale:
            with ThreadPoolExecutor(max_workers=min(8, len(stale))) as pool:
                for master, ok in zip(stale, pool.map(self.probe, stale), strict=True):
                    self.record(master, ok)
        with self._lock:
            return {m: self._last[m][1] if m in probed else None for m in masters}


#: the process's probes (the supervisor records into it, cluster views read it)
PROBES = MasterProbes()


class Rescheduler:
    """Probes the clusters that have a standby and moves the jobs of those that are down."""

    def __init__(self, config: ServiceConfig, probe: Callable[[str], bool] = answers):
        self.config, self.probe = config, probe
        self._down_since: dict[str, float] = {}
        self._checked: dict[str, tuple[float, bool]] = {}

    def up(self, name: str) -> bool:
        """Whether cluster ``name``'s master answered at its last probe (probed again when
        that is over :data:`CHECK_S` old)."""
        moment = time.monotonic()
        at, ok = self._checked.get(name, (0.0, True))
        if moment - at >= CHECK_S:
            master = self.config.clusters[name].master
            ok = self.probe(master)
            self._checked[name] = (moment, ok)
            PROBES.record(master, ok)
            if ok:
                self._down_since.pop(name, None)
            else:
                self._down_since.setdefault(name, moment)
        return ok

    def down(self) -> dict[str, str]:
        """{cluster: its standby} for each cluster down for its ``unreachable_after_s``
        whose standby answers."""
        out = {}
        for name, cluster in self.config.clusters.items():
            if cluster.standby is None or self.up(name):
                continue
            silent = time.monotonic() - self._down_since[name]
            if silent >= cluster.unreachable_after_s and self.up(cluster.standby):
                out[name] = cluster.standby
        return out

    def tick(self, db: Database, kill: Callable[[Run, str], None]) -> None:
        """Move the jobs of every cluster that is down; ``kill(run, why)`` ends a live run."""
        down = self.down()
        if not down:
            return
        with db.session() as s:
            query = select(Job).where(Job.cluster.in_(list(down)), Job.desired == "running")
            for job in s.scalars(query):
                target = down[job.cluster]
                if job.status == "FAILED" or not self.config.clusters[target].may_use(job.team):
                    continue
                source = self.config.clusters[job.cluster]
                why = (
                    f"the master of cluster '{job.cluster}' ({source.master}) has not "
                    f"answered for {source.unreachable_after_s:.0f} s"
                )
                run = live_run(s, job.id)
                LOG.warning("job %s moves from %s to %s: %s", job.name, job.cluster, target, why)
                move(s, job, target, ACTOR, why)
                if run is not None:
                    kill(run, f"moved to cluster '{target}': {why}")
