"""The load driver on the real broker: exactly rate × duration events, paced to the wall
clock, the job metrics sampled meanwhile; and ``workbench load`` as a user runs it."""

from __future__ import annotations

import json
import uuid

import pytest
from chaoskit import topic_size
from cli_runner import workbench

from workbench.chaos.load import LoadPlan, drive, kind_of
from workbench.exceptions import ChaosError

pytestmark = pytest.mark.unit


def test_drives_the_planned_count_at_the_target_rate(kafka_broker):
    topic = f"load-{uuid.uuid4().hex[:8]}"
    plan = LoadPlan(topic, "esb.booking.BookingLogMessage", rate=300, duration_s=3, seed=5)
    bootstrap = kafka_broker.bootstrap
    result = drive(bootstrap, plan, job_metrics=lambda: {"records": topic_size(bootstrap, topic)})
    assert result.sent == plan.count == 900
    assert topic_size(kafka_broker.bootstrap, topic) == 900
    assert 2.0 < result.seconds < 4.5
    assert 200 < result.achieved_rate < 450
    assert result.samples[-1][1] == 900
    assert len(result.job_samples) >= 3 and result.job_samples[-1]["records"] == 900
    assert result.sustained is not None and result.sustained > 150


def test_unknown_messages_are_named_with_what_exists():
    assert kind_of("driver_pings") == "driver_pings"
    with pytest.raises(ChaosError, match="bookings \\(esb.booking.BookingLogMessage\\)"):
        kind_of("esb.Nope")


def test_the_load_command_reports_json(kafka_broker):
    topic = f"load-{uuid.uuid4().hex[:8]}"
    done = workbench(
        "load", "--topic", topic, "--message", "payments", "--rate", 100, "--duration", 2,
        "--bootstrap-servers", kafka_broker.bootstrap, "--malformed", 0.1, "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["sent"] == 200 and report["kind"] == "payments"
    assert report["malformed_fraction"] == 0.1 and 5 < report["malformed"] < 40
    assert report["sustained"] is None
    bad = workbench("load", "--topic", topic, "--message", "nope", "--rate", 1, "--duration", 1,
                    "--bootstrap-servers", kafka_broker.bootstrap)  # fmt: skip
    assert bad.returncode == 1 and "no message 'nope'" in bad.stderr
