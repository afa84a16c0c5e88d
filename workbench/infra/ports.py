"""Loopback ports for the local servers (Kafka, InfluxDB, VictoriaMetrics, Voila)."""

from __future__ import annotations

import socket
from contextlib import ExitStack

HOST = "127.0.0.1"


def free_ports(count: int = 1) -> list[int]:
    """``count`` distinct TCP ports on 127.0.0.1 that nothing listens on right now."""
    with ExitStack() as stack:
        sockets = [stack.enter_context(socket.socket()) for _ in range(count)]
        for sock in sockets:
            sock.bind((HOST, 0))
        return [sock.getsockname()[1] for sock in sockets]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    return free_ports(1)[0]


def port_taken(port: int) -> bool:
    """Whether something holds ``port`` on 127.0.0.1."""
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((HOST, port))
        except OSError:
            return True
    return False
