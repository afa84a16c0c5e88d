"""``broker_kill``: SIGKILL a broker (as a crash would); the revert starts it again.

``params.node``: which broker of the run (1-based; default 1). The revert record holds
the broker's state folder, ports and node, so the next run can restart it alone.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from workbench.chaos.faults import FAULTS, Fault
from workbench.dev.kafka import Broker, ClusterNode
from workbench.dev.ports import port_taken


def broker_record(broker: Any) -> dict[str, Any]:
    """What :func:`broker_from` needs to make the same Broker in another process."""
    return {
        "state_dir": str(broker.state_dir),
        "port": broker.port,
        "controller_port": broker.controller_port,
        "advertised_port": broker.advertised_port,
        "node": asdict(broker.node),
    }


def broker_from(record: dict[str, Any]) -> Any:

    return Broker(
        record["state_dir"],
        record["port"],
        record["controller_port"],
        node=ClusterNode(**record["node"]),
        advertised_port=record["advertised_port"],
    )


class BrokerKill(Fault):
    name, type = "broker_kill", "kafka"
    needs = ("brokers",)
    playbook = (
        "A broker died: check `workbench dev kafka status` and the broker's log; start it "
        "again (`workbench dev kafka up`). Producers retry until message.timeout.ms; the "
        "dagger resumes from its checkpoint. Replay the topic's range from the checkpoint's "
        "offsets only for a window the ledger lists as lost (the job's watermark closed it): "
        "an open window is not final yet and is written once events move the watermark past it."
    )

    def apply(self, env, params):
        brokers = env.need("brokers", self.name)
        broker = brokers[int(params.get("node", 1)) - 1]
        broker.kill()
        return broker_record(broker)

    def revert(self, record, env):
        start_again(broker_from(record))


def start_again(broker: Any, timeout: float = 60.0) -> None:
    """Start a killed broker once its ports are free: the connections its death closed may
    hold them a while (FIN_WAIT) while their clients have not closed their side yet."""
    import time

    deadline = time.monotonic() + timeout
    ports = (broker.port, broker.controller_port)
    while any(port_taken(p) for p in ports) and time.monotonic() < deadline:
        time.sleep(0.5)
    broker.start()


FAULTS.add(BrokerKill.name, BrokerKill())
