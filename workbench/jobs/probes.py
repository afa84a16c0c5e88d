"""Probes before a job starts: do its Kafka clusters and its Spark master answer?

A submit or a start asks, quickly, each named Kafka cluster the job's streams read
(``kafka_clusters``: a metadata request, :func:`workbench.jobs.kafka_watch.answers`) and
its Spark cluster's master (a TCP connection to a ``spark://`` or ``k8s://`` master,
:func:`workbench.jobs.reschedule.answers`). When one does not answer, the job is accepted
as ``WAITING`` with the reason (event ``waiting``, shown as its ``last_error``) instead of
a run that starts, fails on the missing cluster and backs off; the supervisor asks again
every :data:`EVERY_S` and starts it once every probe passes.
"""

from __future__ import annotations

from typing import Any

from workbench.jobs import kafka_watch, reschedule
from workbench.jobs.config import ServiceConfig

#: seconds a Kafka cluster may take to answer a probe
KAFKA_TIMEOUT_S = 5.0
#: seconds a Spark master may take to accept a connection
SPARK_TIMEOUT_S = 2.0
#: seconds between two probes of a waiting job
EVERY_S = 5.0


def kafka(config: ServiceConfig, spec: Any, timeout_s: float = KAFKA_TIMEOUT_S) -> str | None:
    """Why the job cannot read now: the first of its named Kafka clusters that does not
    answer; None when all do (a stream with its own ``bootstrap_servers`` is not probed)."""
    names = sorted({s.cluster for s in getattr(spec, "streams", [])} & set(config.kafka_clusters))
    for name in names:
        cluster = config.kafka_clusters[name]
        found = kafka_watch.answers(cluster.bootstrap_servers, dict(cluster.security), timeout_s)
        if found is False:
            return (
                f"Kafka cluster '{name}' ({cluster.bootstrap_servers}) did not answer in "
                f"{timeout_s:.0f} s"
            )
    return None


def spark(
    config: ServiceConfig, cluster: str | None, timeout_s: float = SPARK_TIMEOUT_S
) -> str | None:
    """Why the job cannot start now: its cluster's master does not answer; None when it
    does (or is not probed: ``local[N]``, ``yarn``)."""
    name, found = config.cluster(cluster)
    if reschedule.answers(found.master, timeout_s):
        return None
    return (
        f"Spark master {found.master} (cluster '{name}'): all masters are unresponsive (none "
        f"accepted a connection in {timeout_s:.0f} s)"
    )


def waiting_for(config: ServiceConfig, spec: Any, cluster: str | None) -> str | None:
    """The first reason the job cannot start now, or None."""
    return spark(config, cluster) or kafka(config, spec)
