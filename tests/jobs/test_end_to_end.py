"""The production half end to end, as users do it, with real processes: ``workbench
serve``; ``workbench promote`` of the surge notebook; jobs on the session broker writing
InfluxDB and Parquet, compared with an independent computation; teams; a SIGKILLed job;
a SIGKILLed and restarted service; jobs that fail at start; edit and rollback across
checkpoints; a refused promotion; a planted secret searched for everywhere.

One service for the module (its jobs: the promoted ``surge-e2e`` and the submitted
``edits-e2e``, both running from their fixtures to the module's end)."""

from __future__ import annotations

import json
import os
import signal
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path

import pytest
import yaml
from geo_reference import surge_windows
from jobkit import batches, running
from service_process import Service, runner_processes
from streaming import (
    START,
    closed,
    event_ms,
    influx_v1_rows,
    influx_v1_sink,
    new_topic,
    publish_events,
    surge_rows,
    surge_spec,
)
from test_promote import USE_SURGE, code_notebook

from workbench.dev.ports import free_port
from workbench.streaming.checkpoints import QUERY

ROOT = Path(__file__).resolve().parents[2]
SURGE = ROOT / "notebooks" / "surge_pricing.ipynb"
METRICS = {
    "input_rate", "processed_rate", "batch_duration_ms", "watermark", "offsets_behind_latest",
    "late", "dead_letters", "last_batch_at", "last_sink_write_at",
}  # fmt: skip
WINDOW_MS = 60_000


@pytest.fixture(scope="module")
def service(tmp_path_factory, kafka_broker, workbench_kernel):
    base = tmp_path_factory.mktemp("e2e")
    service = Service(base / "state", base / "home").start()
    yield service
    try:
        service.stop_all()
    finally:
        service.stop()


@pytest.fixture(scope="module")
def secret(tmp_path_factory) -> tuple[str, Path]:
    """A planted secret (the InfluxDB password of the promoted job) and its file."""
    value = f"planted-{uuid.uuid4().hex}"
    path = tmp_path_factory.mktemp("secrets") / "influx-password"
    path.write_text(value + "\n")
    return value, path


def more_events(bootstrap, topic, count, seed, before=(), rate_per_s=40.0) -> list[dict]:
    """``count`` events published after ``before``'s (event time continues, none late)."""
    start = START
    if before:
        start = datetime.fromtimestamp(max(event_ms(e) for e in before) / 1000 + 1, START.tzinfo)
    return list(
        publish_events(
            bootstrap, topic, count, seed=seed, start=start, rate_per_s=rate_per_s
        ).events
    )


def run_folders(service: Service, job_id: int) -> list[Path]:
    return sorted((service.state / "runs").glob(f"{job_id}-*"))


def drivers(service: Service, job_id: int) -> list[int]:
    """Every live job process of any run of the job."""
    return sorted(pid for run in run_folders(service, job_id) for pid in runner_processes(run))


def in_batch(checkpoint: str) -> bool:
    """Whether the query has begun a micro-batch it has not committed (Spark writes
    ``offsets/N`` when batch N starts, ``commits/N`` when it ends)."""
    query = Path(checkpoint) / QUERY

    def last(kind: str) -> int:
        return max((int(p.name) for p in (query / kind).glob("*") if p.name.isdigit()), default=-1)

    return last("offsets") > last("commits") >= 0


def kill_in_a_batch(checkpoint: str, kill, send, tries: int = 3) -> list[dict]:
    """``kill()`` while the query has begun a micro-batch it has not committed, events sent
    meanwhile by ``send(sent)`` (more after ``sent``, returned) in the background. Watched
    from the first event on: on a busy machine a batch can begin and end while the events
    are still being sent. Sends again if none was seen; returns every event sent."""
    sent: list[dict] = []
    for _ in range(tries):
        with ThreadPoolExecutor(1) as pool:
            sending, quiet_since = pool.submit(send, list(sent)), None
            while quiet_since is None or time.monotonic() - quiet_since < 30:
                if in_batch(checkpoint):
                    kill()
                    return sent + sending.result()
                if sending.done() and quiet_since is None:
                    quiet_since = time.monotonic()
                time.sleep(0.05)
            sent += sending.result()
    raise AssertionError(f"no micro-batch under way in {tries} sends of events")


@pytest.fixture(scope="module")
def surge(service, kafka_broker, influxdb_v1, secret, tmp_path_factory) -> dict:
    """``workbench promote notebooks/surge_pricing.ipynb --team pricing`` by alice, sinks
    InfluxDB (its password the planted secret, by reference) and Parquet."""
    bootstrap = kafka_broker.bootstrap
    topic = new_topic(bootstrap, "e2e-surge")
    events = more_events(bootstrap, topic, 2000, seed=21)
    influx = {**influx_v1_sink(influxdb_v1), "username": "writer",
              "password": f"${{file:{secret[1]}}}"}  # fmt: skip
    parquet = {"type": "parquet", "path": str(tmp_path_factory.mktemp("surge-out") / "pq")}
    done = service.cli(
        "alice", "promote", SURGE, "--team", "pricing", "--name", "surge-e2e",
        "-p", "bootstrap_servers", bootstrap, "-p", "topic", topic, "-p", "events", "0",
        "-p", "sinks", json.dumps([influx, parquet]),
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return {"topic": topic, "events": events, "influx": influx, "parquet": parquet,
            "promoted": done.stdout + done.stderr}  # fmt: skip


@pytest.fixture(scope="module")
def edits(service, kafka_broker, influxdb_v1, tmp_path_factory) -> dict:
    """A second job, ``edits-e2e``, submitted over the API: surge v1 into InfluxDB."""
    bootstrap = kafka_broker.bootstrap
    topic = new_topic(bootstrap, "e2e-edits")
    events = more_events(bootstrap, topic, 2400, seed=31, rate_per_s=10.0)
    influx = influx_v1_sink(influxdb_v1)
    tmp = tmp_path_factory.mktemp("edits")
    spec = surge_spec(bootstrap, topic, tmp, [influx], name="edits-e2e").to_yaml()
    body = {"name": "edits-e2e", "team": "pricing", "spec_yaml": spec, "note": "v1"}
    answer = service.api("alice", "POST", "/jobs", body)
    assert answer.status_code == 201, answer.text
    service.wait_for("edits-e2e", running, 240, "edits-e2e RUNNING")
    return {"topic": topic, "events": events, "influx": influx, "spec": spec, "tmp": tmp}


def test_promoted_surge_is_exact_survives_sigkill_and_other_teams_are_kept_out(
    service, kafka_broker, influxdb_v1, spark, surge
):
    assert "parity" in surge["promoted"]
    job = service.wait_for("surge-e2e", running, 240, "surge-e2e RUNNING")
    assert (job["team"], job["created_by"], job["version"]) == ("pricing", "alice", 1)
    first_run = job["run"]

    # another team: 404 on reads and actions alike, saying what to do; admins see all
    hidden = service.api("bob", "GET", f"/jobs/{job['id']}")
    assert hidden.status_code == 404, hidden.text
    assert "jobs list" in hidden.json()["error"]["message"], hidden.text  # what to do
    refused = service.api("bob", "POST", f"/jobs/{job['id']}/stop")
    assert (refused.status_code, refused.text) == (404, hidden.text)
    assert service.get("/jobs", "bob")["jobs"] == []
    assert "surge-e2e" in [j["name"] for j in service.get("/jobs", "root")["jobs"]]
    stop = service.cli("bob", "jobs", "stop", "surge-e2e")
    assert stop.returncode != 0 and "No job 'surge-e2e' that you can see" in stop.stderr, stop

    # jobs list for team pricing, with live metrics
    service.wait_for("surge-e2e", lambda j: batches(j) >= 1, 120, "a first batch")
    listed = service.cli("alice", "jobs", "list", "--team", "pricing", "--json")
    assert listed.returncode == 0, listed.stderr
    [mine] = [j for j in json.loads(listed.stdout) if j["name"] == "surge-e2e"]
    assert set(mine["metrics"]) >= METRICS and mine["status"] == "RUNNING"
    assert mine["metrics"]["batches"] >= 1 and mine["metrics"]["last_batch_at"]
    table = service.cli("alice", "jobs", "list")
    assert "surge-e2e" in table.stdout and "RUNNING" in table.stdout, table

    # SIGKILL the run's process group in a micro-batch (begun, not committed): the
    # supervisor restarts it from its checkpoint, which replays that batch
    events = surge["events"]

    def send(sent: list[dict]) -> list[dict]:
        return more_events(kafka_broker.bootstrap, surge["topic"], 1500, 22 + len(sent),
                           [*events, *sent])  # fmt: skip

    def kill() -> None:
        os.killpg(first_run["pid"], signal.SIGKILL)

    events += kill_in_a_batch(job["checkpoint"], kill, send)
    job = service.wait_for(
        "surge-e2e",
        lambda j: running(j) and j["run"]["id"] != first_run["id"],
        240,
        "a restarted run",
    )
    events += more_events(kafka_broker.bootstrap, surge["topic"], 1500, 23, events)
    expected = closed(surge_windows(events), events)
    assert len(expected) > 150

    def parquet_rows():
        return spark.read.parquet(surge["parquet"]["path"]).count()

    def complete(_job):  # the job writes InfluxDB, then Parquet: wait for both
        influx = len(influx_v1_rows(influxdb_v1, surge["influx"], mid_write=True))
        return influx >= len(expected) and parquet_rows() >= len(expected)

    service.wait_for("surge-e2e", complete, 300, "every closed window in InfluxDB and Parquet")
    assert influx_v1_rows(influxdb_v1, surge["influx"]) == expected
    rows = spark.read.parquet(surge["parquet"]["path"]).collect()
    assert surge_rows(r.asDict() for r in rows) == expected
    assert drivers(service, job["id"]) == [job["run"]["pid"]]
    actions = [e["action"] for e in service.get("/jobs/surge-e2e/events", "alice")["events"]]
    assert "submit" in actions and "run-failed" in actions and "backoff" in actions, actions


def test_a_killed_service_started_again_reattaches_both_running_jobs(
    service, kafka_broker, surge, edits
):
    jobs = {name: service.wait_for(name, running, 240, f"{name} RUNNING")
            for name in ("surge-e2e", "edits-e2e")}  # fmt: skip
    service.kill()
    for job in jobs.values():  # the jobs live on without their service
        assert drivers(service, job["id"]) == [job["run"]["pid"]]
    service.start()
    for name, topic in (("surge-e2e", surge["topic"]), ("edits-e2e", edits["topic"])):
        events = surge["events"] if name == "surge-e2e" else edits["events"]
        events += more_events(kafka_broker.bootstrap, topic, 200, 24, events, rate_per_s=10.0)
    for name, before in jobs.items():
        seen = batches(before)
        again = service.wait_for(name, lambda j, b=seen: batches(j) > b, 120, f"{name} batches")
        assert again["status"] == "RUNNING" and again["run"] == before["run"], again
        assert drivers(service, again["id"]) == [before["run"]["pid"]]
        actions = [e["action"] for e in service.get(f"/jobs/{name}/events")["events"]]
        assert actions.count("reattach") == 1, actions


def split(old: dict, new: dict, floor_ms: int) -> dict:
    """Windows ending at or before the handoff floor from ``old``, the others from ``new``."""
    return {k: v for k, v in old.items() if k[2] <= floor_ms} | {
        k: v for k, v in new.items() if k[2] > floor_ms
    }


def handoff_floor(service: Service, number: int) -> int:
    versions = service.get("/jobs/edits-e2e/versions", "alice")["versions"]
    [version] = [v for v in versions if v["number"] == number]
    floor = version["handoff"]["min_rowtime"]
    ms = event_ms({"event_timestamp": floor})
    assert ms % WINDOW_MS == 0, floor  # the start of a window of the new SQL's grid
    return ms


def test_edit_and_rollback_keep_influxdb_exact_across_each_switch(
    service, kafka_broker, influxdb_v1, edits
):
    bootstrap, topic, events = kafka_broker.bootstrap, edits["topic"], edits["events"]

    def level(n: int) -> dict:
        return closed(surge_windows(events, level=n), events)

    def holds(expected: dict, what: str) -> None:
        def equal(_job):
            return influx_v1_rows(influxdb_v1, edits["influx"], mid_write=True) == expected

        service.wait_for("edits-e2e", equal, 240, what)

    holds(level(13), "v1's closed windows")

    # edit: another S2 level (a SQL change: a new checkpoint handed off from v1's)
    edited = edits["tmp"] / "v2.yaml"
    spec = yaml.safe_load(edits["spec"])
    assert spec["sql"].count("pickup_long, 13)") == 2
    spec["sql"] = spec["sql"].replace("pickup_long, 13)", "pickup_long, 12)")
    edited.write_text(yaml.safe_dump(spec, sort_keys=False))
    done = service.cli("alice", "jobs", "edit", "edits-e2e", edited)
    assert done.returncode == 0, done.stdout + done.stderr
    service.wait_for("edits-e2e", lambda j: running(j) and j["run"]["version"] == 2, 240, "v2")
    floor2 = handoff_floor(service, 2)
    events += more_events(bootstrap, topic, 2400, 32, events, rate_per_s=10.0)
    holds(split(level(13), level(12), floor2), "v2's windows after v1's")

    # rollback to version 1: a copy of it as version 3, handed off from v2's checkpoint
    done = service.cli("alice", "jobs", "rollback", "edits-e2e", "--version", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    service.wait_for("edits-e2e", lambda j: running(j) and j["run"]["version"] == 3, 240, "v3")
    floor3 = handoff_floor(service, 3)
    assert floor3 > floor2
    events += more_events(bootstrap, topic, 2400, 33, events, rate_per_s=10.0)
    expected = split(split(level(13), level(12), floor2), level(13), floor3)
    assert {k for k in expected if floor2 < k[2] <= floor3}, "v2 wrote no window"
    holds(expected, "v3's windows after v2's")
    versions = service.get("/jobs/edits-e2e/versions", "alice")["versions"]
    assert [v["number"] for v in versions] == [1, 2, 3] and versions[-1]["current"]
    assert versions[2]["spec_yaml"] == versions[0]["spec_yaml"]


def test_bad_sql_is_refused_a_job_failing_at_start_ends_failed_and_the_others_run_on(
    service, kafka_broker, surge, edits, tmp_path
):
    others = {name: service.wait_for(name, running, 240, f"{name} RUNNING")
              for name in ("surge-e2e", "edits-e2e")}  # fmt: skip
    bad_sql = surge_spec(
        kafka_broker.bootstrap, edits["topic"], tmp_path / "sql", [{"type": "log"}],
        name="bad-sql", sql="SELECT no_such_column, count(1) AS n FROM booking "
        "GROUP BY no_such_column",
    ).to_yaml()  # fmt: skip
    closed_port = f"127.0.0.1:{free_port()}"
    quick = {"kafka.request.timeout.ms": "3000", "kafka.default.api.timeout.ms": "6000"}
    no_broker = surge_spec(closed_port, "nowhere", tmp_path / "broker", [{"type": "log"}],
                           {"kafka_options": quick}, name="no-broker").to_yaml()  # fmt: skip
    # the SQL is checked as `workbench validate` checks it: refused, nothing stored
    body = {"name": "bad-sql", "team": "pricing", "spec_yaml": bad_sql}
    answer = service.api("alice", "POST", "/jobs", body)
    assert answer.status_code == 400, answer.text
    error = answer.json()["error"]
    assert error["type"] == "SpecRefusedError" and "no_such_column" in error["message"], error
    assert service.api("alice", "GET", "/jobs/bad-sql").status_code == 404
    # a broker that does not answer passes submission (its own bootstrap_servers, not a
    # named cluster the service probes), then fails with backoff
    body = {"name": "no-broker", "team": "pricing", "spec_yaml": no_broker}
    answer = service.api("alice", "POST", "/jobs", body)
    assert answer.status_code == 201, answer.text
    for name, says in (("no-broker", closed_port),):
        job = service.wait_for(name, lambda j: j["status"] == "FAILED", 420, f"{name} FAILED")
        assert says in (job["last_error"] or ""), job
        events = service.get(f"/jobs/{name}/events", "alice")["events"]
        actions = [e["action"] for e in events]
        assert actions.count("run-failed") == 2 and "backoff" in actions, actions
        assert actions[-1] == "failed" and says in events[-1]["detail"]["error"], events[-1]
        logs = service.cli("alice", "jobs", "logs", name)
        assert logs.returncode == 0 and says in logs.stdout, logs.stdout[-3000:]
        assert drivers(service, job["id"]) == []
    for name, before in others.items():
        now = service.job(name)
        assert now["status"] == "RUNNING" and now["run"] == before["run"], now
        assert batches(now) >= batches(before)


def test_a_planted_secret_appears_nowhere_but_in_the_job_process(service, surge, secret):
    value, path = secret
    job = service.wait_for("surge-e2e", running, 240, "surge-e2e RUNNING")
    assert path.read_text().strip() == value

    # it is the job that reads it: the same sink with the file missing fails on the reference
    spec = yaml.safe_load(service.get("/jobs/surge-e2e/versions")["versions"][0]["spec_yaml"])
    assert spec["sinks"][0]["password"] == f"${{file:{path}}}"  # stored as written
    spec["sinks"][0]["password"] = f"${{file:{path}.missing}}"
    spec["sinks"] = spec["sinks"][:1]  # only the Influx sink, into a measurement of its own:
    spec["sinks"][0]["measurement"] = "surge_missing"  # surge-e2e owns its targets
    body = {"name": "secret-missing", "team": "pricing", "spec_yaml": yaml.safe_dump(spec)}
    assert service.api("alice", "POST", "/jobs", body).status_code == 201
    failed = service.wait_for("secret-missing", lambda j: j["status"] == "FAILED", 120, "FAILED")
    assert f"{path}.missing" in failed["last_error"], failed

    answers = [surge["promoted"]]
    for ref in ("surge-e2e", "secret-missing"):
        for what in ("", "/versions", "/events", "/progress?last=200"):
            answers.append(service.api("root", "GET", f"/jobs/{ref}{what}").text)
        for run in run_folders(service, service.job(ref)["id"]):
            logs = f"/jobs/{ref}/logs?run={run.name}&limit=100000000"
            answers.append(service.api("root", "GET", logs).text)
        for args in (("show", ref, "--json"), ("versions", ref), ("logs", ref), ("events", ref)):
            done = service.cli("alice", "jobs", *args)
            answers.append(done.stdout + done.stderr)
    answers.append(service.api("root", "GET", "/jobs").text)
    answers.append(service.api("root", "GET", "/jobs/surge-e2e/versions/1/notebook").text)
    answers.append(service.cli("alice", "jobs", "list", "--json").stdout)
    for i, text in enumerate(answers):
        assert value not in text, f"the secret is in answer {i}: {text[:300]}"

    searched = 0
    for folder in (service.state, service.home):  # records, runs, logs, specs, the database
        for where, _, files in os.walk(folder):  # not into the linked jars and schemas
            for name in files:
                file = Path(where, name)
                if not file.is_symlink():
                    searched += 1
                    assert value.encode() not in file.read_bytes(), f"the secret is in {file}"
    assert searched > 50
    assert (service.state / "workbench.db").exists()
    assert value.encode() not in (Path(f"/proc/{job['run']['pid']}/environ").read_bytes())


def test_a_promotion_whose_parity_differs_is_refused(service, kafka_broker, tmp_path):
    topic = new_topic(kafka_broker.bootstrap, "e2e-noisy")
    more_events(kafka_broker.bootstrap, topic, 300, seed=41)
    notebook = code_notebook(
        tmp_path / "noisy.ipynb",
        USE_SURGE,
        "wb.sample('booking', last=100)",
        "%%dagger\nSELECT customer_id, vehicle_type, rand() AS noise FROM `booking`",
        parameters=f"bootstrap = {kafka_broker.bootstrap!r}\ntopic = {topic!r}",
    )
    done = service.cli("alice", "promote", notebook, "--team", "pricing", "--name", "noisy-e2e")
    said = done.stdout + done.stderr
    assert done.returncode != 0, said
    assert "parity check failed" in said and "promotion refused" in said, said
    assert "only in the preview" in said and "only in the replay" in said, said
    assert '"noise":' in said  # the differing rows are printed
    assert service.api("root", "GET", "/jobs/noisy-e2e").status_code == 404
    assert "noisy-e2e" not in [j["name"] for j in service.get("/jobs")["jobs"]]
