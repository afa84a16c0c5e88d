"""Chaos in CI at small scale, as the issue asks: a dagger run by the real job service
(``workbench serve``, its own Spark driver) reads the proxied broker under load while the
broker is killed for 20 s, then while the network adds 200 ms each way, then its driver
is SIGKILLed (blast radius: its team's jobs; the supervisor restarts it), then its
InfluxDB sink is stopped for a few seconds (blast radius: the cluster's jobs). One
service, one dagger, one scenario. The verdict comes from two ledgers: the bookings per
10 s event-time window the dagger wrote to Parquet (only files its sink committed) and
to InfluxDB, each against the same windows made again from the loads' seeds (2% of them
undecodable: the dead letters, windowed by their Kafka timestamp), with no window lost
or doubled; every fault was reverted; the report renders in headless
Chromium."""

from __future__ import annotations

import uuid

import pytest
from jobs.service_process import TOKENS, Service
from services_browser import recorded_page
from streaming import influx_v1_sink, surge_spec

from workbench.chaos.env import ChaosEnv
from workbench.chaos.journal import RevertJournal
from workbench.chaos.report import write_report
from workbench.chaos.runner import run_scenario
from workbench.chaos.scenario import Scenario
from workbench.client.rest import ServiceClient
from workbench.dev.ports import free_port
from workbench.dev.timeseries import InfluxServer
from workbench.kafka.admin import create_topics

WINDOW_S = 10
WATERMARK_S = 5
SQL = f"""SELECT count(1) AS bookings,
       TUMBLE_START(rowtime, INTERVAL '{WINDOW_S}' SECOND) AS window_start
FROM booking GROUP BY TUMBLE(rowtime, INTERVAL '{WINDOW_S}' SECOND)"""


def dagger_spec(bootstrap: str, topic: str, folder, influx: dict) -> str:
    """The surge test spec with the counting SQL, a 5 s watermark, a Parquet sink and an
    InfluxDB one."""
    sink = {"type": "parquet", "path": str(folder / "out"), "time_column": "window_start"}
    points = {**influx, "time_column": "window_start"}
    return surge_spec(
        bootstrap, topic, folder, [sink, points], name="chaos-count", sql=SQL,
        watermark_delay=f"{WATERMARK_S}s", emit="final",
    ).to_yaml()  # fmt: skip


def scenario(topic: str, folder, influx: dict) -> Scenario:
    def load(seed: int, seconds: int) -> dict:
        return {"topic": topic, "message": "bookings", "rate": 40, "duration": f"{seconds}s",
                "seed": seed, "malformed": 0.02}  # fmt: skip

    windows = {
        "time_column": "window_start",
        "marks": "start",
        "count_column": "bookings",
        "dead_letters": str(folder / "dead-letters"),
        "window": f"{WINDOW_S}s",
        "watermark_delay": f"{WATERMARK_S + 2}s",
    }  # 2 s for the last arrivals
    points = {k: influx[k] for k in ("url", "database", "measurement")}
    return Scenario(
        name="four-faults",
        description="The counting dagger under load through a broker crash, a slow network, "
        "a driver crash and a sink outage.",
        hypothesis="No 10 s window is lost or doubled in either sink; the dagger catches up "
        "after each fault.",
        team="pricing",
        control=False,  # tests/chaos/test_chaos_runner.py runs a control; CI time is short
        recovery_timeout="120s",
        cases=[
            {"name": "kill the broker", "type": "kafka", "fault": "broker_kill",
             "start_after": "2s", "downtime": "20s", "load": load(101, 25)},
            {"name": "slow network", "type": "network", "fault": "latency",
             "params": {"ms": 200}, "start_after": "1s", "downtime": "5s",
             "load": load(102, 8)},
            {"name": "kill the team's drivers", "blast_radius": "team", "type": "spark",
             "fault": "driver_kill", "start_after": "2s", "downtime": "1s",
             "load": load(103, 6)},
            {"name": "InfluxDB down", "blast_radius": "cluster", "cluster": "local",
             "type": "sink", "fault": "sink_outage", "start_after": "2s", "downtime": "5s",
             "load": load(104, 8)},
        ],
        ledger=[{"parquet": str(folder / "out"), **windows}, {"influx": points, **windows}],
    )  # fmt: skip


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    base = tmp_path_factory.mktemp("chaos-service")
    service = Service(base / "state", base / "home").start()
    yield service
    service.close()


@pytest.fixture(scope="module")
def influx(tmp_path_factory):
    """An InfluxDB of the test's own (its outage must not touch the session's)."""
    with InfluxServer(tmp_path_factory.mktemp("chaos-influx"), free_port()) as server:
        yield server


def test_a_dagger_rides_out_four_faults(chaos_broker, service, influx, chromium, tmp_path):
    broker, proxy = chaos_broker
    topic = f"chaos-e2e-{uuid.uuid4().hex[:6]}"
    create_topics(broker.bootstrap, {topic: 2})
    sink = {**influx_v1_sink(influx), "measurement": "chaos"}
    spec = dagger_spec(proxy.address, topic, tmp_path, sink)  # every connection: the proxy
    body = {"name": "chaos-count", "team": "pricing", "spec_yaml": spec, "note": "chaos"}
    answer = service.api("alice", "POST", "/jobs", body)
    assert answer.status_code == 201, answer.text
    job = answer.json()["id"]
    service.wait_for(job, lambda j: j["status"] == "RUNNING" and j["run"], 180, "running")

    env = ChaosEnv(proxy.address, [broker], proxy=proxy, job=str(job), sink=influx)
    env.client = ServiceClient(service.url, TOKENS["root"])
    plan = scenario(topic, tmp_path, sink)
    result = run_scenario(plan, env, RevertJournal(tmp_path / "j"))
    page_path = write_report(result, tmp_path / "report")  # report.json: what went wrong
    assert proxy.faults.latency_ms == 0 and broker.status().running and influx.running
    assert RevertJournal(tmp_path / "j").pending() == []
    for run in result["runs"]:
        assert not run["load_error"] and run["recovered"], run["timeline"]
        assert run["blast_radius"]["jobs"] == [str(job)]
    runs = [run["samples"][-1]["run"] for run in result["runs"]]
    assert runs[1] == runs[0] != runs[2] == runs[3], "the driver kill restarted the job only"
    parquet, points = result["ledgers"]
    for ledger in (parquet, points):
        assert ledger["passed"], ledger
        assert len(ledger["rows"]) >= 5 and ledger["totals"]["produced"] > 1500
    assert parquet["rows"] == points["rows"]
    # the undecodable records the seeds planted are the dagger's dead letters, per window
    assert all(row["dead_letters"] == row["malformed"] for row in parquet["rows"])
    assert parquet["totals"]["dead_letters"] > 10
    # the probes saw the event-time lag (a slow machine may catch up after the broker kill
    # in one batch, before any progress reports a watermark)
    assert any(s["watermark_lag_s"] for run in result["runs"] for s in run["samples"])
    assert result["passed"]

    page = recorded_page(chromium)
    page.set_content(page_path.read_text())
    assert page.problems == [] and page.requests == []
    text = page.inner_text("body")
    assert "PASS" in text and "The scenario's ledger: influx" in text
    assert text.count("Lost windows: none") == 2 and "End-to-end latency" in text
    page.close()
