"""The checkpoint lease between two real processes: the second is refused while the first
lives, with the holder named; the lease frees itself when the holder is killed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from workbench.exceptions import LeaseHeldError
from workbench.jobs.lease import Lease

pytestmark = pytest.mark.unit

HOLD = """
import sys, time
from workbench.jobs.lease import Lease
Lease(sys.argv[1]).acquire("run-A")
print("held", flush=True)
time.sleep(600)
"""


def _holder(checkpoint):
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(checkpoint)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_second_driver_refused_until_the_first_dies(tmp_path):
    checkpoint = tmp_path / "ckpt"
    first = _holder(checkpoint)
    try:
        assert Lease.is_held(checkpoint)
        holder = Lease.holder(checkpoint)
        assert holder["run_id"] == "run-A" and holder["pid"] == first.pid
        with pytest.raises(LeaseHeldError, match="run-A") as err:
            Lease(checkpoint).acquire("run-B")
        assert err.value.holder["pid"] == first.pid
        probe = subprocess.run(
            [sys.executable, "-c", HOLD, str(checkpoint)], capture_output=True, text=True
        )
        assert probe.returncode == 1 and "LeaseHeldError" in probe.stderr
    finally:
        os.kill(first.pid, signal.SIGKILL)
        first.wait(10)
    deadline = time.monotonic() + 5
    while Lease.is_held(checkpoint) and time.monotonic() < deadline:
        time.sleep(0.05)
    with Lease(checkpoint).acquire("run-B") as lease:
        assert lease.held and Lease.holder(checkpoint)["run_id"] == "run-B"
    assert not Lease.is_held(checkpoint)
