"""The cost of one more dagger: K surge daggers at once in one Spark application against one.

One run starts its own Kafka broker (free ports, a temporary folder, stopped at the end) and
pre-loads ``--events`` seeded BookingLogMessage records into a 4-partition topic, as
``streaming_throughput.py`` does. On one ``local[2]`` SparkSession (a shared application,
the cluster's ``jobs_per_app``), it runs K = ``--daggers`` (1,2,4) copies of the engine's
surge job (``StreamingJob`` with the bundled spec, its own Parquet sink and checkpoint,
Trigger.AvailableNow) at once over the whole topic, each reading all of it, after one
untimed warm-up of every K over a smaller topic; ``--repeat`` times each K, interleaved,
the best run counts. It prints, per K:

  seconds       wall time from starting the K jobs to the end of the last one
  dagger-events K × events / seconds: the events decoded and aggregated per second, all
                daggers together
  vs K=1        that over K=1's rate (1.00x: a dagger costs exactly its share of the cores)
  marginal s    (seconds(K) − seconds(1)) / (K − 1): what each dagger more adds to the run
  core-s/M      2 cores × marginal seconds per million events: the cores one more dagger
                needs per million events a second of its topic

and checks that every dagger's output has the same rows and checksum (else exit 1).

    .venv/bin/python benchmarks/dagger_cost.py [--events 500000] [--daggers 1,2,4] [--repeat 2]
"""

from __future__ import annotations

import argparse
import shutil
import signal
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import booking_preload
import streaming_throughput as st

SEED = 42
CORES = 2


def run_k(bench: st.Bench, k: int) -> tuple[float, set[tuple[int, int]]]:
    """K surge jobs at once over the bench's topic: wall seconds and their outputs' checksums."""
    from workbench.streaming.job import StreamingJob

    folders = [bench.fresh(f"k{k}-{i}") for i in range(k)]
    jobs = [
        StreamingJob(
            st.engine_spec(bench, folder).model_copy(update={"name": f"surge-{i}"}),
            bench.spark,
            checkpoint=folder / "checkpoint",
            available_now=True,
            emit=None,
        )  # fmt: skip  (each its own name: one application runs them, as a shared app does)
        for i, folder in enumerate(folders)
    ]
    errors: list[BaseException] = []

    def one(job: StreamingJob) -> None:
        try:
            job.run(handle_signals=False)
        except BaseException as err:  # noqa: BLE001 - reported after the others end
            errors.append(err)

    threads = [threading.Thread(target=one, args=(job,)) for job in jobs]
    start = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seconds = time.perf_counter() - start
    if errors:
        raise errors[0]
    results = {st.checksum(bench.spark, folder / "out") for folder in folders}
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)
    return seconds, results


def run(args: argparse.Namespace) -> bool:
    from workbench.runtime.spark import session
    from workbench.schemas.registry import default_registry

    ks = [int(k) for k in args.daggers.split(",")]
    start = datetime.now(UTC).replace(microsecond=0) - timedelta(days=1)
    root = Path(tempfile.mkdtemp(prefix="bench-dagger-cost-"))
    best: dict[int, float] = {}
    results: set[tuple[int, int]] = set()
    try:
        with booking_preload.local_broker() as broker:
            topics = (f"bookings-{uuid.uuid4().hex[:6]}", f"warmup-{uuid.uuid4().hex[:6]}")
            options = {"start": start, "partitions": 4}
            booking_preload.preload(broker.bootstrap, topics[0], args.events, seed=SEED, **options)
            booking_preload.preload(
                broker.bootstrap, topics[1], args.warmup_events, seed=SEED + 1, **options
            )
            conf = {"spark.sql.shuffle.partitions": str(args.shuffle_partitions)}
            spark = session(master=f"local[{CORES}]", app_name="dagger-cost", conf=conf)
            bench = st.Bench(
                spark, default_registry(), broker.bootstrap, topics[0], args.events,
                args.max_offsets, root,
            )  # fmt: skip
            print(
                f"preloaded {args.events:,} bookings (4 partitions); local[{CORES}], shuffle "
                f"partitions {args.shuffle_partitions}, maxOffsetsPerTrigger "
                f"{args.max_offsets:,}, AvailableNow; K daggers at once in one application, "
                f"best of {args.repeat} after a warm-up on {args.warmup_events:,}"
            )
            warm = replace(bench, topic=topics[1], events=args.warmup_events)
            for k in ks:
                run_k(warm, k)
            for _ in range(args.repeat):
                for k in ks:
                    seconds, outputs = run_k(bench, k)
                    print(f"  K={k}: {seconds:.1f} s", flush=True)
                    best[k] = min(best.get(k, seconds), seconds)
                    results |= outputs
            spark.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return report(best, results, args.events)


def report(best: dict[int, float], results: set[tuple[int, int]], events: int) -> bool:
    base = best[min(best)]
    print(
        f"\n{'K':>3}{'best s':>9}{'dagger-events/s':>17}{'vs K=1':>9}"
        f"{'marginal s':>12}{'core-s/M':>10}"
    )
    for k, seconds in sorted(best.items()):
        rate = k * events / seconds
        ratio = rate / (events / base)
        if k > 1:
            marginal = (seconds - base) / (k - 1)
            extra = f"{marginal:>12.1f}{CORES * marginal / (events / 1e6):>10.1f}"
        else:
            extra = f"{'-':>12}{CORES * base / (events / 1e6):>10.1f}"
        print(f"{k:>3}{seconds:>9.1f}{rate:>17,.0f}{ratio:>8.2f}x{extra}")
    print("\nresult check (rows, checksum of each dagger's Parquet output):")
    print("  " + "; ".join(f"{rows:,} rows {total:,}" for rows, total in sorted(results)))
    same = len(results) == 1
    print("  all equal" if same else "  DIFFERENT: the daggers disagree")
    return same


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=500_000, help="bookings in the topic")
    parser.add_argument("--warmup-events", type=int, default=100_000, help="warm-up topic size")
    parser.add_argument("--max-offsets", type=int, default=250_000, help="maxOffsetsPerTrigger")
    parser.add_argument("--shuffle-partitions", type=int, default=4, help="shuffle partitions")
    parser.add_argument("--daggers", default="1,2,4", help="K values, comma-separated")
    parser.add_argument("--repeat", type=int, default=2, help="timed runs of each K")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop the broker on the way out
    sys.exit(0 if run(args) else 1)


if __name__ == "__main__":
    main()
