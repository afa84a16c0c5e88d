"""Metric rules end to end in the job service: the stand-in job writes observations to its
``alerts.jsonl``, the supervisor ingests them, the state machine decides, the dispatcher
delivers to a real HTTP receiver. Every database test runs on SQLite and PostgreSQL."""

from __future__ import annotations

import time

import pytest
from alertkit import FAST, rule, statuses, submit
from polling import wait_for
from sqlalchemy import select

from workbench.jobs.alert_tables import AlertCursor, OutboxRow

pytestmark = pytest.mark.unit


def _batches(service, ref) -> int:
    return service.get_job(service.principal("root"), ref)["metrics"]["batches"] or 0


def _history(service, job: str) -> list[str]:
    return [e["status"] for e in service.alert_history(service.principal("root"), job)]


def test_one_firing_and_one_resolved_notification_per_transition(alert_service, http_receiver):
    hook = http_receiver.endpoint("store-once")
    service = alert_service()
    submit(service, "hot-once", "fire:3-6", [rule()], {"hook": hook.url})
    firing, resolved = hook.wait_for(2, timeout=30)
    time.sleep(1.5)  # batches go on: nothing more comes
    assert statuses(hook.delivered()) == ["firing", "resolved"]
    alert = firing.json["alerts"][0]
    assert alert["labels"]["service_area_id"] == "7" and alert["labels"]["alertname"] == "hot"
    assert alert["annotations"]["summary"] == "cell 7: 403.0"
    assert resolved.json["alerts"][0]["status"] == "resolved"
    assert _history(service, "hot-once") == ["firing", "resolved"]
    [listed] = service.list_alerts(service.principal("bob"))
    assert (listed["job"], listed["rule"], listed["status"]) == ("hot-once", "hot", "resolved")
    assert listed["starts_at"].startswith("1970-01-01T00:00:03")  # the window's time


def test_a_replayed_batch_and_a_new_supervisor_notify_nothing_twice(alert_service, http_receiver):
    hook = http_receiver.endpoint("store-replay")
    service = alert_service()
    job = submit(service, "hot-replay", "fire:3-1000 replay", [rule()], {"hook": hook.url})
    hook.wait_for(1, timeout=30)
    root = service.principal("root")
    service.restart(root, job["id"])  # the next run runs its predecessor's last batch again
    wait_for(lambda: (service.get_job(root, job["id"])["run"] or {}).get("attempt") == 2, 30,
             "a new run")  # fmt: skip
    service.stop_supervisor()  # and a new supervisor, from the database's state
    service.start_supervisor()
    first = _batches(service, job["id"])
    wait_for(lambda: _batches(service, job["id"]) > first + 4, 30, "more batches")
    time.sleep(0.5)
    assert statuses(hook.delivered()) == ["firing"]
    assert _history(service, "hot-replay") == ["firing"]
    with service.db.session() as s:
        [cursor] = s.scalars(select(AlertCursor).where(AlertCursor.job_id == job["id"]))
        assert cursor.batch_id >= first + 4


def test_flapping_is_bounded_by_keep_firing_for(alert_service, http_receiver):
    steady, jumpy = http_receiver.endpoint("store-steady"), http_receiver.endpoint("store-jumpy")
    service = alert_service()
    rules = [rule("hot", ("steady",), keep_firing_for="3s")]
    job = submit(service, "hot-flap", "flap", rules, {"steady": steady.url})
    rules = [rule("hot", ("jumpy",))]
    other = submit(service, "hot-flap-0", "flap", rules, {"jumpy": jumpy.url})
    root = service.principal("root")
    for ref in (job["id"], other["id"]):
        wait_for(lambda r=ref: _batches(service, r) >= 12, 30, "batches")
    time.sleep(0.5)
    assert statuses(steady.delivered()) == ["firing"]  # true every other window: still firing
    assert len(jumpy.delivered()) >= 6  # without hysteresis: a notification a batch or so
    assert service.get_job(root, job["id"])["alerts_firing"] == 1


def test_a_rule_without_receivers_and_an_unknown_receiver(alert_service, sqlite_url):
    service = alert_service()
    job = submit(service, "hot-nowhere", "fire:2-1000", [rule(notify=("missing",))], {})
    root = service.principal("root")
    wait_for(lambda: service.get_job(root, job["id"])["alerts_firing"] == 1, 30, "firing")

    def failed():
        with service.db.session() as s:
            rows = list(s.scalars(select(OutboxRow).where(OutboxRow.job_id == job["id"])))
            return rows and rows[0].attempts >= 2 and rows[0]

    row = wait_for(failed, 30, "failed attempts")
    assert row.status == "pending" and "no notifier of this name" in row.last_error


def test_an_alert_of_a_removed_rule_is_resolved(alert_service, http_receiver):
    hook = http_receiver.endpoint("store-removed")
    service = alert_service()
    job = submit(service, "hot-removed", "fire:2-1000", [rule()], {"hook": hook.url})
    root = service.principal("root")
    wait_for(lambda: service.get_job(root, job["id"])["alerts_firing"] == 1, 30, "firing")
    spec = service.versions(root, job["id"])[-1]["spec_yaml"]
    service.edit(root, job["id"], spec.replace("- name: hot\n", "- name: warm\n"))
    wait_for(lambda: _history(service, "hot-removed")[:2] == ["firing", "resolved"], 30,
             "the old rule's alert resolved")  # fmt: skip
    [old] = [a for a in service.list_alerts(root) if a["rule"] == "hot"]
    assert old["status"] == "resolved" and old["ends_at"]


def test_a_stopped_job_resolves_its_alerts(alert_service, http_receiver):
    hook = http_receiver.endpoint("store-stopped")
    service = alert_service()
    job = submit(service, "hot-stopped", "fire:3-100000", [rule()], {"hook": hook.url})
    assert statuses(hook.wait_for(1, timeout=30)) == ["firing"]
    root = service.principal("root")
    service.stop(root, job["id"])
    firing, resolved = hook.wait_for(2, timeout=30)
    assert resolved.json["status"] == "resolved"
    assert resolved.json["notification_reason"] == "all alerts resolved"
    assert resolved.json["alerts"][0]["fingerprint"] == firing.json["alerts"][0]["fingerprint"]
    assert _history(service, "hot-stopped") == ["firing", "resolved"]
    assert service.get_job(root, job["id"])["alerts_firing"] == 0


def test_alerts_of_an_idle_input_resolve_after_resolve_timeout(alert_service, http_receiver):
    """The job runs on but its input stopped after batch 4: no observation comes, and the
    alert resolves once ``resolve_timeout_s`` passed without one."""
    hook = http_receiver.endpoint("store-idle")
    service = alert_service(alerting={**FAST["alerting"], "resolve_timeout_s": 1})
    job = submit(service, "hot-idle", "fire:3-100000 idle:4", [rule()], {"hook": hook.url})
    firing, resolved = hook.wait_for(2, timeout=30)
    assert statuses([firing, resolved]) == ["firing", "resolved"]
    root = service.principal("root")
    assert service.get_job(root, job["id"])["status"] == "RUNNING"
    assert _history(service, "hot-idle") == ["firing", "resolved"]


def test_a_busy_input_keeps_firing_past_resolve_timeout(alert_service, http_receiver):
    hook = http_receiver.endpoint("store-busy")
    service = alert_service(alerting={**FAST["alerting"], "resolve_timeout_s": 3})
    job = submit(service, "hot-busy", "fire:3-100000", [rule()], {"hook": hook.url})
    hook.wait_for(1, timeout=30)
    first = _batches(service, job["id"])
    wait_for(lambda: _batches(service, job["id"]) > first + 20, 60, "batches past the timeout")
    assert _history(service, "hot-busy") == ["firing"]
