"""The checkpoint lease: one live driver per checkpoint folder.

Two drivers writing one checkpoint corrupt it (each commits batches the other did not
plan), so a job process takes an exclusive ``flock`` on ``<checkpoint>/.dagger-lease``
before Spark starts and holds it for its whole life; the kernel drops the lock when the
process ends, however it ends (SIGKILL too), so a lease is never left stale. The holder
writes ``{pid, host, run_id, since}`` into the file for people and for
:class:`~workbench.exceptions.LeaseHeldError`; the lock, not the text, decides.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from workbench.exceptions import LeaseHeldError

LEASE = ".dagger-lease"


class Lease:
    """``Lease(checkpoint).acquire(run_id)``; :meth:`release` (or process exit) frees it."""

    def __init__(self, checkpoint: str | Path):
        self.checkpoint = Path(checkpoint)
        self.path = self.checkpoint / LEASE
        self._fd: int | None = None

    def acquire(self, run_id: str) -> Lease:
        """Take the lease, or raise :class:`LeaseHeldError` naming the holder."""
        self.checkpoint.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise LeaseHeldError(str(self.checkpoint), self.holder(self.checkpoint) or {}) from None
        info = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "run_id": run_id,
            "since": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(info) + "\n").encode(), 0)
        self._fd = fd
        return self

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, 0)
            os.close(self._fd)  # closing drops the flock
            self._fd = None

    def __enter__(self) -> Lease:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    @staticmethod
    def holder(checkpoint: str | Path) -> dict[str, Any] | None:
        """What the current (or last) holder wrote, without taking the lease."""
        try:
            data = json.loads((Path(checkpoint) / LEASE).read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    @staticmethod
    def is_held(checkpoint: str | Path) -> bool:
        """True when a live process holds the lease (tried without blocking, then let go)."""
        path = Path(checkpoint) / LEASE
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)
        return False
