"""Rescheduling with real processes and sockets: a "master" is a listening TCP socket on
127.0.0.1; closing it makes the cluster stop answering, and the supervisor moves the job
(the stand-in job program, fixtures/fake_runner.py) to the standby."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

import pytest
from jobkit import running_run, spec_yaml
from polling import wait_for

from workbench.jobs.reschedule import CHECK_S, MasterProbes, answers, endpoints

pytestmark = pytest.mark.unit

FAST = {"backoff_s": 0.2, "backoff_max_s": 1.0, "stop_grace_s": 5, "kill_grace_s": 5}


def listening() -> socket.socket:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    return sock


def master(sock: socket.socket) -> str:
    return f"spark://127.0.0.1:{sock.getsockname()[1]}"


@pytest.mark.parametrize(
    ("url", "pairs"),
    [
        ("spark://10.0.0.5:7077", [("10.0.0.5", 7077)]),
        ("spark://m1:7077,m2:7078", [("m1", 7077), ("m2", 7078)]),
        ("k8s://https://k8s.example.com:6443", [("k8s.example.com", 6443)]),
        ("k8s://https://k8s.example.com", [("k8s.example.com", 443)]),
        ("local[2]", []),
        ("yarn", []),
    ],
)
def test_which_masters_are_probed_where(url, pairs):
    assert endpoints(url) == pairs


def test_a_master_answers_while_its_port_accepts_connections():
    sock = listening()
    url = master(sock)
    assert answers(url)
    assert answers(f"spark://127.0.0.1:1,{url.removeprefix('spark://')}")  # one of two
    sock.close()
    assert not answers(url)
    assert answers("local[2]")  # not probed: taken as answering


def test_views_read_the_last_probe_and_probe_stale_masters_at_once():
    calls: list[str] = []

    def slow(url: str) -> bool:  # an unreachable master costs its whole timeout
        calls.append(url)
        time.sleep(1.0)
        return False

    probes = MasterProbes(ttl=60, probe=slow)
    masters = [f"spark://127.0.0.1:{port}" for port in (1, 2, 3, 4)] + ["local[2]"]
    began = time.monotonic()
    first = probes.answering(masters)
    assert time.monotonic() - began < 3.0  # four timeouts side by side (1 s), not in a row (4 s)
    assert first == {**dict.fromkeys(masters[:4], False), "local[2]": None}
    probes.record(masters[0], True)  # the supervisor probed it meanwhile
    assert probes.answering(masters[:2]) == {masters[0]: True, masters[1]: False}
    assert sorted(calls) == sorted(masters[:4])  # nothing probed twice within the ttl


@pytest.fixture
def two_clusters():
    a, b = listening(), listening()
    yield a, b
    a.close()
    b.close()


def service_on(make_service, a, b, **cluster_b):
    clusters = {
        "a": {"master": master(a), "standby": "b", "unreachable_after_s": 0.5},
        "b": {"master": master(b), **cluster_b},
    }
    service = make_service(tick_s=0.1, heartbeat_s=0.2, policy=FAST, clusters=clusters)
    assert service.start_supervisor()
    return service


def run_json(service, job: dict) -> dict:
    run = Path(service.config.state_dir) / "runs" / job["run"]["id"] / "run.json"
    return json.loads(run.read_text())


def test_a_job_leaves_a_cluster_that_stops_answering_for_its_standby(make_service, two_clusters):
    a, b = two_clusters
    service = service_on(make_service, a, b)
    bob = service.principal("bob")
    service.submit(bob, name="surge", team="pricing", spec_yaml=spec_yaml(), cluster="a")
    first = running_run(service, bob, "surge")
    assert run_json(service, first)["cluster"] == "a"

    a.close()  # the master of a stops answering
    moved = running_run(service, bob, "surge", other_than=first, cluster="b")
    assert run_json(service, moved)["cluster"] == "b" and moved["failures"] == 0
    events = service.events(bob, "surge", last=100)
    [move] = [e for e in events if e["action"] == "moved"]
    assert move["actor"] == "supervisor" and (move["detail"]["from"], move["detail"]["to"]) == (
        "a", "b",
    )  # fmt: skip
    assert "has not answered" in move["detail"]["why"]
    assert "run-stopped" in [e["action"] for e in events]  # killed as asked, not a failure


def test_no_move_to_a_standby_that_does_not_answer_either(make_service, two_clusters):
    a, b = two_clusters
    service = service_on(make_service, a, b)
    bob = service.principal("bob")
    service.submit(bob, name="surge", team="pricing", spec_yaml=spec_yaml(), cluster="a")
    wait_for(lambda: service.get_job(bob, "surge")["status"] == "RUNNING")
    a.close()
    b.close()  # both down: the job stays where it is
    rescheduler = service._supervisor.rescheduler
    wait_for(lambda: not rescheduler.up("a") and not rescheduler.up("b"), 10, "both down")
    time.sleep(0.5 + 2 * CHECK_S)  # past a's unreachable_after_s: it would have moved by now
    assert rescheduler.down() == {}
    assert service.get_job(bob, "surge")["cluster"] == "a"
    assert "moved" not in [e["action"] for e in service.events(bob, "surge", last=100)]


def test_no_move_to_a_standby_the_team_may_not_use(make_service, two_clusters):
    a, b = two_clusters
    service = service_on(make_service, a, b, teams=["supply"])
    bob = service.principal("bob")
    service.submit(bob, name="surge", team="pricing", spec_yaml=spec_yaml(), cluster="a")
    wait_for(lambda: service.get_job(bob, "surge")["status"] == "RUNNING")
    a.close()
    rescheduler = service._supervisor.rescheduler
    wait_for(lambda: rescheduler.down() == {"a": "b"}, 10, "a down, b answering")
    time.sleep(2 * CHECK_S)  # ticks that would have moved it
    job = service.get_job(bob, "surge")
    assert job["cluster"] == "a" and job["status"] == "RUNNING"
