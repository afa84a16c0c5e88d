"""The quality job's overhead: events/s it sustains per core, against reading and decoding alone.

One run starts its own Kafka broker (free ports, a temporary folder, stopped at the end),
pre-loads ``--events`` seeded BookingLogMessage records into a 4-partition topic (event
times from a day ago, 5 s out of order, ``--malformed`` undecodable) and runs on one
``local[2]`` SparkSession, each over the whole topic with Trigger.AvailableNow and the
same ``maxOffsetsPerTrigger``:

  decode    Kafka → the JVM decoder → noop sink (what any job over the topic pays)
  quality   QualityJob (10-minute windows, business key order_number, a Parquet sink)

Each runs once untimed over a warm-up topic, then ``--repeat`` times; the best run counts.
Printed: seconds, events/s, events/s per core (``local[2]``: 2 cores) and quality/decode.

    .venv/bin/python benchmarks/quality_overhead.py [--events 500000] [--repeat 2]
        [--max-offsets 200000]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import booking_preload

CORES = 2


def quality(spark, bootstrap: str, topic: str, folder: Path, max_offsets: int) -> float:
    from workbench.quality.job import QualityJob
    from workbench.quality.spec import parse

    spec = parse(
        {
            "kind": "quality",
            "name": f"bench-{uuid.uuid4().hex[:6]}",
            "streams": [
                {
                    "topics": [topic],
                    "message": booking_preload.MESSAGE,
                    "bootstrap_servers": bootstrap,
                    "max_offsets_per_trigger": max_offsets,
                }
            ],
            "business_key": "order_number",
            "sinks": [{"type": "parquet", "path": str(folder / "metrics")}],
            "checkpoint": str(folder / "checkpoint"),
        }
    )
    began = time.monotonic()
    QualityJob(spec, spark, available_now=True, emit=print).run(handle_signals=False)
    return time.monotonic() - began


def decode(spark, bootstrap: str, topic: str, folder: Path, max_offsets: int) -> float:
    from workbench.quality.facts import reader_options
    from workbench.quality.spec import QualityStream
    from workbench.schemas import default_registry
    from workbench.sources.kafka import decoded_records

    stream = QualityStream(
        message=booking_preload.MESSAGE,
        topics=[topic],
        bootstrap_servers=bootstrap,
        max_offsets_per_trigger=max_offsets,
    )
    raw = spark.readStream.format("kafka").options(**reader_options(stream)).load()
    records = decoded_records(spark, raw, stream, default_registry())
    began = time.monotonic()
    query = (
        records.select("_decoded.error", "offset")
        .writeStream.format("noop")
        .option("checkpointLocation", str(folder / "noop"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    return time.monotonic() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=500_000)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--max-offsets", type=int, default=200_000)
    parser.add_argument("--malformed", type=float, default=0.001)
    args = parser.parse_args()

    from workbench.runtime.spark import session

    start = datetime.now(UTC) - timedelta(days=1)
    work = Path(tempfile.mkdtemp(prefix="bench-quality-"))
    with booking_preload.local_broker() as broker:
        bootstrap = broker.bootstrap
        topic, warm = f"bench-{uuid.uuid4().hex[:6]}", f"warm-{uuid.uuid4().hex[:6]}"
        began = time.monotonic()
        booking_preload.preload(bootstrap, warm, 20_000, seed=3, start=start)
        booking_preload.preload(
            bootstrap, topic, args.events, seed=7, start=start, malformed=args.malformed
        )
        print(f"preloaded {args.events:,} events in {time.monotonic() - began:.1f} s")
        spark = session(master=f"local[{CORES}]", app_name="quality-overhead")
        variants = {"decode": decode, "quality": quality}
        best: dict[str, float] = {}
        try:
            for name, run in variants.items():
                run(spark, bootstrap, warm, work / f"warm-{name}", args.max_offsets)
            for n in range(args.repeat):
                for name, run in variants.items():
                    took = run(spark, bootstrap, topic, work / f"{name}-{n}", args.max_offsets)
                    best[name] = min(best.get(name, took), took)
        finally:
            spark.stop()
            shutil.rmtree(work, ignore_errors=True)
    for name, took in best.items():
        rate = args.events / took
        print(
            f"  {name:<8} {took:7.1f} s {rate:12,.0f} events/s {rate / CORES:12,.0f} "
            f"events/s per core"
        )
    print(f"  quality / decode time: {best['quality'] / best['decode']:.2f}x")


if __name__ == "__main__":
    main()
