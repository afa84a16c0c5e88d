"""Named Kafka clusters over HTTP and on the command line, against a real ``workbench
serve`` whose config names the session broker (``main``) and a SASL cluster (``mirror``)
whose password is a reference the server's environment does not set."""

from __future__ import annotations

import json

import pytest
import yaml
from cli_runner import workbench
from servekit import TOKENS, start_serve, write_state

SASL = {
    "security.protocol": "SASL_PLAINTEXT",
    "sasl.mechanism": "PLAIN",
    "sasl.username": "dagger",
    "sasl.password": "${env:WB_UNSET_KAFKA_PASSWORD}",
}


@pytest.fixture(scope="module")
def clustered(kafka_broker, tmp_path_factory):
    state = write_state(tmp_path_factory.mktemp("kafka-clusters-service"))
    config = yaml.safe_load((state / "service.yaml").read_text())
    config["kafka_clusters"] = {
        "main": {"bootstrap_servers": kafka_broker.bootstrap, "standby": "mirror"},
        "mirror": {"bootstrap_servers": "127.0.0.1:1", "security": SASL, "description": "DR"},
    }
    (state / "service.yaml").write_text(yaml.safe_dump(config))
    server = start_serve(state)
    yield server
    assert server.stop() == 0


def cli(server, *args):
    auth = ("--server", server.url, "--token", TOKENS["alice"])
    return workbench("kafka-clusters", *args, *auth, timeout=120)


def test_get_kafka_clusters_lists_them_with_references_only(clustered):
    answer = clustered.call("GET", "kafka-clusters", "alice")
    assert answer.status_code == 200, answer.text
    main, mirror = answer.json()["kafka_clusters"]
    assert (main["name"], main["standby"], main["failover_after_s"]) == ("main", "mirror", 60.0)
    assert mirror["security"] == SASL and mirror["description"] == "DR"
    assert clustered.call("GET", "kafka-clusters", None).status_code == 401
    assert clustered.call("GET", "kafka-clusters", "carla").status_code == 403  # a viewer


def test_get_one_cluster_asks_it_whether_it_answers(clustered, kafka_broker):
    main = clustered.call("GET", "kafka-clusters/main", "bob").json()
    cluster_id = (kafka_broker.state_dir / "cluster.id").read_text().strip()
    assert (main["reachable"], main["cluster_id"], main["brokers"]) == (True, cluster_id, 1)
    mirror = clustered.call("GET", "kafka-clusters/mirror", "bob").json()
    assert not mirror["reachable"] and "WB_UNSET_KAFKA_PASSWORD is not set" in mirror["error"]
    missing = clustered.call("GET", "kafka-clusters/mian", "bob")
    assert missing.status_code == 404
    assert "Did you mean main" in missing.json()["error"]["message"]


def test_workbench_kafka_clusters_list_and_show(clustered, kafka_broker):
    done = cli(clustered, "list")
    assert done.returncode == 0, done.stderr
    header, main, mirror = done.stdout.splitlines()
    assert header.split() == [
        "NAME",
        "BOOTSTRAP",
        "SERVERS",
        "SECURITY",
        "STANDBY",
        "FAILOVER",
        "AFTER",
    ]
    assert main.split() == ["main", kafka_broker.bootstrap, "PLAINTEXT", "mirror", "60s"]
    assert mirror.split() == ["mirror", "127.0.0.1:1", "SASL_PLAINTEXT", "-", "-"]
    done = cli(clustered, "show", "main")
    assert done.returncode == 0, done.stderr
    assert "answers now:" in done.stdout and "1 brokers" in done.stdout
    done = cli(clustered, "show", "mirror", "--json")
    assert json.loads(done.stdout)["security"]["sasl.password"] == SASL["sasl.password"]
    done = cli(clustered, "show", "nope")
    assert done.returncode == 1 and done.stderr.startswith("error: Unknown Kafka cluster 'nope'")


def test_failover_requests_are_checked_before_anything_moves(clustered):
    answer = clustered.call("POST", "jobs/nobody/failover", "alice", {"kafka_cluster": "main"})
    assert answer.status_code == 404 and "nobody" in answer.json()["error"]["message"]
    answer = clustered.call("POST", "jobs/nobody/failover", "alice", {"kafka_cluster": "nope"})
    assert answer.status_code == 404 and "Unknown Kafka cluster 'nope'" in answer.text
    answer = clustered.call("POST", "jobs/nobody/failover", "alice", {})
    assert answer.status_code == 400 and "kafka_cluster" in answer.text
    done = workbench(
        "jobs", "failover", "nobody", "--kafka-cluster", "main",
        "--server", clustered.url, "--token", TOKENS["alice"], timeout=120,
    )  # fmt: skip
    assert done.returncode == 1 and done.stderr.startswith("error: No job 'nobody'")
