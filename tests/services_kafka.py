"""Kafka broker fixtures: one real broker (KRaft, single node) for the whole test session.

It listens on free ports in a temporary folder, so it never meets a dev broker on 9092.
"""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def kafka_broker(tmp_path_factory):
    from workbench.dev.kafka import Broker
    from workbench.dev.ports import free_ports

    port, controller_port = free_ports(2)
    broker = Broker(tmp_path_factory.mktemp("kafka"), port, controller_port)
    broker.start()
    yield broker
    broker.stop()
