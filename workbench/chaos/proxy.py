"""A TCP fault proxy on loopback: forwards a listen port to a target with switchable faults.

It runs an asyncio loop in a daemon thread, so any thread (a scenario, a test) switches its
faults while clients talk through it. The faults, each applied to both directions:

- **latency** (``latency_ms``): every chunk is delivered ``latency_ms`` after it was read,
  in order; a request/response round trip through the proxy so gains twice that.
- **loss** (``loss``, a fraction 0..1): TCP never loses bytes towards the application; a lost
  IP packet is retransmitted after the retransmission timeout, and every byte behind it
  waits (head-of-line blocking). So "loss" here holds that fraction of chunks back by
  ``retransmit_ms`` (200 ms: Linux's minimum RTO), with the chunks behind them, instead of
  dropping bytes (that would corrupt the Kafka protocol, which a real network never does).
- **partition**: ``"refuse"`` resets every open connection and refuses new ones (a host
  down: clients see "connection refused"); ``"blackhole"`` stops forwarding both ways on
  every connection, new ones included (packets vanish: clients wait for their timeouts);
  the held bytes flow again when the partition heals, as TCP retransmissions would.
  ``None`` is no partition.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import socket
import struct
import threading
import time
from dataclasses import dataclass, replace
from typing import Literal

from workbench.dev.ports import HOST
from workbench.exceptions import ChaosError

Partition = Literal["refuse", "blackhole"] | None
CHUNK = 65536


@dataclass(frozen=True)
class Faults:
    """What the proxy does to the traffic now (all off: a plain forwarder)."""

    latency_ms: float = 0.0
    loss: float = 0.0
    partition: Partition = None
    retransmit_ms: float = 200.0


@dataclass
class ProxyStats:
    """Counters since the proxy started: connections accepted and refused, bytes forwarded
    towards the target (``up``) and back (``down``), chunks held back as lost."""

    connections: int = 0
    refused: int = 0
    up: int = 0
    down: int = 0
    lost_chunks: int = 0


class FaultProxy:
    """Listens on ``127.0.0.1:port`` (0: a free one) and forwards to ``target``."""

    def __init__(self, target: tuple[str, int], port: int = 0, seed: int = 0):
        self.target, self._port = target, port
        self.faults = Faults()
        self.stats = ProxyStats()
        self._rng = random.Random(seed)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.Server | None = None
        self._flowing: asyncio.Event | None = None
        self._writers: set[asyncio.StreamWriter] = set()

    @property
    def port(self) -> int:
        return self._port

    @property
    def address(self) -> str:
        return f"{HOST}:{self._port}"

    def start(self) -> FaultProxy:
        """Bind the listen port and start forwarding; returns self."""
        ready = threading.Event()
        errors: list[BaseException] = []
        self._thread = threading.Thread(
            target=self._run, args=(ready, errors), name=f"fault-proxy-{self._port}", daemon=True
        )
        self._thread.start()
        ready.wait(10)
        if errors:
            raise ChaosError(
                f"The fault proxy could not listen on {HOST}:{self._port} ({errors[0]}). "
                "Give it another port, or 0 for a free one."
            ) from errors[0]
        return self

    def stop(self) -> None:
        """Close the listen port and every connection; the proxy cannot be started again."""
        if self._loop is None or self._thread is None:
            return
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop = None

    def __enter__(self) -> FaultProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def set(self, **changes: object) -> Faults:
        """Switch faults (``latency_ms``, ``loss``, ``partition``, ``retransmit_ms``); the
        others keep their value. Returns the faults now in force."""
        faults = replace(self.faults, **changes)  # type: ignore[arg-type]
        if not 0.0 <= faults.loss <= 1.0 or faults.latency_ms < 0:
            raise ChaosError(f"Bad proxy faults {faults}: loss is a fraction 0..1, latency >= 0.")
        if faults.partition not in (None, "refuse", "blackhole"):
            raise ChaosError(
                f"Unknown partition '{faults.partition}': use 'refuse', 'blackhole' or None."
            )
        self.faults = faults
        if self._loop is not None:
            asyncio.run_coroutine_threadsafe(self._apply_partition(), self._loop).result(10)
        return faults

    def heal(self) -> Faults:
        """Every fault off."""
        return self.set(latency_ms=0.0, loss=0.0, partition=None)

    # the loop's side

    def _run(self, ready: threading.Event, errors: list[BaseException]) -> None:
        loop = asyncio.new_event_loop()
        try:
            self._flowing = asyncio.Event()
            self._flowing.set()
            self._server = loop.run_until_complete(
                asyncio.start_server(self._serve, HOST, self._port, reuse_address=True)
            )
        except OSError as err:
            errors.append(err)
            ready.set()
            loop.close()
            return
        self._port = self._server.sockets[0].getsockname()[1]
        self._loop = loop
        ready.set()
        try:
            loop.run_forever()
        finally:
            self._server.close()
            for writer in list(self._writers):
                writer.transport.abort()
            for task in asyncio.all_tasks(loop):
                task.cancel()
            loop.run_until_complete(asyncio.sleep(0))
            loop.close()

    async def _apply_partition(self) -> None:
        assert self._flowing is not None
        if self.faults.partition == "blackhole":
            self._flowing.clear()
            return
        self._flowing.set()
        if self.faults.partition == "refuse":
            for writer in list(self._writers):
                _reset(writer)

    async def _serve(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter):
        if self.faults.partition == "refuse":
            self.stats.refused += 1
            _reset(client_w)
            return
        try:
            target_r, target_w = await asyncio.open_connection(*self.target)
        except OSError:
            self.stats.refused += 1
            _reset(client_w)
            return
        self.stats.connections += 1
        self._writers.update((client_w, target_w))
        try:
            await asyncio.gather(
                self._pump(client_r, target_w, "up"),
                self._pump(target_r, client_w, "down"),
                return_exceptions=True,
            )
        finally:
            for writer in (client_w, target_w):
                self._writers.discard(writer)
                writer.transport.abort()

    async def _pump(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, way: str):
        """Read one direction, hold each chunk for its delay, write it in order."""
        queue: asyncio.Queue[tuple[float, bytes] | None] = asyncio.Queue()
        sender = asyncio.ensure_future(self._send(queue, writer, way))
        try:
            while True:
                data = await reader.read(CHUNK)
                if not data:
                    break
                queue.put_nowait((time.monotonic() + self._delay(), data))
        except (ConnectionError, OSError):
            pass
        finally:
            queue.put_nowait(None)
            await sender

    def _delay(self) -> float:
        faults = self.faults
        delay = faults.latency_ms
        if faults.loss and self._rng.random() < faults.loss:
            self.stats.lost_chunks += 1
            delay += faults.retransmit_ms
        return delay / 1000.0

    async def _send(self, queue: asyncio.Queue, writer: asyncio.StreamWriter, way: str):
        assert self._flowing is not None
        try:
            while (item := await queue.get()) is not None:
                due, data = item
                if (wait := due - time.monotonic()) > 0:
                    await asyncio.sleep(wait)
                await self._flowing.wait()
                writer.write(data)
                await writer.drain()
                setattr(self.stats, way, getattr(self.stats, way) + len(data))
            if writer.can_write_eof():
                writer.write_eof()
        except (ConnectionError, OSError, RuntimeError):
            writer.transport.abort()


def _reset(writer: asyncio.StreamWriter) -> None:
    """Close with an RST (linger 0), as a host that refuses or went away: a plain close
    would send a FIN, which a client reads as an orderly end of the stream."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()
