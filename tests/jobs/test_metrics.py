"""Job metrics from recorded Spark progress (tests/fixtures/jobs/progress.json: four
micro-batches of a surge job reading 1,500 records at most 600 per trigger)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pyspark.sql.streaming.listener import StreamingQueryProgress

from workbench.jobs import metrics
from workbench.streaming.progress import Totals, offsets_behind, report

pytestmark = pytest.mark.unit

RECORDED = json.loads((Path(__file__).parents[1] / "fixtures/jobs/progress.json").read_text())


def test_offsets_behind_latest_sums_partitions():
    behind = [offsets_behind(p["sources"]) for p in RECORDED]
    assert behind == [1500 - 598, 101 + 104 + 99, 0, 0]
    twice = RECORDED[1]["sources"] * 2  # a source scanned twice counts once
    assert offsets_behind(twice) == 304
    as_text = [{k: json.dumps(v) for k, v in s.items()} for s in RECORDED[1]["sources"]]
    assert offsets_behind(as_text) == 304  # pyspark gives offsets as JSON text
    assert offsets_behind([{"description": "rate", "endOffset": 5, "latestOffset": 9}]) is None


def test_snapshot_has_the_contracts_keys_from_reports_and_totals():
    assert tuple(metrics.empty()) == metrics.KEYS
    reports = [report(StreamingQueryProgress.fromJson(p)) for p in RECORDED]
    assert [r.offsets_behind for r in reports] == [902, 304, 0, 0]
    totals = Totals(input_rows=1500, late_rows=2, dead_letters=3, batches=4)
    totals.add_written("influx", 0)
    assert totals.last_write_at is None  # a write of no rows is not a write
    totals.add_written("influx", 7)
    out = metrics.snapshot(reports[1], totals, 1_795_000_000.25)
    assert tuple(out) == metrics.KEYS
    assert out["offsets_behind_latest"] == 304
    assert out["watermark"] == "2026-11-24T13:00:05.285Z"
    assert (out["records"], out["late"], out["dead_letters"], out["batches"]) == (1500, 2, 3, 4)
    assert out["last_batch_at"] == "2026-11-18T11:06:40.250Z"
    assert out["last_sink_write_at"].endswith("Z")
    assert out["batch_duration_ms"] == RECORDED[1]["durationMs"]["triggerExecution"]
    line = metrics.record(reports[1], 1.5)
    assert line["batch"] == 1 and line["offsets_behind"] == 304 and line["time"] == 1.5
    assert "dead_letters_total" not in line
    assert metrics.record(reports[1], 1.5, totals)["dead_letters_total"] == 3


def test_no_batch_yet():
    out = metrics.snapshot(None, Totals(), None)
    assert out == metrics.empty()
