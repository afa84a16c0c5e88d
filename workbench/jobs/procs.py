"""Run processes as the supervisor sees them: spawned in their own process group, found
again by pid and run folder (so a reused pid is not mistaken for a run), signalled as a
group.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from pathlib import Path


def spawn(command: list[str], run_dir: Path, env: dict[str, str]) -> subprocess.Popen:
    """Start ``command RUN_DIR`` in its own session (process group id == pid), in the run
    folder, its output appended to ``RUN_DIR/log``; it outlives the supervisor."""
    with open(run_dir / "log", "ab") as log:
        return subprocess.Popen(
            [*command, str(run_dir)],
            cwd=run_dir,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            close_fds=True,
        )


def alive(pid: int | None, run_dir: str | Path) -> bool:
    """Whether ``pid`` is a live process started for ``run_dir`` (its command line names
    the folder; a zombie's is empty)."""
    if not pid:
        return False
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return str(run_dir).encode() in cmdline.split(b"\0")


def signal_group(pid: int | None, sig: signal.Signals) -> None:
    """Send ``sig`` to the process group led by ``pid`` (gone already: nothing to do)."""
    if pid:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, sig)


def kill_leftovers(pid: int | None) -> None:
    """SIGKILL what is left of the group of a run whose leader ``pid`` is gone. Skipped when
    ``pid`` is a live process again (reused: a group id in use is never handed out again,
    so a live ``pid`` means the old group is empty)."""
    if not pid:
        return
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        signal_group(pid, signal.SIGKILL)
        return
    if stat.rpartition(")")[2].split()[0] == "Z":  # our unreaped child: still its group
        signal_group(pid, signal.SIGKILL)


def log_tail(path: str | Path, lines: int = 20, limit: int = 8192) -> str:
    """The last ``lines`` lines of a log (at most ``limit`` bytes of it)."""
    try:
        with open(path, "rb") as log:
            log.seek(0, os.SEEK_END)
            log.seek(max(log.tell() - limit, 0))
            text = log.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])
