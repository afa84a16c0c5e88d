"""Metric rules in a running job (the runner as a real process on the session broker): one
``alerts.jsonl`` line per micro-batch with its batch id, and test-fire over a saved sample
of the same events giving the same firing windows as the job's batches."""

from __future__ import annotations

from geo_reference import surge_windows
from runfolder import Process, make_run
from streaming import closed, new_topic, publish_events, surge_spec

from workbench.alerts.rules import AlertRule
from workbench.alerts.state import Evaluator
from workbench.alerts.testfire import evaluate
from workbench.lab.preview import preview
from workbench.lab.replay import sample_plan
from workbench.lab.sampling import sample

RULE = {
    "name": "busy-cell",
    "when": "bookings >= 2",
    "group_by": ["tag_s2id", "tag_vehicle_type"],
    "keep_firing_for": "1m",
    "summary": "{tag_s2id}: {bookings}",
}


def comparable(transitions, until_ms: int) -> list[tuple]:
    """Transitions up to a point, without the fingerprint (it names the job)."""
    return [
        (t.rule, t.status, tuple(sorted(t.labels.items())), t.at, t.starts_at, t.values)
        for t in transitions
        if t.at <= until_ms
    ]


def test_job_observes_each_batch_and_test_fire_agrees(kafka_broker, spark, tmp_path):
    bootstrap = kafka_broker.bootstrap
    topic = new_topic(bootstrap, "alerts")
    sent = publish_events(bootstrap, topic, 2400, rate_per_s=10)  # four minutes of events
    spec = surge_spec(
        bootstrap,
        topic,
        tmp_path,
        [],
        stream_options={"max_offsets_per_trigger": 400},
        alerts=[RULE, {"name": "down", "health": "status in (FAILED)"}],
    )
    expected_points = {k[2] for k in closed(surge_windows(sent.events), sent.events)}
    run = make_run(tmp_path, spec.to_yaml(), tmp_path / "checkpoint")
    job = Process(run)
    try:

        def observed():
            points = {o["at"] for r in run.read_alerts_after() for o in r["observations"]}
            return points >= expected_points and points

        job.wait_for(observed, 240, "every closed window observed")
        assert job.stop() == 0, job.log()[-3000:]
    finally:
        job.kill()

    lines = run.read_alerts_after()
    batch_ids = [line["batch_id"] for line in lines]
    assert batch_ids == sorted(set(batch_ids)) and batch_ids[0] == 0
    assert all(line["checkpoint"] == str(tmp_path / "checkpoint") for line in lines)
    assert not [line for line in lines if "error" in line]
    assert sum(1 for line in lines if line["observations"]) >= 2  # spread over batches
    assert [r["batch_id"] for r in run.read_alerts_after(batch_ids[1])] == batch_ids[2:]
    rule = AlertRule.model_validate(RULE)
    in_job = Evaluator([rule], "test").feed(o for line in lines for o in line["observations"])
    last = max(o["at"] for line in lines for o in line["observations"])
    assert {"firing", "resolved"} <= {t.status for t in in_job}

    saved = sample(spec, table="booking", last=1_000_000).save(tmp_path / "booking.json")
    with sample_plan(spark, [saved], spec=spec) as (plan, _):
        fired = evaluate(plan.result, spec.alerts, spec.name)
    assert comparable(fired.transitions, last) == comparable(in_job, last)
    assert fired.skipped == ["down"]

    from workbench.lab.sampling import Sample

    previewed = preview(spec, Sample.load(saved), spark=spark).alerts()
    assert comparable(previewed.transitions, last) == comparable(in_job, last)


def test_a_rule_failing_at_run_time_is_reported_and_the_job_goes_on(kafka_broker, tmp_path):
    bootstrap = kafka_broker.bootstrap
    topic = new_topic(bootstrap, "alerts-bad")
    publish_events(bootstrap, topic, 600)
    broken = {"name": "broken", "when": "assert_true(bookings < 0) IS NULL"}
    spec = surge_spec(bootstrap, topic, tmp_path, [], alerts=[broken])
    run = make_run(tmp_path, spec.to_yaml(), tmp_path / "checkpoint")
    job = Process(run)
    try:
        job.wait_for(lambda: len(run.read_alerts_after()) >= 2, 180, "two batches observed")
        assert job.stop() == 0, job.log()[-3000:]
    finally:
        job.kill()
    failed = [line for line in run.read_alerts_after() if "error" in line]
    assert failed and all(line["observations"] == [] for line in failed)
    assert "alert rules not evaluated for batch" in job.log()
    assert run.read_exit()["code"] == 0
