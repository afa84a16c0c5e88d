"""Scenarios run for real on the proxied broker: a control run and a latency case under
load, probes sampled, faults reverted (also on SIGTERM and by the next run's journal)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
import uuid

from workbench.chaos.env import ChaosEnv
from workbench.chaos.faults import FAULTS, Fault
from workbench.chaos.journal import RevertJournal
from workbench.chaos.runner import run_scenario
from workbench.chaos.scenario import Scenario
from workbench.kafka.admin import broker_ids, list_topics


def scenario(topic: str, fault: str, params: dict, downtime: str = "2s") -> Scenario:
    load = {"topic": topic, "message": "bookings", "rate": 100, "duration": "5s", "seed": 3}
    case = {"name": fault, "type": "network", "fault": fault, "params": params,
            "start_after": "1s", "downtime": downtime, "load": load}  # fmt: skip
    return Scenario(name="t", hypothesis="h", recovery_timeout="30s", cases=[case])


def test_a_latency_case_after_a_control_run(chaos_broker, tmp_path):
    broker, proxy = chaos_broker
    topic = f"chaos-{uuid.uuid4().hex[:8]}"
    env = ChaosEnv(proxy.address, [broker], proxy=proxy)  # as clients connect
    journal = RevertJournal(tmp_path / "journal.jsonl")
    # 4 s: a sample's slowed offset requests may keep the probe busy past a shorter fault,
    # so that no metadata round trip falls inside it
    result = run_scenario(scenario(topic, "latency", {"ms": 300}, "4s"), env, journal)
    control, case = result["runs"]
    assert control["control"] and control["fault"] is None
    assert [e["event"] for e in case["timeline"]] == [
        "load started", "fault applied", "fault reverting", "fault reverted", "load finished",
        "recovered",
    ]  # fmt: skip
    for run in (control, case):
        assert run["load"]["sent"] == 500 and run["recovered"]
        assert run["samples"][-1]["produced"] >= 500
    # a metadata round trip through the slow proxy, then through the healed one
    applied, reverting = (e["t"] for e in case["timeline"][1:3])
    # a round trip (a sample's t is when it began) overlapping the fault waits 300 ms at
    # least one way, or times out
    during = [
        s["broker_ms"]
        for s in case["samples"]
        if s["t"] < reverting and s["t"] + (s["broker_ms"] or 5000) / 1000 > applied
    ]
    assert any(ms is None or ms >= 300 for ms in during), case["samples"]
    assert case["samples"][-1]["broker_ms"] < 300
    assert proxy.faults.latency_ms == 0 and journal.pending() == []


def test_the_next_run_reverts_what_a_killed_run_left(chaos_broker, tmp_path):
    broker, _ = chaos_broker
    journal = RevertJournal(tmp_path / "journal.jsonl")
    env = ChaosEnv(broker.bootstrap, [broker])
    record = FAULTS.get("broker_kill").apply(env, {})
    journal.applied("broker_kill", record)  # ...and the run dies here
    assert not broker.status().running
    replayed = RevertJournal(journal.path).replay(None)
    assert [e["fault"] for e in replayed] == ["broker_kill"] and journal.pending() == []
    assert broker.status().running and broker_ids(broker.bootstrap) == {1}


def test_sigterm_mid_fault_reverts_it(chaos_broker, tmp_path):
    broker, _ = chaos_broker
    journal = tmp_path / "journal.jsonl"
    child = textwrap.dedent(f"""
        from workbench.chaos.env import ChaosEnv
        from workbench.chaos.journal import RevertJournal
        from workbench.chaos.runner import run_scenario
        from workbench.chaos.scenario import Scenario
        from workbench.dev.kafka import Broker
        broker = Broker({str(broker.state_dir)!r}, {broker.port}, {broker.controller_port},
                        advertised_port={broker.advertised_port})
        load = {{"topic": "chaos-sigterm", "message": "bookings", "rate": 50, "duration": "60s"}}
        case = {{"name": "k", "type": "kafka", "fault": "broker_kill", "start_after": "0s",
                 "downtime": "60s", "load": load}}
        scenario = Scenario(name="s", control=False, cases=[case])
        env = ChaosEnv(broker.bootstrap, [broker])
        run_scenario(scenario, env, RevertJournal({str(journal)!r}))
    """)
    proc = subprocess.Popen([sys.executable, "-c", child], stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while broker.status().running and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not broker.status().running, "the fault was not applied"
    proc.terminate()
    _, err = proc.communicate(timeout=120)
    assert "KeyboardInterrupt" in err, err[-3000:]
    assert broker.status().running, err[-3000:]
    assert broker_ids(broker.bootstrap) == {1} and RevertJournal(journal).pending() == []


class _TopicSeen(Fault):
    """A test's fault: notes the topics there are when it is applied; acts on nothing."""

    name, type = "topic_seen", "kafka"
    seen: list[list[str]] = []

    def apply(self, env, params):
        self.seen.append(list_topics(env.bootstrap))
        return {}

    def revert(self, record, env):
        pass


def test_the_loads_topic_is_made_before_the_faults_clock_starts(chaos_broker, tmp_path):
    """A fault at the load's first moment (a broker kill in a slow run) finds the load's
    topic made: the load once made it itself, and a slow start put that in the downtime."""
    broker, proxy = chaos_broker
    topic = f"chaos-first-{uuid.uuid4().hex[:8]}"
    env = ChaosEnv(proxy.address, [broker], proxy=proxy)
    load = {"topic": topic, "message": "bookings", "rate": 100, "duration": "1s", "seed": 3}
    case = {"name": "first", "type": "kafka", "fault": "topic_seen", "start_after": "0s",
            "downtime": "0s", "load": load}  # fmt: skip
    FAULTS.add(_TopicSeen.name, _TopicSeen())
    try:
        plan = Scenario(name="t", hypothesis="h", control=False, recovery_timeout="30s",
                        cases=[case])  # fmt: skip
        [run] = run_scenario(plan, env, RevertJournal(tmp_path / "journal.jsonl"))["runs"]
    finally:
        FAULTS.remove("topic_seen")
    assert topic in _TopicSeen.seen[-1]
    assert run["load_error"] is None and run["load"]["sent"] == 100, run["timeline"]
