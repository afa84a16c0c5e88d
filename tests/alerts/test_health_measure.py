"""What the job service measures for health rules from heartbeats (no database)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from workbench.alertmanager.health import HealthWatch
from workbench.jobs.db import Job, Run

pytestmark = pytest.mark.unit


def _job(desired: str = "running") -> Job:
    return Job(id=1, name="surge", team="pricing", status="RUNNING", desired=desired)


def _run(started: float, run_id: str = "1-1") -> Run:
    return Run(run_id=run_id, started_at=datetime.fromtimestamp(started, UTC))


def _beat(records: int, dead: int = 0, late: int = 0, wrote: str | None = None) -> dict:
    metrics = {"records": records, "dead_letters": dead, "late": late, "input_rate": 5.0}
    return {"metrics": metrics | {"last_sink_write_at": wrote, "offsets_behind_latest": 7}}


def test_ratios_and_no_data_over_the_window():
    watch, run = HealthWatch(window_s=10), _run(0)
    first = watch.measure(_job(), run, _beat(100, dead=0, late=0), at=100)
    assert first["offsets_behind_latest"] == 7 and first["no_data"] is False
    watch.measure(_job(), run, _beat(150, dead=5, late=10), at=105)
    later = watch.measure(_job(), run, _beat(200, dead=10, late=20), at=110)
    assert later["dead_letter_ratio"] == 10 / 110  # since the sample a window ago (t=100)
    assert later["late_ratio"] == 20 / 100
    still = watch.measure(_job(), run, _beat(200, dead=10, late=20), at=121)
    assert still["no_data"] is True and "dead_letter_ratio" not in still


def test_a_young_run_says_nothing_yet_and_a_missing_run_is_no_data():
    watch = HealthWatch(window_s=10)
    assert watch.measure(_job(), _run(95), _beat(0), at=100)["no_data"] is False
    assert watch.measure(_job(), None, None, at=100) == {"no_data": True, "no_sink_write": True}
    assert watch.measure(_job("stopped"), None, None, at=100) == {}


def test_no_sink_write():
    watch, run = HealthWatch(window_s=10), _run(0)
    wrote = datetime.fromtimestamp(95, UTC).isoformat()
    assert watch.measure(_job(), run, _beat(10, wrote=wrote), at=100)["no_sink_write"] is False
    assert watch.measure(_job(), run, _beat(10, wrote=wrote), at=106)["no_sink_write"] is True
    assert watch.measure(_job(), run, _beat(10), at=107)["no_sink_write"] is True
