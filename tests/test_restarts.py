"""Crashes do not lose or double a window: SIGKILL of the job, and a broker restart mid-run.

The job runs as ``workbench run`` in a child process (as in production); events are
published while it runs; it is killed with SIGKILL mid-stream and restarted from its
checkpoint, and the broker is restarted under the second run. Afterwards every sink
must hold exactly the windows an independent computation gives: none missing, none
doubled (``surge_rows`` fails on a window written twice).
"""

from __future__ import annotations

import json
import os
import signal
import time

from cli_job import Job
from geo_reference import surge_windows
from readback import kafka_messages
from streaming import (
    START,
    closed,
    influx_v1_rows,
    influx_v1_sink,
    new_topic,
    surge_rows,
    surge_spec,
)

from workbench.dev.generator import Generator
from workbench.dev.producer import publish


def test_sigkill_and_broker_restart_lose_and_double_nothing(
    spark, kafka_broker, influxdb_v1, tmp_path
):
    bootstrap = kafka_broker.bootstrap
    topic = new_topic(bootstrap, "bookings-crash")
    out_topic = new_topic(bootstrap, "surge-crash-out")
    influx = influx_v1_sink(influxdb_v1)
    spec = surge_spec(
        bootstrap,
        topic,
        tmp_path,
        [
            influx,
            {"type": "kafka", "bootstrap_servers": bootstrap, "topic": out_topic},
            {"type": "parquet", "path": str(tmp_path / "parquet")},
        ],
        stream_options={"max_offsets_per_trigger": 400},
    )
    spec_file = tmp_path / "spec.yaml"
    spec_file.write_text(spec.to_yaml())
    generator = Generator(seed=5, start=START, rate_per_s=40.0, out_of_order_seconds=5.0)
    events: list[dict] = []

    def send(count):
        out = publish(
            bootstrap,
            "bookings",
            topic=topic,
            count=count,
            generator=generator,
            speedup=None,
            keep_events=True,
        )
        events.extend(out.events)

    log = (tmp_path / "job.log").open("w")
    send(3000)
    first = Job(spec_file, log)
    first.wait_for(lambda: first.batches() >= 3, 180, "three micro-batches")
    send(1500)
    time.sleep(1.5)  # mid-batch, most likely
    os.killpg(first.proc.pid, signal.SIGKILL)  # the whole job: Python and its driver JVM
    first.proc.wait(30)

    second = Job(spec_file, log)
    second.wait_for(lambda: second.batches() >= 2, 180, "the restarted job's batches")
    kafka_broker.stop()
    time.sleep(3)
    kafka_broker.start()
    send(1500)
    expected = closed(surge_windows(events), events)

    def every_sink_complete():
        path = tmp_path / "parquet"
        if not (path / "_spark_metadata").exists():
            return False
        return (
            spark.read.parquet(str(path)).count() >= len(expected)
            and len(influx_v1_rows(influxdb_v1, influx, mid_write=True)) >= len(expected)
            and len(kafka_messages(bootstrap, out_topic, timeout_s=5)) >= len(expected)
        )

    second.wait_for(every_sink_complete, 300, "every closed window in every sink")
    time.sleep(5)  # one more trigger: nothing more may arrive
    second.proc.send_signal(signal.SIGTERM)
    assert second.proc.wait(120) == 0, "\n".join(second.lines[-30:])
    log.close()

    assert len(expected) > 150
    parquet = spark.read.parquet(str(tmp_path / "parquet")).collect()
    assert surge_rows(r.asDict() for r in parquet) == expected
    assert influx_v1_rows(influxdb_v1, influx) == expected
    rows = [json.loads(m.value()) for m in kafka_messages(bootstrap, out_topic)]
    assert surge_rows(rows) == expected
    assert any("stopped:" in line for line in second.lines)
