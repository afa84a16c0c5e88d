"""The Spark cluster routes and commands against a real ``workbench serve`` (the stand-in
job program runs the jobs): ``GET clusters``, ``GET clusters/NAME``, ``POST jobs/JOB/move``,
``workbench clusters list|show`` and ``workbench jobs move``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml
from cli_runner import workbench
from servekit import TOKENS, start_serve, write_state

JOBS = Path(__file__).resolve().parents[1] / "jobs"
sys.path.insert(0, str(JOBS))  # jobkit

from jobkit import FAKE_RUNNER, spec_yaml  # noqa: E402

CLUSTERS = {
    "blue": {"master": "local[2]", "description": "the default"},
    "green": {"master": "local[1]", "teams": ["pricing"], "standby": "blue",
              "resources": {"cores": 2, "shuffle_partitions": 6}},
    "supply-only": {"master": "yarn", "teams": ["supply"]},
}  # fmt: skip


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    state = write_state(tmp_path_factory.mktemp("clusters-api"))
    config = yaml.safe_load((state / "service.yaml").read_text())
    config |= {"clusters": CLUSTERS, "runner_command": [sys.executable, str(FAKE_RUNNER)]}
    (state / "service.yaml").write_text(yaml.safe_dump(config))
    server = start_serve(state)
    yield server
    assert server.stop() == 0


def cli(served, user: str, *args):
    return workbench(*args, "--server", served.url, "--token", TOKENS[user], timeout=120)


def test_clusters_a_team_may_use_over_http_and_the_cli(served):
    names = [c["name"] for c in served.call("GET", "clusters", "alice").json()["clusters"]]
    assert names == ["blue", "green"]
    names = [c["name"] for c in served.call("GET", "clusters", "root").json()["clusters"]]
    assert names == list(CLUSTERS)
    green = served.call("GET", "clusters/green", "alice").json()
    assert green["resources"] == {"cores": 2, "executor_memory": None, "shuffle_partitions": 6}
    assert green["standby"] == "blue" and green["answering"] is None
    hidden = served.call("GET", "clusters/green", "bob")
    assert (
        hidden.status_code == 404
        and "Known: blue, supply-only." in hidden.json()["error"]["message"]
    )

    done = cli(served, "alice", "clusters", "list")
    assert done.returncode == 0, done.stderr
    header, *rows = done.stdout.splitlines()
    assert header.split() == ["NAME", "MASTER", "TEAMS", "STANDBY", "ANSWERING", "JOBS"]
    assert [r.split()[:4] for r in rows] == [
        ["blue", "local[2]", "all", "-"], ["green", "local[1]", "pricing", "blue"],
    ]  # fmt: skip
    done = cli(served, "alice", "clusters", "show", "green")
    assert done.returncode == 0, done.stderr
    assert "standby:" in done.stdout and "cores=2, shuffle_partitions=6" in done.stdout
    done = cli(served, "bob", "clusters", "show", "green")
    assert done.returncode == 1 and "No cluster 'green'" in done.stderr
    assert "Known: blue, supply-only." in done.stderr  # not green, which only pricing may use
    done = cli(served, "alice", "clusters", "show", "gren")
    assert done.returncode == 1 and "Did you mean green?" in done.stderr


def test_move_over_http_and_the_cli(served):
    body = {"name": "mover", "team": "pricing", "spec_yaml": spec_yaml(name="mover")}
    assert served.call("POST", "jobs", "alice", body).status_code == 201
    moved = served.call("POST", "jobs/mover/move", "alice", {"cluster": "green"})
    assert moved.status_code == 200 and moved.json()["cluster"] == "green", moved.text
    refused = served.call("POST", "jobs/mover/move", "alice", {"cluster": "supply-only"})
    assert refused.status_code == 400 and "may not run jobs" in refused.text
    assert served.call("POST", "jobs/mover/move", "alice", {}).status_code == 400
    assert served.call("POST", "jobs/mover/move", "bob", {"cluster": "blue"}).status_code == 404

    done = cli(served, "alice", "jobs", "move", "mover", "--cluster", "blue")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("moving job mover") and "to cluster blue" in done.stdout
    events = served.call("GET", "jobs/mover/events", "alice").json()["events"]
    moves = [(e["detail"]["from"], e["detail"]["to"]) for e in events if e["action"] == "moved"]
    assert moves == [("blue", "green"), ("green", "blue")]
