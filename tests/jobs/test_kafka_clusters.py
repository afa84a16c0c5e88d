"""Named Kafka clusters in the job service: a run's streams read through their cluster
(servers, security options with secrets as references), a probe asks the real broker."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from jobkit import spec_yaml
from polling import wait_for

from workbench.jobs.config import KafkaCluster
from workbench.jobs.kafka_clusters import bind, probe, view
from workbench.spec import parse

pytestmark = pytest.mark.unit

SASL = {
    "security.protocol": "SASL_PLAINTEXT",
    "sasl.mechanism": "PLAIN",
    "sasl.username": "dagger",
    "sasl.password": "${env:WB_KAFKA_PASSWORD}",
}
CLUSTERS = {
    "main": KafkaCluster(bootstrap_servers="k1:9092,k2:9092", security=SASL, standby="mirror"),
    "mirror": KafkaCluster(bootstrap_servers="m1:9092"),
}


def with_cluster(name: str | None, **stream) -> str:
    data = yaml.safe_load(spec_yaml())
    if name is not None:
        data["streams"][0]["cluster"] = name
    data["streams"][0].update(stream)
    return yaml.safe_dump(data, sort_keys=False)


def test_a_stream_of_a_named_cluster_reads_through_it():
    text = with_cluster("main", kafka_options={"fetch.max.bytes": "1000", "sasl.username": "me"})
    [stream] = parse(yaml.safe_load(bind(text, CLUSTERS))).streams
    assert stream.bootstrap_servers == "k1:9092,k2:9092"
    assert stream.kafka_options == {"fetch.max.bytes": "1000", **SASL}  # the cluster's win
    assert "${env:WB_KAFKA_PASSWORD}" in bind(text, CLUSTERS)  # resolved by the job only


def test_a_stream_whose_cluster_is_not_configured_keeps_its_servers():
    for text in (with_cluster("elsewhere"), with_cluster(None)):
        assert bind(text, CLUSTERS) == text  # the very text: nothing to bind
    local = {"local": KafkaCluster(bootstrap_servers="l:9092")}
    [stream] = parse(yaml.safe_load(bind(with_cluster(None), local))).streams
    assert stream.bootstrap_servers == "l:9092"  # a stream without cluster: is in 'local'


def test_view_shows_references_never_values(monkeypatch):
    monkeypatch.setenv("WB_KAFKA_PASSWORD", "hunter2")
    shown = view("main", CLUSTERS["main"])
    assert shown["security"]["sasl.password"] == "${env:WB_KAFKA_PASSWORD}"
    assert (shown["standby"], shown["failover_after_s"]) == ("mirror", 60.0)


def test_probe_asks_the_real_broker_its_cluster_id(kafka_broker):
    answer = probe(KafkaCluster(bootstrap_servers=kafka_broker.bootstrap))
    cluster_id = (kafka_broker.state_dir / "cluster.id").read_text().strip()
    assert answer == {"reachable": True, "cluster_id": cluster_id, "brokers": 1, "error": None}


def test_probe_says_why_a_cluster_does_not_answer(monkeypatch):
    monkeypatch.delenv("WB_KAFKA_PASSWORD", raising=False)
    answer = probe(CLUSTERS["main"])
    assert not answer["reachable"] and "WB_KAFKA_PASSWORD is not set" in answer["error"]
    answer = probe(KafkaCluster(bootstrap_servers="127.0.0.1:1"), timeout_s=1)
    assert not answer["reachable"] and "No Kafka cluster answers at 127.0.0.1:1" in answer["error"]


def test_the_supervisor_writes_the_bound_spec_into_the_run(make_service):
    service = make_service(tick_s=0.1, heartbeat_s=0.2, kafka_clusters=CLUSTERS)
    assert service.start_supervisor()
    who = service.principal("bob")
    service.submit(who, name="surge", team="pricing", spec_yaml=with_cluster("main"))
    runs = service.config.state_dir / "runs"
    run_json: Path = wait_for(lambda: next(runs.glob("*/run.json"), None), 30, "a run")
    [stream] = yaml.safe_load((run_json.parent / "spec.yaml").read_text())["streams"]
    assert stream["bootstrap_servers"] == "k1:9092,k2:9092"
    assert stream["kafka_options"]["sasl.password"] == "${env:WB_KAFKA_PASSWORD}"
    versions = service.versions(who, "surge")
    assert "k1:9092" not in versions[0]["spec_yaml"]  # the version keeps what was submitted


def test_readers_are_the_visible_jobs_whose_current_version_reads_the_cluster(
    make_service, tmp_path
):
    from jobkit import teams_file

    from workbench.jobs.kafka_clusters import readers

    service = make_service(teams=teams_file(tmp_path), kafka_clusters=CLUSTERS)
    bob, dave, root = (service.principal(u) for u in ("bob", "dave", "root"))
    service.submit(bob, name="on-main", team="pricing", spec_yaml=with_cluster("main"))
    service.submit(dave, name="supply-main", team="supply", spec_yaml=with_cluster("main"))
    service.submit(bob, name="on-mirror", team="pricing", spec_yaml=with_cluster("mirror"))
    assert readers(service, bob, "main") == [
        {"job": "on-main", "team": "pricing", "tables": ["booking"]}
    ]
    assert [r["job"] for r in readers(service, root, "main")] == ["on-main", "supply-main"]
    assert readers(service, bob, "nowhere") == []
