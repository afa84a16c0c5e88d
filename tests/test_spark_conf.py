"""A spec's ``spark_conf`` on a session that is already running (a notebook kernel, the
test session): runtime settings apply to the job and are put back after it; settings
fixed at session start are refused with what to do."""

from __future__ import annotations

import json

import pytest
from streaming import new_topic, publish_events, surge_spec

from workbench.exceptions import SparkConfError
from workbench.runtime import spark_conf
from workbench.streaming.job import StreamingJob

PARTITIONS = "spark.sql.shuffle.partitions"


def test_runtime_settings_apply_to_the_job_and_are_put_back(spark, kafka_broker, tmp_path):
    bootstrap = kafka_broker.bootstrap
    topic = new_topic(bootstrap, "conf-in")
    publish_events(bootstrap, topic, 800)
    before = spark.conf.get(PARTITIONS)
    assert before != "3"
    spec = surge_spec(bootstrap, topic, tmp_path, [], spark_conf={PARTITIONS: "3"})
    StreamingJob(spec, spark, available_now=True, emit=None).run()

    query = tmp_path / "checkpoint" / "sinks"
    offsets = (query / "offsets" / "0").read_text().splitlines()
    assert json.loads(offsets[1])["conf"][PARTITIONS] == "3"  # the plan Spark ran
    partitions = (query / "state" / "0").iterdir()
    assert sorted(p.name for p in partitions if p.name.isdigit()) == ["0", "1", "2"]
    assert spark.conf.get(PARTITIONS) == before  # the session's own value again


def test_settings_fixed_at_start_are_refused_with_what_to_do(spark, tmp_path):
    before = spark.conf.get(PARTITIONS)
    conf = {PARTITIONS: "3", "spark.driver.memory": "7g", "spark.master": "local[7]"}
    spec = surge_spec("127.0.0.1:1", "unused", tmp_path, [], spark_conf=conf)
    with pytest.raises(SparkConfError) as err:
        StreamingJob(spec, spark, emit=None).start()
    message = str(err.value)
    assert "spark.driver.memory=7g (the session has it unset)" in message
    assert f"spark.master=local[7] (the session has {spark.sparkContext.master})" in message
    assert "Run the job in its own process (`workbench run SPEC.yaml`" in message
    assert set(err.value.differing) == {"spark.driver.memory", "spark.master"}
    assert spark.conf.get(PARTITIONS) == before  # nothing half-applied


def test_apply_sets_only_what_differs_and_restore_undoes_it(spark):
    before = spark.conf.get(PARTITIONS)
    master = spark.sparkContext.master
    conf = {"spark.master": master, PARTITIONS: "5", "spark.workbench.test.key": "on"}
    previous = spark_conf.apply(spark, conf, "job")
    assert previous == {PARTITIONS: before, "spark.workbench.test.key": None}
    assert spark.conf.get(PARTITIONS) == "5" and spark.conf.get("spark.workbench.test.key") == "on"
    spark_conf.restore(spark, previous)
    assert spark.conf.get(PARTITIONS) == before
    assert spark.conf.get("spark.workbench.test.key", None) is None
