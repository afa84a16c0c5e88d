"""Chaos fixtures: a real Kafka broker of its own whose advertised listener is a fault
proxy's port, so every client connection (bootstrapped at either address) goes through
the proxy; the session's other tests never see its faults. One per test file (module
scope): started in a few seconds, and not left idling after the chaos files."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def proxied_broker(tmp_path_factory):
    """(broker, proxy): faults healed after each use by the tests that set them."""
    from workbench.chaos.proxy import FaultProxy
    from workbench.dev.kafka import Broker
    from workbench.dev.ports import HOST, free_ports

    port, controller_port, proxy_port = free_ports(3)
    proxy = FaultProxy((HOST, port), port=proxy_port).start()
    broker = Broker(
        tmp_path_factory.mktemp("kafka-chaos"), port, controller_port, advertised_port=proxy_port
    )
    broker.start()
    yield broker, proxy
    broker.stop()
    proxy.stop()


@pytest.fixture
def chaos_broker(proxied_broker):
    """The proxied broker, running (an earlier test's failure may have left it killed), with
    the proxy healed before and after the test."""
    from workbench.chaos.faults.broker_kill import start_again

    broker, proxy = proxied_broker
    proxy.heal()
    if not broker.status().running:
        start_again(broker)
    yield broker, proxy
    proxy.heal()
