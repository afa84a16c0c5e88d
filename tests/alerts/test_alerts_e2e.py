"""Alerts end to end with real processes: ``workbench serve``, a job on the session broker
with a metric rule, and a webhook receiver. Each transition the job's observations make
(replayed through the state machine from its ``alerts.jsonl``) arrives exactly once; the
team's alert list and the job's history agree."""

from __future__ import annotations

import json
import os
import signal
from datetime import timedelta

from geo_reference import surge_windows
from polling import wait_for
from service_process import Service  # tests/jobs, on the path by conftest.py
from streaming import START, closed, new_topic, publish_events, surge_spec

from workbench.alerts.rules import AlertRule
from workbench.alerts.state import Evaluator

RULE = {
    "name": "busy-cell",
    "when": "bookings >= 2",
    "group_by": ["tag_s2id", "tag_vehicle_type"],
    "keep_firing_for": "1m",
    "summary": "{tag_s2id}: {bookings} bookings",
    "group_wait": "1s",
    "notify": ["oncall"],
}


def _lines(service: Service, job_id: int) -> list[dict]:
    found = []
    for path in sorted((service.state / "runs").glob(f"{job_id}-*/alerts.jsonl")):
        found += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return found


def test_a_job_on_the_broker_notifies_each_transition_once(kafka_broker, http_receiver, tmp_path):
    hook = http_receiver.endpoint("e2e-oncall")
    bootstrap = kafka_broker.bootstrap
    topic = new_topic(bootstrap, "alerts-e2e")
    sent = publish_events(bootstrap, topic, 2400, rate_per_s=10)  # four minutes of events
    spec = surge_spec(bootstrap, topic, tmp_path, [], alerts=[RULE],
                      stream_options={"max_offsets_per_trigger": 400})  # fmt: skip
    notifiers = {"pricing": {"oncall": {"type": "webhook", "url": hook.url}}}
    service = Service(tmp_path / "state", tmp_path / "home", config={"notifiers": notifiers})
    service.start()
    try:
        body = {"name": "busy-e2e", "team": "pricing", "spec_yaml": spec.to_yaml()}
        answer = service.api("alice", "POST", "/jobs", body)
        assert answer.status_code == 201, answer.text
        job_id = answer.json()["id"]
        expected_points = {k[2] for k in closed(surge_windows(sent.events), sent.events)}

        def observed():
            lines = _lines(service, job_id)
            return {o["at"] for r in lines for o in r["observations"]} >= expected_points

        wait_for(observed, 300, "every closed window observed by the job")
        assert service.api("alice", "POST", f"/jobs/{job_id}/stop").status_code == 200
        service.wait_for(job_id, lambda j: j["status"] == "STOPPED", 120, "the job to stop")
        lines = _lines(service, job_id)
        rule = AlertRule.model_validate(RULE)
        transitions = Evaluator([rule], "busy-e2e").feed(
            o for line in lines for o in line["observations"]
        )
        want = sorted((t.fingerprint, t.status) for t in transitions)
        assert {"firing", "resolved"} <= {s for _, s in want}

        def got():
            alerts = [a for r in hook.delivered() for a in r.json["alerts"]]
            return sorted((a["fingerprint"], a["status"]) for a in alerts)

        wait_for(lambda: len(got()) >= len(want), 60, "every transition notified")
        assert got() == want  # each exactly once
        history = service.get("/jobs/busy-e2e/alerts?last=10000", "alice")["alerts"]
        assert sorted((e["fingerprint"], e["status"]) for e in history) == want
        assert service.get("/alerts", "bob")["alerts"] == []
    finally:
        service.stop_all()
        service.stop()


def test_health_rules_of_a_job_on_the_broker_fire_and_resolve(
    kafka_broker, http_receiver, tmp_path
):
    """Lagging while a backlog is read 100 records a batch; no data once the producer
    stops; each resolves (caught up; the producer publishing again)."""
    hook = http_receiver.endpoint("e2e-health")
    bootstrap = kafka_broker.bootstrap
    topic = new_topic(bootstrap, "health-e2e")
    publish_events(bootstrap, topic, 1200, rate_per_s=10)
    rules = [
        {"name": "lagging", "health": "offsets_behind_latest > 300", "group_wait": "0s",
         "summary": "{value} records behind", "notify": ["oncall"]},
        {"name": "quiet", "health": "no_data", "for": "3s", "group_wait": "0s",
         "notify": ["oncall"]},
    ]  # fmt: skip
    spec = surge_spec(bootstrap, topic, tmp_path, [], alerts=rules,
                      stream_options={"max_offsets_per_trigger": 100})  # fmt: skip
    notifiers = {"pricing": {"oncall": {"type": "webhook", "url": hook.url}}}
    config = {"notifiers": notifiers, "alerting": {"health_window_s": 4}}
    service = Service(tmp_path / "state", tmp_path / "home", config=config).start()

    def seen(rule: str) -> list[str]:
        return [
            a["status"]
            for r in hook.delivered()
            for a in r.json["alerts"]
            if a["labels"]["alertname"] == rule
        ]

    try:
        body = {"name": "health-e2e", "team": "pricing", "spec_yaml": spec.to_yaml()}
        assert service.api("alice", "POST", "/jobs", body).status_code == 201
        wait_for(lambda: seen("lagging") == ["firing", "resolved"], 240, "lagging, caught up")
        firing = next(
            r for r in hook.delivered() if r.json["groupLabels"]["alertname"] == "lagging"
        )
        behind = int(firing.json["alerts"][0]["annotations"]["summary"].split()[0])
        assert behind > 300
        quiet_before = len(seen("quiet"))  # the run's start may have been quiet for a while
        wait_for(lambda: seen("quiet")[quiet_before:][:1] == ["firing"], 60, "no data")
        later = START + timedelta(seconds=130)  # after the first 1200 events' two minutes
        publish_events(bootstrap, topic, 50, seed=12, rate_per_s=10, start=later)
        wait_for(lambda: seen("quiet")[-1:] == ["resolved"], 60, "data again")
        assert seen("lagging") == ["firing", "resolved"]
        history = service.get("/jobs/health-e2e/alerts", "alice")["alerts"]
        assert [e["status"] for e in history if e["rule"] == "lagging"] == ["firing", "resolved"]
    finally:
        service.stop_all()
        service.stop()


def test_a_job_killed_until_it_fails_fires_and_resolves_when_it_runs(
    kafka_broker, http_receiver, tmp_path
):
    """SIGKILL the job's run each time it comes up: FAILED after two failures (the test
    service's policy), one firing notification; started again, it runs: resolved."""
    hook = http_receiver.endpoint("e2e-failed")
    bootstrap = kafka_broker.bootstrap
    topic = new_topic(bootstrap, "failed-e2e")
    publish_events(bootstrap, topic, 100, rate_per_s=10)
    down = {"name": "down", "health": "status in (FAILED)", "group_wait": "0s",
            "notify": ["oncall"]}  # fmt: skip
    spec = surge_spec(bootstrap, topic, tmp_path, [], alerts=[down])
    notifiers = {"pricing": {"oncall": {"type": "webhook", "url": hook.url}}}
    service = Service(tmp_path / "state", tmp_path / "home", config={"notifiers": notifiers})
    service.start()
    try:
        body = {"name": "failed-e2e", "team": "pricing", "spec_yaml": spec.to_yaml()}
        job_id = service.api("alice", "POST", "/jobs", body).json()["id"]
        for _ in range(2):
            job = service.wait_for(job_id, lambda j: j["status"] == "RUNNING", 180, "running")
            os.killpg(job["run"]["pid"], signal.SIGKILL)
            service.wait_for(job_id, lambda j: j["status"] in ("BACKING_OFF", "FAILED"), 60,
                             "the kill noticed")  # fmt: skip
        service.wait_for(job_id, lambda j: j["status"] == "FAILED", 60, "FAILED")
        [firing] = hook.wait_for(1, timeout=30)
        assert firing.json["alerts"][0]["labels"]["alertname"] == "down"
        assert service.api("alice", "POST", f"/jobs/{job_id}/start").status_code == 200
        service.wait_for(job_id, lambda j: j["status"] == "RUNNING", 180, "running again")
        got = hook.wait_for(2, timeout=30)
        assert [r.json["status"] for r in got] == ["firing", "resolved"]
    finally:
        service.stop_all()
        service.stop()
