"""Fixtures of the HTTP tests: one ``workbench serve`` for the session (teams pricing:
alice, supply: bob, admins: root) and a job alice submitted on the session broker."""

from __future__ import annotations

import pytest
from servekit import start_serve, write_state
from streaming import new_topic, surge_spec


@pytest.fixture(scope="session")
def served(tmp_path_factory):
    server = start_serve(write_state(tmp_path_factory.mktemp("service")))
    yield server
    assert server.stop() == 0


@pytest.fixture(scope="session")
def surge_yaml(kafka_broker, tmp_path_factory) -> str:
    """A surge spec reading a fresh topic of the session broker, rows to the log sink."""
    topic = new_topic(kafka_broker.bootstrap, "server-surge")
    tmp = tmp_path_factory.mktemp("surge")
    return surge_spec(kafka_broker.bootstrap, topic, tmp, [{"type": "log"}]).to_yaml()


@pytest.fixture(scope="session")
def alice_job(served, surge_yaml) -> dict:
    """The job alice submitted for team pricing."""
    body = {"name": "alice-surge", "team": "pricing", "spec_yaml": surge_yaml, "note": "v1"}
    answer = served.call("POST", "jobs", "alice", body)
    assert answer.status_code == 201, answer.text
    return answer.json()
