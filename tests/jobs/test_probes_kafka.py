"""Probes against a real broker (issue 36, items 10 and 11): a job submitted while its
Kafka cluster does not answer waits (WAITING, the reason as its last error), starts by
itself once the cluster answers, and its last error clears when the run is healthy; a
manual failover from a cluster that answers stops the old run gracefully, as before."""

from __future__ import annotations

import pytest
import yaml
from jobkit import spec_yaml
from polling import wait_for
from sqlalchemy import select

from workbench.chaos.proxy import FaultProxy
from workbench.dev.ports import free_port
from workbench.jobs.config import KafkaCluster
from workbench.jobs.db import Job, Run
from workbench.jobs.rundir import RunDir

pytestmark = pytest.mark.integration

POLICY = {"probe_timeout_s": 2, "healthy_after_s": 0.5, "backoff_s": 0.2}


def reading(cluster: str) -> str:
    data = yaml.safe_load(spec_yaml())
    data["streams"][0]["cluster"] = cluster
    return yaml.safe_dump(data, sort_keys=False)


def test_a_job_waits_for_its_kafka_cluster_then_starts(make_service, kafka_broker):
    port = free_port()
    clusters = {"main": KafkaCluster(bootstrap_servers=f"127.0.0.1:{port}")}
    service = make_service(kafka_clusters=clusters, policy=POLICY, tick_s=0.1, heartbeat_s=0.2)
    assert service.start_supervisor()
    bob = service.principal("bob")
    job = service.submit(bob, name="surge", team="pricing", spec_yaml=reading("main"))
    assert job["status"] == "WAITING"
    assert job["last_error"] == f"Kafka cluster 'main' (127.0.0.1:{port}) did not answer in 2 s"
    assert service.get_job(bob, "surge")["run"] is None  # nothing started while it waits

    host, _, broker_port = kafka_broker.bootstrap.rpartition(":")
    with FaultProxy((host, int(broker_port)), port=port):  # the cluster answers now
        running = wait_for(
            lambda: (j := service.get_job(bob, "surge"))["status"] == "RUNNING" and j,
            60,
            "the waiting job to start",
        )
        assert running["run"] is not None
        healthy = wait_for(
            lambda: (j := service.get_job(bob, "surge"))["last_error"] is None and j,
            60,
            "its last error to clear once the run is healthy",
        )
    actions = [e["action"] for e in service.events(bob, "surge")]
    assert actions[:3] == ["submit", "waiting", "ready"] and "healthy" in actions
    assert healthy["last_error_at"] is None


def test_a_manual_failover_from_a_live_cluster_stops_gracefully(
    make_service, kafka_broker, tmp_path
):
    clusters = {
        "main": KafkaCluster(bootstrap_servers=kafka_broker.bootstrap, standby="mirror"),
        "mirror": KafkaCluster(bootstrap_servers=kafka_broker.bootstrap),
    }
    service = make_service(kafka_clusters=clusters, policy=POLICY)
    bob = service.principal("bob")
    service.submit(bob, name="surge", team="pricing", spec_yaml=reading("main"))
    folder = tmp_path / "run"
    folder.mkdir()
    with service.db.session() as s:
        job = s.scalars(select(Job).where(Job.name == "surge")).one()
        s.add(Run(job_id=job.id, run_id="1-1", version=1, attempt=1,
                  run_dir=str(folder), log_path=str(folder / "log")))  # fmt: skip
    assert service.failover(bob, "surge", "mirror")["version"] == 2
    assert not RunDir(folder).kill_requested()
    assert "stop-now" not in [e["action"] for e in service.events(bob, "surge")]
