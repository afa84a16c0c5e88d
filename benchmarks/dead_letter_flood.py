"""A flood of dead letters: the engine over a topic whose records all fail to decode.

A producer writing another message type, or a breaking schema change, turns a whole topic
into dead letters. One run starts its own Kafka broker (stopped at the end), pre-loads
``--events`` seeded bookings twice into 4-partition topics, once good and once all
undecodable (``malformed_bytes``), and runs the bundled surge spec over each on one
``local[2]`` SparkSession (AvailableNow, ``--max-offsets`` a micro-batch, a Parquet sink and
Parquet dead letters), ``--repeat`` rounds of good and flood in turn after a warm-up, then
``--repeat`` runs of held (last: it may leave the driver out of memory):

  good     the good topic: the baseline, what the same job does with records that decode
  flood    the flood, the taps at their default budget: a few letters held whole, the rest
           spilled and read again from Kafka by Spark's tasks, which write them
  held     the flood with a budget no batch reaches: every letter held on the driver, parsed
           and written by the driver's Python (how dead letters were handled before spilling)

Per run: wall seconds, records/s and the driver Python's peak resident memory (``VmHWM``,
reset through ``/proc/self/clear_refs``); a run that fails (the driver's JVM out of memory)
is reported with its error. The letters written are counted and checked (every record of
the flood once); the exit status is 1 otherwise, or if good or flood failed.

    .venv/bin/python benchmarks/dead_letter_flood.py [--events 1000000] [--repeat 3] \
        [--max-offsets 500000] [--modes good,flood,held]

Holding every letter, the driver (1 GB of heap, Spark's default) runs out of memory on
micro-batches of 500,000 undecodable bookings, or spends minutes collecting garbage before
it does: time held with ``--max-offsets 100000``, and the other modes alone at the default.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import booking_preload  # noqa: E402
from streaming_throughput import Bench, engine_spec, settle  # noqa: E402

from workbench.schemas.registry import default_registry  # noqa: E402

MODES = ("good", "flood", "held")
#: a budget no micro-batch reaches: every letter held whole, as before spilling
UNBOUNDED = 1 << 50


@dataclass
class Run:
    mode: str
    seconds: float
    letters: int
    python_mb: float
    failed: str = ""


@contextmanager
def budget(held_bytes: int | None) -> Iterator[None]:
    from workbench.sources import letters

    before = letters.HELD_BYTES
    letters.HELD_BYTES = before if held_bytes is None else held_bytes
    try:
        yield
    finally:
        letters.HELD_BYTES = before


def python_peak_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def reset_peaks(spark: Any) -> None:
    settle(spark)
    Path("/proc/self/clear_refs").write_text("5")


def run_once(spark: Any, bootstrap: str, topic: str, mode: str, root: Path, args: Any) -> Run:
    from workbench.streaming.job import JobFailedError, StreamingJob

    bench = Bench(spark, default_registry(), bootstrap, topic, args.events, args.max_offsets, root)
    folder = bench.fresh(mode)
    job_spec = engine_spec(bench, folder)
    reset_peaks(spark)
    t0, failed, letters = time.perf_counter(), "", 0
    with budget(UNBOUNDED if mode == "held" else None):
        job = StreamingJob(
            job_spec, spark, checkpoint=folder / "checkpoint", available_now=True, emit=None
        )
        try:
            letters = job.run(handle_signals=False).dead_letters
        except JobFailedError as err:  # e.g. the driver out of memory holding every letter
            text = f"{err}\n{err.detail}"
            found = re.search(r"java\.lang\.\w+(Error|Exception)[^\n]*", text)
            failed = found.group(0) if found else text.splitlines()[0]
    seconds = time.perf_counter() - t0
    run = Run(mode, seconds, letters, python_peak_mb(), failed.strip(": "))
    shutil.rmtree(folder, ignore_errors=True)
    return run


def order(modes: list[str], repeat: int) -> list[str]:
    """good and flood in turn, each round in the other order; then held (it may leave the
    driver out of memory, which would slow what runs after it)."""
    pair = [m for m in modes if m != "held"]
    rounds = [pair if i % 2 == 0 else pair[::-1] for i in range(repeat)]
    return [m for r in rounds for m in r] + ["held"] * repeat * ("held" in modes)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--warmup-events", type=int, default=100_000)
    parser.add_argument("--max-offsets", type=int, default=500_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--modes", default=",".join(MODES), help="of good, flood, held")
    args = parser.parse_args()
    args.modes = [m for m in MODES if m in args.modes.split(",")]

    from workbench.runtime.spark import session

    start = datetime.now(UTC).replace(microsecond=0) - timedelta(days=1)
    root = Path(tempfile.mkdtemp(prefix="bench-flood-"))
    ok = True
    try:
        with booking_preload.local_broker() as broker:
            bootstrap, topics = broker.bootstrap, {}
            for mode, malformed in (("good", 0.0), ("flood", 1.0)):
                for size, prefix in ((args.events, ""), (args.warmup_events, "warmup-")):
                    topic = f"{prefix}{mode}-{uuid.uuid4().hex[:6]}"
                    booking_preload.preload(
                        bootstrap, topic, size, seed=7, start=start, malformed=malformed
                    )
                    topics[prefix + mode] = topic
            print(f"preloaded {args.events:,} bookings twice (good, all undecodable) + warm-ups")
            spark = session(app_name="bench-dead-letter-flood")
            for mode in args.modes:  # warm-up: JIT, Python workers, consumers
                source = topics["warmup-" + ("good" if mode == "good" else "flood")]
                run_once(spark, bootstrap, source, mode, root, args)
            runs: dict[str, list[Run]] = {m: [] for m in args.modes}
            for mode in order(args.modes, args.repeat):
                source = topics["good" if mode == "good" else "flood"]
                run = run_once(spark, bootstrap, source, mode, root, args)
                runs[mode].append(run)
                expected = 0 if mode == "good" else args.events
                print(f"  {mode}: {run.seconds:.1f} s, {run.letters:,} letters {run.failed}")
                if run.failed:
                    ok = ok and mode == "held"
                elif run.letters != expected:
                    print(f"  {mode}: {run.letters:,} letters written, not {expected:,}")
                    ok = False
            ok = report(runs, args.events) and ok
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0 if ok else 1


def report(runs: dict[str, list[Run]], events: int) -> bool:
    rounds = max(map(len, runs.values()))
    print(f"\n{events:,} records, best of {rounds} (Python: the best run's peak)")
    print(f"{'mode':<8}{'best s':>9}{'records/s':>13}{'python MB':>11}   runs")
    best: dict[str, Run] = {}
    for mode, mode_runs in runs.items():
        done = [r for r in mode_runs if not r.failed]
        times = ", ".join(f"{r.seconds:.1f}" + (" failed" if r.failed else "") for r in mode_runs)
        if not done:
            print(f"{mode:<8}{'failed':>9}   {times}: {mode_runs[0].failed}")
            continue
        run = best[mode] = min(done, key=lambda x: x.seconds)
        print(
            f"{mode:<8}{run.seconds:>9.1f}{events / run.seconds:>13,.0f}"
            f"{run.python_mb:>11.0f}   {times}"
        )
    if "good" in best and "flood" in best:
        ratio = best["good"].seconds / best["flood"].seconds
        print(f"flood / good: {ratio:.2f}x the records/s of records that decode")
    if "held" in best and "flood" in best:
        ratio = best["held"].seconds / best["flood"].seconds
        print(f"flood / held: {ratio:.2f}x (spilling against holding every letter)")
    return all(mode in best for mode in runs if mode != "held")


if __name__ == "__main__":
    raise SystemExit(main())
