"""Helpers for the job service's HTTP tests: a state folder with teams and tokens, a real
``workbench serve`` process, HTTP calls as a given user, and cleaning up job processes."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import requests
import yaml
from polling import wait_for

#: user -> API token in the test service's config (carla: a dashboard viewer for Bandung)
TOKENS = {"alice": "alice-token", "bob": "bob-token", "root": "root-token", "carla": "carla-token"}
TEAMS = {
    "admins": ["root"],
    "teams": {"pricing": ["alice"], "supply": ["bob"]},
    "viewers": {"carla": ["bandung"]},
}
#: runs that fail stop quickly; stops do not wait a minute
POLICY = {"max_failures": 2, "backoff_s": 0.5, "stop_grace_s": 5, "kill_grace_s": 2}


def write_state(folder: Path) -> Path:
    """A state folder whose service.yaml names the teams file and the tokens."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "teams.yaml").write_text(yaml.safe_dump(TEAMS))
    config = {
        "teams_file": "teams.yaml",
        "tokens": {token: user for user, token in TOKENS.items()},
        "policy": POLICY,
        "validate_command": [],  # specs checked without Spark: each check is a JVM's start
    }
    (folder / "service.yaml").write_text(yaml.safe_dump(config))
    return folder


def headers(user: str | None) -> dict:
    return {"Authorization": f"token {TOKENS[user]}"} if user else {}


@dataclass
class Served:
    """A running ``workbench serve``."""

    url: str
    state: Path
    process: subprocess.Popen

    def api(self, path: str) -> str:
        return f"{self.url.rstrip('/')}/workbench/api/{path}"

    def call(self, method: str, path: str, user: str | None, body=None) -> requests.Response:
        return requests.request(
            method, self.api(path), headers=headers(user), json=body, timeout=180
        )

    def stop(self) -> int:
        """Stop every job (as root, so no job outlives the test), then the server."""
        stop_jobs(self, "root")
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(30)


def start_serve(state: Path, *extra: str, timeout: float = 60) -> Served:
    """``workbench serve --port 0 --state STATE`` in a new process, once it answers."""
    log = open(state / "test-serve.log", "ab")  # noqa: SIM115 (the process keeps it)
    process = subprocess.Popen(
        [sys.executable, "-m", "workbench.cli.main", "serve", "--port", "0", "--state", str(state)]
        + list(extra),
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    record = state / "service.json"

    def answering() -> str | None:
        assert process.poll() is None, (state / "test-serve.log").read_text()
        try:
            data = json.loads(record.read_text())
        except (OSError, ValueError):
            return None
        return data["url"] if data.get("pid") == process.pid else None

    url = wait_for(answering, timeout, "workbench serve to write service.json")
    return Served(url, state, process)


def stop_jobs(served: Served, user: str) -> None:
    """Stop every job the user sees; kill what is left of their runs."""
    jobs = served.call("GET", "jobs", user).json().get("jobs", [])
    for job in jobs:
        served.call("POST", f"jobs/{job['id']}/stop", user)

    def quiet() -> bool:
        listed = served.call("GET", "jobs", user).json()["jobs"]
        return all(j["status"] in ("STOPPED", "FAILED") for j in listed)

    with contextlib.suppress(AssertionError):
        wait_for(quiet, 30, "jobs to stop")
    for job in served.call("GET", "jobs", user).json()["jobs"]:
        pid = (job.get("run") or {}).get("pid")
        if pid:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
