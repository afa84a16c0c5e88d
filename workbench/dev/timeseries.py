"""Local time-series servers for tests and a dev box: InfluxDB 1.x and VictoriaMetrics.

Both run Debian's binaries (``apt-get install influxdb victoria-metrics``, or
``scripts/system-deps.sh test``) as child processes on 127.0.0.1, keep their data in
``state_dir`` and log to a file there. ``start()`` returns once the server answers its
health check; ``stop()`` sends SIGTERM, then SIGKILL if it does not exit in time. Each
server is also a context manager.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path
from types import TracebackType
from typing import ClassVar, Self

import requests

from workbench.dev.ports import HOST, free_port, port_taken
from workbench.exceptions import SetupError


class _Server:
    """A server binary run as a child process; subclasses say how to launch and probe it."""

    title: ClassVar[str]
    binary: ClassVar[str]
    package: ClassVar[str]
    health_path: ClassVar[str]
    health_status: ClassVar[int] = 200

    def __init__(self, state_dir: Path, port: int):
        self.state_dir, self.port = Path(state_dir), port
        self.log_file = self.state_dir / f"{self.binary}.log"
        self._proc: subprocess.Popen[bytes] | None = None
        self._log_start = 0

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def start(self, timeout: float = 30.0) -> Self:
        """Start the server (if not running) and wait until its health check passes."""
        if self.running:
            return self
        executable = self._executable()
        if port_taken(self.port):
            raise SetupError(
                f"Port {self.port} on {HOST} is taken by another process; "
                f"give {self.title} another port."
            )
        self.state_dir.mkdir(parents=True, exist_ok=True)
        command = [executable, *self._arguments()]
        with self.log_file.open("ab") as log:
            self._log_start = log.tell()
            self._proc = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=self.state_dir,
                start_new_session=True,  # a Ctrl-C in the terminal reaches only Python
            )
        try:
            self._wait_until_healthy(timeout)
        except SetupError:
            self.stop()
            raise
        return self

    def stop(self, timeout: float = 15.0) -> None:
        """SIGTERM the server, SIGKILL after ``timeout`` seconds; nothing to do if stopped."""
        proc, self._proc = self._proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10.0)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, err: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def _arguments(self) -> list[str]:
        raise NotImplementedError

    def _executable(self) -> str:
        found = shutil.which(self.binary) or shutil.which(self.binary, path="/usr/bin")
        if not found:
            raise SetupError(
                f"{self.title} needs the '{self.binary}' binary, which is not installed: "
                f"apt-get install {self.package} (or run scripts/system-deps.sh test)."
            )
        return found

    def _healthy(self) -> bool:
        try:
            response = requests.get(self.url + self.health_path, timeout=1.0)
        except requests.RequestException:
            return False
        return response.status_code == self.health_status

    def _wait_until_healthy(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._proc is None or self._proc.poll() is not None:
                code = self._proc.returncode if self._proc else None
                raise SetupError(
                    f"{self.title} exited (code {code}) while starting on {self.url}. "
                    f"The end of {self.log_file}:\n{self._log_tail()}"
                )
            if self._healthy():
                return
            time.sleep(0.1)
        raise SetupError(
            f"{self.title} did not answer {self.url}{self.health_path} within {timeout:.0f}s. "
            f"The end of {self.log_file}:\n{self._log_tail()}"
        )

    def _log_tail(self, lines: int = 30) -> str:
        try:
            with self.log_file.open("rb") as log:
                log.seek(self._log_start)
                text = log.read().decode(errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.strip().splitlines()[-lines:]) or "(empty)"


_INFLUXD_CONFIG = """\
# Written by workbench.dev.timeseries; rewritten on every start.
reporting-enabled = false  # Debian's key
reporting-disabled = true  # upstream's key
bind-address = "{host}:{rpc_port}"

[meta]
  dir = "{state}/meta"
  logging-enabled = false

[data]
  dir = "{state}/data"
  wal-dir = "{state}/wal"
  query-log-enabled = false

[monitor]
  store-enabled = false

[subscriber]
  enabled = false

[continuous_queries]
  log-enabled = false

[http]
  bind-address = "{host}:{port}"
  auth-enabled = false
  log-enabled = false

[logging]
  level = "warn"
  suppress-logo = true
"""


class InfluxServer(_Server):
    """Debian's InfluxDB 1.x (``influxd``) on ``127.0.0.1:port``, its data in ``state_dir``.

    Authentication is off and usage reporting disabled. The RPC (backup) service binds
    another free loopback port. Debian's 1.6 speaks only the v1 API (``/write``,
    ``/query``): it has no ``/api/v2/write`` compatibility endpoint.
    """

    title, binary, package = "InfluxDB", "influxd", "influxdb"
    health_path, health_status = "/ping", 204

    def _arguments(self) -> list[str]:
        config = self.state_dir / "influxdb.conf"
        config.write_text(
            _INFLUXD_CONFIG.format(
                host=HOST, port=self.port, rpc_port=free_port(), state=self.state_dir.resolve()
            )
        )
        return ["-config", str(config)]


class VictoriaMetrics(_Server):
    """Debian's single-node VictoriaMetrics on ``127.0.0.1:port``, its data in ``state_dir``.

    It takes InfluxDB line protocol on ``/write`` and ``/api/v2/write`` and names each
    series ``<measurement>_<field>``, with the point's tags as labels; booleans become 1/0
    and string fields are stored as 0. Flags, and what VictoriaMetrics 1.79 does with them
    (verified):

    * ``-retentionPeriod=100y``: rows older than the retention period (1 month by default)
      are dropped *silently*, the write still answering 204, so replays of old data need it.
    * ``-dedup.minScrapeInterval=1ms``: without it every write of the same series and
      timestamp is kept, and an export returns all of them. With it reads return one
      sample per millisecond timestamp, both fresh and after merges. *Which* of several
      values written for one timestamp survives is not defined in 1.79: it is neither
      reliably the last, the first, nor the biggest (later releases keep the biggest). So
      rewriting a window with early updates is not last-write-wins here: write only a
      window's final value when exact numbers matter. Rewriting identical points is safe.

    Fresh writes reach exports only after an in-memory flush, which takes up to ~10s;
    :meth:`flush` (``/internal/force_flush``) makes them visible at once.
    """

    title, binary, package = "VictoriaMetrics", "victoria-metrics", "victoria-metrics"
    health_path = "/health"
    flags: ClassVar[tuple[str, ...]] = (
        "-retentionPeriod=100y",
        "-dedup.minScrapeInterval=1ms",
        "-loggerLevel=WARN",
    )

    def _arguments(self) -> list[str]:
        return [
            f"-storageDataPath={self.state_dir.resolve() / 'data'}",
            f"-httpListenAddr={HOST}:{self.port}",
            *self.flags,
        ]

    def flush(self) -> None:
        """Make every accepted write visible to queries and exports now."""
        requests.get(self.url + "/internal/force_flush", timeout=30.0).raise_for_status()
