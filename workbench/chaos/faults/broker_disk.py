"""``broker_disk``: the broker's data disk fails. Its log folder is moved away, as if the
disk were gone: the broker's next write there (it checkpoints replication offsets every
few seconds) fails, it marks the folder offline and, with no other log folder, halts.
The revert stops what is left of the broker, moves the folder back (the disk replaced
with its data) and starts the broker again.

``params.node``: which broker of the run (1-based; default 1). Moving a folder works as
root too, where taking its permissions away would not stop the broker.
"""

from __future__ import annotations

import time
from pathlib import Path

from workbench.chaos.faults import FAULTS, Fault
from workbench.chaos.faults.broker_kill import broker_from, broker_record, start_again
from workbench.exceptions import ChaosError

FAILED = "data.failed-disk"


class BrokerDisk(Fault):
    name, type = "broker_disk", "kafka"
    needs = ("brokers",)
    playbook = (
        "A broker's data disk failed: the broker halts (its log says 'all log dirs ... have "
        "failed'). Replace the disk, restore the log folder (or let replicas refill it on a "
        "cluster), start the broker; check the topics' under-replicated partitions and that "
        "the dagger's lag returns to 0 with no window lost."
    )

    def apply(self, env, params):
        broker = env.need("brokers", self.name)[int(params.get("node", 1)) - 1]
        data = Path(broker.state_dir) / "data"
        moved = Path(broker.state_dir) / FAILED
        data.rename(moved)
        return {**broker_record(broker), "data": str(data), "moved": str(moved)}

    def revert(self, record, env):
        broker = broker_from(record)
        broker.kill()  # whatever is left of it (it halts on its own within seconds)
        data, moved = Path(record["data"]), Path(record["moved"])
        if moved.exists():
            if data.exists():  # something recreated it meanwhile: keep it aside
                data.rename(data.with_name(f"data.recreated-{int(time.time())}"))
            moved.rename(data)
        elif not data.exists():
            raise ChaosError(
                f"The failed disk's data of the broker in {broker.state_dir} is gone (neither "
                f"{moved} nor {data} exists): restore the folder to {data}, then start it."
            )
        start_again(broker)


FAULTS.add(BrokerDisk.name, BrokerDisk())
