"""Surge results for the dashboard tests: generated, and compared in one shape.

The rows are the surge dagger's result over generated bookings, computed independently
(``geo_reference.surge_windows``; the job tests check the dagger gives exactly these).
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

from geo_reference import surge_windows

from workbench.dev.generator import Generator
from workbench.sinks.influx import InfluxConfig
from workbench.sinks.influx_writer import InfluxWriter

#: Two hours ago on the hour: VictoriaMetrics drops points in the future.
START = datetime.now(UTC).replace(minute=0, second=0, microsecond=0) - timedelta(hours=2)
SPAN = (START - timedelta(minutes=5), START + timedelta(hours=1))


def surge_rows(count=6000, seed=5):
    """Result rows as the sinks get them: one per cell, vehicle type and closed minute."""
    events = Generator(seed=seed, start=START, rate_per_s=20.0).take("bookings", count)
    last_ms = max(datetime.fromisoformat(e["event_timestamp"]).timestamp() * 1000 for e in events)
    return [
        {
            "tag_s2id": cell,
            "tag_vehicle_type": vehicle,
            "bookings": bookings,
            "unique_customers": customers,
            "window_timestamp": datetime.fromtimestamp(end_ms / 1000, UTC),
        }
        for (cell, vehicle, end_ms), (bookings, customers) in surge_windows(events).items()
        if end_ms <= last_ms  # closed windows only, as a dagger emits them
    ]


def expected(rows, metric="bookings", service=None):
    """{(cell, service, window end ms): value} of the rows."""
    return {
        (
            r["tag_s2id"],
            r["tag_vehicle_type"],
            int(r["window_timestamp"].timestamp() * 1000),
        ): float(r[metric])
        for r in rows
        if service is None or r["tag_vehicle_type"] == service
    }


def points(frame):
    """A store's frame in the same shape as :func:`expected`."""
    return {
        (row.cell, row.service, int(row.time.timestamp() * 1000)): row.value
        for row in frame.itertuples()
    }


def write_influx_v1(server, rows, measurement="surge"):
    """A fresh database on ``server`` with ``rows`` written by the v1 sink writer."""
    import requests

    database = f"dash_{uuid.uuid4().hex[:8]}"
    requests.post(f"{server.url}/query", params={"q": f'CREATE DATABASE "{database}"'}, timeout=10)
    config = InfluxConfig(api=1, url=server.url, database=database, measurement=measurement)
    with InfluxWriter(config) as writer:
        writer.write(rows)
    return database
