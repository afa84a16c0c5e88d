"""``workbench serve`` as users meet it: a real server process, tokens, teams, JSON errors."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
import requests
from servekit import start_serve, write_state

pytestmark = pytest.mark.e2e


def _error(answer, status: int) -> dict:
    assert answer.status_code == status, answer.text
    assert answer.headers["Content-Type"].startswith("application/json")
    error = answer.json()["error"]
    assert error["status"] == status
    return error


def test_service_file_and_owner_token(served):
    record = json.loads((served.state / "service.json").read_text())
    assert record["url"] == served.url and record["pid"] == served.process.pid
    token_file = record["token_file"]
    assert stat.S_IMODE(os.stat(token_file).st_mode) == 0o600
    token = Path(token_file).read_text().strip()
    me = requests.get(served.api("me"), headers={"Authorization": f"Bearer {token}"}, timeout=10)
    assert me.status_code == 200 and me.json()["admin"] is True


def test_me_names_the_token_user_and_teams(served):
    assert served.call("GET", "me", "alice").json() == {
        "user": "alice",
        "teams": ["pricing"],
        "admin": False,
    }
    assert served.call("GET", "me", "root").json()["admin"] is True


def test_no_token_or_unknown_token_is_401(served):
    error = _error(served.call("GET", "jobs", None), 401)
    assert "Authorization: token" in error["message"]
    answer = requests.get(served.api("jobs"), headers={"Authorization": "token nope"}, timeout=10)
    _error(answer, 401)


def test_list_shows_the_job_to_its_team_and_admins_only(served, alice_job):
    assert alice_job["name"] == "alice-surge" and alice_job["version"] == 1
    for key in ("id", "team", "status", "cluster", "created_by", "created_at", "metrics"):
        assert key in alice_job
    assert alice_job["created_by"] == "alice"

    def names(user):
        return [j["name"] for j in served.call("GET", "jobs", user).json()["jobs"]]

    assert "alice-surge" in names("alice")
    assert "alice-surge" in names("root")
    assert "alice-surge" not in names("bob")
    supply = served.call("GET", "jobs?team=supply", "root").json()["jobs"]
    assert {j["team"] for j in supply} <= {"supply"}


def test_other_team_gets_the_same_404_on_reads_and_actions(served, alice_job):
    ref = alice_job["name"]
    read = served.call("GET", f"jobs/{ref}", "bob")
    error = _error(read, 404)
    assert error["type"] == "JobNotFoundError" and "workbench jobs list" in error["message"]
    for path in ("versions", "logs", "events", "progress"):
        _error(served.call("GET", f"jobs/{ref}/{path}", "bob"), 404)
    acts = [("POST", f"jobs/{ref}/{action}", None) for action in ("stop", "start", "restart")]
    acts += [("PUT", f"jobs/{ref}", {"spec_yaml": "name: x"})]
    acts += [("POST", f"jobs/{ref}/rollback", {"version": 1})]
    for method, path, body in acts:  # the owner team is named nowhere: the same answer
        answer = served.call(method, path, "bob", body)
        assert (answer.status_code, answer.text) == (404, read.text), (method, path)
    assert "pricing" not in read.text
    assert served.call("GET", f"jobs/{alice_job['id']}", "alice").json()["name"] == ref


def test_submit_for_a_team_one_is_not_in_is_403_and_an_unknown_team_404(served, surge_yaml):
    body = {"name": "bob-in-pricing", "team": "pricing", "spec_yaml": surge_yaml}
    error = _error(served.call("POST", "jobs", "bob", body), 403)
    assert "supply" in error["message"]
    body = {"name": "bob-job", "team": "pricng", "spec_yaml": surge_yaml}
    error = _error(served.call("POST", "jobs", "bob", body), 404)
    assert error["message"] == "no team 'pricng'; your teams: supply."


def test_a_taken_name_does_not_name_its_owner(served, alice_job, surge_yaml):
    body = {"name": alice_job["name"], "team": "supply", "spec_yaml": surge_yaml}
    error = _error(served.call("POST", "jobs", "bob", body), 409)
    assert "taken by a job of another team" in error["message"]
    assert "pricing" not in error["message"]  # only the name bob gave


def test_bad_requests_are_400_saying_what_to_send(served, alice_job):
    error = _error(served.call("POST", "jobs", "alice", {"name": "x"}), 400)
    assert "team" in error["message"] and "spec_yaml" in error["message"]
    error = _error(served.call("POST", "jobs", "alice", {"nme": "x"}), 400)
    assert "nme" in error["message"]
    body = {"name": "broken", "team": "pricing", "spec_yaml": "name: broken\nsql: 3\n"}
    error = _error(served.call("POST", "jobs", "alice", body), 400)
    assert error["type"] in ("SpecError", "WorkbenchError", "JobServiceError")
    ref = alice_job["name"]
    _error(served.call("POST", f"jobs/{ref}/rollback", "alice", {"version": "one"}), 400)
    _error(served.call("GET", f"jobs/{ref}/logs?offset=x", "alice"), 400)
    error = _error(served.call("GET", "nowhere", "alice"), 404)
    assert "jobs/JOB" in error["message"]
    error = _error(served.call("PUT", "jobs", "alice", {}), 405)  # (DELETE jobs/JOB deletes)


def test_versions_edit_rollback_events_logs_progress(served, alice_job, surge_yaml):
    ref = alice_job["name"]
    before = served.call("GET", f"jobs/{ref}", "alice").json()["version"]
    edited = surge_yaml.replace("trigger_interval: 2s", "trigger_interval: 3s")
    assert edited != surge_yaml
    answer = served.call("PUT", f"jobs/{ref}", "alice", {"spec_yaml": edited, "note": "slower"})
    assert answer.status_code == 200, answer.text
    assert answer.json()["version"] == before + 1
    versions = served.call("GET", f"jobs/{ref}/versions", "alice").json()["versions"]
    assert [v["number"] for v in versions] == list(range(1, before + 2))
    assert [v["current"] for v in versions] == [False] * before + [True]
    assert versions[-1]["note"] == "slower"
    back = served.call("POST", f"jobs/{ref}/rollback", "alice", {"version": 1}).json()
    assert back["version"] == before + 2
    actions = [
        e["action"] for e in served.call("GET", f"jobs/{ref}/events", "root").json()["events"]
    ]
    assert {"submit", "edit", "rollback"} <= set(actions)
    logs = served.call("GET", f"jobs/{ref}/logs?offset=0", "alice").json()
    assert set(logs) == {"run", "offset", "next_offset", "text", "running"}
    assert served.call("GET", f"jobs/{ref}/progress?last=5", "alice").json()["progress"] == []
    error = _error(served.call("GET", f"jobs/{ref}/versions/1/notebook", "alice"), 404)
    assert "notebook" in error["message"]


def test_stop_and_start_are_recorded(served, alice_job):
    ref = alice_job["name"]
    stopped = served.call("POST", f"jobs/{ref}/stop", "alice").json()
    assert stopped["desired"] == "stopped"
    started = served.call("POST", f"jobs/{ref}/start", "root").json()
    assert started["desired"] == "running"
    events = served.call("GET", f"jobs/{ref}/events", "alice").json()["events"]
    assert [(e["actor"], e["action"]) for e in events if e["action"] in ("stop", "start")][-2:] == [
        ("alice", "stop"),
        ("root", "start"),
    ]


def test_sigterm_stops_the_server_cleanly(tmp_path):
    server = start_serve(write_state(tmp_path / "state"))
    assert server.call("GET", "me", "alice").status_code == 200
    assert server.stop() == 0
    assert not (tmp_path / "state" / "service.json").exists()


def test_a_taken_port_is_one_clear_line(served, tmp_path):
    from cli_runner import workbench

    port = served.url.rstrip("/").rsplit(":", 1)[1]
    done = workbench("serve", "--port", port, "--state", tmp_path / "other", timeout=60)
    assert done.returncode == 1
    assert (
        done.stderr.strip().splitlines()[-1].startswith(f"error: cannot listen on 127.0.0.1:{port}")
    )
    assert "--port 0" in done.stderr and "Traceback" not in done.stderr


def test_a_second_server_on_the_same_state_stands_by(tmp_path):
    state = write_state(tmp_path / "state")
    first = start_serve(state)
    second = start_serve(state)
    try:
        for server in (first, second):
            assert server.call("GET", "me", "bob").json()["user"] == "bob"
    finally:
        assert second.stop() == 0
        assert first.stop() == 0
    assert "standing by" in (state / "test-serve.log").read_text()
