"""A process's descendants and ending them, from ``/proc`` (Linux; elsewhere: none known).

Voila starts a kernel per visitor; when Voila is stopped, any kernel still running is
ended here, so stopping ``workbench dashboard`` leaves nothing behind.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

PROC = Path("/proc")


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (children, their children, ...)."""
    children: dict[int, list[int]] = {}
    for entry in PROC.glob("[0-9]*/stat") if PROC.is_dir() else []:
        try:
            fields = entry.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.parent.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def alive(pid: int) -> bool:
    try:
        state = (PROC / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def end_all(pids: list[int], grace_seconds: float) -> None:
    """SIGTERM those still alive, SIGKILL whatever is left after ``grace_seconds``."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        left = [p for p in pids if alive(p)]
        for pid in left:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        deadline = time.monotonic() + grace_seconds
        while left and time.monotonic() < deadline:
            time.sleep(0.1)
            left = [p for p in left if alive(p)]
        if not left:
            return
