"""``workbench run`` in a child process, as in production, for the crash and failover tests."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time


class Job:
    """``workbench run`` in a child process, its output collected line by line."""

    def __init__(self, spec_file, log):
        self.lines: list[str] = []
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "workbench.cli.main", "run", str(spec_file)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
            start_new_session=True,  # its own process group: the driver JVM is a child
        )
        self._log = log
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.append(line.rstrip())
            self._log.write(line)

    def batches(self) -> int:
        return sum(1 for line in self.lines if "] batch " in line)

    def wait_for(self, predicate, timeout_s: float, what: str):
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, "job exited:\n" + "\n".join(self.lines[-30:])
            if predicate():
                return
            time.sleep(0.5)
        raise AssertionError(f"timed out waiting for {what}:\n" + "\n".join(self.lines[-30:]))
