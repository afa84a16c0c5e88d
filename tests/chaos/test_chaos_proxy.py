"""The TCP fault proxy against a real socket echo server: forwarding, latency, loss as
retransmission stalls, both kinds of partition, healing."""

from __future__ import annotations

import contextlib
import socket
import socketserver
import threading
import time

import pytest
from polling import wait_for

from workbench.chaos.proxy import FaultProxy
from workbench.dev.ports import HOST
from workbench.exceptions import ChaosError

pytestmark = pytest.mark.unit


class _Echo(socketserver.BaseRequestHandler):
    def handle(self):
        with contextlib.suppress(ConnectionResetError):  # the proxy's partitions reset it
            while data := self.request.recv(65536):
                self.request.sendall(data)


@pytest.fixture(scope="module")
def echo():
    server = socketserver.ThreadingTCPServer((HOST, 0), _Echo)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address
    server.shutdown()
    server.server_close()


@pytest.fixture
def proxy(echo):
    with FaultProxy(echo, seed=7) as proxy:
        yield proxy


def round_trip(port: int, payload: bytes = b"ping", timeout: float = 5.0) -> float:
    """Seconds for ``payload`` to come back through a new connection."""
    with socket.create_connection((HOST, port), timeout=timeout) as sock:
        t0 = time.monotonic()
        sock.sendall(payload)
        got = b""
        while len(got) < len(payload):
            chunk = sock.recv(65536)
            assert chunk, "connection closed"
            got += chunk
        assert got == payload
        return time.monotonic() - t0


def test_forwards_bytes_both_ways(proxy):
    big = bytes(range(256)) * 4000  # 1 MB, many chunks, in order
    round_trip(proxy.port, big, timeout=10)
    # a chunk counts once its write has drained, which may be just after the client read it
    wait_for(lambda: proxy.stats.down == len(big), 10, "the last chunk counted")
    assert proxy.stats.up == proxy.stats.down == len(big)
    assert proxy.stats.connections == 1


def test_latency_adds_to_each_direction_and_switches_off(proxy):
    assert round_trip(proxy.port) < 0.1
    proxy.set(latency_ms=150)
    assert 0.3 <= round_trip(proxy.port) < 0.6
    proxy.heal()
    assert round_trip(proxy.port) < 0.1


def test_loss_holds_chunks_back_by_the_retransmission_timeout(proxy):
    proxy.set(loss=1.0, retransmit_ms=100)
    assert 0.2 <= round_trip(proxy.port) < 0.5
    assert proxy.stats.lost_chunks == 2
    proxy.set(loss=0.5)
    times = [round_trip(proxy.port) for _ in range(12)]
    assert any(t < 0.1 for t in times) and any(t >= 0.1 for t in times)


def test_refuse_resets_open_connections_and_refuses_new_ones(proxy):
    sock = socket.create_connection((HOST, proxy.port), timeout=5)
    sock.sendall(b"a")
    assert sock.recv(10) == b"a"
    proxy.set(partition="refuse")
    with pytest.raises(OSError):
        sock.sendall(b"b")
        assert sock.recv(10) == b""  # a reset shows as EOF or as an error
        raise ConnectionResetError
    sock.close()
    with pytest.raises(OSError):
        round_trip(proxy.port)
    assert proxy.stats.refused >= 1
    proxy.heal()
    round_trip(proxy.port)


def test_blackhole_holds_traffic_until_the_partition_heals(proxy):
    sock = socket.create_connection((HOST, proxy.port), timeout=0.5)
    proxy.set(partition="blackhole")
    sock.sendall(b"held")
    with pytest.raises(TimeoutError):
        sock.recv(10)
    proxy.heal()
    sock.settimeout(5)
    assert sock.recv(10) == b"held"
    sock.close()


def test_bad_faults_are_refused(proxy):
    with pytest.raises(ChaosError, match="fraction"):
        proxy.set(loss=2.0)
    with pytest.raises(ChaosError, match="Unknown partition"):
        proxy.set(partition="cut")


def test_a_taken_port_says_so(proxy, echo):
    with pytest.raises(ChaosError, match="another port"):
        FaultProxy(echo, port=proxy.port).start()
