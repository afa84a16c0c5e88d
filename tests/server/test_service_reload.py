"""service.yaml changes without a restart, as an operator makes them: a running
``workbench serve`` gets SIGHUP (or ``workbench service reload``, or ``POST
service/reload``) and applies its clusters, teams and tokens; a file that does not load
keeps the old config and says so in one line.

Before, a new team or cluster in service.yaml needed a restart of the service."""

from __future__ import annotations

import signal

import pytest
import yaml
from cli_runner import workbench
from polling import wait_for
from servekit import TEAMS, TOKENS, start_serve, write_state

pytestmark = pytest.mark.e2e


@pytest.fixture
def serve(tmp_path):
    server = start_serve(write_state(tmp_path / "state"))
    yield server
    assert server.stop() == 0


def edit(state, **changes) -> None:
    path = state / "service.yaml"
    config = yaml.safe_load(path.read_text()) | changes
    path.write_text(yaml.safe_dump(config))


def me(serve, token: str):
    return serve_get(serve, "me", token)


def serve_get(serve, path: str, token: str):
    import requests

    headers = {"Authorization": f"token {token}"}
    return requests.get(serve.api(path), headers=headers, timeout=30)


def test_sighup_adds_a_team_a_user_and_a_cluster_without_a_restart(serve):
    state = serve.state
    assert me(serve, "dave-token").status_code == 401
    teams = {**TEAMS, "teams": {**TEAMS["teams"], "ops": ["dave"]}}
    (state / "teams.yaml").write_text(yaml.safe_dump(teams))
    tokens = {token: user for user, token in TOKENS.items()} | {"dave-token": "dave"}
    clusters = {"local": {"master": "local[2]"}, "ops-spark": {"master": "local[1]",
                                                              "teams": ["ops"]}}  # fmt: skip
    edit(state, tokens=tokens, clusters=clusters)
    pid = serve.process.pid
    serve.process.send_signal(signal.SIGHUP)

    answer = wait_for(lambda: (r := me(serve, "dave-token")).status_code == 200 and r, 30,
                      "dave's token to be known")  # fmt: skip
    assert answer.json() == {"user": "dave", "teams": ["ops"], "admin": False}
    found = serve_get(serve, "clusters", "dave-token").json()["clusters"]
    assert [c["name"] for c in found if c["name"] == "ops-spark"] == ["ops-spark"]
    assert serve.process.pid == pid and serve.process.poll() is None  # no restart
    log = (state / "test-serve.log").read_text()
    assert "service.yaml reloaded: clusters, tokens, teams; clusters local, ops-spark" in log

    # a file that does not load: one line, and the old config stays
    (state / "service.yaml").write_text("tokens: {dave-token: dave\nclusters: [")
    serve.process.send_signal(signal.SIGHUP)
    said = "service.yaml not reloaded, the old config stays: "
    line = wait_for(
        lambda: next((x for x in (state / "test-serve.log").read_text().splitlines()
                      if x.startswith(said)), None), 30, "the reload's error line",
    )  # fmt: skip
    assert (
        "service.yaml" in line[len(said) :]
        and "Traceback" not in (state / "test-serve.log").read_text()
    )
    assert me(serve, "dave-token").status_code == 200
    edit_back = {"teams_file": "teams.yaml", "tokens": tokens}
    (state / "service.yaml").write_text(yaml.safe_dump(edit_back))


def test_the_reload_command_and_route(serve):
    state = serve.state
    teams = {**TEAMS, "teams": {**TEAMS["teams"], "data": ["alice"]}}
    (state / "teams.yaml").write_text(yaml.safe_dump(teams))
    url, root = ("--server", serve.url), ("--token", TOKENS["root"])
    denied = workbench("service", "reload", *url, "--token", TOKENS["alice"])
    assert denied.returncode == 1
    assert denied.stderr.strip() == (
        "error: User 'alice' may not reload the service's config: only admins (the teams "
        "file's 'admins', or the owner's token) may."
    )
    assert me(serve, TOKENS["alice"]).json()["teams"] == ["pricing"]
    done = workbench("service", "reload", *url, *root)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (
        "service.yaml reloaded: teams; clusters local; teams data, pricing, supply"
    )
    assert me(serve, TOKENS["alice"]).json()["teams"] == ["data", "pricing"]

    edit(state, policy={"max_failures": 9}, clusters={"local": {"master": "local[2]"},
                                                       "big": {"master": "local[4]"}})  # fmt: skip
    answer = serve.call("POST", "service/reload", "root")
    assert answer.status_code == 200, answer.text
    assert answer.json()["reloaded"] == ["clusters"]
    assert answer.json()["restart_needed"] == ["policy"]

    edit(state, clusters={"local": {"master": "local[2]", "nope": 1}})
    bad = workbench("service", "reload", *url, *root)
    assert bad.returncode == 1 and len(bad.stderr.strip().splitlines()) == 1
    assert "clusters.local.nope" in bad.stderr, bad.stderr
    found = serve.call("GET", "clusters", "root").json()["clusters"]
    assert sorted(c["name"] for c in found) == ["big", "local"]  # the old config stays
