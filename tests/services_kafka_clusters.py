"""Kafka cluster fixtures: a real 3-broker KRaft cluster for the whole test session.

Started only by a test that asks for it; free ports in a temporary folder.
"""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def kafka_cluster3(tmp_path_factory):
    from workbench.infra.broker_cluster import BrokerCluster
    from workbench.infra.ports import free_ports

    ports = free_ports(6)
    pairs = [(ports[i], ports[i + 1]) for i in range(0, 6, 2)]
    cluster = BrokerCluster(tmp_path_factory.mktemp("kafka3"), pairs)
    cluster.start()
    yield cluster
    cluster.stop()
