"""Probes at submit and start, and a manual failover from a cluster that is gone (issue
36, items 10 and 11), without servers: a Spark master or a Kafka cluster that nothing
listens on does not answer; the job waits (WAITING) with the reason as its last error,
and a manual failover stops the old run now, as the automatic one does."""

from __future__ import annotations

import pytest
import yaml
from jobkit import spec_yaml
from sqlalchemy import select

from workbench.dev.ports import free_port
from workbench.jobs.config import KafkaCluster
from workbench.jobs.db import Job, Run
from workbench.jobs.rundir import RunDir
from workbench.jobs.runner import master_down

pytestmark = pytest.mark.unit

PROBING = {"probe_timeout_s": 1}


def reading(cluster: str) -> str:
    data = yaml.safe_load(spec_yaml())
    data["streams"][0]["cluster"] = cluster
    return yaml.safe_dump(data, sort_keys=False)


def test_start_with_the_spark_master_down_waits_naming_the_master(make_service):
    master = f"spark://127.0.0.1:{free_port()}"
    clusters = {"standalone": {"master": master}}
    service = make_service(clusters=clusters, policy=PROBING)
    bob = service.principal("bob")
    job = service.submit(bob, name="surge", team="pricing", spec_yaml=spec_yaml())
    assert job["status"] == "WAITING" and job["desired"] == "running"
    assert job["last_error"] == (
        f"Spark master {master} (cluster 'standalone'): all masters are unresponsive (none "
        "accepted a connection in 1 s)"
    )
    assert job["last_error_at"] and job["last_error_run"] is None
    service.stop(bob, "surge")
    job = service.start(bob, "surge")
    assert job["status"] == "WAITING" and "all masters are unresponsive" in job["last_error"]
    actions = [e["action"] for e in service.events(bob, "surge")]
    assert actions == ["submit", "waiting", "stop", "start", "waiting"]


def test_submit_with_the_kafka_cluster_down_waits_with_the_reason(make_service):
    port = free_port()
    clusters = {"main": KafkaCluster(bootstrap_servers=f"127.0.0.1:{port}")}
    service = make_service(kafka_clusters=clusters, policy=PROBING)
    bob = service.principal("bob")
    job = service.submit(bob, name="surge", team="pricing", spec_yaml=reading("main"))
    assert job["status"] == "WAITING"
    assert job["last_error"] == f"Kafka cluster 'main' (127.0.0.1:{port}) did not answer in 1 s"
    # a stream with its own bootstrap_servers is not probed; nor is anything with probes off
    other = service.submit(bob, name="other", team="pricing", spec_yaml=spec_yaml("other"))
    assert other["status"] == "SUBMITTED" and other["last_error"] is None


def test_a_run_failing_with_its_master_down_says_so():
    master = f"spark://127.0.0.1:{free_port()},127.0.0.1:{free_port()}"
    assert master_down(master, 0.5) == f"Spark master {master}: all masters are unresponsive"
    assert master_down("local[2]") is None


def test_a_manual_failover_from_a_dead_cluster_stops_the_old_run_now(make_service, tmp_path):
    clusters = {
        "main": KafkaCluster(bootstrap_servers=f"127.0.0.1:{free_port()}", standby="mirror"),
        "mirror": KafkaCluster(bootstrap_servers=f"127.0.0.1:{free_port()}"),
    }
    service = make_service(kafka_clusters=clusters, policy=PROBING)
    bob = service.principal("bob")
    service.submit(bob, name="surge", team="pricing", spec_yaml=reading("main"))
    folder = tmp_path / "run"
    folder.mkdir()
    with service.db.session() as s:  # the job's live run, as the supervisor records one
        job = s.scalars(select(Job).where(Job.name == "surge")).one()
        s.add(Run(job_id=job.id, run_id="1-1", version=1, attempt=1,
                  run_dir=str(folder), log_path=str(folder / "log")))  # fmt: skip

    job = service.failover(bob, "surge", "mirror", reason="main is down")

    assert job["version"] == 2 and RunDir(folder).kill_requested()
    [stop] = [e for e in service.events(bob, "surge") if e["action"] == "stop-now"]
    assert stop["actor"] == "bob" and stop["detail"]["run"] == "1-1"
    assert stop["detail"]["why"].startswith("Kafka cluster 'main' (127.0.0.1:")
