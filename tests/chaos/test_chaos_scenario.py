"""Scenario files: the documented shape loads; mistakes name their key and file."""

from __future__ import annotations

import pytest

from workbench.chaos.scenario import load_scenario
from workbench.exceptions import SpecError

pytestmark = pytest.mark.unit

GOOD = """
name: broker-kill-under-load
description: The surge dagger rides out a broker crash.
hypothesis: No window is lost or doubled.
job: surge-pricing
recovery_timeout: 2m
cases:
  - name: kill-the-broker
    type: kafka
    fault: broker_kill
    start_after: 5s
    downtime: 20s
    load: {topic: booking-log, message: bookings, rate: 200, duration: 40s, seed: 7}
  - name: slow-network
    blast_radius: cluster
    type: network
    fault: latency
    params: {ms: 200}
    downtime: 500ms
    load: {topic: booking-log, message: bookings, rate: 50, duration: 10s}
"""


def write(tmp_path, text: str):
    path = tmp_path / "scenario.yaml"
    path.write_text(text)
    return path


def test_a_scenario_file_loads_with_durations_in_seconds(tmp_path):
    scenario = load_scenario(write(tmp_path, GOOD))
    assert scenario.control and scenario.recovery_timeout == 120.0
    kill, slow = scenario.cases
    assert (kill.fault, kill.downtime, kill.start_after, kill.blast_radius) == (
        "broker_kill", 20.0, 5.0, "job",
    )  # fmt: skip
    assert kill.load.duration == 40.0 and kill.load.plan().count == 8000
    assert slow.downtime == 0.5 and slow.params == {"ms": 200} and slow.load.seed == 42


@pytest.mark.parametrize(
    ("change", "key", "says"),
    [
        (("broker_kill", "broker_kil"), "cases.0.fault", "Did you mean broker_kill"),
        (("downtime: 20s", "downtime: soon"), "cases.0.downtime", "not a duration"),
        (("type: kafka", "type: disk"), "cases.0.type", "'kafka'"),
        (("seed: 7", "seed: 7, speed: 3"), "cases.0.load.speed", "Extra inputs"),
    ],
)
def test_mistakes_name_their_key(tmp_path, change, key, says):
    path = write(tmp_path, GOOD.replace(*change))
    with pytest.raises(SpecError) as caught:
        load_scenario(path)
    assert key in str(caught.value) and says in str(caught.value)
    assert str(path) in str(caught.value)


def test_ledgers_read_parquet_or_influx_one_each(tmp_path):
    influx = "{url: 'http://127.0.0.1:8086', database: d, measurement: m}"
    both = (
        GOOD + "ledger:\n  - {parquet: /data/s, window: 10s}\n"
        f"  - {{influx: {influx}, window: 10s}}\n"
    )
    parquet, points = load_scenario(write(tmp_path, both)).ledgers
    assert parquet.describe() == "parquet /data/s"
    assert points.describe() == "influx http://127.0.0.1:8086 d/m"
    neither = GOOD + "ledger: {window: 10s}\n"
    with pytest.raises(SpecError, match="give 'parquet' .a folder. or 'influx'"):
        load_scenario(write(tmp_path, neither))


def test_each_fault_names_the_parts_of_the_run_it_needs(tmp_path):
    """``workbench chaos run`` starts a fault proxy for the faults that need one (it asks
    the fault, not the case's type), so a fault's needs are parts a run has."""
    from dataclasses import fields

    from workbench.chaos.env import ChaosEnv
    from workbench.chaos.faults import FAULTS

    parts = {f.name for f in fields(ChaosEnv)}
    assert all(fault.needs and set(fault.needs) <= parts for fault in FAULTS)
    assert [f.name for f in FAULTS if "proxy" in f.needs] == ["latency", "loss", "partition"]
    scenario = load_scenario(write(tmp_path, GOOD))
    assert [FAULTS.get(c.fault).type for c in scenario.cases] == [c.type for c in scenario.cases]
