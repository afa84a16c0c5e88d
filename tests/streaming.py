"""Helpers for the streaming tests: publish generated events, build specs, read sinks."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import yaml

from workbench.dev.demo import spec_path
from workbench.dev.generator import Generator
from workbench.dev.producer import publish
from workbench.kafka.admin import create_topics
from workbench.spec import parse

#: Two hours ago on the hour: in the past, since VictoriaMetrics drops points in the future.
START = datetime.now(UTC).replace(minute=0, second=0, microsecond=0) - timedelta(hours=2)
SURGE_SQL = yaml.safe_load(spec_path().read_text())["sql"]
WATERMARK_MS = 10_000


def new_topic(bootstrap: str, prefix: str, partitions: int = 3) -> str:
    name = f"{prefix}-{uuid.uuid4().hex[:8]}"
    create_topics(bootstrap, {name: partitions})
    return name


def publish_events(bootstrap, topic, count, *, kind="bookings", seed=11, malformed=0.0, **gen):
    generator = Generator(
        seed=seed,
        start=gen.pop("start", START),
        rate_per_s=gen.pop("rate_per_s", 40.0),
        out_of_order_seconds=gen.pop("out_of_order_seconds", 5.0),
        malformed_fraction=malformed,
        **gen,
    )
    return publish(
        bootstrap,
        kind,
        topic=topic,
        count=count,
        generator=generator,
        speedup=None,
        keep_events=True,
    )


def event_ms(event) -> int:
    stamp = event["event_timestamp"]
    return int(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1000)


def closed(windows: dict, events, delay_ms: int = WATERMARK_MS) -> dict:
    """The windows a watermark ``delay_ms`` behind the latest event has closed."""
    watermark = max(event_ms(e) for e in events) - delay_ms
    return {k: v for k, v in windows.items() if k[2] <= watermark}


def surge_spec(bootstrap, topic, tmp: Path, sinks, stream_options=None, **extra):
    data = {
        "name": extra.pop("name", f"surge-{uuid.uuid4().hex[:6]}"),
        "streams": [
            {
                "table": "booking",
                "message": "esb.booking.BookingLogMessage",
                "bootstrap_servers": bootstrap,
                "topics": [topic],
                "starting_offsets": "earliest",
                **(stream_options or {}),
            }
        ],
        "sql": SURGE_SQL,
        "watermark_delay": f"{WATERMARK_MS // 1000}s",
        "trigger_interval": "2s",
        "sinks": sinks,
        "dead_letter": {"type": "parquet", "path": str(tmp / "dead-letters")},
        "checkpoint": str(tmp / "checkpoint"),
        **extra,
    }
    return parse(data)


def to_ms(value) -> int:
    if isinstance(value, int):
        return value
    if isinstance(value, datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=UTC)
        return int(moment.timestamp() * 1000)
    return int(datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp() * 1000)


def surge_rows(rows) -> dict:
    """Result rows (dicts) as {(cell, vehicle, window end ms): (bookings, customers)}; a key
    seen twice fails, since a doubled window is exactly what must never happen."""
    out: dict = {}
    for r in rows:
        key = (str(r["tag_s2id"]), r["tag_vehicle_type"], to_ms(r["window_timestamp"]))
        assert key not in out, f"window written twice: {key}"
        out[key] = (int(r["bookings"]), int(r["unique_customers"]))
    return out


def influx_v1_sink(server) -> dict:
    """A fresh InfluxDB 1.x database on ``server`` and a sink (measurement ``surge``) into it."""
    from readback import influxql

    database = f"surge_{uuid.uuid4().hex[:8]}"
    influxql(server, f'CREATE DATABASE "{database}"')
    return {
        "type": "influx",
        "api": 1,
        "url": server.url,
        "database": database,
        "measurement": "surge",
    }


def influx_v1_rows(server, sink: dict, *, mid_write: bool = False) -> dict:
    """The sink's points as surge rows (see :func:`surge_rows`).

    ``mid_write=True`` is for polling while the job writes: InfluxDB 1.x stores each field of
    a point on its own, so a query racing a write can see ``unique_customers`` before
    ``bookings``; such a point is left out (not yet written) instead of failing the read.
    """
    from readback import influx_points

    points = influx_points(server, sink["database"], sink["measurement"])
    if mid_write:
        points = [p for p in points if None not in (p.get("bookings"), p.get("unique_customers"))]
    return surge_rows({**p, "window_timestamp": p["time"]} for p in points)


def kafka_sink(bootstrap, topic) -> dict:
    return {
        "type": "kafka",
        "bootstrap_servers": bootstrap,
        "topic": topic,
        "key_columns": ["tag_s2id", "tag_vehicle_type", "window_timestamp"],
    }


class Bookings:
    """Generated bookings published as fast as the broker takes them; ``events`` keeps
    every one sent, for the independent computation of the windows."""

    def __init__(self, bootstrap: str, topic: str, seed: int):
        self.bootstrap, self.topic, self.events = bootstrap, topic, []
        self.generator = Generator(
            seed=seed, start=START, rate_per_s=40.0, out_of_order_seconds=5.0
        )

    def send(self, count: int) -> None:
        out = publish(
            self.bootstrap, "bookings", topic=self.topic, count=count,
            generator=self.generator, speedup=None, keep_events=True,
        )  # fmt: skip
        self.events.extend(out.events)
