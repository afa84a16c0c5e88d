"""What a chaos run acts on: the brokers, the fault proxy, the job service, the sink server.

Faults find their targets here (a fault whose target is missing says which to give); the
probes read the job and the broker through it. Every part is optional.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.dev.broker_cluster import BrokerCluster
from workbench.dev.kafka import Broker
from workbench.exceptions import ChaosError

if TYPE_CHECKING:
    from workbench.chaos.proxy import FaultProxy
    from workbench.chaos.standing_proxy import StandingProxy
    from workbench.client.rest import ServiceClient
    from workbench.dev.kafka import Broker


@dataclass
class ChaosEnv:
    """``bootstrap``: the brokers' address clients use; ``brokers``: the broker processes
    (a single broker or a cluster's nodes) faults may kill; ``proxy``: the fault proxy the
    brokers advertise; ``client`` and ``job``: the job service and the dagger under test;
    ``sink``: a sink server with ``start()``/``stop()`` and ``state_dir``/``port``
    (e.g. :class:`workbench.dev.timeseries.InfluxServer`)."""

    bootstrap: str
    brokers: list[Broker]
    proxy: FaultProxy | StandingProxy | None = None
    client: ServiceClient | None = None
    job: str | None = None
    sink: Any = None
    jobs: list[str] = field(default_factory=list)

    def need(self, part: str, fault: str) -> Any:
        value = getattr(self, part)
        if value in (None, []):
            raise ChaosError(
                f"The fault '{fault}' needs the run's {part}, which this run has none of: "
                f"start the scenario with one (see docs/chaos.md)."
            )
        return value

    def job_view(self) -> dict[str, Any]:
        """The job service's view of the job under test (empty without one)."""
        if self.client is None or self.job is None:
            return {}
        return self.client.get_job(self.job)

    def targets(self) -> list[str]:
        """The jobs the case acts on and watches: its blast radius, else the job."""
        return self.jobs or ([self.job] if self.job else [])

    def job_views(self) -> dict[str, dict[str, Any]]:
        """The job service's view of each target job."""
        if self.client is None:
            return {}
        return {ref: self.client.get_job(ref) for ref in self.targets()}


def brokers_in(state_dir: Path) -> list[Broker]:
    """The brokers whose state ``state_dir`` holds (a cluster's layout, or one broker's
    ``server.properties``), with the ports and advertised port they were started with."""

    cluster = BrokerCluster.existing(state_dir)
    brokers = cluster.brokers if cluster else [_single(state_dir)]
    for broker in brokers:
        broker.advertised_port = _advertised_port(broker.state_dir) or broker.port
    return brokers


def _single(state_dir: Path) -> Broker:

    settings = _properties(state_dir)
    if "listeners" not in settings:
        raise ChaosError(
            f"No Kafka broker state in {state_dir}: give --kafka-dir the folder "
            "`workbench dev kafka up --state-dir` used."
        )
    ports = dict(part.split("://") for part in settings["listeners"].split(","))
    port = int(ports["PLAINTEXT"].rpartition(":")[2])
    return Broker(state_dir, port, int(ports["CONTROLLER"].rpartition(":")[2]))


def _advertised_port(state_dir: Path) -> int | None:
    advertised = _properties(state_dir).get("advertised.listeners")
    return int(advertised.rpartition(":")[2]) if advertised else None


def _properties(state_dir: Path) -> dict[str, str]:
    path = Path(state_dir) / "server.properties"
    if not path.exists():
        return {}
    lines = (line.partition("=") for line in path.read_text().splitlines())
    return {key.strip(): value.strip() for key, sep, value in lines if sep and key[:1] != "#"}
