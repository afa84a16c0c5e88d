"""Putting away jobs that do not run, as users do it: ``workbench jobs archive|unarchive|
delete`` (new processes) and the REST routes, against a real ``workbench serve``.

Failed experiments once stayed in every list: there was no way to archive or delete a
job. An archived job is hidden from lists (``--all`` shows it); a deleted one is gone and
its name free; both refuse a job that runs; the job's events record who did it."""

from __future__ import annotations

import json

import pytest
from cli_runner import workbench
from polling import wait_for
from servekit import TOKENS
from sqlalchemy import create_engine, text

pytestmark = pytest.mark.unit


def as_user(served, user: str, *args):
    return workbench("jobs", *args, "--server", served.url, "--token", TOKENS[user], timeout=120)


def names(served, user: str, *args) -> list[str]:
    done = as_user(served, user, "list", "--json", *args)
    assert done.returncode == 0, done.stderr
    return [job["name"] for job in json.loads(done.stdout)]


def stopped(served, name: str) -> dict:
    """Submit ``name`` as alice and stop it: a failed experiment, no longer running."""
    body = {"name": name, "team": "pricing", "spec_yaml": served.surge_yaml, "note": "try"}
    answer = served.call("POST", "jobs", "alice", body)
    assert answer.status_code == 201, answer.text
    served.call("POST", f"jobs/{name}/stop", "alice")
    wait_for(
        lambda: served.call("GET", f"jobs/{name}", "alice").json()["status"] == "STOPPED",
        120, f"{name} to stop",
    )  # fmt: skip
    return answer.json()


@pytest.fixture
def service(served, surge_yaml):
    served.surge_yaml = surge_yaml
    return served


def test_archive_hides_a_job_and_all_shows_it_through_the_cli_and_rest(service):
    job = stopped(service, "exp-archived")
    done = as_user(service, "alice", "archive", "exp-archived")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("archived job exp-archived (id ")
    assert "exp-archived" not in names(service, "alice")
    assert "exp-archived" in names(service, "alice", "--all")
    rest = service.call("GET", "jobs", "alice").json()["jobs"]
    assert "exp-archived" not in [j["name"] for j in rest]
    every = service.call("GET", "jobs?all=1", "alice").json()["jobs"]
    assert [j["desired"] for j in every if j["id"] == job["id"]] == ["archived"]
    # still there, whole: shown by name, its versions kept
    assert service.call("GET", "jobs/exp-archived", "alice").json()["version"] == 1

    back = service.call("POST", "jobs/exp-archived/unarchive", "alice")
    assert back.status_code == 200 and back.json()["desired"] == "stopped"
    assert "exp-archived" in names(service, "alice")
    again = service.call("POST", "jobs/exp-archived/unarchive", "alice")
    assert again.status_code == 409 and "is not archived" in again.text
    # another team may not
    denied = as_user(service, "bob", "archive", "exp-archived")
    assert denied.returncode == 1 and denied.stderr.startswith("error:"), denied.stderr
    events = service.call("GET", "jobs/exp-archived/events", "alice").json()["events"]
    assert [(e["actor"], e["action"]) for e in events][-2:] == [
        ("alice", "archive"), ("alice", "unarchive"),
    ]  # fmt: skip


def test_delete_refuses_a_running_job_then_frees_its_name(service):
    body = {"name": "exp-running", "team": "pricing", "spec_yaml": service.surge_yaml}
    assert service.call("POST", "jobs", "alice", body).status_code == 201
    refused = as_user(service, "alice", "delete", "exp-running")
    assert refused.returncode == 1
    assert refused.stderr.strip().splitlines() == [
        "error: Job 'exp-running' is running: stop it first (workbench jobs stop exp-running), "
        "then delete it."
    ]
    assert service.call("DELETE", "jobs/exp-running", "alice").status_code == 409
    service.call("POST", "jobs/exp-running/stop", "alice")

    job = stopped(service, "exp-deleted")
    placed = service.call("GET", f"clusters/{job['cluster']}", "alice").json()["jobs"]
    done = as_user(service, "alice", "delete", "exp-deleted")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"deleted job exp-deleted (id {job['id']}, team pricing)"
    assert "exp-deleted" not in names(service, "alice", "--all")
    for ref in ("exp-deleted", str(job["id"])):
        assert service.call("GET", f"jobs/{ref}", "alice").status_code == 404
    after = service.call("GET", f"clusters/{job['cluster']}", "alice").json()["jobs"]
    assert after == placed - 1  # no longer counted on its cluster
    gone = service.call("DELETE", "jobs/exp-deleted", "alice")
    assert gone.status_code == 404
    # the audit trail keeps who deleted what
    engine = create_engine(f"sqlite:///{service.state / 'workbench.db'}")
    with engine.connect() as db:
        rows = db.execute(
            text("SELECT actor, action, detail_json FROM events WHERE job_id = :id"),
            {"id": job["id"]},
        ).all()
    engine.dispose()
    assert ("alice", "delete") in [(r.actor, r.action) for r in rows]
    assert any('"exp-deleted"' in r.detail_json for r in rows if r.action == "delete")
    # the name is free for a new job
    body = {"name": "exp-deleted", "team": "pricing", "spec_yaml": service.surge_yaml}
    again = service.call("POST", "jobs", "alice", body)
    assert again.status_code == 201 and again.json()["id"] != job["id"], again.text
    service.call("POST", "jobs/exp-deleted/stop", "alice")
