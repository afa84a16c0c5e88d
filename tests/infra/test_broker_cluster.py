"""The local 3-broker Kafka cluster, for real: quorum, replicated topics, a node's crash."""

from __future__ import annotations

import uuid

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient
from polling import wait_for

from workbench.dev.broker_cluster import LAYOUT, BrokerCluster
from workbench.kafka.admin import broker_ids, create_topics


def test_three_nodes_form_one_cluster_with_one_id(kafka_cluster3):
    ids = {b.node.cluster_id for b in kafka_cluster3.brokers}
    admin = AdminClient({"bootstrap.servers": kafka_cluster3.bootstrap})

    assert broker_ids(kafka_cluster3.bootstrap) == {1, 2, 3}
    assert admin.list_topics(timeout=10).cluster_id == kafka_cluster3.cluster_id
    assert ids == {kafka_cluster3.cluster_id}
    assert all(s.running for s in kafka_cluster3.status())


def test_the_layout_is_found_again_from_its_folder(kafka_cluster3):
    found = BrokerCluster.existing(kafka_cluster3.state_dir)

    assert (kafka_cluster3.state_dir / LAYOUT).exists()
    assert found is not None
    assert (found.bootstrap, found.cluster_id) == (
        kafka_cluster3.bootstrap,
        kafka_cluster3.cluster_id,
    )
    assert [s.pid for s in found.status()] == [s.pid for s in kafka_cluster3.status()]


def test_acks_all_writes_go_on_while_one_of_three_nodes_is_down(kafka_cluster3):
    topic = f"replicated-{uuid.uuid4().hex[:8]}"
    create_topics(
        kafka_cluster3.bootstrap, {topic: 3}, replication=3, config={"min.insync.replicas": "2"}
    )
    victim = kafka_cluster3.broker(3)
    victim.kill()
    try:
        producer = Producer({"bootstrap.servers": kafka_cluster3.bootstrap, "acks": "all"})
        for i in range(50):
            producer.produce(topic, value=str(i).encode())
        assert producer.flush(60) == 0
        # the controller fences the killed node once its session times out (may come after
        # the writes on a busy machine)
        wait_for(lambda: broker_ids(kafka_cluster3.bootstrap) == {1, 2}, 60, "node 3 fenced")
    finally:
        victim.start()
    kafka_cluster3.wait_registered(60)
    assert broker_ids(kafka_cluster3.bootstrap) == {1, 2, 3}
