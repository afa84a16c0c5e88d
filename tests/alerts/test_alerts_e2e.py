"""Alerts end to end with real processes: ``workbench serve``, jobs on the session broker
with metric and health rules, and real receivers (HTTP for Slack, PagerDuty and the
webhook; aiosmtpd for email). Each transition arrives exactly once at each receiver, as
the rule computed by hand says; test-fire over a sample of the same events agrees."""

from __future__ import annotations

import json
import os
import signal
import time
from datetime import timedelta

from geo_reference import s2_id, surge_windows
from polling import wait_for
from service_process import Service  # tests/jobs, on the path by conftest.py
from streaming import START, closed, event_ms, new_topic, publish_events, surge_spec

from workbench.alerts.rules import AlertRule
from workbench.alerts.state import Evaluator, fingerprint
from workbench.alerts.testfire import AlertTest, evaluate
from workbench.dev.generator import Generator, encode
from workbench.lab.replay import sample_plan
from workbench.lab.sampling import sample

PD_KEY = "R0UTINGKEY0123456789abcdef012345"  # the PagerDuty integration's key (a secret)
HOT_POINT = {"pickup_lat": -6.1754, "pickup_long": 106.8272}  # one S2 cell, bikes only
BASELINE = 4800  # eight minutes of bookings at 10 a second
OUTAGE_S = 300  # at most: the outage ends once the others are notified


def _hot_burst(count: int, second: int) -> list[dict]:
    """``count`` new bike bookings at one point from ``second`` after START on."""
    later = START + timedelta(seconds=second)
    events = Generator(seed=second, start=later, rate_per_s=4, out_of_order_seconds=0).take(
        "bookings", count * 4
    )
    created = [e for e in events if e["status"] == "CREATED"][:count]
    assert len(created) == count
    return [{**e, **HOT_POINT, "vehicle_type": "BIKE"} for e in created]


def _produce(bootstrap: str, topic: str, events: list[dict]) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap})
    for event in events:
        producer.produce(topic, encode(event, "esb.booking.BookingLogMessage"))
        producer.poll(0)
    assert producer.flush(30) == 0


def _by_hand(events: list[dict], rule: AlertRule, job: str) -> list[tuple]:
    """The rule's firing windows over the surge windows computed in Python (closed ones)."""
    windows = closed(surge_windows(events), events)
    evaluator, transitions = Evaluator([rule], job), []
    for end in sorted({k[2] for k in windows}):
        firing = {}
        for (cell, vehicle, at), (bookings, _) in windows.items():
            if at == end and rule_holds(rule, bookings):
                labels = {"tag_s2id": cell, "tag_vehicle_type": vehicle}
                firing[fingerprint(job, rule.name, labels)] = {"labels": labels, "values": {}}
        transitions += evaluator.step(rule.name, end, firing)
    return _windows(AlertTest(job, [rule], transitions))


def rule_holds(rule: AlertRule, bookings: int) -> bool:
    return bookings > int(rule.when.split(">")[1])  # the test's rules: "bookings > N"


def _windows(test: AlertTest) -> list[tuple]:
    return sorted((sorted(w["labels"].items()), w["firing_at"], w["resolved_at"])
                  for w in test.windows())  # fmt: skip


def test_a_hot_cell_notifies_every_receiver_once_and_test_fire_agrees(
    kafka_broker, http_receiver, smtp_receiver, spark, tmp_path
):
    """A real job with the issue's rule: one cell pushed over the threshold in the third
    and fifth minute, under it in between (flapping). With ``keep_firing_for: 2m`` Slack,
    PagerDuty, the webhook and email each get exactly one firing and one resolved
    notification, as the rule computed by hand says, the webhook after its
    outage while the job reads on; test-fire over a saved sample of the same events gives
    the same firing window."""
    bootstrap = kafka_broker.bootstrap
    topic = new_topic(bootstrap, "alerts-e2e", partitions=1)  # in time order: none late
    baseline = Generator(seed=11, start=START, rate_per_s=10).take("bookings", BASELINE)
    busiest = max(n for n, _ in surge_windows(baseline).values())
    hot = [*_hot_burst(busiest + 4, 150), *_hot_burst(busiest + 4, 270)]  # 3rd and 5th minute
    events = sorted([*baseline, *hot], key=event_ms)
    _produce(bootstrap, topic, events)
    rule = {
        "name": "hot-cell", "when": f"bookings > {busiest}",
        "group_by": ["tag_s2id", "tag_vehicle_type"], "keep_firing_for": "2m",
        "severity": "critical", "summary": "{tag_s2id}: {bookings} bookings a minute",
        "group_wait": "1s", "notify": ["slack", "pd", "hook", "mail"],
    }  # fmt: skip
    hooks = {name: http_receiver.endpoint(f"e2e-{name}") for name in ("slack", "pd", "hook")}
    to = "pricing-oncall@example.org"
    notifiers = {
        "slack": {"type": "slack", "url": hooks["slack"].url},
        "pd": {"type": "pagerduty", "routing_key": "${env:PD_KEY}", "url": hooks["pd"].url},
        "hook": {"type": "webhook", "url": hooks["hook"].url},
        "mail": {"type": "email", "to": [to], "from": "workbench@example.org",
                 "smtp_host": "127.0.0.1", "smtp_port": smtp_receiver.port},
    }  # fmt: skip
    spec = surge_spec(bootstrap, topic, tmp_path, [], alerts=[rule], name="hot-e2e",
                      stream_options={"max_offsets_per_trigger": 600})  # fmt: skip
    expected = _by_hand(events, spec.alerts[0], spec.name)
    hot_cell = s2_id(HOT_POINT["pickup_lat"], HOT_POINT["pickup_long"], 13)
    labels = [("tag_s2id", hot_cell), ("tag_vehicle_type", "BIKE")]
    window_end = int((START + timedelta(seconds=180)).timestamp() * 1000)
    assert [(w[0], w[1]) for w in expected] == [(labels, window_end)] and expected[0][2]
    jumpy = AlertRule.model_validate({**rule, "keep_firing_for": "0s"})
    assert len(_by_hand(events, jumpy, spec.name)) == 2  # without hysteresis: two windows

    config = {"notifiers": {"pricing": notifiers}, "alerting": {"retry_s": 2, "retry_max_s": 8}}
    service = Service(tmp_path / "state", tmp_path / "home", env={"PD_KEY": PD_KEY},
                      config=config).start()  # fmt: skip
    try:
        body = {"name": "hot-e2e", "team": "pricing", "spec_yaml": spec.to_yaml()}
        answer = service.api("alice", "POST", "/jobs", body)
        assert answer.status_code == 201, answer.text
        service.wait_for("hot-e2e", lambda j: j["status"] == "RUNNING", 180, "running")
        # the webhook's receiver is down until the job has read everything and the other
        # receivers have both notifications (a fixed minute was too short in a slow hour)
        hooks["hook"].fail(503, seconds=OUTAGE_S)
        mails = smtp_receiver.wait_for(2, to=to, timeout=OUTAGE_S)
        got = {name: hooks[name].wait_for(2, timeout=OUTAGE_S) for name in ("slack", "pd")}
        read_all = lambda: service.job("hot-e2e")["metrics"]["records"] == len(events)  # noqa: E731
        wait_for(read_all, OUTAGE_S, "the job to read everything during the outage")
        wait_for(lambda: len(hooks["hook"].attempts()) > 2, OUTAGE_S, "the webhook's retries")
        assert hooks["hook"].delivered() == []
        hooks["hook"].fail(503, seconds=0)  # back
        back = time.time()
        got["hook"] = hooks["hook"].wait_for(2, timeout=60)
        assert min(r.at for r in got["hook"]) >= back

        fp = fingerprint(spec.name, "hot-cell", dict(labels))
        history = service.get("/jobs/hot-e2e/alerts", "alice")["alerts"]
        assert [(e["fingerprint"], e["status"]) for e in history] == [
            (fp, "firing"), (fp, "resolved")]  # fmt: skip
        hook = [r.json for r in got["hook"]]
        assert [m["status"] for m in hook] == ["firing", "resolved"]
        assert [[a["fingerprint"] for a in m["alerts"]] for m in hook] == [[fp], [fp]]
        bookings = surge_windows(events)[(hot_cell, "BIKE", window_end)][0]
        summary = f"{hot_cell}: {bookings} bookings a minute"  # its value when it fired
        assert hook[0]["alerts"][0]["annotations"]["summary"] == summary
        assert summary in json.dumps(got["slack"][0].json["blocks"])
        pd = [r.json for r in got["pd"]]
        assert [(e["event_action"], e["dedup_key"], e["routing_key"]) for e in pd] == [
            ("trigger", fp, PD_KEY), ("resolve", fp, PD_KEY)]  # fmt: skip
        assert pd[0]["payload"]["severity"] == "critical"
        titles = ["[FIRING:1] hot-cell hot-e2e", "[RESOLVED] hot-cell hot-e2e"]
        slack = [r.json for r in got["slack"]]
        assert [m["blocks"][0]["text"]["text"] for m in slack] == titles
        assert [m.message["Subject"] for m in mails] == titles

        # test-fire over a saved sample of the same events: the same firing window
        path = sample(spec, last=len(events)).save(tmp_path / "all.sample.json")
        with sample_plan(spark, [path], spec=spec) as (plan, undecodable):
            test = evaluate(plan.result, spec.alerts, spec.name)
        assert undecodable == 0 and _windows(test) == expected
        # meanwhile nothing more was sent: one notification per transition and receiver
        assert [len(h.delivered()) for h in hooks.values()] == [2, 2, 2]
        assert len(smtp_receiver.mails(to)) == 2
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
