"""``sink_outage``: stop the sink's server (e.g. the InfluxDB a dagger writes to); the
revert starts it again on the same port and data. The record names the server's class,
state folder and port, so the next run can restart it alone."""

from __future__ import annotations

import importlib

from workbench.chaos.faults import FAULTS, Fault


class SinkOutage(Fault):
    name, type = "sink_outage", "sink"
    needs = ("sink",)
    playbook = (
        "The sink is down: batches fail and the job retries with backoff (its health page "
        "shows the failures); bring the sink back, then check the job caught up (lag 0) and "
        "the ledger shows no window lost."
    )

    def apply(self, env, params):
        sink = env.need("sink", self.name)
        sink.stop()
        kind = type(sink)
        return {
            "server": f"{kind.__module__}:{kind.__qualname__}",
            "state_dir": str(sink.state_dir),
            "port": sink.port,
        }

    def revert(self, record, env):
        if env is not None and env.sink is not None:
            env.sink.start()
            return
        module, _, name = record["server"].partition(":")
        server = getattr(importlib.import_module(module), name)
        server(record["state_dir"], record["port"]).start()


FAULTS.add(SinkOutage.name, SinkOutage())
