"""Quality jobs made for new topics matching the service's ``quality:`` (the supervisor step,
on the real broker and the service's database; no job is run here)."""

from __future__ import annotations

import time
import uuid

import pytest
import yaml
from streaming import new_topic

from workbench.jobs.config import ServiceConfig
from workbench.kinds import KINDS
from workbench.quality.auto import QualityAuto, job_name, matching, spec_for
from workbench.service.job_service import JobService

pytestmark = pytest.mark.unit


def settings(**extra):
    return {
        "topic_pattern": "orders-.*",
        "message": "esb.booking.BookingLogMessage",
        "bootstrap_servers": "127.0.0.1:9092",
        "team": "pricing",
        "business_key": "order_number",
        "sinks": [{"type": "parquet", "path": "/data/quality/{topic}"}],
        **extra,
    }


def test_names_patterns_and_specs():
    assert job_name("orders.v2/eu") == "quality-orders-v2-eu"
    assert matching(["orders-a", "xorders-b", "__orders-c", "orders-"], "orders-.*") == [
        "orders-",
        "orders-a",
    ]
    config = ServiceConfig(state_dir="/tmp/unused", quality=settings())
    spec = KINDS.parse(spec_for("orders-a", config.quality, "127.0.0.1:9092"))
    assert spec.kind == "quality" and spec.name == "quality-orders-a" and spec.team == "pricing"
    assert spec.sinks[0].path == "/data/quality/orders-a"
    assert spec.streams[0].topics == ["orders-a"] and spec.business_key == "order_number"


def test_each_new_matching_topic_gets_one_job_once(kafka_broker, tmp_path, database_url):
    """Made once per topic, remembered in the database: a removed job is not made again,
    also by the next service (SQLite and PostgreSQL)."""
    bootstrap = kafka_broker.bootstrap
    prefix = f"orders-{uuid.uuid4().hex[:6]}"
    first = new_topic(bootstrap, prefix, partitions=1)
    new_topic(bootstrap, f"other-{prefix}", partitions=1)
    quality = settings(topic_pattern=f"{prefix}-.*", bootstrap_servers=bootstrap, every_s=0.01)
    config = ServiceConfig(state_dir=tmp_path / "state", database_url=database_url, quality=quality)
    service = JobService(config)
    auto = QualityAuto(service)
    try:
        auto.tick()
        assert names(service) == {job_name(first)}
        second = new_topic(bootstrap, prefix, partitions=1)
        time.sleep(0.02)  # every_s
        auto.tick()
        auto.tick()
        assert names(service) == {job_name(first), job_name(second)}
        (version,) = service_versions(service, job_name(second))
        spec = yaml.safe_load(version)
        assert spec["kind"] == "quality" and spec["streams"][0]["topics"] == [second]

        remove(service, job_name(first))
        again = QualityAuto(service)  # a restarted service: nothing in memory
        again.tick()
        assert names(service) == {job_name(second)}
    finally:
        service.close()


def remove(service, name: str) -> None:
    """What removing a job leaves: none of its rows (the service has no delete yet)."""
    from sqlalchemy import delete, select

    from workbench.jobs.db import Event, Job, Run, Version

    with service.db.session() as s:
        job_id = s.scalars(select(Job.id).where(Job.name == name)).one()
        for table in (Event, Run, Version):
            s.execute(delete(table).where(table.job_id == job_id))
        s.execute(delete(Job).where(Job.id == job_id))


def names(service) -> set[str]:
    from sqlalchemy import select

    from workbench.jobs.db import Job

    with service.db.session() as s:
        return set(s.scalars(select(Job.name)))


def service_versions(service, name: str) -> list[str]:
    from sqlalchemy import select

    from workbench.jobs.db import Job, Version

    with service.db.session() as s:
        job = s.scalars(select(Job).where(Job.name == name)).one()
        return list(s.scalars(select(Version.spec_yaml).where(Version.job_id == job.id)))
