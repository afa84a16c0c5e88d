"""Jobs on real Spark standalone clusters, through the job service (``workbench serve``):
a submitted surge dagger runs on the session's cluster (master + 2 workers on loopback)
and its rows equal ``workbench replay`` over the same events.

One service for the module; its clusters: ``local`` (``local[2]``) and ``standalone``
(the ``spark_cluster`` fixture's master, the job's resources from the cluster's defaults)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from service_process import Service
from streaming import closed, new_topic, publish_events, surge_rows, surge_spec

from workbench.generator import write_jsonl
from workbench.infra.spark import master_json
from workbench.replay import replay

#: the parallelism a job on ``standalone`` gets unless its spec says otherwise
RESOURCES = {"cores": 2, "executor_memory": "768m", "shuffle_partitions": 3}


def parquet_rows(path: str | Path) -> dict:
    """A Parquet sink's rows as surge rows, read without Spark ({} while a file is half written)."""
    import pyarrow as pa
    import pyarrow.dataset as ds

    try:  # a file being written (empty as yet) fails the read: ask again later
        table = ds.dataset(str(path), format="parquet").to_table()
    except (OSError, pa.ArrowInvalid):
        return {}
    return surge_rows(table.to_pylist())


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


@pytest.fixture(scope="module")
def service(tmp_path_factory, spark_cluster, kafka_broker):
    base = tmp_path_factory.mktemp("clusters")
    clusters = {
        "local": {"master": "local[2]"},
        "standalone": {
            "master": spark_cluster.status().master_url,
            "teams": ["pricing"],
            "resources": RESOURCES,
            "conf": {"spark.driver.host": "127.0.0.1"},
        },
    }
    service = Service(base / "state", base / "home", config={"clusters": clusters}).start()
    yield service
    try:
        service.stop_all()
    finally:
        service.stop()


def test_a_submitted_surge_dagger_on_a_standalone_cluster_equals_replay(
    service, spark_cluster, kafka_broker, spark, tmp_path
):
    bootstrap = kafka_broker.bootstrap
    topic = new_topic(bootstrap, "cluster-surge")
    events = list(publish_events(bootstrap, topic, 3000, seed=51, rate_per_s=10.0).events)
    out = str(tmp_path / "pq")
    spec = surge_spec(bootstrap, topic, tmp_path, [{"type": "parquet", "path": out}],
                      name="surge-standalone")  # fmt: skip
    body = {"name": "surge-standalone", "team": "pricing", "spec_yaml": spec.to_yaml(),
            "cluster": "standalone"}  # fmt: skip
    answer = service.api("alice", "POST", "/jobs", body)
    assert answer.status_code == 201, answer.text
    # another team may not use the cluster
    refused = service.api("bob", "POST", "/jobs", {**body, "name": "x", "team": "supply"})
    assert refused.status_code == 400 and "local" in refused.json()["error"]["message"]

    expected = replayed(spark, spec, events, tmp_path)
    assert len(expected) > 100
    job = service.wait_for(
        "surge-standalone", lambda j: len(parquet_rows(out)) >= len(expected), 300,
        "every closed window in Parquet",
    )  # fmt: skip
    assert job["cluster"] == "standalone" and job["status"] == "RUNNING"
    assert parquet_rows(out) == expected

    # it ran on the cluster: an application of the master, with the cluster's resources
    app = app_of(spark_cluster, "surge-standalone")
    assert app is not None and app["cores"] == RESOURCES["cores"], app
    assert 768 in (app.get("memoryperexecutor"), app.get("memoryperslave")), app
    run = json.loads((service.state / "runs" / job["run"]["id"] / "run.json").read_text())
    assert run["cluster"] == "standalone" and run["spark_conf"]["spark.cores.max"] == "2"
