"""Jobs in shared applications (a cluster with ``jobs_per_app`` above 1), as the supervisor
runs them: placed, packed per team, watched, stopped, killed and re-attached, with a
stand-in application (fixtures/fake_host.py) that runs each handed run as a stand-in job
program in its own process group."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from jobkit import spec_yaml
from polling import wait_for
from test_supervisor import FAST, actions, runs, status_is

from workbench.jobs import hosting, procs

pytestmark = pytest.mark.unit

SHARED = {"shared": {"master": "local[2]", "jobs_per_app": 2}}


@pytest.fixture
def hosted(make_service, monkeypatch):
    """``hosted(**policy)``: a service whose cluster ``shared`` hosts 2 jobs an application."""
    monkeypatch.setattr(hosting, "IDLE_GRACE_S", 0.0)

    def make(**policy):
        service = make_service(
            tick_s=0.1, heartbeat_s=0.2, policy={**FAST, **policy}, clusters=SHARED
        )
        assert service.start_supervisor()
        return service

    return make


def submit(service, name, team="pricing", description=""):
    text = spec_yaml(name=name, description=description)
    who = service.principal("bob")
    return service.submit(who, name=name, team=team, spec_yaml=text, cluster="shared")


def job(service, name) -> dict:
    return service.get_job(service.principal("bob"), name)


def host_alive(folder: str) -> bool:
    pid = int(Path(folder, "pid").read_text())
    return procs.alive(pid, folder)


def test_a_teams_jobs_are_packed_into_shared_applications(hosted):
    service = hosted()
    for name, team in (("a", "pricing"), ("b", "pricing"), ("c", "pricing"), ("d", "supply")):
        submit(service, name, team)
    pids = {n: status_is(service, n, "RUNNING")["run"]["pid"] for n in "abcd"}
    assert pids["a"] == pids["b"] and len({pids["a"], pids["c"], pids["d"]}) == 3
    hosts = {n: runs(service, n)[0].host for n in "abcd"}
    assert Path(hosts["a"]).name == "pricing-shared-1" == job(service, "a")["run"]["host"]
    assert Path(hosts["d"]).name.startswith("supply-shared-")  # teams never share one
    for name in "abcd":
        pid = pids[name]
        assert os.getpgid(pid) == pid and procs.alive(pid, hosts[name])
        assert (Path(hosts[name]) / "runs" / runs(service, name)[0].run_id).exists()
        wait_for(lambda n=name: job(service, n)["metrics"]["batches"], what=f"{name} batches")
    spawns = [e for e in service.events(service.principal("bob"), "b") if e["action"] == "spawn"]
    assert spawns[0]["detail"]["host"] == hosts["b"]

    # the application of a and b ends once both are stopped; c's runs on
    service.stop(service.principal("bob"), "a")
    status_is(service, "a", "STOPPED")
    assert host_alive(hosts["a"]) and job(service, "b")["status"] == "RUNNING"
    service.stop(service.principal("bob"), "b")
    status_is(service, "b", "STOPPED")
    wait_for(lambda: not host_alive(hosts["a"]), what="the idle application to end")
    assert (Path(hosts["a"]) / "STOP").exists()
    assert job(service, "c")["run"]["pid"] == pids["c"] and host_alive(hosts["c"])

    # a job started again goes to an application with room (c's), not a new one
    service.start(service.principal("bob"), "a")
    assert status_is(service, "a", "RUNNING")["run"]["pid"] == pids["c"]


def test_a_failing_job_fails_alone_in_its_application(hosted):
    service = hosted(max_failures=2)
    submit(service, "good")
    before = status_is(service, "good", "RUNNING")
    submit(service, "bad", description="crash")
    failed = status_is(service, "bad", "FAILED")
    assert "planted failure" in failed["last_error"]
    assert {r.pid for r in runs(service, "bad")} == {before["run"]["pid"]}  # the same host
    now = job(service, "good")
    assert now["status"] == "RUNNING" and now["run"] == before["run"]
    assert now["metrics"]["batches"] > before["metrics"]["batches"]


def test_a_hosted_job_ignoring_stop_is_stopped_at_once_without_signals(hosted):
    service = hosted(stop_grace_s=0.5)
    submit(service, "deaf", description="deaf")
    submit(service, "other")
    pid = status_is(service, "deaf", "RUNNING")["run"]["pid"]
    assert status_is(service, "other", "RUNNING")["run"]["pid"] == pid
    service.stop(service.principal("bob"), "deaf")
    status_is(service, "deaf", "STOPPED")
    assert "stop-now" in actions(service, "deaf") and "sigterm" not in actions(service, "deaf")
    assert (Path(runs(service, "deaf")[0].run_dir) / "KILL").exists()
    assert job(service, "other")["run"]["pid"] == pid
    assert procs.alive(pid, runs(service, "other")[0].host)


def test_a_hung_job_takes_its_application_down_and_its_neighbour_restarts(hosted):
    service = hosted(heartbeat_timeout_s=1.5, max_failures=5)
    submit(service, "neighbour")
    first = status_is(service, "neighbour", "RUNNING")["run"]
    submit(service, "hung", description="hang")
    wait_for(lambda: "hung" in actions(service, "hung"), what="the hung job killed")
    wait_for(lambda: len(runs(service, "neighbour")) >= 2, what="the neighbour restarted")
    [ended, *_] = runs(service, "neighbour")
    assert ended.end_reason == "lost" and not procs.alive(first["pid"], ended.host)
    events = service.events(service.principal("bob"), "neighbour")
    [failure] = [e for e in events if e["action"] == "run-failed"]
    assert "shared Spark application" in failure["detail"]["error"]
    again = status_is(service, "neighbour", "RUNNING")["run"]
    assert again["pid"] != first["pid"] and again["host"] != first["host"]


def test_a_standby_supervisor_reattaches_hosted_runs_and_ends_idle_applications(
    hosted, make_service
):
    first = hosted()
    submit(first, "one")
    submit(first, "two")
    pid = status_is(first, "one", "RUNNING")["run"]["pid"]
    assert status_is(first, "two", "RUNNING")["run"]["pid"] == pid
    second = make_service(tick_s=0.1, heartbeat_s=0.2, policy=FAST, clusters=SHARED)
    assert not second.start_supervisor()
    first.stop_supervisor()
    wait_for(lambda: second.supervising, what="the standby to take over")
    wait_for(lambda: "reattach" in actions(second, "two"), what="re-attach events")
    for name in ("one", "two"):
        assert [r.pid for r in runs(second, name)] == [pid]
        second.stop(second.principal("bob"), name)
        status_is(second, name, "STOPPED")
    host = runs(second, "one")[0].host
    wait_for(lambda: not host_alive(host), what="the application it found to end when idle")
