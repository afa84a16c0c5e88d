"""Jobs on real Spark standalone clusters, through the job service (``workbench serve``):
a submitted surge dagger runs on the session's cluster (master + 2 workers on loopback)
and its rows equal ``workbench replay`` over the same events; a job on cluster ``a``
whose master and worker are SIGKILLed moves to its standby by itself and stays exact.

One service for the module; its clusters: ``local`` (``local[2]``), ``standalone`` (the
``spark_cluster`` fixture's master, the job's resources from the cluster's defaults) and
``a`` (a cluster of this module, master + 1 worker, standby ``standalone``)."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from service_process import Service
from streaming import closed, event_ms, new_topic, publish_events, surge_rows, surge_spec

from workbench.dev.generator import write_jsonl
from workbench.dev.spark import SparkCluster, master_json
from workbench.lab.replay import replay

#: the parallelism a job on ``standalone`` gets unless its spec says otherwise
RESOURCES = {"cores": 2, "executor_memory": "768m", "shuffle_partitions": 3}


def parquet_rows(spark, path: str | Path) -> dict:
    """The Parquet sink's rows as surge rows, read as a user reads the table: through Spark,
    whose reader lists only the files its ``_spark_metadata`` log committed (a killed run's
    half-written batch leaves files that are not part of it). {} before the first batch."""
    from pyspark.errors import AnalysisException

    try:  # no committed file as yet: no schema to infer
        rows = spark.read.parquet(str(path)).collect()
    except AnalysisException:
        return {}
    return surge_rows(r.asDict() for r in rows)


def replayed(spark, spec, events: list[dict], folder: Path) -> dict:
    """``workbench replay`` of the spec over ``events``: the windows their watermark closed."""
    recording = folder / "booking.jsonl"
    write_jsonl(recording, events)
    out = folder / "replay.jsonl"
    replay(spark, {"booking": str(recording)}, out, spec=spec)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    return closed(surge_rows(rows), events)


def app_of(cluster, name: str) -> dict | None:
    """The master's record of the running application ``dagger-NAME``."""
    webui = int(cluster.status().webui_url.rpartition(":")[2])
    apps = (master_json(webui) or {}).get("activeapps") or []
    return next((a for a in apps if a.get("name") == f"dagger-{name}"), None)


def submit(service, bootstrap: str, tmp: Path, name: str, cluster: str, malformed: float = 0.0):
    """Alice submits the surge dagger ``name`` on ``cluster``, its topic holding 3000
    bookings (5 minutes of event time; ``malformed`` of the records undecodable), its sink
    Parquet: (topic, what was published, spec, body)."""
    topic = new_topic(bootstrap, name)
    sent = publish_events(bootstrap, topic, 3000, seed=51, rate_per_s=10.0, malformed=malformed)
    sink = {"type": "parquet", "path": str(tmp / "pq")}
    spec = surge_spec(bootstrap, topic, tmp, [sink], name=name)
    body = {"name": name, "team": "pricing", "spec_yaml": spec.to_yaml(), "cluster": cluster}
    answer = service.api("alice", "POST", "/jobs", body)
    assert answer.status_code == 201, answer.text
    return topic, sent, spec, body


@pytest.fixture(scope="module")
def cluster_a(tmp_path_factory):
    """A cluster this module may kill: a master and one worker of 2 cores."""
    cluster = SparkCluster(tmp_path_factory.mktemp("cluster-a"), workers=1, cores=2)
    cluster.start()
    yield cluster
    cluster.stop()


@pytest.fixture(scope="module")
def service(tmp_path_factory, spark_cluster, cluster_a, kafka_broker):
    base = tmp_path_factory.mktemp("clusters")
    loopback = {"spark.driver.host": "127.0.0.1"}
    clusters = {
        "local": {"master": "local[2]"},
        "standalone": {
            "master": spark_cluster.status().master_url,
            "teams": ["pricing"],
            "resources": RESOURCES,
            "conf": loopback,
        },
        "a": {
            "master": cluster_a.status().master_url,
            "resources": RESOURCES,
            "conf": loopback,
            "standby": "standalone",
            "unreachable_after_s": 3,
        },
    }
    service = Service(base / "state", base / "home", config={"clusters": clusters}).start()
    yield service
    service.close()


def test_a_submitted_surge_dagger_on_a_standalone_cluster_equals_replay(
    service, spark_cluster, kafka_broker, spark, tmp_path
):
    bootstrap = kafka_broker.bootstrap
    topic, sent, spec, body = submit(
        service, bootstrap, tmp_path, "surge-standalone", "standalone", malformed=0.01
    )
    events, out = list(sent.events), spec.sinks[0].path
    # another team may not use the cluster
    refused = service.api("bob", "POST", "/jobs", {**body, "name": "x", "team": "supply"})
    assert refused.status_code == 400 and "local" in refused.json()["error"]["message"]

    expected = replayed(spark, spec, events, tmp_path)
    assert len(expected) > 100
    job = service.wait_for(
        "surge-standalone", lambda j: len(parquet_rows(spark, out)) >= len(expected), 300,
        "every closed window in Parquet",
    )  # fmt: skip
    assert job["cluster"] == "standalone" and job["status"] == "RUNNING"
    assert parquet_rows(spark, out) == expected
    # the undecodable records, collected on the cluster's executors, each kept once
    assert sent.malformed > 0
    job = service.wait_for(
        "surge-standalone", lambda j: (j["metrics"] or {}).get("dead_letters") == sent.malformed,
        60, "every dead letter counted",
    )  # fmt: skip
    letters = spark.read.parquet(str(tmp_path / "dead-letters")).collect()
    assert len(letters) == len({(r.partition, r.offset) for r in letters}) == sent.malformed
    assert all(r.topic == topic and r.error and r.value for r in letters)

    # it ran on the cluster: an application of the master, with the cluster's resources
    app = app_of(spark_cluster, "surge-standalone")
    assert app is not None and app["cores"] == RESOURCES["cores"], app
    assert 768 in (app.get("memoryperexecutor"), app.get("memoryperslave")), app
    run = json.loads((service.state / "runs" / job["run"]["id"] / "run.json").read_text())
    assert run["cluster"] == "standalone" and run["spark_conf"]["spark.cores.max"] == "2"

    # stopped, it gives the cluster's cores back (the failover test's job needs them)
    assert service.api("alice", "POST", "/jobs/surge-standalone/stop").status_code == 200
    service.wait_for("surge-standalone", lambda j: j["status"] == "STOPPED", 120, "STOPPED")


def iso_s(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def test_a_job_whose_cluster_dies_resumes_on_the_standby_exactly(
    service, cluster_a, spark_cluster, kafka_broker, spark, tmp_path, record_property
):
    bootstrap = kafka_broker.bootstrap
    topic, sent, spec, _ = submit(service, bootstrap, tmp_path, "surge-failover", "a")
    events = list(sent.events)
    out = spec.sinks[0].path
    first = service.wait_for(
        "surge-failover", lambda j: j["status"] == "RUNNING" and parquet_rows(spark, out), 300,
        "a first window from cluster a",
    )  # fmt: skip
    assert app_of(cluster_a, "surge-failover") is not None

    cluster_a.kill()  # the master and its worker (and so the job's executor) are gone
    killed_at = time.time()
    more = publish_events(bootstrap, topic, 2000, seed=52, rate_per_s=10.0,
                          start=_after(events)).events  # fmt: skip
    events += more

    def resumed(job: dict) -> bool:
        run, metrics = job["run"], job["metrics"] or {}
        return (
            job["cluster"] == "standalone" and run is not None and run["id"] != first["run"]["id"]
            and bool(metrics.get("batches")) and bool(metrics.get("last_batch_at"))
        )  # fmt: skip

    job = service.wait_for("surge-failover", resumed, 180, "a batch on the standby")
    took = iso_s(job["metrics"]["last_batch_at"]) - killed_at
    record_property(
        "figure", f"Spark failover: cluster killed -> first batch on the standby {took:.1f} s"
    )
    # a figure, not a timed assertion (the wait above bounds it at 180 s): the target is
    # 60 s; 32.8 s in a quiet CI run, 45.8 s on a busy 2-core machine, 90.3 s in a slow hour
    moved = [e for e in service.get("/jobs/surge-failover/events")["events"]
             if e["action"] == "moved"]  # fmt: skip
    assert len(moved) == 1 and moved[0]["actor"] == "supervisor", moved
    assert (moved[0]["detail"]["from"], moved[0]["detail"]["to"]) == ("a", "standalone")

    expected = replayed(spark, spec, events, tmp_path)
    service.wait_for(
        "surge-failover", lambda j: len(parquet_rows(spark, out)) >= len(expected), 300,
        "every closed window in Parquet",
    )  # fmt: skip
    assert parquet_rows(spark, out) == expected
    assert app_of(spark_cluster, "surge-failover") is not None
    assert service.job("surge-failover")["failures"] == 0


def _after(events: list[dict]) -> datetime:
    """The event time just after the latest of ``events`` (the next ones are not late)."""
    return datetime.fromtimestamp(max(event_ms(e) for e in events) / 1000 + 1, UTC)
