"""The job process end to end: a run folder, the runner as a real subprocess on the session
broker, InfluxDB as the sink.

It heartbeats RUNNING with metrics, writes a progress line per batch and stops gracefully
on STOP (exit.json code 0); a bad SQL ends with code 1 and the error in exit.json and the
log; a held lease ends with code 3; a planted secret reaches the sink and no file of the
run folder.
"""

from __future__ import annotations

import os
import signal
import uuid

import pytest
import yaml
from geo_reference import surge_windows
from readback import influxql
from runfolder import Process, make_run
from streaming import closed, influx_v1_rows, new_topic, publish_events, surge_spec

from workbench.dev.ports import free_port
from workbench.exceptions import SpecError
from workbench.jobs.lease import Lease
from workbench.jobs.metrics import KEYS
from workbench.jobs.runner import load_spec

pytestmark = pytest.mark.unit


def test_runs_reports_and_stops_and_keeps_the_secret(kafka_broker, influxdb_v1, tmp_path):
    bootstrap = kafka_broker.bootstrap
    topic = new_topic(bootstrap, "runner")
    sent = publish_events(bootstrap, topic, 2400)
    database = f"planted-secret-{uuid.uuid4().hex}"  # the secret: only the sink may see it
    password = f"pw-{uuid.uuid4().hex}"
    influxql(influxdb_v1, f'CREATE DATABASE "{database}"')
    secret_file = tmp_path / "secret-db"
    secret_file.write_text(database + "\n")
    sink = {
        "type": "influx",
        "api": 1,
        "url": influxdb_v1.url,
        "database": f"${{file:{secret_file}}}",
        "username": "dagger",
        "password": "${env:WB_TEST_INFLUX_PASSWORD}",
        "measurement": "surge",
    }
    conf = {"spark.sql.shuffle.partitions": "3"}  # spec.spark_conf is honoured
    spec = surge_spec(bootstrap, topic, tmp_path, [sink], spark_conf=conf)
    run = make_run(tmp_path, spec.to_yaml(), tmp_path / "checkpoint")
    job = Process(run, env={"WB_TEST_INFLUX_PASSWORD": password})
    expected = closed(surge_windows(sent.events), sent.events)
    try:
        beat = job.wait_for(
            lambda: (b := run.read_heartbeat()) and b["state"] == "RUNNING" and b, 120, "RUNNING"
        )
        assert beat["pid"] == job.proc.pid and beat["started_at"] <= beat["time"]

        def complete():
            rows = influx_v1_rows(influxdb_v1, {**sink, "database": database}, mid_write=True)
            return len(rows) >= len(expected)

        job.wait_for(complete, 180, "every closed window in InfluxDB")

        def reported():
            beat = run.read_heartbeat()
            done = beat["metrics"]["last_sink_write_at"] and beat["metrics"]["watermark"]
            return done and beat["metrics"]["records"] == len(sent.events) and beat

        beat = job.wait_for(reported, 30, "metrics of the batches")
        assert job.stop() == 0, job.log()[-3000:]
    finally:
        job.kill()

    metrics = beat["metrics"]
    assert tuple(metrics) == KEYS
    assert metrics["records"] == len(sent.events) and metrics["batches"] >= 1
    assert metrics["offsets_behind_latest"] == 0 and metrics["watermark"]
    progress = run.tail_progress(200)
    assert progress and sum(p["input_rows"] for p in progress) == len(sent.events)
    assert {"batch", "input_rate", "offsets_behind", "time"} <= set(progress[-1])
    assert run.read_exit()["code"] == 0 and run.read_exit()["reason"] == "stopped"
    assert influx_v1_rows(influxdb_v1, {**sink, "database": database}) == expected
    state = tmp_path / "checkpoint" / "sinks" / "state" / "0"
    assert sorted(p.name for p in state.iterdir() if p.name.isdigit()) == ["0", "1", "2"]
    log = job.log()
    assert "stopped:" in log and "] batch " in log
    assert "influx v1 " in log and "***/surge" in log  # the sink named, its database masked
    for path in run.path.rglob("*"):  # the planted secrets are in no file of the run
        if path.is_file():
            data = path.read_bytes()
            assert database.encode() not in data and password.encode() not in data, path
    assert "${env:WB_TEST_INFLUX_PASSWORD}" in run.spec_file.read_text()


def test_bad_sql_fails_with_the_error_in_exit_json_and_log(kafka_broker, tmp_path):
    topic = new_topic(kafka_broker.bootstrap, "runner-bad")
    spec = surge_spec(kafka_broker.bootstrap, topic, tmp_path, [], sql="SELECT nope FROM booking")
    run = make_run(tmp_path, spec.to_yaml(), tmp_path / "checkpoint")
    job = Process(run)
    assert job.exit_code(180) == 4  # an SqlError: no retry mends it (EXIT_INVALID)
    end = run.read_exit()
    assert end["code"] == 4 and end["reason"] == "failed"
    assert "Unknown column 'nope'" in end["error"] and "\n" not in end["error"].split(".")[0]
    assert "Unknown column 'nope'" in job.log()
    assert not Lease.is_held(tmp_path / "checkpoint")


def test_a_run_whose_spark_master_is_down_names_the_master(kafka_broker, tmp_path):
    """Spark says only that its context was stopped; the run's error names the master
    (issue 36, item 10). A master that may come back: exit 1, retried with backoff."""
    master = f"spark://127.0.0.1:{free_port()}"
    topic = new_topic(kafka_broker.bootstrap, "runner-master")
    spec = surge_spec(kafka_broker.bootstrap, topic, tmp_path, [])
    run = make_run(tmp_path, spec.to_yaml(), tmp_path / "checkpoint", master=master)
    job = Process(run)
    assert job.exit_code(300) == 1
    end = run.read_exit()
    assert end["error"].startswith(f"Spark master {master}: all masters are unresponsive; ")


def test_a_held_lease_exits_3_at_once(kafka_broker, tmp_path):
    topic = new_topic(kafka_broker.bootstrap, "runner-lease")
    spec = surge_spec(kafka_broker.bootstrap, topic, tmp_path, [])
    with Lease(tmp_path / "checkpoint").acquire("other-run"):
        run = make_run(tmp_path, spec.to_yaml(), tmp_path / "checkpoint")
        job = Process(run)
        assert job.exit_code(60) == 3
    end = run.read_exit()
    assert end["code"] == 3 and "other-run" in end["error"]
    assert "in use by another driver" in job.log()


def test_sigterm_to_the_process_group_stops_gracefully(kafka_broker, tmp_path):
    topic = new_topic(kafka_broker.bootstrap, "runner-term")
    publish_events(kafka_broker.bootstrap, topic, 300)
    spec = surge_spec(kafka_broker.bootstrap, topic, tmp_path, [])
    run = make_run(tmp_path, spec.to_yaml(), tmp_path / "checkpoint")
    job = Process(run)
    job.wait_for(lambda: run.tail_progress(1), 120, "a micro-batch")
    os.killpg(job.proc.pid, signal.SIGTERM)  # as the supervisor escalates: the whole group
    assert job.exit_code(120) == 0, job.log()[-3000:]
    assert run.read_exit()["reason"] == "stopped" and "stopped:" in job.log()


def test_a_secret_is_checked_as_written_and_never_quoted(monkeypatch, tmp_path):
    spec = surge_spec("127.0.0.1:1", "t", tmp_path, [])
    data = yaml.safe_load(spec.to_yaml())
    data["sinks"] = [
        {"type": "influx", "url": "${env:WB_TEST_URL}", "measurement": "m", "bucket": "b"}
    ]
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(data))
    monkeypatch.setenv("WB_TEST_URL", "http://influx.internal:8086")
    loaded, mask = load_spec(path)  # the reference itself is no URL: fine
    assert loaded.sinks[0].url == "http://influx.internal:8086"
    assert mask("at http://influx.internal:8086") == "at ***"
    monkeypatch.setenv("WB_TEST_URL", "not-a-url-SECRET")
    with pytest.raises(SpecError, match=r"sinks\[0\]\.url.*\$\{env:WB_TEST_URL\}") as err:
        load_spec(path)  # told with the reference, as written
    assert "SECRET" not in str(err.value)
