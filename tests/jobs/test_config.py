"""ServiceConfig: defaults, service.yaml, relative paths, tokens, clusters, bad keys."""

from __future__ import annotations

import pytest
import yaml

from workbench.exceptions import JobServiceError, KafkaClusterNotFoundError, SpecError
from workbench.jobs.config import Policy, ServiceConfig

pytestmark = pytest.mark.unit


def test_defaults_without_a_file(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path))
    config = ServiceConfig.load()
    assert config.state_dir == tmp_path / "service" and config.state_dir.is_dir()
    assert config.database_url == f"sqlite:///{tmp_path / 'service' / 'workbench.db'}"
    assert config.teams_file is None and config.all_tokens() == {}
    assert config.cluster(None)[1].master == "local[2]"
    assert config.policy == Policy()


def test_service_yaml_with_relative_files(tmp_path):
    (tmp_path / "tokens.yaml").write_text(yaml.safe_dump({"t1": "bob"}))
    (tmp_path / "service.yaml").write_text(
        yaml.safe_dump(
            {
                "database_url": "postgresql+psycopg://u@h/db",
                "teams_file": "teams.yaml",
                "tokens": {"t2": "dave"},
                "tokens_file": "tokens.yaml",
                "clusters": {"big": {"master": "spark://h:7077", "teams": ["pricing"]}},
                "policy": {"max_failures": 2, "backoff_s": 1},
            }
        )
    )
    config = ServiceConfig.load(tmp_path)
    assert config.database_url == "postgresql+psycopg://u@h/db"
    assert config.teams_file == tmp_path / "teams.yaml"
    assert config.all_tokens() == {"t1": "bob", "t2": "dave"}
    assert config.clusters_for("pricing") == ["big"] and config.clusters_for("supply") == []
    assert config.policy.max_failures == 2 and config.policy.stop_grace_s == 60


def test_backoff_doubles_and_is_capped():
    policy = Policy(backoff_s=2, backoff_max_s=10)
    assert [policy.backoff(n) for n in (1, 2, 3, 4)] == [2, 4, 8, 10]


def test_unknown_keys_and_clusters_are_errors(tmp_path):
    (tmp_path / "service.yaml").write_text("policy: {max_failure: 3}\n")
    with pytest.raises(SpecError, match=r"policy.max_failure"):
        ServiceConfig.load(tmp_path)
    config = ServiceConfig(state_dir=tmp_path)
    with pytest.raises(JobServiceError, match="Unknown cluster 'lokal'. Did you mean local"):
        config.cluster("lokal")


def test_spark_clusters_with_resources_conf_and_a_standby(tmp_path):
    (tmp_path / "service.yaml").write_text(
        "clusters:\n"
        "  a: {master: 'spark://10.0.0.5:7077', standby: b, unreachable_after_s: 5,\n"
        "      resources: {cores: 4, executor_memory: 2g, shuffle_partitions: 8},\n"
        "      conf: {spark.driver.host: 10.0.0.9}}\n"
        "  b: {master: 'k8s://https://k8s.example.com:443', teams: [pricing]}\n"
    )
    config = ServiceConfig.load(tmp_path)
    a = config.clusters["a"]
    assert a.standby == "b" and a.unreachable_after_s == 5
    assert a.spark_conf() == {
        "spark.cores.max": "4",
        "spark.executor.memory": "2g",
        "spark.sql.shuffle.partitions": "8",
        "spark.driver.host": "10.0.0.9",
    }
    assert config.clusters["b"].spark_conf() == {} and config.clusters["b"].standby is None


@pytest.mark.parametrize(
    ("clusters", "says"),
    [
        (
            "{a: {standby: blue}, blu: {}}",
            "standby 'blue' must name another of the clusters (a, blu). Did you mean blu",
        ),
        ("{a: {standby: a}}", "cluster 'a' cannot be its own standby"),
        ("{a: {resources: {cores: 0}}}", "clusters.a.resources.cores"),
    ],
)
def test_wrong_standbys_and_resources_are_errors(tmp_path, clusters, says):
    (tmp_path / "service.yaml").write_text(f"clusters: {clusters}\n")
    with pytest.raises(SpecError) as err:
        ServiceConfig.load(tmp_path)
    assert says in str(err.value)


def test_kafka_clusters_with_a_standby_and_secrets_by_reference(tmp_path):
    clusters = {
        "main": {
            "bootstrap_servers": "k1:9092,k2:9092",
            "security": {
                "security.protocol": "SASL_SSL",
                "sasl.mechanism": "PLAIN",
                "sasl.jaas.config": 'x required password="${env:KAFKA_PASSWORD}";',
                "ssl.truststore.password": "${file:/run/secrets/truststore}",
            },
            "standby": "mirror",
            "failover_after_s": 30,
        },
        "mirror": {"bootstrap_servers": "m1:9092"},
    }
    (tmp_path / "service.yaml").write_text(yaml.safe_dump({"kafka_clusters": clusters}))
    config = ServiceConfig.load(tmp_path)
    main = config.kafka_cluster("main")
    assert (main.standby, main.failover_after_s) == ("mirror", 30)
    assert main.security["sasl.jaas.config"].endswith('password="${env:KAFKA_PASSWORD}";')
    assert config.kafka_cluster("mirror").standby is None
    assert ServiceConfig(state_dir=tmp_path / "other").kafka_clusters == {}


@pytest.mark.parametrize(
    ("cluster", "complaint"),
    [
        ({"bootstrap_servers": "k:9092", "standby": "nowhere"}, "standby 'nowhere' must name"),
        ({"bootstrap_servers": "k:9092", "standby": "main"}, "cannot be its own standby"),
        ({"bootstrap_servers": "k:9092", "security": {"sasl.password": "hunter2"}}, "reference"),
        ({"bootstrap_servers": "k:9092", "security": {"kafka.sasl.mechanism": "PLAIN"}}, "kafka."),
        ({"bootstrap_servers": "k:9092", "security": {"sasl.password": "${vault:x}"}}, "env:NAME"),
        ({"bootstrap_servers": ""}, "bootstrap_servers"),
    ],
)
def test_bad_kafka_clusters_are_refused_by_key(tmp_path, cluster, complaint):
    (tmp_path / "service.yaml").write_text(yaml.safe_dump({"kafka_clusters": {"main": cluster}}))
    with pytest.raises(SpecError, match="kafka_clusters") as err:
        ServiceConfig.load(tmp_path)
    assert complaint in str(err.value) and "hunter2" not in str(err.value)


def test_an_unknown_kafka_cluster_names_the_known_ones(tmp_path):
    config = ServiceConfig(
        state_dir=tmp_path, kafka_clusters={"main": {"bootstrap_servers": "k:9092"}}
    )
    with pytest.raises(KafkaClusterNotFoundError, match="Did you mean main") as err:
        config.kafka_cluster("mian")
    assert err.value.status == 404


def test_external_url_is_the_public_url_or_an_error(tmp_path):
    (tmp_path / "service.yaml").write_text("external_url: https://wb.example.com/lab/\n")
    assert ServiceConfig.load(tmp_path).external_url == "https://wb.example.com/lab/"
    (tmp_path / "service.yaml").write_text("external_url: wb.example.com\n")
    with pytest.raises(SpecError, match="external_url.*not an http\\(s\\) URL"):
        ServiceConfig.load(tmp_path)
