"""Cluster throughput: the surge dagger on ``local[2]`` against a Spark standalone cluster
with 1 and with 2 workers, the same 2 cores in total, and on ``local[1]`` (the per-core
figure of docs/capacity.md), as ratios in one run.

One run starts its own Kafka broker (free ports, a temporary folder, stopped at the end)
and pre-loads ``--events`` seeded BookingLogMessage records into a 4-partition topic, as
``streaming_throughput.py`` does. Then, for each setting, one driver process (a Spark
application connects to one master for its life) runs the engine's surge job
(``StreamingJob`` with the bundled spec, Parquet sink, Trigger.AvailableNow, the same
maxOffsetsPerTrigger and shuffle partitions) once untimed over a warm-up topic, then
``--repeat`` times over the topic; the best run counts:

  local[2]        the driver runs the tasks itself, 2 threads
  local[1]        the same on 1 thread: events/s per core, driver included
  standalone 1x2  a master and 1 worker of 2 cores (one executor of 2 cores)
  standalone 2x1  a master and 2 workers of 1 core (two executors of 1 core)

The standalone clusters are real (:class:`workbench.dev.spark.SparkCluster`, master and
workers from pyspark's jars on 127.0.0.1), started before their setting and stopped after.
It prints a table of setting, best seconds, events/s and the ratio against ``local[2]``,
and the result check (rows and checksum of every Parquet output must agree, else exit 1).

    .venv/bin/python benchmarks/cluster_throughput.py [--events 1000000] [--repeat 2]
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import subprocess
import sys
import tempfile
import uuid
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import booking_preload
import streaming_throughput as st

SEED = 42
#: (label, workers, cores each); 0 workers: local[2]
SETTINGS = (
    ("local[2]", 0, 2),
    ("local[1]", 0, 1),
    ("standalone 1x2", 1, 2),
    ("standalone 2x1", 2, 1),
)
EXECUTOR_MEMORY = "1g"


def child(args: argparse.Namespace) -> None:
    """One setting: a driver on ``--master`` warms up, then measures; prints one JSON line."""
    from workbench.runtime.spark import session
    from workbench.schemas.registry import default_registry

    conf = {
        "spark.sql.shuffle.partitions": str(args.shuffle_partitions),
        "spark.cores.max": "2",
        "spark.executor.memory": EXECUTOR_MEMORY,
        "spark.driver.host": "127.0.0.1",
    }
    spark = session(master=args.master, app_name="cluster-throughput", conf=conf)
    root = Path(tempfile.mkdtemp(prefix="bench-cluster-"))
    try:
        bench = st.Bench(
            spark, default_registry(), args.bootstrap, args.topic, args.events,
            args.max_offsets, root,
        )  # fmt: skip
        st.measure(replace(bench, topic=args.warmup, events=args.warmup_events), "engine")
        runs = [st.measure(bench, "engine") for _ in range(args.repeat)]
    finally:
        spark.stop()
        shutil.rmtree(root, ignore_errors=True)
    print(json.dumps({"seconds": [r.seconds for r in runs], "results": [r.result for r in runs]}))


def measure_setting(args: argparse.Namespace, master: str, topics: tuple[str, str]) -> dict:
    cmd = [
        sys.executable, __file__, "--child", "--master", master, "--bootstrap", args.bootstrap,
        "--topic", topics[0], "--warmup", topics[1], "--events", str(args.events),
        "--warmup-events", str(args.warmup_events), "--repeat", str(args.repeat),
        "--max-offsets", str(args.max_offsets),
        "--shuffle-partitions", str(args.shuffle_partitions),
    ]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"the {master} driver failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def run(args: argparse.Namespace) -> bool:
    from workbench.dev.spark import SparkCluster

    start = datetime.now(UTC).replace(microsecond=0) - timedelta(days=1)
    measured: dict[str, dict] = {}
    with booking_preload.local_broker() as broker:
        args.bootstrap = broker.bootstrap
        topics = (f"bookings-{uuid.uuid4().hex[:6]}", f"warmup-{uuid.uuid4().hex[:6]}")
        options = {"start": start, "partitions": 4}
        booking_preload.preload(broker.bootstrap, topics[0], args.events, seed=SEED, **options)
        booking_preload.preload(
            broker.bootstrap, topics[1], args.warmup_events, seed=SEED + 1, **options
        )
        print(
            f"preloaded {args.events:,} bookings (4 partitions); shuffle partitions "
            f"{args.shuffle_partitions}, maxOffsetsPerTrigger {args.max_offsets:,}, "
            f"AvailableNow, best of {args.repeat} after a warm-up on {args.warmup_events:,}"
        )
        chosen = {"local[2]", *args.settings.split(",")}
        for label, workers, cores in SETTINGS:
            if label not in chosen:
                continue
            if not workers:
                measured[label] = measure_setting(args, f"local[{cores}]", topics)
                continue
            state = Path(tempfile.mkdtemp(prefix="bench-spark-"))
            cluster = SparkCluster(state, workers=workers, cores=cores, memory=EXECUTOR_MEMORY)
            try:
                master = cluster.start().master_url
                measured[label] = measure_setting(args, master, topics)
            finally:
                cluster.stop()
                shutil.rmtree(state, ignore_errors=True)
    return report(measured, args.events)


def report(measured: dict[str, dict], events: int) -> bool:
    base = min(measured["local[2]"]["seconds"])
    print(f"\n{'setting':<18}{'best s':>8}{'events/s':>12}{'vs local[2]':>13}")
    for label, data in measured.items():
        seconds = min(data["seconds"])
        print(f"{label:<18}{seconds:>8.1f}{events / seconds:>12,.0f}{base / seconds:>12.2f}x")
    results = {tuple(r) for data in measured.values() for r in data["results"] if r}
    print("\nresult check (rows, checksum of each Parquet output):")
    for label, data in measured.items():
        print(f"  {label:<18}" + "; ".join(f"{r[0]:,} rows {r[1]:,}" for r in data["results"]))
    same = len(results) == 1
    print("  all equal" if same else "  DIFFERENT: the settings disagree")
    return same


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000, help="bookings in the topic")
    parser.add_argument("--warmup-events", type=int, default=200_000, help="warm-up topic size")
    parser.add_argument("--max-offsets", type=int, default=250_000, help="maxOffsetsPerTrigger")
    parser.add_argument("--shuffle-partitions", type=int, default=4, help="shuffle partitions")
    parser.add_argument("--repeat", type=int, default=2, help="timed runs of each setting")
    parser.add_argument(
        "--settings", default=",".join(label for label, _, _ in SETTINGS),
        help="which settings to run, comma-separated (local[2] always runs: the baseline)",
    )  # fmt: skip
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    for hidden in ("--master", "--bootstrap", "--topic", "--warmup"):
        parser.add_argument(hidden, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop the broker on the way out
    sys.exit(0 if run(args) else 1)


if __name__ == "__main__":
    main()
