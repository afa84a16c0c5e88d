"""Every shipped notebook runs top to bottom through papermill on the workbench kernel,
against the real broker, and its results equal an independent computation over the
seeded demo events it published (plain Python and s2sphere)."""

from __future__ import annotations

import json
import math
import uuid
from collections import defaultdict
from datetime import timedelta
from pathlib import Path

import pytest
from geo_reference import s2_id, surge_windows
from streaming import START, surge_rows, to_ms

from workbench.atlas.mime import MIME_TYPE
from workbench.dev.generator import Generator
from workbench.notebook.examples import demo_events
from workbench.notebook.scaffold import EXAMPLES

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parent.parent
EVENTS, SEED, RATE = 2400, 13, 20.0


def events_of(kind: str, count: int = EVENTS, seed: int = SEED) -> list[dict]:
    """The events ``examples.demo_events`` publishes for these arguments."""
    return Generator(seed=seed, start=START, rate_per_s=RATE).take(kind, count)


def execute(notebook: Path, out: Path, kernel: str, **parameters) -> dict:
    import nbformat
    import papermill

    papermill.execute_notebook(
        str(notebook),
        str(out),
        parameters=parameters,
        kernel_name=kernel,
        cwd=str(out.parent),
        progress_bar=False,
        execution_timeout=600,
    )
    return nbformat.read(str(out), as_version=4)


def read_rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def outputs(nb, mime: str) -> list[str]:
    return [
        "".join(o["data"][mime]) if isinstance(o["data"][mime], list) else str(o["data"][mime])
        for cell in nb.cells
        for o in cell.get("outputs", [])
        if "data" in o and mime in o["data"]
    ]


def minute_end(event: dict) -> int:
    ms = to_ms(event["event_timestamp"])
    return (ms // 60_000 + 1) * 60_000


def driver_supply(events) -> dict:
    groups: dict = defaultdict(list)
    for e in events:
        if e["status"] == "AVAILABLE":
            groups[(s2_id(e["lat"], e["long"], 13), e["vehicle_type"], minute_end(e))].append(
                e["driver_id"]
            )
    return {k: (len(set(v)), len(v)) for k, v in groups.items()}


def api_health(events) -> dict:
    groups: dict = defaultdict(list)
    for e in events:
        groups[(e["service"], minute_end(e))].append(e)
    return {
        key: (
            len(group),
            sum(1 for e in group if e["status_code"] >= 500),
            sorted(e["latency_ms"] for e in group),
        )
        for key, group in groups.items()
    }


def near_percentile(value: int, ordered: list[int], p: float) -> bool:
    """Spark's percentile_approx is exact on small groups up to where the rank falls."""
    rank = p * len(ordered)
    low, high = max(math.floor(rank) - 1, 0), min(math.ceil(rank), len(ordered) - 1)
    return ordered[low] <= value <= ordered[high]


def streams(nb, name: str) -> list[str]:
    return [
        o["text"] for cell in nb.cells for o in cell.get("outputs", [])
        if o.get("output_type") == "stream" and o.get("name") == name
    ]  # fmt: skip


@pytest.fixture
def run_example(kafka_broker, workbench_kernel, tmp_path):
    """Run an example in ``tmp_path`` (its working folder); nothing from Spark's JVM shows
    in the cells, and Spark leaves nothing in the working folder."""

    def run(file: str, kind: str, topic: str | None = None):
        topic = topic or f"{kind}-{uuid.uuid4().hex[:8]}"
        result = tmp_path / "rows.jsonl"
        nb = execute(
            ROOT / "notebooks" / file,
            tmp_path / file,
            workbench_kernel,
            bootstrap_servers=kafka_broker.bootstrap,
            topic=topic,
            events=EVENTS,
            seed=SEED,
            start=START.isoformat(),
            result_path=str(result),
        )
        assert streams(nb, "stderr") == []
        left = {p.name for p in tmp_path.iterdir()} - {file, result.name}
        assert left == set(), f"left in the notebook's folder: {left}"
        return nb, read_rows(result)

    return run


def test_surge_pricing_notebook(run_example, kafka_broker):
    """The topic already holds demo events from 2.5 hours later (as after ``make demo``):
    the notebook previews only what it published, in order, and nothing is late."""
    topic = f"bookings-{uuid.uuid4().hex[:8]}"
    later = START + timedelta(hours=2, minutes=30)
    demo_events(kafka_broker.bootstrap, "bookings", topic=topic, events=600, seed=3, start=later)
    nb, rows = run_example("surge_pricing.ipynb", "bookings", topic)
    assert surge_rows(rows) == surge_windows(events_of("bookings"))
    windows = [to_ms(r["window_timestamp"]) for r in rows]
    last_event = to_ms(events_of("bookings")[-1]["event_timestamp"])
    assert windows == sorted(windows)
    assert to_ms(START) < windows[0] and windows[-1] <= last_event + 60_000
    counts = outputs(nb, "text/plain")[-1]
    assert "'records': 2400" in counts and "'late': 0" in counts, counts
    assert outputs(nb, MIME_TYPE), "the map cell shows a map (layer data the lab extension draws)"
    assert outputs(nb, "image/svg+xml"), "the chart cell shows a chart"


def test_driver_supply_notebook(run_example):
    _, rows = run_example("driver_supply.ipynb", "driver_pings")
    got = {
        (r["tag_s2id"], r["tag_vehicle_type"], to_ms(r["window_timestamp"])): (
            r["available_drivers"],
            r["pings"],
        )
        for r in rows
    }
    assert got == driver_supply(events_of("driver_pings"))


def test_api_health_notebook(run_example):
    _, rows = run_example("api_health.ipynb", "api_logs")
    expected = api_health(events_of("api_logs"))
    assert {(r["tag_service"], to_ms(r["window_timestamp"])) for r in rows} == set(expected)
    for r in rows:
        requests, errors, latencies = expected[(r["tag_service"], to_ms(r["window_timestamp"]))]
        assert (r["requests"], r["errors"]) == (requests, errors)
        assert r["error_rate"] == pytest.approx(errors / requests)
        for p in (50, 95, 99):
            assert near_percentile(r[f"latency_p{p}_ms"], latencies, p / 100), (r, p)


def test_template_previews(kafka_broker, workbench_kernel, tmp_path):
    """The template samples and previews (test_promote.py promotes it)."""
    from workbench.cli.main import main

    assert main(["new", "hotspots", "--dir", str(tmp_path)]) == 0
    notebook = tmp_path / "hotspots.ipynb"
    topic = f"bookings-{uuid.uuid4().hex[:8]}"
    demo_events(kafka_broker.bootstrap, "bookings", topic=topic, events=EVENTS, seed=SEED,
                start=START)  # fmt: skip
    streams = [
        {
            "table": "booking",
            "message": "esb.booking.BookingLogMessage",
            "topics": [topic],
            "event_timestamp_field": "event_timestamp",
            "starting_offsets": "earliest",
        }
    ]
    preview_rows = tmp_path / "preview.jsonl"
    execute(notebook, tmp_path / "preview.ipynb", workbench_kernel, streams=streams,
            bootstrap_servers=kafka_broker.bootstrap, result_path=str(preview_rows))  # fmt: skip
    assert surge_rows(read_rows(preview_rows)) == surge_windows(events_of("bookings"))


def test_every_shipped_notebook_is_tested():
    tested = {ex.file for ex in EXAMPLES} | {"city_dashboard.ipynb", "quality.ipynb"}
    assert {p.name for p in (ROOT / "notebooks").glob("*.ipynb")} == tested
