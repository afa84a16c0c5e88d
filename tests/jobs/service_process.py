"""The job service as users run it: ``workbench serve`` in its own process over a state
folder with a teams file and API tokens, talked to over HTTP (:meth:`Service.api`) and
through the CLI (:meth:`Service.cli`); SIGKILLed and started again on the same state.

Every process (the service, its job runs, the CLI, papermill's kernel) gets its own
``WORKBENCH_HOME`` (the shared jars and schemas linked in), so everything they write is
under the test's folders, where the secret test searches it."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import requests
import yaml

from workbench.paths import home

TEAMS = {"admins": ["root"], "teams": {"pricing": ["alice"], "supply": ["bob"]}}
TOKENS = {"alice": "alice-token", "bob": "bob-token", "root": "root-token"}
#: quick backoff and a short FAILED; stops graceful (a 10 s trigger's batch fits)
POLICY = {
    "backoff_s": 1,
    "backoff_max_s": 4,
    "max_failures": 2,
    "healthy_after_s": 20,
    "stop_grace_s": 40,
    "kill_grace_s": 10,
}
#: built once for the checkout and linked into each test home: the jars, the schemas, and
#: the Spark JVM's class archive (without it every job's JVM loaded Spark's classes anew)
SHARED = ("jars", "schemas", "jvm")


def test_home(folder: Path) -> Path:
    """A fresh ``WORKBENCH_HOME`` with the checkout's jars, schemas and JVM archive linked in."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in SHARED:
        link = folder / name
        if not link.exists():
            (home() / name).mkdir(parents=True, exist_ok=True)
            link.symlink_to(home() / name)
    return folder


class Service:
    """One ``workbench serve`` process over ``state``; :meth:`start` again after
    :meth:`kill` keeps the state (and the runs, which are their own processes)."""

    def __init__(
        self,
        state: Path,
        workbench_home: Path,
        env: dict[str, str] | None = None,
        config: dict | None = None,
    ):
        self.state = state
        self.home = test_home(workbench_home)
        self.env = {**os.environ, "WORKBENCH_HOME": str(self.home), **(env or {})}
        state.mkdir(parents=True, exist_ok=True)
        (state / "teams.yaml").write_text(yaml.safe_dump(TEAMS))
        tokens = {token: user for user, token in TOKENS.items()}
        settings = {"teams_file": "teams.yaml", "tokens": tokens, "policy": POLICY}
        settings |= config or {}
        (state / "service.yaml").write_text(yaml.safe_dump(settings))
        self.proc: subprocess.Popen | None = None
        self.url = ""

    def start(self) -> Service:
        record = self.state / "service.json"
        with open(self.state / "serve.log", "ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "workbench.cli.main", "serve", "--port", "0",
                 "--state", str(self.state)],
                stdout=log, stderr=subprocess.STDOUT, env=self.env, start_new_session=True,
            )  # fmt: skip
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, self.log_text()
            with contextlib.suppress(OSError, ValueError, KeyError):
                data = json.loads(record.read_text())
                if data["pid"] == self.proc.pid:
                    self.url = data["url"].rstrip("/")
                    return self
            time.sleep(0.2)
        raise AssertionError("workbench serve did not come up:\n" + self.log_text())

    def log_text(self) -> str:
        path = self.state / "serve.log"
        return path.read_text(errors="replace")[-4000:] if path.exists() else ""

    def kill(self) -> None:
        """SIGKILL the service process (its jobs are their own processes and live on)."""
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(30)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(60)

    def api(self, user: str, method: str, path: str, body: dict | None = None):
        return requests.request(
            method,
            f"{self.url}/workbench/api{path}",
            json=body,
            headers={"Authorization": f"token {TOKENS[user]}"},
            timeout=180,  # a submit checks its spec with Spark
        )

    def get(self, path: str, user: str = "root"):
        """The JSON of a GET that must answer 200."""
        response = self.api(user, "GET", path)
        assert response.status_code == 200, response.text
        return response.json()

    def job(self, ref: str | int, user: str = "root") -> dict:
        return self.get(f"/jobs/{ref}", user)

    def cli(self, user: str, *args: object, timeout: float = 600) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "workbench.cli.main", *map(str, args)],
            capture_output=True,
            text=True,
            timeout=timeout,
            env={**self.env, "WORKBENCH_SERVER": self.url, "WORKBENCH_TOKEN": TOKENS[user]},
        )

    def wait_for(self, ref: str | int, predicate, timeout_s: float, what: str) -> dict:
        """The job once ``predicate(job)`` holds; on timeout, fail with its state and logs."""
        deadline = time.monotonic() + timeout_s
        job: dict = {}
        while time.monotonic() < deadline:
            job = self.job(ref)
            if predicate(job):
                return job
            time.sleep(0.5)
        logs = self.get(f"/jobs/{ref}/logs?limit=1000000").get("text", "")[-3000:]
        events = self.get(f"/jobs/{ref}/events")["events"][-10:]
        raise AssertionError(
            f"timed out after {timeout_s}s waiting for {what}: {job}\nevents: {events}\n"
            f"log: {logs}\nservice: {self.log_text()}"
        )

    def close(self) -> None:
        """Stop every job, then the service (a fixture's teardown)."""
        try:
            self.stop_all()
        finally:
            self.stop()

    def stop_all(self) -> None:
        """Stop every job, wait until none runs, and kill what is left of their runs."""
        jobs = self.get("/jobs")["jobs"]
        for job in jobs:
            self.api("root", "POST", f"/jobs/{job['id']}/stop")
        for job in jobs:
            with contextlib.suppress(AssertionError):
                self.wait_for(job["id"], lambda j: j["run"] is None, 90, "stopped")
        for run in [*(self.state / "runs").glob("*"), *(self.state / "hosts").glob("*")]:
            for pid in runner_processes(run):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(pid, signal.SIGKILL)


def runner_processes(run_dir: str | Path) -> list[int]:
    """Live job processes (``workbench.jobs.runner RUN_DIR``) of the run folder ``run_dir``,
    or the shared application (``workbench.jobs.host HOST_DIR``) of a host folder."""
    wanted = str(run_dir).encode()
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            args = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if {b"workbench.jobs.runner", b"workbench.jobs.host"} & set(args) and wanted in args:
            found.append(int(proc.name))
    return sorted(found)
