"""Ports for local servers: below the ephemeral range, free, and claimed across processes.

The pools here lie below both the kernel's ephemeral range (no client connection takes
their ports) and the default pool (no server of the suite is given them)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import pytest

from workbench.dev.ports import HOST, LOWEST, PortPool, ephemeral_start, free_ports
from workbench.exceptions import SetupError

pytestmark = pytest.mark.unit


def test_ports_come_from_below_the_kernels_ephemeral_range():
    ports = free_ports(20)
    assert len(set(ports)) == 20
    assert all(LOWEST <= port < ephemeral_start() for port in ports), ports


def test_a_port_handed_out_is_not_handed_out_again_while_claimed(tmp_path):
    pool = PortPool(15000, 15010, claims=tmp_path)
    first = pool.take(6)
    second = pool.take(4)
    assert sorted(first + second) == list(range(15000, 15010))
    with pytest.raises(SetupError, match=r"No 1 free ports on 127.0.0.1 in 15000-15009"):
        pool.take(1)


def test_a_port_something_listens_on_is_skipped(tmp_path):
    with socket.socket() as listener:
        listener.bind((HOST, 0))
        listener.listen()
        busy = listener.getsockname()[1]
        pool = PortPool(busy, busy + 1, claims=tmp_path)
        with pytest.raises(SetupError, match="in use"):
            pool.take(1)


def test_a_stale_claim_is_taken_over(tmp_path):
    pool = PortPool(15000, 15001, claims=tmp_path, ttl_s=60)
    assert pool.take(1) == [15000]
    old = time.time() - 120
    os.utime(tmp_path / "15000", (old, old))
    assert pool.take(1) == [15000]
    with pytest.raises(SetupError):
        pool.take(1)


def test_processes_taking_ports_at_once_never_share_one(tmp_path):
    script = (
        "import sys; from pathlib import Path; from workbench.dev.ports import PortPool; "
        f"print(*PortPool(16000, 16400, claims=Path({str(tmp_path)!r})).take(20))"
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
        for _ in range(8)
    ]
    ports = [int(p) for proc in procs for p in proc.communicate(timeout=60)[0].split()]
    assert all(proc.returncode == 0 for proc in procs)
    assert len(ports) == 160 and len(set(ports)) == 160  # half the pool: some may be in use


def test_a_run_of_ports_is_unclaimed_and_free_as_a_whole(tmp_path):
    (tmp_path / "15004").touch()  # another process was just given 15004
    pool = PortPool(15000, 15006, claims=tmp_path)
    assert pool.take_run(3) == 15000
    with pytest.raises(SetupError, match="No 3 free ports in a row"):
        pool.take_run(3)
    with socket.socket() as listener:
        listener.bind((HOST, 0))
        listener.listen()
        busy = listener.getsockname()[1]
        with pytest.raises(SetupError, match="in a row"):
            PortPool(busy, busy + 1, claims=tmp_path / "other").take_run(1)
