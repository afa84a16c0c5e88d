"""Kafka cluster fixtures: a real 3-broker KRaft cluster, and a mirrored pair of clusters.

Started only by a test file that asks for one, on free ports in a temporary folder, and
stopped when that file ends (module scope): a session-scoped cluster idled on every worker
that had once run such a file until the worker's end (up to 13 broker JVMs alive at once
in a slow hour), and the files that use them are few.
"""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def kafka_cluster3(tmp_path_factory):
    from workbench.dev.broker_cluster import BrokerCluster
    from workbench.dev.ports import free_ports

    ports = free_ports(6)
    pairs = [(ports[i], ports[i + 1]) for i in range(0, 6, 2)]
    cluster = BrokerCluster(tmp_path_factory.mktemp("kafka3"), pairs)
    cluster.start()
    yield cluster
    cluster.stop()


@pytest.fixture(scope="module")
def kafka_mirror(tmp_path_factory):
    """Two single-broker clusters, ``primary`` and ``standby``, and MirrorMaker 2 copying
    the topics ``mirrored-.*`` and the offsets of the groups ``workbench-.*`` from the
    first into the second. A test that kills the primary starts it again."""
    from workbench.dev.kafka import Broker
    from workbench.dev.mirror import Mirror, Side
    from workbench.dev.ports import free_ports

    folder = tmp_path_factory.mktemp("mirror")
    ports = free_ports(4)
    primary = Broker(folder / "primary", ports[0], ports[1])
    standby = Broker(folder / "standby", ports[2], ports[3])
    mirror = Mirror(
        Side("primary", primary.bootstrap),
        Side("standby", standby.bootstrap),
        folder / "mm2",
        topics="mirrored-.*",
        groups="workbench-.*",
    )
    try:
        primary.start()
        standby.start()
        mirror.start()
        yield MirrorPair(primary, standby, mirror)
    finally:
        mirror.stop()
        primary.stop()
        standby.stop()


class MirrorPair:
    def __init__(self, primary, standby, mirror):
        self.primary, self.standby, self.mirror = primary, standby, mirror
