"""``workbench demo``: the embedded default, end to end on a local Kafka broker.

Starts the project-local broker (``workbench dev kafka``), publishes generated bookings
around Jakarta to ``booking-log`` while the bundled surge-pricing dagger (bookings per
S2 level-13 cell, vehicle type and minute) runs as a streaming job, for a bounded time.
Event time runs ``speedup`` times faster than the wall clock, so minutes close quickly.
The result goes to Parquet (and InfluxDB when asked); the demo then prints the busiest
cells and checks every closed window against the generated events, counted in plain
Python with s2sphere.
"""

from __future__ import annotations

import shutil
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from importlib import resources
from pathlib import Path
from typing import Any

from workbench import spec as spec_module
from workbench.dev.kafka import Broker
from workbench.exceptions import WorkbenchError
from workbench.kafka.admin import create_topics, delete_topics
from workbench.paths import subdir
from workbench.sinks.influx import InfluxConfig
from workbench.sinks.parquet import ParquetConfig

SPEC = "surge-pricing.yaml"
TOPIC = "booking-log"


def spec_path() -> Path:
    return Path(str(resources.files("workbench.data").joinpath("daggers", SPEC)))


@dataclass(frozen=True)
class DemoOptions:
    seconds: float = 45.0  # wall seconds of publishing
    rate: float = 300.0  # bookings per event-time second
    speedup: float = 6.0  # event-time seconds per wall second
    seed: int = 7
    port: int = 9092
    kafka_dir: Path | None = None  # broker state (default: .workbench/kafka)
    influx_url: str | None = None  # an InfluxDB 1.x to write to as well (database "dagger")


def run_demo(options: DemoOptions) -> int:
    from workbench.streaming.job import StreamingJob, with_bootstrap

    started = time.monotonic()
    broker = Broker(options.kafka_dir, port=options.port, controller_port=options.port + 1)
    status = broker.start()
    print(f"kafka broker at {status.bootstrap} (state in {status.state_dir})")
    folder = subdir("demo")
    for old in ("checkpoint", "parquet", "dead-letters"):  # each demo starts afresh
        shutil.rmtree(folder / old, ignore_errors=True)
    delete_topics(broker.bootstrap, [TOPIC])
    create_topics(broker.bootstrap, {TOPIC: 3})
    spec = _demo_spec(spec_module.load(spec_path()), folder, options)
    spec = with_bootstrap(spec, broker.bootstrap)
    job = StreamingJob(spec, checkpoint=folder / "checkpoint").start()
    print(f"dagger '{spec.name}' running; sinks: {', '.join(s.describe() for s in spec.sinks)}")
    publisher = _Publisher(broker.bootstrap, options)
    publisher.start()
    expected = _wait_for_windows(job, publisher, folder / "parquet", options)
    job.stop()
    rows = _read(job, folder / "parquet")
    print(
        f"\ndagger '{spec.name}': {len(rows)} rows (bookings per S2 cell, vehicle type and "
        f"minute) -> {folder / 'parquet'}"
    )
    print(_table(sorted(rows, key=lambda r: (-r["bookings"], r["tag_s2id"]))[:10]))
    ok = _check(rows, expected, publisher)
    print(
        f"done in {time.monotonic() - started:.1f}s (the broker keeps running: "
        "workbench dev kafka down)"
    )
    return 0 if ok else 1


def _demo_spec(spec: Any, folder: Path, options: DemoOptions) -> Any:

    sinks: list[Any] = [ParquetConfig(path=str(folder / "parquet"))]
    if options.influx_url:
        sinks.append(
            InfluxConfig(
                api=1, url=options.influx_url, database="dagger", measurement="surge_pricing"
            )
        )
    dead = spec.dead_letter.model_copy(update={"path": str(folder / "dead-letters")})
    return spec.model_copy(update={"sinks": sinks, "trigger_interval": "5s", "dead_letter": dead})


class _Publisher(threading.Thread):
    """Publishes bookings in the background, keeping the valid events for the check."""

    def __init__(self, bootstrap: str, options: DemoOptions):
        super().__init__(daemon=True)
        from workbench.dev.generator import Generator

        span = timedelta(seconds=options.seconds * options.speedup)
        start = datetime.now(UTC).replace(second=0, microsecond=0) - span
        self.generator = Generator(
            seed=options.seed,
            start=start,
            rate_per_s=options.rate,
            out_of_order_seconds=5.0,
            malformed_fraction=0.001,  # no late events: the check must be exact
        )
        self.bootstrap, self.options = bootstrap, options
        self.published: Any = None
        self.error: BaseException | None = None

    def run(self) -> None:
        from workbench.dev.producer import publish

        try:
            self.published = publish(
                self.bootstrap,
                "bookings",
                topic=TOPIC,
                duration_s=self.options.seconds,
                generator=self.generator,
                speedup=self.options.speedup,
                keep_events=True,
            )
        except BaseException as err:  # noqa: BLE001 - reported by the demo
            self.error = err


#: How long the job may take to catch up once publishing stops (a loaded machine is slow).
CATCH_UP_S = 240


def _wait_for_windows(job: Any, publisher: _Publisher, parquet: Path, options: DemoOptions):
    """Wait until the publisher is done and Parquet holds every window the final watermark
    closes; returns those expected windows."""

    while publisher.is_alive():
        job.poll()
        time.sleep(1.0)
    if publisher.error is not None:
        raise WorkbenchError(f"the demo's publisher failed: {publisher.error}")
    expected = expected_windows(publisher.published.events, job.spec.watermark_delay_ms)
    deadline = time.monotonic() + CATCH_UP_S  # returns as soon as they are all there
    while time.monotonic() < deadline:
        job.poll()
        if len(_read(job, parquet)) >= len(expected):
            break
        time.sleep(2.0)
    return expected


def expected_windows(events: list[dict[str, Any]], delay_ms: int) -> dict:
    """{(cell, vehicle, window end ms): (bookings, customers)} for the windows closed by a
    watermark ``delay_ms`` behind the latest event, counted in plain Python."""
    import s2sphere

    def ms(event: dict[str, Any]) -> int:
        stamp = datetime.fromisoformat(event["event_timestamp"].replace("Z", "+00:00"))
        return int(stamp.timestamp() * 1000)

    watermark = max(ms(e) for e in events) - delay_ms
    groups: dict[tuple, set] = {}
    counts: dict[tuple, int] = {}
    for e in events:
        if e["status"] != "CREATED":
            continue
        end = (ms(e) // 60_000 + 1) * 60_000
        point = s2sphere.LatLng.from_degrees(e["pickup_lat"], e["pickup_long"])
        cell = s2sphere.CellId.from_lat_lng(point).parent(13).id()
        key = (str(cell - (1 << 64) if cell >= 1 << 63 else cell), e["vehicle_type"], end)
        groups.setdefault(key, set()).add(e["customer_id"])
        counts[key] = counts.get(key, 0) + 1
    return {k: (counts[k], len(groups[k])) for k in counts if k[2] <= watermark}


def _read(job: Any, parquet: Path) -> list[dict[str, Any]]:
    from pyspark.errors import AnalysisException

    try:
        return [r.asDict() for r in job.spark.read.parquet(str(parquet)).collect()]
    except AnalysisException:  # no window committed yet
        return []


def _check(rows: list[dict[str, Any]], expected: dict, publisher: _Publisher) -> bool:
    got = {
        (r["tag_s2id"], r["tag_vehicle_type"], _ms(r["window_timestamp"])): (
            r["bookings"],
            r["unique_customers"],
        )
        for r in rows
    }
    sent = publisher.published
    if got == expected and len(rows) == len(got):
        print(
            f"check: all {len(expected)} closed windows match the {sent.sent:,} generated "
            f"bookings exactly ({sent.malformed} malformed -> dead letters)"
        )
        return True
    missing = len(set(expected) - set(got))
    wrong = sum(1 for k in expected if k in got and got[k] != expected[k])
    print(
        f"check FAILED: {missing} windows missing, {wrong} differ, "
        f"{len(set(got) - set(expected))} unexpected (of {len(expected)})"
    )
    return False


def _ms(value: datetime) -> int:
    return int(value.replace(tzinfo=value.tzinfo or UTC).timestamp() * 1000)


def _table(rows: list[dict]) -> str:
    header = (
        f"{'window_timestamp':<22}{'tag_s2id':<22}{'vehicle':<9}{'bookings':>9}{'customers':>11}"
    )
    lines = [header, "-" * len(header)]
    for r in rows:
        lines.append(
            f"{r['window_timestamp']:%Y-%m-%d %H:%M:%S}   {r['tag_s2id']:<22}"
            f"{r['tag_vehicle_type']:<9}{r['bookings']:>9}{r['unique_customers']:>11}"
        )
    return "\n".join(lines)
