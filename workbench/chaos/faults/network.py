"""``latency``, ``loss`` and ``partition``: the fault proxy the brokers advertise
(workbench/chaos/proxy.py) slows, stalls or cuts every client connection.

params: ``latency``: ``ms`` (each direction); ``loss``: ``fraction`` (0..1) and
``retransmit_ms``; ``partition``: ``mode`` (``refuse`` or ``blackhole``). The proxy lives
in the run's process, so a crash of that process takes its faults with it: the journal
replay has nothing to undo (the brokers' advertised port is then dead until the next run
starts a proxy there). A standing proxy (``workbench chaos proxy``) outlives the run: its
revert record names its control file, so the replay heals it.
"""

from __future__ import annotations

from workbench.chaos.faults import FAULTS, Fault


class _ProxyFault(Fault):
    type = "network"
    needs = ("proxy",)
    playbook = (
        "The network between the job and the brokers is slow, lossy or cut: check the "
        "producer's and the job's timeouts (request.timeout.ms, the trigger) against the "
        "latency seen; once healed, the job must catch up without lost or doubled windows."
    )

    def apply(self, env, params):
        proxy = env.need("proxy", self.name)
        proxy.set(**self.changes(params))
        control = getattr(proxy, "control", None)  # a standing proxy's
        return {"proxy": proxy.address, **({"control": str(control)} if control else {})}

    def changes(self, params):
        raise NotImplementedError

    def revert(self, record, env):
        if env is not None and env.proxy is not None:
            env.proxy.heal()
        elif record.get("control"):
            from workbench.chaos.standing_proxy import heal_control

            heal_control(record["control"])


class Latency(_ProxyFault):
    name = "latency"

    def changes(self, params):
        return {"latency_ms": float(params.get("ms", 200))}


class Loss(_ProxyFault):
    name = "loss"

    def changes(self, params):
        return {
            "loss": float(params.get("fraction", 0.1)),
            "retransmit_ms": float(params.get("retransmit_ms", 200)),
        }


class Partition(_ProxyFault):
    name = "partition"

    def changes(self, params):
        return {"partition": params.get("mode", "blackhole")}


FAULTS.add(Latency.name, Latency())
FAULTS.add(Loss.name, Loss())
FAULTS.add(Partition.name, Partition())
