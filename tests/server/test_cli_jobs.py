"""``workbench jobs ...`` as users run it (new processes) against a real ``workbench serve``."""

from __future__ import annotations

import json

import pytest
from cli_runner import workbench
from polling import wait_for
from servekit import TOKENS

from workbench.dev.ports import free_port

pytestmark = pytest.mark.unit


def as_user(served, user: str, *args):
    return workbench("jobs", *args, "--server", served.url, "--token", TOKENS[user], timeout=120)


def test_list_is_a_table_for_the_team_and_json_on_request(served, alice_job):
    done = as_user(served, "alice", "list")
    assert done.returncode == 0, done.stderr
    header, *rows = done.stdout.splitlines()
    assert header.split() == [
        "NAME", "TEAM", "STATUS", "VERSION", "IN/S", "PROCESSED/S", "BEHIND", "LAST", "BATCH"
    ]  # fmt: skip
    assert any(r.split()[:2] == ["alice-surge", "pricing"] for r in rows)
    done = as_user(served, "bob", "list", "--json")
    assert done.returncode == 0 and "alice-surge" not in [
        j["name"] for j in json.loads(done.stdout)
    ]
    done = as_user(served, "root", "list", "--team", "pricing", "--json")
    listed = json.loads(done.stdout)  # the session's service: other tests add pricing jobs
    assert "alice-surge" in [j["name"] for j in listed]
    assert {j["team"] for j in listed} == {"pricing"}


def test_show_as_text_and_json(served, alice_job):
    done = as_user(served, "alice", "show", "alice-surge")
    assert done.returncode == 0, done.stderr
    assert (
        "team:" in done.stdout
        and "pricing" in done.stdout
        and "offsets_behind_latest" in done.stdout
    )
    data = json.loads(as_user(served, "root", "show", str(alice_job["id"]), "--json").stdout)
    assert data["name"] == "alice-surge"


def test_another_team_gets_clear_errors(served, alice_job):
    done = as_user(served, "bob", "show", "alice-surge")
    assert done.returncode == 1
    assert done.stderr.startswith("error: No job 'alice-surge' that you can see")
    done = as_user(served, "bob", "stop", "alice-surge")  # as a read: no owner named
    assert done.returncode == 1 and done.stderr.startswith("error: No job 'alice-surge' that")
    assert "pricing" not in done.stderr


def test_edit_versions_rollback_events(served, alice_job, surge_yaml, tmp_path):
    spec = tmp_path / "edited.yaml"
    spec.write_text(surge_yaml.replace("trigger_interval: 2s", "trigger_interval: 4s"))
    done = as_user(served, "alice", "edit", "alice-surge", spec, "--note", "four seconds")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("edited job alice-surge")
    version = json.loads(as_user(served, "alice", "show", "alice-surge", "--json").stdout)[
        "version"
    ]
    done = as_user(served, "alice", "versions", "alice-surge")
    assert done.returncode == 0 and "four seconds" in done.stdout
    assert f"*{version}" in done.stdout.split()
    done = as_user(served, "alice", "rollback", "alice-surge", "--version", "1")
    assert done.returncode == 0 and "(a copy of version 1)" in done.stdout
    done = as_user(served, "alice", "events", "alice-surge")
    assert done.returncode == 0
    assert {"edit", "rollback"} <= {line.split()[3] for line in done.stdout.splitlines()[1:]}


def test_stop_start_restart_and_logs(served, alice_job):
    for action, said in (("stop", "stopping"), ("start", "starting"), ("restart", "restarting")):
        done = as_user(served, "alice", action, "alice-surge")
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith(f"{said} job alice-surge")
    done = as_user(served, "alice", "logs", "alice-surge")
    assert done.returncode == 0, done.stderr
    as_user(served, "alice", "stop", "alice-surge")

    def stopped():
        job = served.call("GET", "jobs/alice-surge", "alice").json()
        return job["status"] in ("STOPPED", "FAILED")

    wait_for(stopped, 60, "alice-surge to stop")
    done = as_user(served, "alice", "logs", "alice-surge", "--follow")  # ends: job stopped
    assert done.returncode == 0, done.stderr


def test_submit_a_spec_file(served, surge_yaml, tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text(surge_yaml)
    done = as_user(served, "bob", "submit", spec, "--team", "supply", "--name", "bob-surge")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("submitted job bob-surge") and "team supply" in done.stdout
    done = as_user(served, "bob", "stop", "bob-surge")
    assert done.returncode == 0, done.stderr


def test_token_and_server_from_the_environment(served, alice_job, monkeypatch):
    monkeypatch.setenv("WORKBENCH_SERVER", served.url)
    monkeypatch.setenv("WORKBENCH_TOKEN", TOKENS["alice"])
    done = workbench("jobs", "list", "--json")
    assert done.returncode == 0, done.stderr
    assert "alice-surge" in [j["name"] for j in json.loads(done.stdout)]


def test_missing_token_and_no_server_say_what_to_do(served):
    done = workbench("jobs", "list", "--server", served.url)
    assert done.returncode == 1 and "no valid token" in done.stderr
    done = workbench("jobs", "list", "--server", f"http://127.0.0.1:{free_port()}", "--token", "t")
    assert done.returncode == 1
    assert "no job service answers" in done.stderr and "workbench serve" in done.stderr


def test_the_versions_table_shows_the_parity_check_promote_recorded():
    from workbench.cli.jobs import _parity

    assert _parity({"status": "passed", "rows": 431, "replay_rows": 431}) == "passed (431 rows)"
    assert _parity({"status": "failed"}) == "failed"
    assert _parity(None) == "-"
