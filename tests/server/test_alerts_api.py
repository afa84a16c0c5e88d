"""Alerts and silences over HTTP and through ``workbench alerts ...``, against a real
``workbench serve`` running the stand-in job program; a team-wide notifier of
``service.yaml`` gets the notifications; another team sees nothing and may do nothing."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml
from cli_runner import workbench
from servekit import TOKENS, start_serve, write_state

pytestmark = pytest.mark.e2e

FAKE_RUNNER = Path(__file__).resolve().parents[1] / "jobs" / "fixtures" / "fake_runner.py"
SPEC = {
    "name": "hot-api",
    "description": "fire:2-1000",
    "streams": [{"table": "booking", "message": "esb.booking.BookingLogMessage",
                 "bootstrap_servers": "127.0.0.1:1", "topics": ["bookings"]}],
    "sql": "SELECT * FROM booking",
    "alerts": [{"name": "hot", "when": "amount > 300", "group_by": ["service_area_id"],
                "time": "event_timestamp", "group_wait": "0s", "notify": ["oncall"]}],
}  # fmt: skip


@pytest.fixture(scope="module")
def alerting(tmp_path_factory, http_receiver):
    """(server, hook): a service whose team pricing has the notifier ``oncall``, and a job
    of alice's with a rule firing from its second batch."""
    hook = http_receiver.endpoint("api-oncall")
    state = write_state(tmp_path_factory.mktemp("alerts-service"))
    config = yaml.safe_load((state / "service.yaml").read_text())
    config |= {
        "runner_command": [sys.executable, str(FAKE_RUNNER)],
        "heartbeat_s": 0.25,
        "notifiers": {"pricing": {"oncall": {"type": "webhook", "url": hook.url}}},
        "alerting": {"retry_s": 0.5, "retry_max_s": 1},
    }
    (state / "service.yaml").write_text(yaml.safe_dump(config))
    server = start_serve(state)
    body = {"name": "hot-api", "team": "pricing", "spec_yaml": yaml.safe_dump(SPEC)}
    assert server.call("POST", "jobs", "alice", body).status_code == 201
    yield server, hook
    server.stop()


def _cli(server, user: str, *args):
    return workbench("alerts", *args, "--server", server.url, "--token", TOKENS[user], timeout=120)


def test_the_team_notifier_is_notified_and_the_team_sees_the_alert(alerting):
    server, hook = alerting
    [firing] = hook.wait_for(1, timeout=60)
    assert firing.json["receiver"] == "oncall" and firing.json["status"] == "firing"
    answer = server.call("GET", "alerts?firing=1", "alice")
    [alert] = answer.json()["alerts"]
    assert (alert["job"], alert["rule"], alert["labels"]) == (
        "hot-api",
        "hot",
        {"service_area_id": "7"},
    )
    assert server.call("GET", "jobs/hot-api", "alice").json()["alerts_firing"] == 1
    history = server.call("GET", "jobs/hot-api/alerts", "alice").json()["alerts"]
    assert [e["status"] for e in history] == ["firing"]


def test_another_team_sees_nothing_and_may_do_nothing(alerting):
    server, hook = alerting
    hook.wait_for(1, timeout=60)
    assert server.call("GET", "alerts", "bob").json()["alerts"] == []
    assert server.call("GET", "alerts?team=pricing", "bob").json()["alerts"] == []
    assert server.call("GET", "jobs/hot-api/alerts", "bob").status_code == 404
    body = {"rule": "hot", "for": "1h", "comment": "not mine", "team": "pricing"}
    refused = server.call("POST", "silences", "bob", body)
    assert refused.status_code == 403 and "may not silence" in refused.json()["error"]["message"]
    made = server.call("POST", "silences", "alice", body | {"comment": "mine"}).json()
    read = server.call("GET", f"silences/{made['id']}", "bob")
    ending = server.call("DELETE", f"silences/{made['id']}", "bob")  # as a read: 404
    assert (ending.status_code, ending.text) == (404, read.text) and read.status_code == 404
    assert server.call("GET", f"silences/{made['id']}", "alice").json()["comment"] == "mine"
    assert server.call("GET", "silences", "bob").json()["silences"] == []
    ended = server.call("DELETE", f"silences/{made['id']}", "alice")
    assert ended.status_code == 200 and ended.json()["active"] is False
    assert server.call("DELETE", "silences/999999", "alice").status_code == 404
    bad = server.call("POST", "silences", "alice", {"rule": "hot", "for": "1h"})
    assert bad.status_code == 400 and "comment" in bad.json()["error"]["message"]
    assert server.call("GET", "alerts", None).status_code == 401


def test_the_cli_lists_silences_and_shows_history(alerting):
    server, hook = alerting
    hook.wait_for(1, timeout=60)
    done = _cli(server, "alice", "list", "--firing")
    assert done.returncode == 0, done.stderr
    header, row = done.stdout.splitlines()[:2]
    assert header.split()[:4] == ["JOB", "RULE", "LABELS", "STATUS"]
    assert row.split()[:4] == ["hot-api", "hot", "service_area_id=7", "firing"]
    listed = json.loads(_cli(server, "alice", "list", "--json").stdout)
    assert [a["rule"] for a in listed] == ["hot"]
    assert json.loads(_cli(server, "bob", "list", "--json").stdout) == []
    shown = workbench("jobs", "show", "hot-api", "--server", server.url, "--token", "alice-token")
    assert "alerts firing:           1" in shown.stdout, shown.stdout

    done = _cli(server, "alice", "silence", "hot", "--labels", "service_area_id=7", "--for",
                "2h", "--comment", "known: roadworks")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("silence ") and "service_area_id=7" in done.stdout
    number = done.stdout.split()[1].rstrip(":")
    shown = json.loads(_cli(server, "alice", "list", "--json").stdout)[0]
    assert shown["silenced_by"] == int(number)
    done = _cli(server, "alice", "silences")
    assert "known: roadworks" in done.stdout and "alice" in done.stdout
    done = _cli(server, "bob", "unsilence", number)
    assert done.returncode == 1 and f"No silence {number} that you can see" in done.stderr
    done = _cli(server, "alice", "unsilence", number)
    assert done.returncode == 0 and done.stdout.endswith("ended\n")

    done = _cli(server, "alice", "history", "hot-api")
    assert done.returncode == 0 and "firing" in done.stdout and "service_area_id=7" in done.stdout
    done = _cli(server, "bob", "history", "hot-api")
    assert done.returncode == 1 and "No job 'hot-api' that you can see" in done.stderr
    done = _cli(server, "alice", "silence", "hot", "--labels", "cell", "--for", "1h",
                "--comment", "x")  # fmt: skip
    assert done.returncode == 1 and "label=value" in done.stderr
