"""Loopback ports for the local servers (Kafka, InfluxDB, VictoriaMetrics, Voila).

A port handed out here is only a promise until its server binds it, often seconds later
(a broker's JVM starts first). Two things can break that promise, and both did in CI:

- the kernel gives ports of its ephemeral range (``ip_local_port_range``) to every
  outgoing connection, so a port found free by binding port 0 can become a client's
  source port in the meantime;
- another process (a parallel test worker, a second ``workbench`` command) can pick
  the same port before either binds it.

So ports come from below the ephemeral range, where only an explicit bind takes them,
and each one handed out is claimed for ``CLAIM_TTL_S`` by a file that processes create
exclusively, so no two processes are handed the same port while they start servers.
"""

from __future__ import annotations

import os
import random
import socket
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from workbench.exceptions import SetupError

HOST = "127.0.0.1"
LOWEST = 20000
"""The lowest port handed out: above the well-known ports servers here default to."""
CLAIM_TTL_S = 600.0
"""How long a port handed out stays claimed: long enough for a server to bind it."""
EPHEMERAL_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")
#: The claims of this user's processes (another user's servers are skipped as ports in use).
CLAIMS = Path(tempfile.gettempdir()) / f"workbench-ports-{os.getuid()}"


def ephemeral_start() -> int:
    """The first port the kernel gives outgoing connections (32768 where it cannot be read)."""
    try:
        return int(EPHEMERAL_RANGE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


@dataclass
class PortPool:
    """Ports ``low``..``high - 1`` on 127.0.0.1, claimed by files under ``claims``."""

    low: int
    high: int
    claims: Path = field(default_factory=lambda: CLAIMS)
    ttl_s: float = CLAIM_TTL_S

    def take(self, count: int = 1) -> list[int]:
        """``count`` distinct ports that nothing listens on and no other process was given."""
        self.claims.mkdir(parents=True, exist_ok=True)
        candidates = list(range(self.low, self.high))
        random.shuffle(candidates)
        taken: list[int] = []
        for port in candidates:
            if len(taken) == count:
                break
            if self._claim(port) and not port_taken(port):
                taken.append(port)
        if len(taken) < count:
            raise SetupError(
                f"No {count} free ports on {HOST} in {self.low}-{self.high - 1}: each is in use "
                f"or was handed out in the last {self.ttl_s:.0f} s (claims in {self.claims}). "
                "Stop servers you no longer need, or remove stale claims from that folder."
            )
        return taken

    def take_run(self, count: int) -> int:
        """The first of ``count`` free ports in a row (``port``, ``port + 1``...), all claimed."""
        self.claims.mkdir(parents=True, exist_ok=True)
        starts = list(range(self.low, self.high - count + 1, count))
        random.shuffle(starts)
        for start in starts:
            run = range(start, start + count)
            if all(self._claim(port) for port in run) and not any(map(port_taken, run)):
                return start
        raise SetupError(
            f"No {count} free ports in a row on {HOST} in {self.low}-{self.high - 1} "
            f"(claims in {self.claims}). Stop servers you no longer need."
        )

    def _claim(self, port: int) -> bool:
        path = self.claims / str(port)
        try:
            os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            return True
        except FileExistsError:
            pass
        try:
            if time.time() - path.stat().st_mtime < self.ttl_s:
                return False
            # A stale claim: take it over by renaming our own fresh file onto it, so of
            # two processes racing for it, each sees whether its own file survived.
            mine = self.claims / f".{port}.{os.getpid()}.{random.getrandbits(32)}"
            mine.write_text(str(os.getpid()))
            os.replace(mine, path)
            return path.read_text() == str(os.getpid())
        except OSError:
            return False


def default_pool() -> PortPool:
    """Ports from ``LOWEST`` up to the start of the kernel's ephemeral range."""
    return PortPool(LOWEST, max(ephemeral_start(), LOWEST + 1000))


def free_ports(count: int = 1) -> list[int]:
    """``count`` distinct TCP ports on 127.0.0.1 that nothing listens on or was just given."""
    return default_pool().take(count)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on and no other process was just given."""
    return free_ports(1)[0]


def free_port_run(count: int) -> int:
    """The first of ``count`` free ports in a row, for servers that add to a port (a broker's
    controller listens on ``port + 1``)."""
    return default_pool().take_run(count)


def port_taken(port: int) -> bool:
    """Whether something holds ``port`` on 127.0.0.1."""
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((HOST, port))
        except OSError:
            return True
    return False
