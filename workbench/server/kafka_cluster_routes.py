"""``GET kafka-clusters``, ``GET kafka-clusters/{name}``: the job service's named Kafka
clusters (service config ``kafka_clusters``), for every signed-in user but viewers; and
``POST jobs/{ref}/failover`` ``{"kafka_cluster": NAME, "reason"?}``: the job's streams move
to that cluster (a mirror), answering the job (:meth:`JobService.failover`).

``GET kafka-clusters`` answers ``{"kafka_clusters": [{name, bootstrap_servers, security,
standby, failover_after_s, description}]}`` (``security`` as configured: secrets are
references, never values). ``GET kafka-clusters/{name}`` answers one of them and whether
it answers now from the service's host: ``reachable``, ``cluster_id``, ``brokers``,
``error``, and ``jobs``: the caller's visible jobs reading it, ``[{job, team, tables}]``
(a 404 names the configured clusters).
"""

from __future__ import annotations

from typing import Any

from workbench.jobs.kafka_clusters import probe, readers, view
from workbench.server.api import ApiHandler


class KafkaClustersRoute(ApiHandler):
    async def get(self) -> None:
        clusters = self.service.config.kafka_clusters

        def listing(who: Any) -> list[dict]:
            return [view(name, cluster) for name, cluster in clusters.items()]

        self.reply({"kafka_clusters": await self.run(listing)})


class KafkaClusterRoute(ApiHandler):
    async def get(self, name: str) -> None:
        config = self.service.config

        def one(who: Any) -> dict:
            cluster = config.kafka_cluster(name)
            jobs = readers(self.service, who, name)
            return {**view(name, cluster), **probe(cluster), "jobs": jobs}

        self.reply(await self.run(one))


class FailoverRoute(ApiHandler):
    async def post(self, ref: str) -> None:
        body = self.body({"kafka_cluster", "reason"}, required=("kafka_cluster",))
        reason = str(body.get("reason") or "")
        self.reply(await self.call("failover", ref, str(body["kafka_cluster"]), reason))


ROUTES: list[tuple[str, type[ApiHandler]]] = [
    ("kafka-clusters", KafkaClustersRoute),
    ("kafka-clusters/([^/]+)", KafkaClusterRoute),
    ("jobs/([^/]+)/failover", FailoverRoute),
]
