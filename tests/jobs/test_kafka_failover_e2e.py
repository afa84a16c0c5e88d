"""Kafka failover end to end, with real processes: ``workbench serve`` runs the surge
dagger on cluster ``primary`` (a broker of ``kafka_mirror``), MirrorMaker 2 copies its
topic and the job's consumer group to ``standby``; the primary is SIGKILLed mid-stream,
the supervisor fails the job over by itself, the job continues on the standby (where the
producers moved too), and InfluxDB holds every window once, equal to an independent
computation over every event."""

from __future__ import annotations

import time
import uuid

from geo_reference import surge_windows
from jobkit import batches
from polling import wait_for
from readback import ended_offsets
from service_process import Service
from streaming import Bookings, closed, influx_v1_rows, influx_v1_sink, surge_spec

from workbench.kafka import mm2 as mm2_checkpoints
from workbench.kafka.admin import create_topics, list_topics

POLICY = {
    "backoff_s": 1, "backoff_max_s": 4, "max_failures": 5, "healthy_after_s": 20,
    "stop_grace_s": 10, "kill_grace_s": 5,
}  # fmt: skip


def test_the_job_fails_over_to_the_mirror_and_influx_holds_every_window_once(
    kafka_mirror, influxdb_v1, tmp_path, record_property
):
    primary, standby = kafka_mirror.primary, kafka_mirror.standby
    topic, name = f"mirrored-{uuid.uuid4().hex[:8]}", f"surge-fo-{uuid.uuid4().hex[:4]}"
    create_topics(primary.bootstrap, {topic: 3})
    wait_for(lambda: topic in list_topics(standby.bootstrap), 60, "the topic on the standby")
    clusters = {
        "primary": {
            "bootstrap_servers": primary.bootstrap, "standby": "standby", "failover_after_s": 4,
        },
        "standby": {"bootstrap_servers": standby.bootstrap},
    }  # fmt: skip
    service = Service(
        tmp_path / "state", tmp_path / "home", config={"kafka_clusters": clusters, "policy": POLICY}
    ).start()
    influx = influx_v1_sink(influxdb_v1)
    options = {"cluster": "primary", "max_offsets_per_trigger": 800}
    spec = surge_spec(primary.bootstrap, topic, tmp_path, [influx], options, name=name)
    bookings = Bookings(primary.bootstrap, topic, seed=17)
    group = f"workbench-{name}"
    try:
        bookings.send(2400)
        body = {"name": name, "team": "pricing", "spec_yaml": spec.to_yaml()}
        assert service.api("alice", "POST", "/jobs", body).status_code == 201
        service.wait_for(name, lambda j: batches(j) >= 3, 240, "batches")
        bookings.send(1200)
        service.wait_for(name, lambda j: batches(j) >= 5, 120, "more batches")
        sent = ended_offsets(primary.bootstrap, topic)
        wait_for(lambda: ended_offsets(standby.bootstrap, topic) == sent, 60, "MM2 caught up")
        wait_for(
            lambda: mm2_checkpoints.read(standby.bootstrap, "primary", group), 60, "translations"
        )

        before = influx_v1_rows(influxdb_v1, influx)  # the windows closed on the primary
        primary.kill()  # mid-stream: the supervisor notices in failover_after_s
        killed_at = time.time()
        job = service.wait_for(
            name, lambda j: j["version"] == 2 and (j["run"] or {}).get("version") == 2, 180,
            "the failover version running",
        )  # fmt: skip
        failed_over = [e for e in service.get(f"/jobs/{name}/events")["events"]
                       if e["action"] == "failed over"]  # fmt: skip
        assert [e["actor"] for e in failed_over] == ["supervisor"]
        running = service.wait_for(
            name, lambda j: (j["run"] or {}).get("version") == 2 and j["status"] == "RUNNING",
            180, "the failover version RUNNING",
        )  # fmt: skip
        trail = service.get(f"/jobs/{name}/events")["events"]
        [asked] = [e for e in trail if e["action"] == "stop-requested"]
        old = tmp_path / "state" / "runs" / asked["detail"]["run"]
        assert (old / "KILL").exists(), "the run on the dead cluster is told to stop now"
        assert "stopping now" in (old / "log").read_text(), "and it stopped without its batch"
        signals = [e["action"] for e in trail if e["action"] in ("sigterm", "sigkill")]
        record_property(
            "figure",
            f"Kafka failover: cluster killed -> job RUNNING on the mirror "
            f"{time.time() - killed_at:.1f} s (failover_after_s 4; status {running['status']}; "
            f"signals to the old run: {signals or 'none'})",
        )
        bookings.bootstrap = standby.bootstrap  # the producers moved to the mirror too
        bookings.send(2400)  # a minute more: the window open at the kill closes
        events = bookings.events
        expected = closed(surge_windows(events), events)
        after = {key[2] for key in expected} - {key[2] for key in before}
        assert after, "no window closes after the failover: send more events"

        def written(_job) -> bool:
            return len(influx_v1_rows(influxdb_v1, influx, mid_write=True)) >= len(expected)

        service.wait_for(name, written, 240, "every closed window in InfluxDB")
        assert job["status"] in ("STARTING", "RUNNING")
        assert len(expected) > 120
        assert influx_v1_rows(influxdb_v1, influx) == expected
    finally:
        try:
            service.stop_all()
        finally:
            service.stop()
            primary.start()
