"""``workbench demo``: the embedded default dagger (surge pricing) over generated bookings.

Generates a seeded recording of booking events around Jakarta, replays the bundled
surge-pricing spec over it with the same engine the streaming job uses, and prints
the busiest cells. (The streaming demo on a local Kafka broker builds on this.)
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path

from workbench.paths import subdir

SPEC = "surge-pricing.yaml"


def spec_path() -> Path:
    return Path(str(resources.files("workbench.data").joinpath("daggers", SPEC)))


def record(path: Path, events: int, seed: int) -> Path:
    from workbench.generator import Generator, write_jsonl

    generator = Generator(
        seed=seed,
        start=datetime(2026, 11, 21, 8, 0, tzinfo=UTC),
        rate_per_s=200.0,
        out_of_order_seconds=5.0,
    )
    write_jsonl(path, generator.take("bookings", events))
    return path


def run_demo(events: int = 20_000, seed: int = 7, out: str | None = None) -> int:
    from workbench import spec as spec_module
    from workbench.replay import replay
    from workbench.spark import session

    started = time.monotonic()
    folder = subdir("demo")
    recording = record(folder / "bookings.jsonl", events, seed)
    print(f"generated {events} booking events (seed {seed}) -> {recording}")
    spec = spec_module.load(spec_path())
    result_path = Path(out) if out else folder / "surge-pricing.jsonl"
    result = replay(
        session(app_name="workbench-demo"), {"booking": str(recording)}, result_path, spec=spec
    )
    rows = [json.loads(line) for line in result_path.read_text().splitlines()]
    print(
        f"dagger '{spec.name}': {result.rows} rows (bookings per S2 cell, vehicle type "
        f"and minute) -> {result.out}"
    )
    print(_table(sorted(rows, key=lambda r: -r["bookings"])[:10]))
    print(f"done in {time.monotonic() - started:.1f}s")
    return 0


def _table(rows: list[dict]) -> str:
    header = (
        f"{'window_timestamp':<26}{'tag_s2id':<22}{'vehicle':<9}{'bookings':>9}{'customers':>11}"
    )
    lines = [header, "-" * len(header)]
    for r in rows:
        lines.append(
            f"{r['window_timestamp']:<26}{r['tag_s2id']:<22}{r['tag_vehicle_type']:<9}"
            f"{r['bookings']:>9}{r['unique_customers']:>11}"
        )
    return "\n".join(lines)
