"""The warehouse at scale: files and bytes per hour partition of the surge dagger's output
at the demo's rate, and the time of a day's query, before and after compaction.

One run starts its own Kafka broker (free ports, a temporary folder, stopped at the end)
and pre-loads ``--hours`` hours of event time of seeded bookings at ``--rate`` (the
demo's 300 bookings per event-time second), starting at midnight UTC of yesterday. The
surge-pricing dagger (bookings per S2 cell, vehicle type and minute; ``emit: final``)
then reads them in micro-batches of ``--batch-seconds`` of event time each
(``max_offsets_per_trigger`` = rate x seconds), as a live run would meet them, writing
both a ``parquet`` sink (Spark's file sink, today's warehouse) and a ``delta`` sink.

Why 60 s batches stand for a live run's 10 s trigger: with one-minute final windows a
minute's rows are written by the one batch whose watermark passes the minute's end; the
other batches of a 10 s trigger write nothing. So files per hour partition are
(minutes per hour) x (writer tasks per batch) either way; ``--batch-seconds 10`` runs
six times the batches to show it.

Printed: Spark's start with and without Delta (fresh processes, best of
``--start-repeat``), files and bytes per hour partition of each table, the day's query
(rows and bookings per hour, what an analyst runs) best of ``--repeat`` over the Parquet
folder, the Delta table before and after compaction (every hour closed: ``--older-than
0``), as ratios, and the load average. The machine is shared: compare the ratios.

    .venv/bin/python benchmarks/warehouse_files.py [--hours 3] [--rate 300]
        [--batch-seconds 60] [--repeat 3] [--start-repeat 2] [--target-size 128MB]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import booking_preload

DAY_QUERY = (
    "SELECT CAST(hour AS INT) AS hour, count(*) AS rows, sum(bookings) AS bookings FROM {table} "
    "WHERE dt = '{day}' GROUP BY 1 ORDER BY 1"
)
STARTER = """
import sys, time
from workbench.runtime.spark import session
conf = {}
if sys.argv[1] == "delta":
    from workbench.warehouse.delta import APPEND_CONF, session_conf
    conf = session_conf()
began = time.monotonic()
session(conf=conf).range(1).count()
print(time.monotonic() - began)
"""


def start_times(repeat: int) -> dict[str, float]:
    """Seconds from asking for a session to its first job, fresh processes, best of N."""
    best: dict[str, float] = {}
    for _ in range(repeat):
        for kind in ("plain", "delta"):
            out = subprocess.run(
                [sys.executable, "-c", STARTER, kind], capture_output=True, text=True, check=True
            )
            took = float(out.stdout.strip().splitlines()[-1])
            best[kind] = min(best.get(kind, took), took)
    return best


def preload(bootstrap: str, topic: str, hours: float, rate: float, start: datetime) -> int:
    from workbench.dev.producer import publish
    from workbench.kafka.admin import create_topics

    count = int(hours * 3600 * rate)
    booking_preload.check_encoding(7, start)
    create_topics(bootstrap, {topic: 3})  # the demo's partitions
    generator = booking_preload.FastGenerator(
        seed=7, start=start, rate_per_s=rate, out_of_order_seconds=5.0, malformed_fraction=0.001
    )
    publish(
        bootstrap, booking_preload.KIND, topic=topic, count=count, generator=generator, speedup=None
    )
    return count


def run_dagger(spark, bootstrap: str, topic: str, work: Path, max_offsets: int):
    import yaml

    from workbench.dev.demo import spec_path
    from workbench.spec import parse
    from workbench.streaming.job import StreamingJob

    data = yaml.safe_load(spec_path().read_text())
    data["streams"][0] |= {
        "topics": [topic],
        "bootstrap_servers": bootstrap,
        "max_offsets_per_trigger": max_offsets,
    }
    spec = parse(
        data
        | {
            "name": f"warehouse-{uuid.uuid4().hex[:6]}",
            "sinks": [
                {"type": "parquet", "path": str(work / "parquet")},
                {"type": "delta", "path": str(work / "delta")},
            ],
            "dead_letter": {"type": "parquet", "path": str(work / "dead-letters")},
        }
    )
    job = StreamingJob(
        spec,
        spark,
        checkpoint=work / "checkpoint",
        available_now=True,
        emit=None,
    )
    job.start()
    spent = timed_writers(job)
    began = time.monotonic()
    job.run(handle_signals=False)
    return job, time.monotonic() - began, spent


def timed_writers(job) -> dict[str, float]:
    """Seconds each sink's writer spends on the job's batches (filled as they run)."""
    spent: dict[str, float] = {}

    def timed(name, write):
        def write_timed(batch, batch_id):
            began = time.monotonic()
            try:
                return write(batch, batch_id)
            finally:
                spent[name] = spent.get(name, 0.0) + time.monotonic() - began

        return write_timed

    for config, writer in job._writers:
        writer.write = timed(config.type, writer.write)
    return spent


def day_query(spark, path: Path, day: str, repeat: int) -> tuple[float, list]:
    """Best-of-``repeat`` seconds of the day's query over the table (one warm-up first)."""
    from workbench.warehouse.layout import read

    times, result = [], []
    for n in range(repeat + 1):
        read(spark, path).createOrReplaceTempView("day")
        began = time.monotonic()
        result = spark.sql(DAY_QUERY.format(table="day", day=day)).collect()
        if n:
            times.append(time.monotonic() - began)
    return min(times), [tuple(r) for r in result]


def summary(name: str, parts: list) -> str:
    from workbench.cli.warehouse import human

    files = [p.files for p in parts]
    sizes = [p.bytes for p in parts]
    return (
        f"  {name:<26} {len(parts):>3} hours  files/hour {statistics.mean(files):8.1f} "
        f"(min {min(files)}, max {max(files)})  bytes/hour {human(statistics.mean(sizes)):>9}  "
        f"avg file {human(sum(sizes) / sum(files)):>9}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hours", type=float, default=3.0)
    parser.add_argument("--rate", type=float, default=300.0, help="bookings per event second")
    parser.add_argument("--batch-seconds", type=float, default=60.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--start-repeat", type=int, default=2)
    parser.add_argument("--target-size", default="128MB")
    args = parser.parse_args()

    from workbench.cli.warehouse import files_table
    from workbench.runtime.spark import session
    from workbench.warehouse.compaction import compact, parse_size
    from workbench.warehouse.delta import APPEND_CONF, session_conf
    from workbench.warehouse.layout import partitions

    print(f"load average at start: {Path('/proc/loadavg').read_text().strip()}")
    starts = start_times(args.start_repeat) if args.start_repeat else {}
    for kind, took in starts.items():
        print(f"spark start to first job ({kind}, best of {args.start_repeat}): {took:.1f} s")
    if starts:
        print(f"  delta / plain: {starts['delta'] / starts['plain']:.2f}x")
    day = (datetime.now(UTC) - timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
    work = Path(tempfile.mkdtemp(prefix="bench-warehouse-"))
    with booking_preload.local_broker() as broker:
        topic = f"warehouse-{uuid.uuid4().hex[:6]}"
        began = time.monotonic()
        count = preload(broker.bootstrap, topic, args.hours, args.rate, day)
        print(
            f"preloaded {count:,} bookings ({args.hours:g} h of event time at "
            f"{args.rate:g}/s) in {time.monotonic() - began:.1f} s"
        )
        spark = session(app_name="warehouse-files", conf=session_conf() | APPEND_CONF)  # as a job
        try:
            max_offsets = int(args.rate * args.batch_seconds)
            job, took, spent = run_dagger(spark, broker.bootstrap, topic, work, max_offsets)
            written = dict(job.totals.rows_written)
            per_batch = {k: f"{v / job.totals.batches:.2f} s" for k, v in spent.items()}
            print(
                f"dagger: {job.totals.batches} batches of {max_offsets:,} offsets in "
                f"{took:.1f} s; rows written {written}; write time per batch {per_batch}"
            )
            parquet, delta = work / "parquet", work / "delta"
            figures = {"parquet": partitions(spark, parquet), "delta": partitions(spark, delta)}
            q = {
                "parquet": day_query(spark, parquet, day.date().isoformat(), args.repeat),
                "delta": day_query(spark, delta, day.date().isoformat(), args.repeat),
            }
            done = compact(spark, delta, timedelta(0), parse_size(args.target_size))
            print(f"compaction of {len(done.before)} hour partitions: {done.seconds:.1f} s")
            figures["delta compacted"] = partitions(spark, delta)
            q["delta compacted"] = day_query(spark, delta, day.date().isoformat(), args.repeat)
        finally:
            spark.stop()
            shutil.rmtree(work, ignore_errors=True)
    print("\nper hour partition (parquet sink):")
    print(files_table(figures["parquet"]))
    print("\nper hour partition (delta, compacted):")
    print(files_table(figures["delta compacted"]))
    print("\nsummary:")
    for name, parts in figures.items():
        print(summary(name, parts))
    answers = {name: result for name, (_, result) in q.items()}
    assert len({str(a) for a in answers.values()}) == 1, f"the tables answer differently: {answers}"
    for name, (secs, _) in q.items():
        print(f"  day query over {name:<16} {secs * 1000:8.0f} ms (best of {args.repeat})")
    files = {name: sum(p.files for p in parts) for name, parts in figures.items()}
    print(
        f"  files: parquet / compacted {files['parquet'] / files['delta compacted']:.0f}x, "
        f"delta before / after {files['delta'] / files['delta compacted']:.0f}x"
    )
    print(
        f"  day query: parquet / compacted {q['parquet'][0] / q['delta compacted'][0]:.2f}x, "
        f"delta before / after {q['delta'][0] / q['delta compacted'][0]:.2f}x"
    )
    print(
        f"  a day at this rate: {files['parquet'] / args.hours * 24:,.0f} Parquet files "
        f"(extrapolated from {args.hours:g} h), {24:,} after compaction"
    )
    print(f"load average at end: {Path('/proc/loadavg').read_text().strip()}")


if __name__ == "__main__":
    main()
