"""``ServiceClient``: typed errors from a real server, and the embedded default (a local
service started once, detached, and reused)."""

from __future__ import annotations

import json
import os
import signal
import stat

import pytest
from cli_runner import workbench
from polling import wait_for
from servekit import TOKENS

from workbench.client.rest import ServiceClient
from workbench.dev.ports import free_port
from workbench.exceptions import (
    JobForbiddenError,
    JobNotFoundError,
    ServiceUnreachableError,
    TeamNotFoundError,
    WorkbenchError,
)

pytestmark = pytest.mark.unit


def test_errors_are_the_service_s_classes_with_its_message(served, alice_job):
    bob = ServiceClient(served.url, TOKENS["bob"])
    with pytest.raises(JobNotFoundError, match="No job 'alice-surge'") as found:
        bob.get_job("alice-surge")
    assert found.value.status == 404
    with pytest.raises(JobNotFoundError, match="No job 'alice-surge'"):  # as a read
        bob.stop("alice-surge")
    with pytest.raises(JobForbiddenError, match="may not submit a job for team 'pricing'"):
        bob.submit(name="bob-in-pricing", team="pricing", spec_yaml="name: x")
    with pytest.raises(TeamNotFoundError, match="no team 'pricng'; your teams: supply"):
        bob.submit(name="bob-job", team="pricng", spec_yaml="name: x")
    with pytest.raises(WorkbenchError, match="no valid token"):
        ServiceClient(served.url, "wrong").list_jobs()
    with pytest.raises(ServiceUnreachableError, match="workbench serve"):
        ServiceClient(f"http://127.0.0.1:{free_port()}", "t").me()


def test_methods_mirror_the_service(served, alice_job):
    alice = ServiceClient(served.url, TOKENS["alice"])
    assert alice.me()["teams"] == ["pricing"]
    assert alice.get_job(alice_job["id"])["name"] == "alice-surge"
    assert "alice-surge" in [j["name"] for j in alice.list_jobs(team="pricing")]
    assert [v["number"] for v in alice.versions("alice-surge")][0] == 1
    assert alice.events("alice-surge", last=1)[0]["action"]
    assert isinstance(alice.progress("alice-surge"), list)
    assert set(alice.logs("alice-surge")) == {"run", "offset", "next_offset", "text", "running"}


@pytest.fixture
def embedded_home(tmp_path, monkeypatch):
    """A fresh WORKBENCH_HOME and no server configured; the started service is stopped."""
    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("WORKBENCH_SERVER", raising=False)
    monkeypatch.delenv("WORKBENCH_TOKEN", raising=False)
    yield tmp_path / "home" / "service"
    record = tmp_path / "home" / "service" / "service.json"
    if record.exists():
        pid = json.loads(record.read_text())["pid"]
        os.kill(pid, signal.SIGTERM)
        wait_for(lambda: not record.exists(), 30, "the embedded service to stop")


@pytest.mark.e2e
def test_embedded_default_starts_once_and_is_reused(embedded_home):
    first = workbench("jobs", "list")
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip() == "no jobs"
    record = json.loads((embedded_home / "service.json").read_text())
    assert stat.S_IMODE(os.stat(record["token_file"]).st_mode) == 0o600
    again = workbench("jobs", "list", "--json")
    assert again.returncode == 0 and json.loads(again.stdout) == []
    assert json.loads((embedded_home / "service.json").read_text())["pid"] == record["pid"]
    client = ServiceClient()
    assert client.url == record["url"]
    me = client.me()
    assert me["admin"] is True  # the local user owns the embedded service
    assert (embedded_home / "serve.log").read_text().count("workbench job service on") == 1


@pytest.mark.e2e
def test_embedded_default_restarts_when_the_recorded_one_is_gone(embedded_home):
    ServiceClient()
    pid = json.loads((embedded_home / "service.json").read_text())["pid"]
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: not _alive(pid), 30, "the killed service to go")
    again = ServiceClient()
    assert again.me()["admin"] is True
    assert json.loads((embedded_home / "service.json").read_text())["pid"] != pid


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie of ours still answers kill(0): reap it
    try:
        return os.waitpid(pid, os.WNOHANG) == (0, 0)
    except ChildProcessError:
        return True


def test_submit_with_notebook_record_and_parity(served, surge_yaml):
    alice = ServiceClient(served.url, TOKENS["alice"])
    record = json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}).encode()
    job = alice.submit(
        name="alice-notebook",
        team="pricing",
        spec_yaml=surge_yaml,
        notebook=record,
        parity={"status": "passed", "rows": 3},
        note="promoted",
    )
    try:
        assert alice.notebook("alice-notebook", job["version"]) == record
        (version,) = alice.versions("alice-notebook")
        assert version["parity"] == {"status": "passed", "rows": 3} and version["notebook_sha256"]
    finally:
        alice.stop("alice-notebook")
