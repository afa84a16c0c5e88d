"""The health page's figures from events and progress records (pure functions)."""

from __future__ import annotations

import pytest

from workbench.server.health_series import batches, charts, epoch, status_spans

pytestmark = pytest.mark.unit


def event(at: str, action: str) -> dict:
    return {"time": f"2026-11-24T10:{at}Z", "action": action, "actor": "supervisor"}


def test_status_history_from_events():
    events = [
        event("00:00", "submit"),
        event("00:01", "spawn"),
        event("00:05", "running"),
        event("00:06", "healthy"),  # changes no status
        event("02:00", "run-failed"),
        event("02:00", "backoff"),
        event("02:02", "spawn"),
        event("02:09", "running"),
    ]
    now = epoch("2026-11-24T10:05:00Z")
    spans = status_spans(events, "RUNNING", now)
    assert [s.label for s in spans] == [
        "SUBMITTED", "STARTING", "RUNNING", "BACKING_OFF", "STARTING", "RUNNING"
    ]  # fmt: skip
    assert spans[2].end - spans[2].start == 115 and spans[-1].end == now
    assert all(a.end == b.start for a, b in zip(spans, spans[1:], strict=False))


def test_a_status_the_events_do_not_show_ends_the_history():
    spans = status_spans([event("00:00", "spawn")], "FAILED", epoch("2026-11-24T10:01:00Z"))
    assert [s.label for s in spans] == ["STARTING", "FAILED"]
    assert status_spans([], "SUBMITTED", 0) == []


def record(t: float, **extra) -> dict:
    return {"time": t, "input_rate": 10.0, "processed_rate": 20.0, "duration_ms": 1500, **extra}


def test_batches_from_progress_records():
    run = batches(
        [
            record(100.0, watermark="1970-01-01T00:01:10Z", dead_letters_total=2, late_rows=1),
            record(90.0, dead_letters_total=0),  # out of order: sorted by time
            record(110.0, watermark="1970-01-01T00:01:20.500Z", dead_letters_total=5),
            {"batch_id": 9},  # no time: skipped
        ]
    )
    assert [b.time for b in run] == [90.0, 100.0, 110.0]
    assert [b.dead_letters for b in run] == [0, 2, 3]  # differences of the run's total
    assert [b.watermark_delay_s for b in run] == [None, 30.0, 29.5]
    assert run[0].duration_s == 1.5 and run[1].late == 1 and run[0].late is None


def test_charts_break_between_runs():
    first, second = batches([record(1.0), record(2.0)]), batches([record(10.0)])
    rates = charts([first, second])[0]
    assert rates.title == "Input and processed rate" and rates.area
    assert rates.series[0].points == [(1.0, 10.0), (2.0, 10.0), (10.0, None), (10.0, 10.0)]
    titles = [c.title for c in charts([first])]
    assert titles == [
        "Input and processed rate",
        "Batch duration",
        "Offsets behind latest (as each batch was planned)",
        "Watermark delay (batch time - watermark)",
        "Late rows and dead letters per batch",
    ]


@pytest.mark.parametrize("stamp", [None, "", "not a time"])
def test_epoch_of_nothing(stamp):
    assert epoch(stamp) is None
