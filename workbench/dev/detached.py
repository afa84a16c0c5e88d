"""A dev service's process, detached from Python and found again through its pid file.

The process runs in its own session (a Ctrl-C in the terminal reaches only Python) and
outlives the process that started it; any process stops it through the pid file. A pid
counts as this service's only while its command line holds ``marker`` (a path unique to
the service), so a reused pid is never signalled.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from contextlib import suppress
from pathlib import Path


class Detached:
    def __init__(self, pid_file: Path, marker: str):
        self.pid_file, self.marker = pid_file, marker
        self._proc: subprocess.Popen[bytes] | None = None

    def spawn(self, cmd: list[str], log_file: Path, cwd: Path, header: str) -> int:
        """Start ``cmd`` with its output appended to ``log_file`` after ``header``."""
        with log_file.open("a") as log:
            log.write(header + "\n")
            log.flush()
            self._proc = subprocess.Popen(
                cmd,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=cwd,
                start_new_session=True,
            )
        self.pid_file.write_text(str(self._proc.pid))
        return self._proc.pid

    def live_pid(self) -> int | None:
        try:
            pid = int(self.pid_file.read_text().strip())
        except (OSError, ValueError):
            return None
        return pid if self.alive(pid) else None

    def alive(self, pid: int) -> bool:
        if self._proc is not None and self._proc.pid == pid:
            return self._proc.poll() is None  # our own child: exact, and reaps it
        return process_running(pid, self.marker)

    def stop(self, timeout: float = 30.0) -> None:
        """SIGTERM, SIGKILL after ``timeout``; the pid file goes. Nothing to do if stopped."""
        pid = self.live_pid()
        if pid is not None:
            self._signal(pid, signal.SIGTERM)
            if not self.wait_gone(pid, timeout):
                self._signal(pid, signal.SIGKILL)
                self.wait_gone(pid, 10.0)
        self.pid_file.unlink(missing_ok=True)

    def kill(self) -> None:
        """SIGKILL, as a crash would; the stale pid file stays behind."""
        pid = self.live_pid()
        if pid is not None:
            self._signal(pid, signal.SIGKILL)
            self.wait_gone(pid, 10.0)

    def wait_gone(self, pid: int, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while self.alive(pid):
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.1)
        return True

    @staticmethod
    def _signal(pid: int, signum: int) -> None:
        with suppress(ProcessLookupError):
            os.kill(pid, signum)


def process_running(pid: int, marker: str) -> bool:
    """Whether ``pid`` is alive and, where /proc tells, its command line holds ``marker``."""
    proc = Path("/proc")
    if proc.is_dir():
        try:
            return marker.encode() in (proc / str(pid) / "cmdline").read_bytes()
        except OSError:
            return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
