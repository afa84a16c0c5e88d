"""Jobs as queries of a shared Spark application (a cluster with ``jobs_per_app`` above 1),
end to end with real processes: ``workbench serve``, the session broker, real Spark; the
rows of two co-hosted daggers exact in Parquet across a SIGKILL of their application, a
job that cannot share failing alone, teams in separate applications, and an idle
application ending."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from geo_reference import surge_windows
from polling import wait_for as wait_until
from service_process import Service, runner_processes
from streaming import closed, new_topic, surge_rows, surge_spec
from test_end_to_end import batches, kill_in_a_batch, more_events, running

CLUSTERS = {"local": {"master": "local[2]"}, "shared": {"master": "local[2]", "jobs_per_app": 3}}
LEVELS = {"shared-13": 13, "shared-12": 12}


@pytest.fixture(scope="module")
def service(tmp_path_factory, kafka_broker):
    base = tmp_path_factory.mktemp("shared")
    service = Service(base / "state", base / "home", config={"clusters": CLUSTERS}).start()
    yield service
    service.close()


def committed_rows(spark, path: Path) -> int:
    """Rows of the Parquet sink's committed files (0 until its file log lists one: files
    written by a batch not yet committed are not read)."""
    from pyspark.errors import AnalysisException

    try:
        return spark.read.parquet(str(path)).count()
    except AnalysisException:  # no committed file yet: no schema to infer
        return 0


def submit(service: Service, user: str, team: str, spec) -> None:
    body = {"name": spec.name, "team": team, "spec_yaml": spec.to_yaml(), "cluster": "shared"}
    answer = service.api(user, "POST", "/jobs", body)
    assert answer.status_code == 201, answer.text


def test_co_hosted_daggers_stay_exact_fail_alone_and_their_application_ends_when_idle(
    service, kafka_broker, spark, tmp_path
):
    bootstrap = kafka_broker.bootstrap
    topic = new_topic(bootstrap, "shared")
    events = more_events(bootstrap, topic, 1500, seed=51)
    out = {}
    for name, level in LEVELS.items():
        out[name] = tmp_path / name / "pq"
        spec = surge_spec(bootstrap, topic, tmp_path / name,
                          [{"type": "parquet", "path": str(out[name])}], name=name)  # fmt: skip
        sql = spec.sql.replace("pickup_long, 13)", f"pickup_long, {level})")
        submit(service, "alice", "pricing", spec.model_copy(update={"sql": sql}))
    other = surge_spec(bootstrap, topic, tmp_path / "supply", [{"type": "log"}], name="shared-s")
    submit(service, "bob", "supply", other)
    jobs = {n: service.wait_for(n, running, 300, f"{n} RUNNING") for n in [*LEVELS, "shared-s"]}
    host = jobs["shared-13"]["run"]["host"]
    pid = jobs["shared-13"]["run"]["pid"]
    assert jobs["shared-12"]["run"]["host"] == host and jobs["shared-12"]["run"]["pid"] == pid
    assert jobs["shared-s"]["run"]["host"] != host and jobs["shared-s"]["run"]["pid"] != pid
    assert host.startswith("pricing-shared-") and os.getpgid(pid) == pid
    shown = service.cli("alice", "jobs", "show", "shared-13")
    assert f"in shared application {host} pid {pid}" in shown.stdout, shown.stdout

    # a job that cannot share the application (a driver setting) fails alone, and says why
    static = surge_spec(bootstrap, topic, tmp_path / "static", [{"type": "log"}],
                        name="shared-static", spark_conf={"spark.driver.memory": "3g"})  # fmt: skip
    submit(service, "alice", "pricing", static)
    failed = service.wait_for("shared-static", lambda j: j["status"] == "FAILED", 240, "FAILED")
    assert "jobs_per_app: 1" in failed["last_error"], failed["last_error"]
    for name in LEVELS:
        now = service.job(name)
        assert now["status"] == "RUNNING" and now["run"] == jobs[name]["run"], now

    # SIGKILL the application in a micro-batch: both daggers restart from their checkpoints
    def send(sent: list[dict]) -> list[dict]:
        return more_events(bootstrap, topic, 1500, 52 + len(sent), [*events, *sent])

    def kill() -> None:
        os.killpg(pid, signal.SIGKILL)

    events += kill_in_a_batch(jobs["shared-13"]["checkpoint"], kill, send)
    for name in LEVELS:
        again = service.wait_for(
            name, lambda j: running(j) and j["run"]["pid"] != pid, 300, f"{name} restarted"
        )
        assert "shared Spark application" in (again["last_error"] or ""), again
    events += more_events(bootstrap, topic, 1500, 53, events)
    for name, level in LEVELS.items():
        expected = closed(surge_windows(events, level=level), events)
        assert len(expected) > 100
        path, n = out[name], len(expected)

        def complete(_job, path=path, n=n):
            return committed_rows(spark, path) >= n

        service.wait_for(name, complete, 300, f"every closed window of {name} in Parquet")
        rows = spark.read.parquet(str(out[name])).collect()
        assert surge_rows(r.asDict() for r in rows) == expected, name

    # stopped, they leave their application idle, and it ends; the other team's runs on
    new_host = service.job("shared-13")["run"]["host"]
    for name in LEVELS:
        assert service.cli("alice", "jobs", "stop", name).returncode == 0
    for name in LEVELS:
        service.wait_for(name, lambda j: j["status"] == "STOPPED", 120, f"{name} STOPPED")
    folder = service.state / "hosts" / new_host
    wait_until(lambda: not runner_processes(folder), 60, "the idle application to end")
    assert (folder / "STOP").exists() and "ended" in (folder / "log").read_text()
    supply = service.job("shared-s")
    assert supply["status"] == "RUNNING" and supply["run"] == jobs["shared-s"]["run"]
    assert batches(supply) > batches(jobs["shared-s"])
    assert Path(supply["checkpoint"]).exists()
