"""A user's own broker under network faults: ``workbench dev kafka up --advertised-port``
starts a real broker advertising a port that ``workbench chaos proxy`` then serves for as
long as it runs; a run switches its faults through the control file, and a fault a
killed run left is healed by the next run's journal replay."""

from __future__ import annotations

import subprocess
import sys
import time
import uuid

import pytest
from cli_runner import workbench
from test_chaos_proxied_broker import produce_one

from workbench.chaos.env import ChaosEnv, brokers_in
from workbench.chaos.faults import FAULTS
from workbench.chaos.journal import RevertJournal
from workbench.chaos.standing_proxy import RECORD, standing
from workbench.dev.ports import free_port, free_port_run

pytestmark = pytest.mark.e2e


def test_a_standing_proxy_serves_the_advertised_port_and_takes_faults(tmp_path):
    port, advertised = free_port_run(2), free_port()  # the controller takes port + 1
    state = tmp_path / "kafka"
    topic = f"standing-{uuid.uuid4().hex[:6]}"
    where = ("--state-dir", state, "--port", port)
    up = workbench("dev", "kafka", "up", *where, "--advertised-port", advertised, "--topic", topic)
    proxy_proc = None
    try:
        assert up.returncode == 0, up.stderr
        assert f"advertises 127.0.0.1:{advertised}" in up.stdout and "topics ready" in up.stdout
        assert [b.advertised_port for b in brokers_in(state)] == [advertised]
        proxy_proc = subprocess.Popen(
            [sys.executable, "-m", "workbench.cli.main", "chaos", "proxy"]
            + ["--kafka-dir", str(state)],
            stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        deadline = time.monotonic() + 30
        while standing(state) is None and time.monotonic() < deadline:
            time.sleep(0.1)
        proxy = standing(state)
        assert proxy is not None and proxy.port == advertised
        assert produce_one(f"127.0.0.1:{port}", topic) < 0.5  # metadata: through the proxy

        journal = RevertJournal(tmp_path / "journal.jsonl")
        env = ChaosEnv(proxy.address, brokers_in(state), proxy=proxy)
        journal.applied("latency", FAULTS.get("latency").apply(env, {"ms": 300}))
        assert produce_one(f"127.0.0.1:{port}", topic) >= 0.5  # ...and the run dies here
        assert [e["fault"] for e in RevertJournal(journal.path).replay(None)] == ["latency"]
        assert produce_one(f"127.0.0.1:{port}", topic) < 0.5 and proxy.faults.latency_ms == 0
    finally:
        if proxy_proc is not None:
            proxy_proc.terminate()
            proxy_proc.wait(30)
        workbench("dev", "kafka", "down", *where)
    assert not (state / RECORD).exists()
