"""The embedded default: a single user needs no setup. Without a server URL, clients use
the local job service of ``$WORKBENCH_HOME/service``: the one recorded in its
``service.json`` while it answers, else one started now, detached (its own session, so it
outlives the command that started it), as ``workbench serve --port 0 --state DIR``,
logging to ``DIR/serve.log``. A lock file makes concurrent clients start it once.
"""

from __future__ import annotations

import fcntl
import json
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import requests

from workbench.exceptions import ServiceUnreachableError
from workbench.paths import subdir

#: What ``workbench serve`` records in its state folder: its URL and owner token file.
SERVICE_FILE = "service.json"
LOG_FILE = "serve.log"
START_TIMEOUT_S = 60.0


def state_dir() -> Path:

    return subdir("service")


def ensure(state: Path | None = None, timeout: float = START_TIMEOUT_S) -> tuple[str, str]:
    """``(url, owner token)`` of the live local service, started if none answers."""
    state = Path(state) if state else state_dir()
    with _locked(state / "embedded.lock"):
        found = live(state)
        if found:
            return found
        return start(state, timeout)


def live(state: Path) -> tuple[str, str] | None:
    """The recorded service's ``(url, token)`` if it answers to its owner's token."""
    try:
        record = json.loads((state / SERVICE_FILE).read_text(encoding="utf-8"))
        url = record["url"]
        token = Path(record["token_file"]).read_text(encoding="utf-8").strip()
    except (OSError, ValueError, KeyError, TypeError):
        return None
    try:
        answer = requests.get(
            url.rstrip("/") + "/workbench/api/me",
            headers={"Authorization": f"token {token}"},
            timeout=5,
        )
    except requests.RequestException:
        return None
    return (url, token) if answer.status_code == 200 else None


def start(state: Path, timeout: float = START_TIMEOUT_S) -> tuple[str, str]:
    """Start ``workbench serve`` for ``state`` detached; wait until it answers."""
    state.mkdir(parents=True, exist_ok=True)
    log_path = state / LOG_FILE
    command = [sys.executable, "-m", "workbench.cli.main", "serve", "--port", "0", "--state", state]
    with open(log_path, "ab") as log:
        process = subprocess.Popen(
            list(map(str, command)),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = _answering(state, process.pid)
        if found:
            return found
        try:
            code = process.wait(timeout=0.1)
        except subprocess.TimeoutExpired:
            continue
        raise ServiceUnreachableError(
            f"the local job service exited with code {code} while starting: "
            f"{_tail(log_path)} (whole log: {log_path})"
        )
    raise ServiceUnreachableError(
        f"the local job service did not answer within {timeout:.0f}s; see {log_path}"
    )


def _answering(state: Path, pid: int) -> tuple[str, str] | None:
    try:
        record = json.loads((state / SERVICE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return live(state) if record.get("pid") == pid else None


def _tail(path: Path, lines: int = 5) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    except OSError:
        return ""
    return " | ".join(text[-lines:])


@contextmanager
def _locked(path: Path):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
