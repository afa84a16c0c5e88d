"""``workbench chaos run`` as a user runs it: a broker kill under load on the proxied
broker, the report written, the journal left empty, the broker back."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from jobs.service_process import test_home as make_home

from workbench.chaos.journal import RevertJournal
from workbench.kafka.admin import broker_ids

SCENARIO = """
name: kill-under-load
hypothesis: the producer rides out a 3s broker crash
control: false
recovery_timeout: 60s
cases:
  - name: kill
    type: kafka
    fault: broker_kill
    start_after: 1s
    downtime: 3s
    load: {topic: chaos-cli, message: bookings, rate: 50, duration: 6s, seed: 1}
"""


def test_chaos_run_kills_and_restarts_the_broker_and_writes_the_report(chaos_broker, tmp_path):
    broker, _ = chaos_broker
    home = make_home(tmp_path / "home")
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(SCENARIO)
    done = subprocess.run(
        [sys.executable, "-m", "workbench.cli.main", "chaos", "run", str(scenario),
         "--kafka-dir", str(broker.state_dir), "--report", str(tmp_path / "report")],
        capture_output=True, text=True, timeout=300,
        env={**os.environ, "WORKBENCH_HOME": str(home)},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "kill (broker_kill): sent 300 at" in done.stdout and "recovered in" in done.stdout
    assert (tmp_path / "report" / "report.html").exists()
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    (run,) = report["runs"]
    events = [e["event"] for e in run["timeline"]]
    assert events[:4] == ["load started", "fault applied", "fault reverting", "fault reverted"]
    assert any(s["broker_ms"] is None for s in run["samples"])  # the probe saw it down
    assert RevertJournal(home / "chaos" / "journal.jsonl").pending() == []
    assert broker.status().running and broker_ids(broker.bootstrap) == {1}
