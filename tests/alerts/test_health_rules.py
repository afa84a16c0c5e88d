"""Health rules, evaluated by the job service from the job's status and heartbeat (so they
fire while the job is down): FAILED, no data, lagging; each resolves."""

from __future__ import annotations

import pytest
from alertkit import alert_spec, rule, statuses, submit
from polling import wait_for

pytestmark = pytest.mark.unit


def test_a_failed_job_fires_once_and_resolves_when_it_runs_again(alert_service, http_receiver):
    hook = http_receiver.endpoint("health-failed")
    service = alert_service()
    down = rule("down", health="status in (FAILED, BACKING_OFF)", **{"for": "0s"})
    job = submit(service, "failing", "crash-first:2", [down], {"hook": hook.url})
    root = service.principal("root")
    wait_for(lambda: service.get_job(root, job["id"])["status"] == "FAILED", 30, "FAILED")
    [firing] = hook.wait_for(1, timeout=20)
    assert firing.json["alerts"][0]["labels"]["alertname"] == "down"
    service.start(root, job["id"])  # its third run does not crash
    wait_for(lambda: service.get_job(root, job["id"])["status"] == "RUNNING", 30, "RUNNING")
    assert statuses(hook.wait_for(2, timeout=20)) == ["firing", "resolved"]
    assert service.get_job(root, job["id"])["alerts_firing"] == 0


def test_no_data_fires_and_resolves_when_records_come(alert_service, http_receiver):
    hook = http_receiver.endpoint("health-no-data")
    service = alert_service()
    quiet = rule("quiet", health="no_data", **{"for": "1s"})
    spec = alert_spec("quiet-job", "quiet", [quiet], {"hook": hook.url})
    root = service.principal("root")
    job = service.submit(root, name="quiet-job", team="pricing", spec_yaml=spec)
    [firing] = hook.wait_for(1, timeout=30)
    assert firing.json["alerts"][0]["labels"]["alertname"] == "quiet"
    service.edit(root, job["id"], spec.replace("description: quiet", "description: talkative"))
    assert statuses(hook.wait_for(2, timeout=30)) == ["firing", "resolved"]


def test_lagging_fires_and_resolves(alert_service, http_receiver):
    hook = http_receiver.endpoint("health-lag")
    service = alert_service()
    lag = rule("lagging", health="offsets_behind_latest > 100", summary="{value} behind")
    spec = alert_spec("laggard", "lag:500", [lag], {"hook": hook.url})
    root = service.principal("root")
    job = service.submit(root, name="laggard", team="pricing", spec_yaml=spec)
    [firing] = hook.wait_for(1, timeout=30)
    assert firing.json["alerts"][0]["annotations"]["summary"] == "500 behind"
    service.edit(root, job["id"], spec.replace("lag:500", "lag:0"))
    assert statuses(hook.wait_for(2, timeout=30)) == ["firing", "resolved"]
