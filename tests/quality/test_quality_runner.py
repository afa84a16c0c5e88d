"""A quality spec run by the job runner (a real process, as the supervisor spawns it): the
runner dispatches on ``kind``, the metric rows reach the Parquet sink, and a metric alert
rule over them fires when the planted faults drop the score."""

from __future__ import annotations

import yaml
from planted import T0_MS, Planter
from runfolder import Process, make_run
from streaming import new_topic

from workbench.alerts.rules import AlertRule
from workbench.alerts.state import Evaluator

RULE = {
    "name": "low-quality",
    "when": "score < 99",
    "group_by": ["tag_topic"],
    "summary": "{tag_topic}: score {score}",
}


def test_the_runner_runs_a_quality_spec_and_its_alert_fires(kafka_broker, spark, tmp_path):
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
    run = make_run(tmp_path, yaml.safe_dump(spec), tmp_path / "checkpoint")
    job = Process(run)
    try:

        def firing():
            return [o for r in run.read_alerts_after() for o in r["observations"] if o["firing"]]

        job.wait_for(firing, 180, "the low-quality rule firing")
        assert job.stop() == 0, job.log()[-3000:]
    finally:
        job.kill()
    log = job.log()
    assert "starting quality 'quality-run' v1 on schema" in log, log[-3000:]
    assert "quality 'quality-run' v1 running" in log and "dagger 'quality-run'" not in log
    observations = [o for line in run.read_alerts_after() for o in line["observations"]]
    assert {o["at"] for o in observations} == {T0_MS}
    (labels,) = [v["labels"] for o in observations for v in o["firing"].values()][:1]
    assert labels == {"tag_topic": topic}
    transitions = Evaluator([AlertRule.model_validate(RULE)], "test").feed(observations)
    assert "firing" in {t.status for t in transitions}
    rows = spark.read.parquet(str(tmp_path / "metrics")).collect()
    assert {(r.total, r.duplicates, r.late, r.undecodable) for r in rows} == {
        (312, 3, 6, 3)
    }  # 300 + 3 twice + 6 late + 3 bad
