"""The run folder both sides use: run.json round trip, atomic heartbeat, progress kept to
its last 200 lines, alert observations read after a batch id, STOP and exit.json."""

from __future__ import annotations

import pytest

from workbench.jobs.rundir import ALERTS_KEPT, PROGRESS_KEPT, RunConfig, RunDir

pytestmark = pytest.mark.unit


def test_both_sides_of_the_run_folder(tmp_path):
    run = RunDir(tmp_path / "runs" / "42-3")
    config = RunConfig("42-3", 42, "surge", "pricing", 2, str(tmp_path / "ckpt"))
    run.write_run_config({**config.to_dict(), "future_key": 1}, "name: surge\n")
    back = run.read_run_config()
    assert back.run_id == "42-3" and back.heartbeat_s == 2.0 and back.extra == {"future_key": 1}
    assert run.read_spec_yaml(back) == "name: surge\n"
    assert run.read_heartbeat() is None and run.read_exit() is None and run.tail_progress() == []

    beat = run.write_heartbeat("RUNNING", 1.0, {"batches": 0})
    assert run.read_heartbeat() == beat and beat["state"] == "RUNNING"
    for i in range(PROGRESS_KEPT + 5):
        run.append_progress({"batch": i})
    assert len(run.progress_file.read_text().splitlines()) == PROGRESS_KEPT
    assert [p["batch"] for p in run.tail_progress(2)] == [PROGRESS_KEPT + 3, PROGRESS_KEPT + 4]

    assert not run.stop_requested()
    run.request_stop()
    assert run.stop_requested()
    end = run.write_exit(0, "stopped")
    assert run.read_exit() == end and end["error"] is None
    assert not list(run.path.glob(".*tmp"))  # atomic writes leave nothing beside


def test_alert_lines_are_read_after_a_batch_id(tmp_path):
    run = RunDir(tmp_path / "run")
    run.path.mkdir()
    assert run.read_alerts_after() == []
    for batch in range(3):
        run.append_alerts({"batch_id": batch, "checkpoint": "c", "time": 1.0, "observations": []})
    with run.alerts_file.open("a") as out:
        out.write('{"batch_id": 3, "checkp')  # a line being written is skipped
    assert [r["batch_id"] for r in run.read_alerts_after()] == [0, 1, 2]
    assert [r["batch_id"] for r in run.read_alerts_after(1)] == [2]


def test_alert_lines_are_cut_to_the_last_ones_kept(tmp_path):
    run = RunDir(tmp_path)
    for batch in range(2 * ALERTS_KEPT + 10):
        run.append_alerts({"batch_id": batch, "observations": []})
    lines = run.read_alerts_after()
    assert ALERTS_KEPT <= len(lines) < 2 * ALERTS_KEPT
    assert lines[-1]["batch_id"] == 2 * ALERTS_KEPT + 9
    assert [r["batch_id"] for r in lines] == sorted(r["batch_id"] for r in lines)
