"""Losing one of three brokers mid-stream loses and doubles no window, and the job never stops.

The 3-broker cluster (``kafka_cluster3``) holds the input and output topics with
replication factor 3 and ``min.insync.replicas=2``. ``workbench run`` reads and writes
them (Kafka sink, Parquet sink); one broker is SIGKILLed while the job runs and events
are published with ``acks=all`` to the two left. Every sink must then hold exactly the
windows an independent computation gives, and the job process must have run throughout.
"""

from __future__ import annotations

import json
import signal
import time
import uuid

from cli_job import Job
from geo_reference import surge_windows
from readback import kafka_messages
from streaming import Bookings, closed, kafka_sink, surge_rows, surge_spec

from workbench.kafka.admin import create_topics

REPLICATED = {"min.insync.replicas": "2"}


def replicated_topic(bootstrap: str, prefix: str) -> str:
    name = f"{prefix}-{uuid.uuid4().hex[:8]}"
    create_topics(bootstrap, {name: 3}, replication=3, config=REPLICATED)
    return name


def test_a_broker_killed_mid_stream_loses_and_doubles_no_window(spark, kafka_cluster3, tmp_path):
    bootstrap = kafka_cluster3.bootstrap
    topic = replicated_topic(bootstrap, "bookings-3")
    out_topic = replicated_topic(bootstrap, "surge-3-out")
    sinks = [kafka_sink(bootstrap, out_topic), {"type": "parquet", "path": str(tmp_path / "pq")}]
    spec = surge_spec(
        bootstrap, topic, tmp_path, sinks, stream_options={"max_offsets_per_trigger": 800}
    )
    spec_file = tmp_path / "spec.yaml"
    spec_file.write_text(spec.to_yaml())
    bookings = Bookings(bootstrap, topic, seed=13)
    send, events = bookings.send, bookings.events

    victim = kafka_cluster3.broker(1)
    with (tmp_path / "job.log").open("w") as log:
        send(2400)
        job = Job(spec_file, log)
        try:
            job.wait_for(lambda: job.batches() >= 3, 180, "three micro-batches")
            victim.kill()  # mid-stream: the job is between (or in) micro-batches
            killed_at = job.batches()
            send(1200)  # acks=all: 2 in-sync replicas are left
            job.wait_for(lambda: job.batches() >= killed_at + 2, 180, "batches without it")
            send(1200)
            expected = closed(surge_windows(events), events)

            def every_sink_complete():
                path = tmp_path / "pq"
                return (
                    (path / "_spark_metadata").exists()
                    and spark.read.parquet(str(path)).count() >= len(expected)
                    and len(kafka_messages(bootstrap, out_topic, timeout_s=5)) >= len(expected)
                )

            job.wait_for(every_sink_complete, 300, "every closed window in every sink")
            time.sleep(5)  # one more trigger: nothing more may arrive
            job.proc.send_signal(signal.SIGTERM)
            assert job.proc.wait(120) == 0, "\n".join(job.lines[-30:])
        finally:
            if job.proc.poll() is None:
                job.proc.kill()
            victim.start()
            kafka_cluster3.wait_registered(60)

    assert len(expected) > 120
    parquet = spark.read.parquet(str(tmp_path / "pq")).collect()
    assert surge_rows(r.asDict() for r in parquet) == expected
    rows = [json.loads(m.value()) for m in kafka_messages(bootstrap, out_topic)]
    assert surge_rows(rows) == expected
    assert sum("stopped:" in line for line in job.lines) == 1  # one run, stopped by us
