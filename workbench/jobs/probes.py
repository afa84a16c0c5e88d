"""Probes before a job starts: do its Kafka clusters and its Spark master answer?

A submit or a start asks, quickly, each named Kafka cluster the job's streams read
(``kafka_clusters``: a metadata request, :func:`workbench.jobs.kafka_watch.answers`) and
its Spark cluster's master (a TCP connection to a ``spark://`` or ``k8s://`` master,
:func:`workbench.jobs.reschedule.answers`). When one does not answer, the job is accepted
as ``WAITING`` with the reason (event ``waiting``, shown as its ``last_error``) instead of
a run that starts, fails on the missing cluster and backs off; the supervisor asks again
every :data:`EVERY_S` and starts it once every probe passes. ``policy.probe_timeout_s``
is how long a cluster may take to answer (0: not asked).
"""

from __future__ import annotations

import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from workbench.jobs import kafka_watch, reschedule, versioning
from workbench.jobs.config import ServiceConfig

#: seconds a Spark master may take to accept a connection (at most the policy's timeout)
SPARK_TIMEOUT_S = 2.0
#: seconds between two probes of a waiting job
EVERY_S = 5.0


def kafka_down(config: ServiceConfig, name: str, timeout_s: float) -> str | None:
    """Why the Kafka cluster ``name`` of ``kafka_clusters`` cannot be read now (None: it
    answers, or cannot be asked from here: a secret of its options)."""
    cluster = config.kafka_clusters[name]
    if kafka_watch.answers(cluster.bootstrap_servers, dict(cluster.security), timeout_s) is False:
        return (
            f"Kafka cluster '{name}' ({cluster.bootstrap_servers}) did not answer in "
            f"{timeout_s:g} s"
        )
    return None


def kafka(config: ServiceConfig, spec: Any, timeout_s: float) -> str | None:
    """Why the job cannot read now: the first of its named Kafka clusters that does not
    answer; None when all do (a stream with its own ``bootstrap_servers`` is not probed)."""
    names = {s.cluster for s in getattr(spec, "streams", None) or []}
    for name in sorted(names & set(config.kafka_clusters)):
        down = kafka_down(config, name, timeout_s)
        if down:
            return down
    return None


def spark(config: ServiceConfig, cluster: str | None, timeout_s: float) -> str | None:
    """Why the job cannot start now: its cluster's master does not answer; None when it
    does (or is not probed: ``local[N]``, ``yarn``)."""
    name, found = config.cluster(cluster)
    if reschedule.answers(found.master, timeout_s):
        return None
    return (
        f"Spark master {found.master} (cluster '{name}'): all masters are unresponsive (none "
        f"accepted a connection in {timeout_s:g} s)"
    )


def waiting_for(config: ServiceConfig, spec: Any, cluster: str | None) -> str | None:
    """The first reason the job cannot start now, or None (also when probes are off:
    ``policy.probe_timeout_s`` 0)."""
    timeout_s = config.policy.probe_timeout_s
    if not timeout_s or spec is None:
        return None
    return spark(config, cluster, min(timeout_s, SPARK_TIMEOUT_S)) or kafka(config, spec, timeout_s)


class Waiting:
    """The supervisor's probes of its ``WAITING`` jobs, in threads of their own so that a
    tick never waits on a cluster that does not answer: each job is asked at most every
    :data:`EVERY_S`."""

    def __init__(self, config: ServiceConfig):
        self.config = config
        self._pool = ThreadPoolExecutor(2, thread_name_prefix="probe")
        self._asked: dict[int, tuple[float, Future]] = {}

    def ready(self, job_id: int, spec_yaml: str, cluster: str | None) -> tuple[bool, str | None]:
        """(True, None) once the job's probes pass; else (False, the reason of the last
        probe, or None while none has answered yet)."""
        asked = self._asked.get(job_id)
        if asked is None or (asked[1].done() and time.monotonic() - asked[0] >= EVERY_S):
            future = self._pool.submit(self._probe, spec_yaml, cluster)
            self._asked[job_id] = (time.monotonic(), future)
            return False, asked[1].result() if asked else None
        if not asked[1].done():
            return False, None
        reason = asked[1].result()
        if reason is None:
            del self._asked[job_id]
            return True, None
        return False, reason

    def _probe(self, spec_yaml: str, cluster: str | None) -> str | None:
        try:
            return waiting_for(self.config, versioning.parse_spec(spec_yaml), cluster)
        except Exception as err:  # noqa: BLE001 - a probe that cannot run says why
            return f"the job's clusters could not be probed: {err}"

    def forget(self, job_id: int) -> None:
        self._asked.pop(job_id, None)

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
