"""Probe values: the watermark lag (end-to-end latency) and several jobs as one sample."""

from __future__ import annotations

import pytest

from workbench.chaos.probes import combine, job_sample, watermark_lag

pytestmark = pytest.mark.unit


def test_the_watermark_lag_is_now_minus_the_watermark():
    assert watermark_lag("2026-01-01T00:00:00.000Z", now=1767225630.0) == 30.0
    assert watermark_lag(None) is None and watermark_lag("1970-01-01T00:00:00Z") is None
    view = {"status": "RUNNING", "run": {"id": "r1"}, "metrics": {"records": 5, "batches": 2}}
    sample = job_sample(view)
    assert sample["run"] == "r1" and sample["records"] == 5 and sample["watermark_lag_s"] is None


def test_several_jobs_add_up_and_the_worst_counts():
    one = {
        "status": "RUNNING",
        "run": "a",
        "records": 10,
        "processed_rate": 1.0,
        "input_rate": 2.0,
        "lag": 0,
        "batch_ms": 300,
        "batches": 4,
        "watermark_lag_s": 12.0,
    }
    two = {**one, "run": "b", "records": 5, "lag": 7, "batch_ms": 900, "batches": 1,
           "watermark_lag_s": 40.0}  # fmt: skip
    both = combine([one, two])
    assert both["status"] == "RUNNING" and both["run"] == "a,b"
    assert (both["records"], both["lag"], both["processed_rate"]) == (15, 7, 2.0)
    assert (both["batch_ms"], both["batches"], both["watermark_lag_s"]) == (900, 1, 40.0)
    down = combine([one, {**two, "status": "BACKING_OFF", "lag": None}])
    assert down["status"] == "BACKING_OFF" and down["lag"] is None
