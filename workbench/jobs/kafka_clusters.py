"""Named Kafka clusters in the job service: how a stream reads through one, what the API
shows of them.

A spec's ``streams[i].cluster`` names a cluster of the service config's ``kafka_clusters``
(a stream without ``cluster:`` is in cluster ``local``). When the supervisor prepares a
run, :func:`bind` gives each such stream the cluster's ``bootstrap_servers`` and its
``security`` options (over the stream's own ``kafka_options`` of the same name). Secret
references stay references in the run's spec: only the job process resolves them. A
stream whose cluster is not configured keeps its own servers and options, as before
named clusters (and as ``workbench run`` always reads).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from workbench import secrets
from workbench.exceptions import WorkbenchError
from workbench.jobs.config import KafkaCluster
from workbench.kafka.identity import describe
from workbench.yamlsafe import load_text


def bind(spec_yaml: str, clusters: Mapping[str, KafkaCluster]) -> str:
    """``spec_yaml`` with each stream of a configured cluster reading through it; the text
    as it was when no stream names one."""
    import yaml

    data = load_text(spec_yaml)
    streams = data.get("streams") if isinstance(data, dict) else None
    if not isinstance(streams, list):
        return spec_yaml
    bound = [_bind_stream(s, clusters) for s in streams]
    if bound == streams:
        return spec_yaml
    return yaml.safe_dump({**data, "streams": bound}, sort_keys=False, allow_unicode=True)


def _bind_stream(stream: Any, clusters: Mapping[str, KafkaCluster]) -> Any:
    if not isinstance(stream, dict):
        return stream
    cluster = clusters.get(str(stream.get("cluster", "local")))
    if cluster is None:
        return stream
    options = {**(stream.get("kafka_options") or {}), **cluster.security}
    return {**stream, "bootstrap_servers": cluster.bootstrap_servers, "kafka_options": options}


def view(name: str, cluster: KafkaCluster) -> dict[str, Any]:
    """What ``GET kafka-clusters`` shows of one cluster (secrets are references only)."""
    return {
        "name": name,
        "bootstrap_servers": cluster.bootstrap_servers,
        "security": dict(cluster.security),
        "standby": cluster.standby,
        "failover_after_s": cluster.failover_after_s,
        "description": cluster.description,
    }


def probe(cluster: KafkaCluster, timeout_s: float = 5.0) -> dict[str, Any]:
    """Whether the cluster answers now, from the service's host and environment:
    ``{reachable, cluster_id, brokers, error}``."""

    try:
        options = secrets.resolve(dict(cluster.security))
        found = describe(cluster.bootstrap_servers, options, timeout_s)
    except WorkbenchError as err:
        return {"reachable": False, "cluster_id": None, "brokers": 0, "error": str(err)}
    return {"reachable": True, "cluster_id": found.cluster_id, "brokers": found.brokers,
            "error": None}  # fmt: skip


def readers(service: Any, who: Any, name: str) -> list[dict[str, Any]]:
    """The jobs ``who`` may see whose current version reads cluster ``name``:
    ``[{job, team, tables}]``."""
    from workbench.jobs import versioning

    found = []
    with service.db.session() as s:
        for job, current in versioning.visible_current(s, who):
            streams = (load_text(current.spec_yaml) or {}).get("streams") or []
            tables = [
                str(st.get("table"))
                for st in streams
                if isinstance(st, dict) and str(st.get("cluster", "local")) == name
            ]
            if tables:
                found.append({"job": job.name, "team": job.team, "tables": tables})
    return found
