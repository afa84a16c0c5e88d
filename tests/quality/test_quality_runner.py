"""A quality spec submitted to the real job service (``workbench serve``): the supervisor
spawns the job runner, which dispatches on ``kind``; the metric rows reach the Parquet sink
and the service's quality API, and a metric alert rule over them, firing when the planted
faults drop the score, is delivered to the HTTP notification receiver."""

from __future__ import annotations

import yaml
from planted import T0_MS, Planter
from service_process import Service
from streaming import new_topic

RULE = {
    "name": "low-quality",
    "when": "score < 99",
    "group_by": ["tag_topic"],
    "summary": "{tag_topic}: score {score}",
    "group_wait": "0s",
    "notify": ["oncall"],
}


def test_a_quality_job_in_the_service_alerts_the_receiver(
    kafka_broker, http_receiver, spark, tmp_path
):
    bootstrap = kafka_broker.bootstrap
    topic = new_topic(bootstrap, "quality-run", partitions=2)
    planter = Planter(bootstrap, topic)
    planter.bookings(0, 300, window=0, duplicate_every=100)
    planter.bookings(500, 6, window=0, late=True)
    planter.garbage(3, window=0)
    planter.flush()
    spec = {
        "kind": "quality",
        "name": "quality-run",
        "team": "pricing",
        "streams": [
            {
                "topics": [topic],
                "message": "esb.booking.BookingLogMessage",
                "bootstrap_servers": bootstrap,
            }
        ],
        "business_key": "order_number",
        "trigger_interval": "2s",
        "sinks": [{"type": "parquet", "path": str(tmp_path / "metrics")}],
        "alerts": [RULE],
    }
    hook = http_receiver.endpoint("quality-alert")
    config = {"notifiers": {"pricing": {"oncall": {"type": "webhook", "url": hook.url}}}}
    service = Service(tmp_path / "state", tmp_path / "home", config=config).start()
    try:
        body = {"name": "quality-run", "team": "pricing", "spec_yaml": yaml.safe_dump(spec)}
        answer = service.api("alice", "POST", "/jobs", body)
        assert answer.status_code == 201, answer.text
        (sent,) = hook.wait_for(1, timeout=240)
        (alert,) = sent.json["alerts"]
        assert sent.json["status"] == "firing"
        labels = alert["labels"]
        assert (labels["alertname"], labels["tag_topic"]) == ("low-quality", topic)
        assert alert["annotations"]["summary"].startswith(f"{topic}: score ")
        (measured,) = service.get(f"/quality/{topic}?hours=1000", "alice")["rows"]
        assert measured["window_timestamp"] == T0_MS
        assert [measured[c] for c in ("total", "duplicates", "late", "undecodable")] == [
            312, 3, 6, 3
        ]  # fmt: skip  # 300 + 3 twice + 6 late + 3 bad
        log = service.get("/jobs/quality-run/logs?limit=1000000")["text"]
        assert "starting quality 'quality-run' v1 on schema" in log, log[-3000:]
        assert "quality 'quality-run' v1 running" in log and "dagger 'quality-run'" not in log
    finally:
        service.close()
    rows = spark.read.parquet(str(tmp_path / "metrics")).collect()
    assert {(r.total, r.duplicates, r.late, r.undecodable) for r in rows} == {(312, 3, 6, 3)}
