"""The local Kafka broker, for real: topics, produce/consume, transactions, restarts, crashes."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import uuid

import pytest
from confluent_kafka import Consumer, KafkaError, Producer

from workbench.dev.kafka import Broker
from workbench.dev.ports import HOST, free_ports
from workbench.exceptions import SetupError, WorkbenchError
from workbench.kafka.admin import create_topics, delete_topics, list_topics

pytestmark = pytest.mark.integration


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def produce(bootstrap: str, topic: str, values: list[str]) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all"})
    for value in values:
        producer.produce(topic, key=value.encode(), value=value.encode())
    assert producer.flush(30) == 0


def consume(bootstrap: str, topic: str, conf: dict | None = None) -> list:
    """Every message ``topic`` holds now, read from the start to the end of each partition."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": unique("test"),
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "enable.partition.eof": True,
            **(conf or {}),
        }
    )
    partitions = len(consumer.list_topics(topic, 10).topics[topic].partitions)
    consumer.subscribe([topic])
    messages, at_end, deadline = [], set(), time.monotonic() + 30
    try:
        while len(at_end) < partitions and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is None:
                continue
            if message.error() is None:
                messages.append(message)
            elif message.error().code() == KafkaError._PARTITION_EOF:
                at_end.add(message.partition())
    finally:
        consumer.close()
    assert len(at_end) == partitions, f"did not reach the end of {topic} in 30s"
    return messages


def values(messages) -> list[str]:
    return [m.value().decode() for m in messages]


def broker_in(folder) -> Broker:
    port, controller_port = free_ports(2)
    return Broker(folder, port, controller_port)


def test_messages_spread_over_three_partitions_come_back(kafka_broker):
    topic = unique("orders")
    create_topics(kafka_broker.bootstrap, {topic: 3})
    sent = [f"order-{i}" for i in range(30)]
    produce(kafka_broker.bootstrap, topic, sent)

    received = consume(kafka_broker.bootstrap, topic)

    assert sorted(values(received)) == sorted(sent)
    assert {m.partition() for m in received} == {0, 1, 2}


def test_read_committed_sees_only_committed_transactions(kafka_broker):
    topic = unique("payments")
    create_topics(kafka_broker.bootstrap, {topic: 3})
    producer = Producer({"bootstrap.servers": kafka_broker.bootstrap, "transactional.id": topic})
    producer.init_transactions(30)
    for batch, commit in (("first", True), ("aborted", False), ("last", True)):
        producer.begin_transaction()
        for i in range(3):
            producer.produce(topic, value=f"{batch}-{i}".encode())
        if commit:
            producer.commit_transaction(30)
        else:
            producer.flush(30)  # the aborted records really reach the log
            producer.abort_transaction(30)

    committed = consume(kafka_broker.bootstrap, topic, {"isolation.level": "read_committed"})
    everything = consume(kafka_broker.bootstrap, topic, {"isolation.level": "read_uncommitted"})

    assert sorted(values(committed)) == [f"{b}-{i}" for b in ("first", "last") for i in range(3)]
    assert sorted(values(everything)) == sorted(
        f"{b}-{i}" for b in ("first", "aborted", "last") for i in range(3)
    )


def test_topics_are_created_and_deleted_idempotently(kafka_broker):
    bootstrap = kafka_broker.bootstrap
    a, b = unique("a"), unique("b")
    create_topics(bootstrap, {a: 2, b: 1})
    create_topics(bootstrap, {a: 2})  # already there: fine
    assert {a, b} <= set(list_topics(bootstrap))
    assert not any(name.startswith("__") for name in list_topics(bootstrap))

    delete_topics(bootstrap, [b, unique("never-existed")])

    assert a in list_topics(bootstrap) and b not in list_topics(bootstrap)


def test_topic_errors_say_which_topic_and_why(kafka_broker):
    with pytest.raises(WorkbenchError, match="Could not create Kafka topic 'bad'.*partitions"):
        create_topics(kafka_broker.bootstrap, {"bad": 0})
    with pytest.raises(WorkbenchError, match="No Kafka broker answers at 127.0.0.1:"):
        list_topics(f"{HOST}:{free_ports(1)[0]}", timeout=1)


def test_stop_and_restart_keep_the_data(tmp_path):
    broker = broker_in(tmp_path)
    started = broker.start()
    assert started.running and started.pid and started.bootstrap == broker.bootstrap
    assert broker.start().pid == started.pid  # already running: same process
    create_topics(broker.bootstrap, {"kept": 3})
    produce(broker.bootstrap, "kept", ["a", "b", "c"])

    broker.stop()
    broker.stop()  # nothing left to stop
    stopped = broker.status()
    assert not stopped.running and stopped.pid is None
    assert broker.start().pid != started.pid

    assert sorted(values(consume(broker.bootstrap, "kept"))) == ["a", "b", "c"]
    broker.stop()


def test_a_killed_broker_starts_again_with_its_data(tmp_path):
    broker = broker_in(tmp_path)
    broker.start()
    create_topics(broker.bootstrap, {"crash": 1})
    produce(broker.bootstrap, "crash", ["before"])

    broker.kill()
    assert not broker.status().running
    broker.start()
    produce(broker.bootstrap, "crash", ["after"])

    assert values(consume(broker.bootstrap, "crash")) == ["before", "after"]
    broker.stop()


def test_the_broker_outlives_the_process_that_started_it(tmp_path):
    broker = broker_in(tmp_path)
    script = (
        "import sys; from pathlib import Path; from workbench.dev.kafka import Broker; "
        "print(Broker(Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])).start().pid)"
    )
    args = [str(tmp_path), str(broker.port), str(broker.controller_port)]
    run = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr

    assert broker.status().pid == int(run.stdout)
    assert broker.start().pid == int(run.stdout)
    broker.stop()
    assert not broker.status().running


def test_a_taken_port_is_reported_before_java_starts(tmp_path):
    with socket.socket() as taken:
        taken.bind((HOST, 0))
        taken.listen()
        broker = Broker(tmp_path, port=taken.getsockname()[1], controller_port=free_ports(1)[0])
        with pytest.raises(SetupError, match=f"Port {broker.port} .* is taken"):
            broker.start()


def test_a_running_broker_is_not_started_again_on_other_ports(kafka_broker):
    other = Broker(kafka_broker.state_dir, *free_ports(2))
    with pytest.raises(SetupError, match="already runs from .* on other ports"):
        other.start()
    assert kafka_broker.status().running
