"""Quality jobs made automatically: one per new topic matching the service's ``quality:``.

The supervisor's tick calls :meth:`QualityAuto.tick` (one guarded step). Every
``every_s`` it lists the topics of the configured Kafka cluster and submits, as the
user ``quality-auto``, a ``kind: quality`` spec (:func:`spec_for`) for each matching
topic it has not handled yet and that has no job named :func:`job_name`. The job is then
an ordinary job of the configured team: supervised, stopped, edited and removed like any
other. Handled topics are kept in the service's database
(:class:`~workbench.jobs.quality_tables.QualityTopic`), so a removed job is not made again,
also after the service restarts.
"""

from __future__ import annotations

import logging
import re
import time
from typing import TYPE_CHECKING, Any

from workbench import secrets
from workbench.jobs import authz
from workbench.spec import MAX_NAME

if TYPE_CHECKING:
    from workbench.jobs.config import QualityAuto as Settings
    from workbench.service.job_service import JobService

LOG = logging.getLogger("workbench.quality.auto")
ACTOR = "quality-auto"


def job_name(topic: str, prefix: str = "quality-") -> str:
    """The job name of ``topic``'s quality job (characters a name may not hold become '-')."""

    return (prefix + re.sub(r"[^A-Za-z0-9_-]", "-", topic))[:MAX_NAME]


def matching(topics: list[str], pattern: str) -> list[str]:
    """The topics ``pattern`` matches whole, internal ones (``__...``) left out."""
    regex = re.compile(pattern)
    return sorted(t for t in topics if not t.startswith("__") and regex.fullmatch(t))


def spec_for(topic: str, settings: Settings, bootstrap_servers: str) -> dict[str, Any]:
    """The quality spec of ``topic`` (``{topic}`` in the sinks' text values filled in)."""
    stream: dict[str, Any] = {
        "topics": [topic],
        "message": settings.message,
        "event_timestamp_field": settings.event_timestamp_field,
        "bootstrap_servers": bootstrap_servers,
    }
    if settings.cluster:
        stream["cluster"] = settings.cluster
    spec: dict[str, Any] = {
        "kind": "quality",
        "name": job_name(topic, settings.name_prefix),
        "team": settings.team,
        "description": f"made for topic {topic} (service config quality.topic_pattern)",
        "streams": [stream],
        "window": settings.window,
        "allowed_lateness": settings.allowed_lateness,
        "late_after": settings.late_after,
        "sinks": [_filled(sink, topic) for sink in settings.sinks],
        "alerts": settings.alerts,
    }
    if settings.business_key:
        spec["business_key"] = settings.business_key
    return spec


def _filled(value: Any, topic: str) -> Any:
    if isinstance(value, str):
        return value.replace("{topic}", topic)
    if isinstance(value, dict):
        return {k: _filled(v, topic) for k, v in value.items()}
    if isinstance(value, list):
        return [_filled(v, topic) for v in value]
    return value


class QualityAuto:
    """The supervisor step (see the module docstring)."""

    def __init__(self, service: JobService):
        self.config, self.db, self._service = service.config, service.db, service
        self._last = float("-inf")

    def tick(self) -> None:
        settings = self.config.quality
        if settings is None or time.monotonic() - self._last < settings.every_s:
            return
        self._last = time.monotonic()
        servers, options = self._address(settings)
        source = settings.cluster or servers
        handled = self._handled(source)
        new = [
            t
            for t in matching(self._topics(servers, options), settings.topic_pattern)
            if t not in handled
        ]
        have = self._job_names() if new else set()
        for topic in new:
            name = job_name(topic, settings.name_prefix)
            if name not in have:  # else made before topics were kept, or by a user
                self._submit(topic, settings, servers)
            self._remember(source, topic, name)

    def _address(self, settings: Settings) -> tuple[str, dict[str, str]]:
        if settings.cluster:
            cluster = self.config.kafka_cluster(settings.cluster)
            return cluster.bootstrap_servers, dict(cluster.security)
        return str(settings.bootstrap_servers), {}

    @staticmethod
    def _topics(servers: str, options: dict[str, str]) -> list[str]:
        from confluent_kafka.admin import AdminClient

        resolved = secrets.resolve(options, {})
        admin = AdminClient({"bootstrap.servers": servers, **resolved})
        return list(admin.list_topics(timeout=10).topics)

    def _job_names(self) -> set[str]:
        from sqlalchemy import select

        from workbench.jobs.db import Job

        with self.db.session() as s:
            return set(s.scalars(select(Job.name)))

    def _handled(self, source: str) -> set[str]:
        from sqlalchemy import select

        from workbench.jobs.quality_tables import QualityTopic

        with self.db.session() as s:
            query = select(QualityTopic.topic).where(QualityTopic.source == source)
            return set(s.scalars(query))

    def _remember(self, source: str, topic: str, job: str) -> None:
        from workbench.jobs.quality_tables import QualityTopic

        with self.db.session() as s:
            s.merge(QualityTopic(source=source, topic=topic, job=job))

    def _submit(self, topic: str, settings: Settings, servers: str) -> None:
        import yaml

        spec = spec_for(topic, settings, servers)
        who = authz.Principal(ACTOR, admin=True)
        self._service.submit(
            who,
            name=spec["name"],
            team=settings.team,
            spec_yaml=yaml.safe_dump(spec, sort_keys=False),
            cluster=settings.spark_cluster,
            note=f"a new topic matching {settings.topic_pattern}: {topic}",
            spark_check=False,  # a template's spec; a JVM's start would hold up the tick
        )
        LOG.info("quality job %s made for the new topic %s", spec["name"], topic)
