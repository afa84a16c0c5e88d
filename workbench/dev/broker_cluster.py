"""A real multi-broker Apache Kafka cluster (KRaft) on loopback, for a dev box and tests.

Each node is a :class:`~workbench.dev.kafka.Broker` running broker and controller in one
JVM (KRaft "combined" mode); the nodes together are the controller quorum, so a 3-node
cluster keeps working while 2 run. Node ``i`` keeps its data and log in
``state_dir/broker-i``; ``state_dir/cluster.json`` records the layout (cluster id, node
ids, ports) so that ``status`` and ``down`` find a cluster that ``up`` started from any
process, and a restart reuses the same ports and cluster id.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from workbench.dev.kafka import Broker, BrokerStatus, ClusterNode, random_cluster_id
from workbench.dev.ports import HOST
from workbench.exceptions import SetupError
from workbench.kafka.admin import broker_ids

LAYOUT = "cluster.json"


class BrokerCluster:
    """``len(ports)`` KRaft nodes, node ``i`` on ``ports[i-1]`` = (broker port, controller port)."""

    def __init__(
        self, state_dir: Path, ports: Sequence[tuple[int, int]], cluster_id: str | None = None
    ):
        if not ports:
            raise SetupError("A Kafka cluster needs at least one broker.")
        self.state_dir = Path(state_dir)
        self.ports = [(int(p), int(c)) for p, c in ports]
        self.cluster_id = cluster_id or random_cluster_id()
        voters = ",".join(f"{i}@{HOST}:{c}" for i, (_, c) in enumerate(self.ports, 1))
        replication = min(3, len(self.ports))
        self.brokers = [
            Broker(
                self.state_dir / f"broker-{i}",
                port,
                controller_port,
                node=ClusterNode(i, voters, self.cluster_id, replication),
            )
            for i, (port, controller_port) in enumerate(self.ports, 1)
        ]

    @classmethod
    def existing(cls, state_dir: Path) -> BrokerCluster | None:
        """The cluster whose layout ``state_dir`` holds, None if it holds none."""
        path = Path(state_dir) / LAYOUT
        if not path.exists():
            return None
        data = json.loads(path.read_text())
        return cls(state_dir, [tuple(p) for p in data["ports"]], data["cluster_id"])

    @classmethod
    def on_ports(cls, state_dir: Path, count: int, port: int) -> BrokerCluster:
        """``count`` nodes on ports ``port``, ``port + 2``... (controllers one above each),
        or the cluster ``state_dir`` already holds if it has that shape."""
        ports = [(port + 2 * i, port + 2 * i + 1) for i in range(count)]
        found = cls.existing(state_dir)
        if found is None:
            return cls(state_dir, ports)
        if found.ports != ports:
            raise SetupError(
                f"{Path(state_dir) / LAYOUT} holds a {len(found.ports)}-broker cluster on "
                f"ports {', '.join(str(p) for p, _ in found.ports)}. Give the same "
                "--brokers/--port, another --state-dir, or delete that folder to start over."
            )
        return found

    @property
    def bootstrap(self) -> str:
        """Every node's address, comma-separated (a client's ``bootstrap.servers``)."""
        return ",".join(b.bootstrap for b in self.brokers)

    def broker(self, node_id: int) -> Broker:
        return self.brokers[node_id - 1]

    def status(self) -> list[BrokerStatus]:
        """Each node's process state; cheap, asks the brokers nothing."""
        return [b.status() for b in self.brokers]

    def answering(self, timeout: float = 5.0) -> list[bool]:
        """Whether each node answers a metadata request on its own address now (asked of
        all at once, so a down node costs ``timeout`` once)."""

        def answers(broker: Broker) -> bool:
            return broker.status().running and bool(broker_ids(broker.bootstrap, timeout))

        with ThreadPoolExecutor(max_workers=max(1, len(self.brokers))) as pool:
            return list(pool.map(answers, self.brokers))

    def start(self, timeout: float = 120.0) -> list[BrokerStatus]:
        """Start every node not running (a quorum forms once most run) and wait until each
        answers and all are registered in the cluster's metadata."""
        self.state_dir.mkdir(parents=True, exist_ok=True)
        layout = {"cluster_id": self.cluster_id, "ports": self.ports}
        (self.state_dir / LAYOUT).write_text(json.dumps(layout))
        launched = [b.launch() for b in self.brokers]
        try:
            for broker, (pid, _) in zip(self.brokers, launched, strict=True):
                broker.wait_ready(pid, timeout)
            self.wait_registered(timeout)
        except SetupError:
            new = [b for b, (_, fresh) in zip(self.brokers, launched, strict=True) if fresh]
            self._each(lambda b: b.stop(), new)
            raise
        return self.status()

    def stop(self, timeout: float = 30.0) -> None:
        """Stop every node at once (one by one, the last ones would wait for a lost quorum)."""
        self._each(lambda b: b.stop(timeout), self.brokers)

    def _each(self, action, brokers: Sequence[Broker]) -> None:
        with ThreadPoolExecutor(max_workers=max(1, len(brokers))) as pool:
            list(pool.map(action, brokers))

    def wait_registered(self, timeout: float = 60.0) -> None:
        """Wait until every running node's metadata lists every node (as after a restart)."""
        want = set(range(1, len(self.brokers) + 1))
        deadline = time.monotonic() + timeout
        while (seen := self._registered()) != want:
            if time.monotonic() >= deadline:
                raise SetupError(
                    f"Only Kafka nodes {sorted(seen)} of {sorted(want)} joined the cluster in "
                    f"{self.state_dir} within {timeout:.0f}s; see each broker-N/broker.log."
                )
            time.sleep(0.2)

    def _registered(self) -> set[int]:
        """The nodes every broker's own metadata lists."""
        views = [broker_ids(b.bootstrap) for b in self.brokers]
        return set.intersection(*views)
