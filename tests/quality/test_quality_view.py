"""The Voila view of data quality: rows from a checkpoint or a Parquet sink, and the
notebook served by Voila and drawn in headless Chromium (artifacts/quality-voila.png)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlencode

import pytest
from polling import wait_for
from services_browser import recorded_page

from workbench.dashboard.config import DashboardConfig
from workbench.dashboard.serve import start, stop
from workbench.dev.ports import free_port, port_taken
from workbench.quality import history
from workbench.quality.view import from_query, quality_html, rows_from

pytestmark = pytest.mark.unit

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "quality.ipynb"
ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts"
LOOPBACK = ("http://127.0.0.1", "ws://127.0.0.1", "data:", "blob:", "about:")
T0 = 1_790_000_400_000


def rows(topic, score=90.0, windows=3):
    return [
        {"window_timestamp": datetime.fromtimestamp((T0 + n * 600_000) / 1000, UTC),
         "tag_topic": topic, "total": 10 + n, "score": score + n, "emitted_batch": n}
        for n in range(windows)
    ]  # fmt: skip


def measured(topic: str, windows: int = 12) -> list[dict]:
    """Rows with every metric a page draws (12 windows of 1000 records, faults varying)."""
    out = []
    for row in rows(topic, 90.0, windows):
        n = row["emitted_batch"]
        missing, late = 10 * (n % 3), 20 + n
        row |= {"total": 1000 + n % 2 * 10, "unique": 1000, "expected": 1000 + missing,
                "missing": missing, "duplicates": n % 2 * 10, "key_duplicates": 0, "late": late,
                "undecodable": 3, "completeness": 1000 / (1000 + missing),
                "publish_latency_p50_ms": 800.0 + 10 * n, "publish_latency_p95_ms": 2500.0,
                "publish_latency_p99_ms": 300_000.0, "processing_latency_p50_ms": 4000.0 + n,
                "processing_latency_p95_ms": 9000.0, "processing_latency_p99_ms": 9900.0,
                "score": 100.0 - missing / 10 - n % 2 - late / 40}  # fmt: skip
        out.append(row)
    return out


def test_rows_from_a_checkpoint_and_from_parquet(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    history.append(tmp_path / "checkpoint", rows("a") + rows("b", 50.0))
    assert len(rows_from(tmp_path / "checkpoint")) == 6
    sink = tmp_path / "sink" / "dt=2026-09-21"
    sink.mkdir(parents=True)
    table = pa.Table.from_pylist(rows("a") + [{**rows("a")[0], "total": 99, "emitted_batch": 5}])
    pq.write_table(table, sink / "part-0.parquet")
    found = rows_from(tmp_path / "sink")
    assert [r["total"] for r in found] == [99, 11, 12]
    page = quality_html(tmp_path / "checkpoint", topic="b")
    assert "Data quality: b" in page and "Data quality: a" not in page and "<svg" in page
    assert "No quality windows" in quality_html(tmp_path / "nothing")
    assert from_query("ckpt", None, None, "topic=b&hours=2.5") == ("ckpt", "b", 2.5)
    assert from_query("ckpt", "a", 1.0, "") == ("ckpt", "a", 1.0)


@pytest.fixture
def voila():
    """``url``: notebooks/quality.ipynb served as ``workbench dashboard --local --notebook
    notebooks/quality.ipynb`` serves it (Voila on 127.0.0.1, the workbench template)."""
    port = free_port()
    server = start(DashboardConfig.load(), port, notebook=NOTEBOOK)
    try:
        wait_for(lambda: port_taken(port) or server.poll() is not None, 90, "Voila to listen")
        assert server.poll() is None, "Voila exited"
        yield f"http://127.0.0.1:{port}/"
    finally:
        stop(server)


def test_the_notebook_in_voila_shows_each_topic(voila, chromium, tmp_path):
    """The notebook run by Voila (its parameters from the page's query string), drawn in
    headless Chromium with the network off."""
    history.append(tmp_path / "checkpoint", measured("bookings") + rows("payments", 40.0))
    page = recorded_page(chromium)
    query = urlencode({"source": str(tmp_path / "checkpoint"), "topic": "bookings"})
    page.goto(f"{voila}?{query}", timeout=120_000)
    heading = page.locator("h1", has_text="Data quality: bookings")
    heading.wait_for(timeout=120_000)
    assert page.locator("text=Data quality: payments").count() == 0  # topic=bookings
    assert page.locator("svg.chart").count() == 6
    assert page.locator("table.windows tr").count() == 13  # the heading and 12 windows
    assert "source = " not in page.inner_text("body")  # code cells hidden
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "quality-voila.png"), full_page=True)
    assert [u for u in page.requests if not u.startswith(LOOPBACK)] == []
    assert page.problems == []
