"""Automatic Kafka failover: a cluster with a standby that stops answering for its
failover_after_s moves its jobs to the standby (the supervisor acting); answering again,
or not being askable (a secret), moves nothing."""

from __future__ import annotations

import time

import pytest
import yaml
from jobkit import spec_yaml
from polling import wait_for
from sqlalchemy import select

from workbench.jobs.config import KafkaCluster
from workbench.jobs.db import Job, Run
from workbench.jobs.kafka_watch import KafkaWatch, answers
from workbench.jobs.rundir import RunDir

pytestmark = pytest.mark.unit

CLUSTERS = {
    "main": KafkaCluster(bootstrap_servers="127.0.0.1:1", standby="mirror", failover_after_s=0.3),
    "mirror": KafkaCluster(bootstrap_servers="127.0.0.1:2"),
    "other": KafkaCluster(bootstrap_servers="127.0.0.1:3"),
}


def reading(cluster: str) -> str:
    data = yaml.safe_load(spec_yaml())
    data["streams"][0]["cluster"] = cluster
    return yaml.safe_dump(data, sort_keys=False)


def failed_over(service, name):
    events = service.events(service.principal("bob"), name)
    return [e for e in events if e["action"] == "failed over"]


def test_a_cluster_down_too_long_moves_its_jobs_to_the_standby(make_service):
    service = make_service(kafka_clusters=CLUSTERS)
    bob = service.principal("bob")
    service.submit(bob, name="on-main", team="pricing", spec_yaml=reading("main"))
    service.submit(bob, name="on-other", team="pricing", spec_yaml=reading("other"))
    up = {"127.0.0.1:1": False}
    watch = KafkaWatch(service.config, service.db, ask=lambda b, o, t: up.get(b, True))
    assert set(watch.watched) == {"main"}  # only clusters with a standby are asked

    watch.ask_all()
    watch.tick()  # down, but not for 0.3 s yet
    assert not failed_over(service, "on-main")
    time.sleep(0.35)
    watch.ask_all()
    watch.tick()
    [event] = failed_over(service, "on-main")
    assert event["actor"] == "supervisor" and event["detail"]["to"] == "mirror"
    assert event["detail"]["why"].startswith("Kafka cluster 'main' unreachable for ")
    assert service.get_job(bob, "on-main")["version"] == 2
    assert not failed_over(service, "on-other")
    watch.tick()  # the job reads the standby now: no second failover
    assert len(failed_over(service, "on-main")) == 1

    up["127.0.0.1:1"] = True
    watch.ask_all()
    assert watch.down() == {} and watch.down_since == {}


def test_the_run_on_the_cluster_that_is_gone_is_told_to_stop_now(make_service, tmp_path):
    """Its micro-batch waits on the dead cluster: KILL (stop now), not STOP's graceful wait."""
    service = make_service(kafka_clusters=CLUSTERS)
    bob = service.principal("bob")
    service.submit(bob, name="on-main", team="pricing", spec_yaml=reading("main"))
    service.submit(bob, name="on-other", team="pricing", spec_yaml=reading("other"))
    folders = {name: tmp_path / name for name in ("on-main", "on-other")}
    with service.db.session() as s:  # each job's live run, as the supervisor records one
        for name, folder in folders.items():
            folder.mkdir()
            job = s.scalars(select(Job).where(Job.name == name)).one()
            s.add(Run(job_id=job.id, run_id=f"{name}-1", version=1, attempt=1,
                      run_dir=str(folder), log_path=str(folder / "log")))  # fmt: skip
    watch = KafkaWatch(service.config, service.db, ask=lambda b, o, t: b != "127.0.0.1:1")
    watch.ask_all()
    time.sleep(0.35)
    watch.ask_all()
    watch.tick()
    assert failed_over(service, "on-main")
    assert RunDir(folders["on-main"]).kill_requested()
    assert not RunDir(folders["on-other"]).kill_requested()


def test_no_answer_is_down_an_unresolvable_secret_is_not(monkeypatch):
    monkeypatch.delenv("WB_UNSET_SECRET", raising=False)
    assert answers("127.0.0.1:1", {}, 1.0) is False
    assert answers("127.0.0.1:1", {"sasl.password": "${env:WB_UNSET_SECRET}"}, 1.0) is None


def test_the_supervisor_fails_a_job_over_by_itself(make_service):
    clusters = {**CLUSTERS, "main": CLUSTERS["main"].model_copy(update={"failover_after_s": 1})}
    service = make_service(tick_s=0.1, heartbeat_s=0.2, kafka_clusters=clusters)
    assert service.start_supervisor()
    bob = service.principal("bob")
    service.submit(bob, name="surge", team="pricing", spec_yaml=reading("main"))
    [event] = wait_for(lambda: failed_over(service, "surge"), 30, "the automatic failover")
    assert event["actor"] == "supervisor"

    def on_failover_version(j: dict) -> bool:  # STOPPING while the old run goes
        started = j["status"] in ("STARTING", "RUNNING")
        return bool(j["run"]) and j["run"]["version"] == 2 and started

    wait_for(
        lambda: on_failover_version(service.get_job(bob, "surge")),
        30,
        "a run of the failover version, starting or running",
    )
