"""The streaming commands as a user runs them: dev kafka, generate, demo (child processes)."""

from __future__ import annotations

import pytest
from cli_runner import workbench
from readback import kafka_messages
from streaming import new_topic, publish_events, surge_spec

from workbench.dev.broker_cluster import BrokerCluster
from workbench.dev.ports import free_port_run
from workbench.schemas import default_registry

pytestmark = pytest.mark.integration


def test_dev_kafka_up_status_down(tmp_path):
    port = free_port_run(2)
    state = ("--port", port, "--state-dir", tmp_path / "kafka")
    up = workbench("dev", "kafka", "up", *state, "--topic", "t1", "--partitions", "2")
    assert up.returncode == 0, up.stderr
    assert f"kafka running at 127.0.0.1:{port}" in up.stdout
    assert "topics ready: t1 (2 partitions)" in up.stdout
    try:
        status = workbench("dev", "kafka", "status", *state)
        assert status.returncode == 0 and f"127.0.0.1:{port}" in status.stdout
        again = workbench("dev", "kafka", "up", *state)  # idempotent
        assert again.returncode == 0, again.stderr
    finally:
        down = workbench("dev", "kafka", "down", *state)
    assert down.returncode == 0 and "kafka stopped" in down.stdout
    status = workbench("dev", "kafka", "status", *state)
    assert status.returncode == 3 and "not running" in status.stdout


def test_dev_kafka_up_brokers_3_lists_three_brokers(tmp_path):
    port = free_port_run(6)
    state = ("--port", port, "--state-dir", tmp_path / "kafka")
    up = workbench("dev", "kafka", "up", *state, "--brokers", 3, "--topic", "t3")
    assert up.returncode == 0, up.stderr
    addresses = [f"127.0.0.1:{port + i}" for i in (0, 2, 4)]
    assert f"3 brokers at {','.join(addresses)}" in up.stdout
    assert "topics ready: t3 (3 partitions), replication 3" in up.stdout
    try:
        status = workbench("dev", "kafka", "status", "--state-dir", tmp_path / "kafka")
        assert status.returncode == 0, status.stderr
        lines = [line for line in status.stdout.splitlines() if "kafka running at" in line]
        assert [line.split()[3] for line in lines] == addresses
        assert all((tmp_path / "kafka" / f"broker-{i}" / "broker.log").exists() for i in (1, 2, 3))
        assert status.stdout.startswith(
            f"kafka cluster {cluster_id(tmp_path)}: 3 of 3 brokers answer"
        )
        other = workbench("dev", "kafka", "up", *state, "--brokers", 2)
        assert other.returncode == 1 and "holds a 3-broker cluster" in other.stderr

        # one node killed: status names it, counts the others, and fails (it said "3
        # brokers", listed 2 and exited 0)
        BrokerCluster.existing(tmp_path / "kafka").broker(2).stop()
        status = workbench("dev", "kafka", "status", "--state-dir", tmp_path / "kafka")
        assert status.returncode == 1, status.stdout
        assert "2 of 3 brokers answer" in status.stdout.splitlines()[0]
        assert f"kafka node 2 at {addresses[1]} is down (not running)" in status.stdout
        lines = [line for line in status.stdout.splitlines() if "kafka running at" in line]
        assert [line.split()[3] for line in lines] == [addresses[0], addresses[2]]
    finally:
        down = workbench("dev", "kafka", "down", "--state-dir", tmp_path / "kafka")
    assert down.returncode == 0 and "kafka stopped" in down.stdout
    status = workbench("dev", "kafka", "status", "--state-dir", tmp_path / "kafka")
    assert status.returncode == 3


def cluster_id(tmp_path) -> str:
    return BrokerCluster.existing(tmp_path / "kafka").cluster_id


def test_generate_publishes_decodable_bookings(kafka_broker):
    result = workbench(
        "generate",
        "bookings",
        "--bootstrap-servers",
        kafka_broker.bootstrap,
        "--topic",
        "cli-generated",
        "--count",
        600,
        "--as-fast-as-possible",
        "--malformed-fraction",
        0.05,
        "--seed",
        3,
    )
    assert result.returncode == 0, result.stderr
    messages = kafka_messages(kafka_broker.bootstrap, "cli-generated")
    assert len(messages) == 600
    cls = default_registry().message_class("esb.booking.BookingLogMessage")
    decoded, failed = 0, 0
    for m in messages:
        try:
            message = cls.FromString(m.value())
            decoded += message.event_timestamp.seconds > 0
        except Exception:  # noqa: BLE001 - a malformed message
            failed += 1
    assert f"sent 600 events to cli-generated ({failed} malformed)" in result.stdout
    assert 10 <= failed <= 60 and decoded == 600 - failed


def test_run_prints_a_line_for_a_batch_of_only_undecodable_records(kafka_broker, tmp_path):
    bootstrap = kafka_broker.bootstrap
    topic = new_topic(bootstrap, "all-bad")
    sent = publish_events(bootstrap, topic, 40, malformed=1.0)
    assert sent.malformed == 40
    spec = surge_spec(bootstrap, topic, tmp_path, [], name="all-bad")
    (tmp_path / "spec.yaml").write_text(spec.to_yaml())
    result = workbench("run", tmp_path / "spec.yaml", "--available-now")
    assert result.returncode == 0, result.stderr[-3000:]
    batches = [ln for ln in result.stdout.splitlines() if ln.startswith("[all-bad:sinks] batch")]
    assert batches and batches[0].startswith("[all-bad:sinks] batch 0: 0 rows | ")
    assert batches[0].endswith("dead letters 40")
    assert "stopped: 40 records read, 0 late, 40 dead letters" in result.stdout
    assert "warning" not in result.stderr


def test_a_bounded_run_that_reads_nothing_warns(kafka_broker, tmp_path):
    bootstrap = kafka_broker.bootstrap
    topic = new_topic(bootstrap, "nothing-new")
    publish_events(bootstrap, topic, 200)  # already there: 'latest' starts after them
    spec = surge_spec(bootstrap, topic, tmp_path, [], stream_options={"starting_offsets": "latest"})
    (tmp_path / "spec.yaml").write_text(spec.to_yaml())
    result = workbench("run", tmp_path / "spec.yaml", "--available-now")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "stopped: 0 records read" in result.stdout
    [warning] = [ln for ln in result.stderr.splitlines() if ln.startswith("warning:")]
    assert warning.startswith(
        f"warning: read 0 records from {topic} (starting_offsets=latest): nothing was processed."
    )
    assert "starting_offsets: earliest" in warning
