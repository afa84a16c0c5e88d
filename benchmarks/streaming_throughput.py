"""Streaming throughput: the surge dagger over Kafka, the engine against hand-written PySpark.

One run starts its own Kafka broker (free ports, a temporary folder, stopped at the end, even
on error), pre-loads ``--events`` seeded BookingLogMessage records into a 4-partition topic
(event times from a day ago, up to 5 s out of order, ``--malformed`` of them undecodable) and
runs, on one local[2] SparkSession, each variant over the whole topic with
Trigger.AvailableNow, the same maxOffsetsPerTrigger and the same shuffle partitions:

  (a)  engine       StreamingJob with the bundled surge-pricing spec (Parquet sink)
  (b)  python       Kafka → pandas_udf protobuf decoding → s2sphere pandas_udf → window → Parquet
  (b') python-row   the same with plain row-at-a-time udfs (``--python pandas,row``)
  (c)  jvm          Kafka → the JVM decoder UDF → dagger_s2id → window → Parquet, by hand
  (c') jvm-once     (c) with the decoder marked nondeterministic: decoded once a record

and, to split (a)'s time, passes over the same topic:

  read         Kafka → noop sink
  decode       Kafka → JVM decoder → noop sink (one decode a record)
  engine-main  (a)'s main query alone (its plan into its Parquet sink, no dead-letters query)
  engine-dead  (a)'s dead-letters query alone

Every variant first runs once, untimed, over a small warm-up topic (JIT, Python workers,
Kafka consumers). Then the JVM variants run ``--repeat`` times, interleaved, and the Python
ones once; the best run counts. A variant's time is wall clock from building its query to
the end of its last query; events/s is the topic's size over that.

It prints the preload; a table of variant, best seconds, events/s and ratios against (b) and
(c) (each the faster of its forms), with the issue's targets; the result check (rows and a
checksum of every variant's Parquet output, which must all agree); (a)'s micro-batches from
Spark's progress (durationMs phases, per query) and where its decoder runs in the physical
plan; and where (a)'s time goes (read, decode, S2 + aggregate + write, dead letters).

    .venv/bin/python benchmarks/streaming_throughput.py [--events 2000000] [--repeat 2]
        [--max-offsets 500000] [--python pandas,row] [--only engine,jvm,read]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import booking_preload
import surge_pipelines as hand

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming import StreamingQuery

    from workbench.schemas.registry import SchemaRegistry
    from workbench.spec import DaggerSpec

SEED = 42
PHASES = ("addBatch", "getBatch", "latestOffset", "queryPlanning", "walCommit", "commitOffsets")
TARGET_VS_PYTHON, TARGET_VS_JVM = 5.0, 0.9


@dataclass(frozen=True)
class Bench:
    """What every variant shares: the session, the broker, the topic and a scratch folder."""

    spark: SparkSession
    registry: SchemaRegistry
    bootstrap: str
    topic: str
    events: int
    max_offsets: int
    root: Path

    def raw(self) -> DataFrame:
        return hand.kafka(self.spark, self.bootstrap, self.topic, self.max_offsets)

    def fresh(self, name: str) -> Path:
        folder = self.root / f"{name}-{uuid.uuid4().hex[:6]}"
        folder.mkdir(parents=True)
        return folder


@dataclass
class Run:
    variant: str
    seconds: float
    batches: dict[str, list[dict[str, int]]]  # query -> per micro-batch: rows, durationMs
    plans: dict[str, str] = field(default_factory=dict)  # query -> physical plan
    result: tuple[int, int] | None = None  # (rows, checksum) of its Parquet output
    events: int = 0

    @property
    def rate(self) -> float:
        return self.events / self.seconds


# --- variants: each builds and runs its queries to the end, returning them ----------------

Variant = Callable[[Bench, Path], list["StreamingQuery"]]


def await_all(queries: list[StreamingQuery]) -> list[StreamingQuery]:
    for query in queries:
        query.awaitTermination()
    return queries


def engine_spec(bench: Bench, folder: Path) -> DaggerSpec:
    """The bundled surge spec on the bench's topic, into Parquet and Parquet dead letters."""
    import yaml

    from workbench.demo import spec_path
    from workbench.job import with_bootstrap
    from workbench.spec import parse

    data = yaml.safe_load(spec_path().read_text())
    stream = data["streams"][0] | {
        "topics": [bench.topic],
        "starting_offsets": "earliest",
        "max_offsets_per_trigger": bench.max_offsets,
    }
    data |= {
        "streams": [stream],
        "sinks": [{"type": "parquet", "path": str(folder / "out")}],
        "dead_letter": {"type": "parquet", "path": str(folder / "dead")},
    }
    return with_bootstrap(parse(data), bench.bootstrap)


def engine_job(bench: Bench, folder: Path):
    from workbench.job import StreamingJob

    spec = engine_spec(bench, folder)
    checkpoint = folder / "checkpoint"
    return StreamingJob(spec, bench.spark, checkpoint=checkpoint, available_now=True, emit=None)


def engine(bench: Bench, folder: Path) -> list[StreamingQuery]:
    job = engine_job(bench, folder)
    job.run(handle_signals=False)
    return job.queries


def _context(job: Any, index: int):
    from workbench.sinks.registry import SinkContext
    from workbench.streams import registry_for

    trigger = {"availableNow": True}
    registry = registry_for(job.spec)
    return SinkContext(job.spark, job.spec.name, index, job.checkpoint, registry, "append", trigger)


def engine_main(bench: Bench, folder: Path) -> list[StreamingQuery]:
    """(a)'s main query alone: the job's plan into its Parquet sink, as the job starts it."""
    job = engine_job(bench, folder)
    result, _ = job.plan()
    return await_all([job.spec.sinks[0].start(result, _context(job, 0))])


def engine_dead(bench: Bench, folder: Path) -> list[StreamingQuery]:
    """(a)'s dead-letters query alone, with the job's own writer."""
    from workbench import deadletters

    job = engine_job(bench, folder)
    _, dead = job.plan()
    writer = deadletters.DeadLetterWriter(job.spec, _context(job, -1))
    query = (
        dead.writeStream.queryName(f"{job.spec.name}:{deadletters.QUERY}")
        .option("checkpointLocation", str(job.checkpoint / deadletters.QUERY))
        .trigger(availableNow=True)
        .foreachBatch(lambda batch, batch_id: writer.write(batch, batch_id))
        .start()
    )
    return await_all([query])


def python(style: str) -> Variant:
    def run(bench: Bench, folder: Path) -> list[StreamingQuery]:
        rows = hand.python_rows(bench.raw(), style)
        result = hand.surge(rows, hand.python_s2id(style))
        return await_all([hand.to_parquet(result, folder / "out", folder / "checkpoint")])

    return run


def jvm(once: bool) -> Variant:
    def run(bench: Bench, folder: Path) -> list[StreamingQuery]:
        rows = hand.jvm_rows(bench.raw(), bench.registry, once=once)
        result = hand.surge(rows, hand.jvm_s2id)
        return await_all([hand.to_parquet(result, folder / "out", folder / "checkpoint")])

    return run


def to_noop(frame: DataFrame, folder: Path) -> list[StreamingQuery]:
    writer = frame.writeStream.format("noop").option("checkpointLocation", str(folder / "cp"))
    return await_all([writer.trigger(availableNow=True).start()])


def read(bench: Bench, folder: Path) -> list[StreamingQuery]:
    return to_noop(bench.raw(), folder)


def decode(bench: Bench, folder: Path) -> list[StreamingQuery]:
    from pyspark.sql import functions as F

    from workbench.sources.protobuf import decoder

    decode = decoder(bench.spark, bench.registry, hand.MESSAGE, required_field="event_timestamp")
    return to_noop(bench.raw().select(decode(F.col("value")).alias("d")), folder)


#: name -> (label, variant, repeated); the labelled ones are the issue's (a), (b), (c)
VARIANTS: dict[str, tuple[str, Variant, bool]] = {
    "engine": ("(a)  engine: StreamingJob, surge spec", engine, True),
    "python": ("(b)  PySpark, pandas_udf + s2sphere", python("pandas"), False),
    "python-row": ("(b') PySpark, row udf + s2sphere", python("row"), False),
    "jvm": ("(c)  by hand, JVM decoder + S2Id", jvm(once=False), True),
    "jvm-once": ("(c') (c), decoded once a record", jvm(once=True), True),
    "read": ("     pass: Kafka read → noop", read, True),
    "decode": ("     pass: read + JVM decode → noop", decode, True),
    "engine-main": ("     pass: (a) main query alone", engine_main, True),
    "engine-dead": ("     pass: (a) dead-letters alone", engine_dead, True),
}


# --- measuring --------------------------------------------------------------------------


def measure(bench: Bench, name: str) -> Run:
    folder = bench.fresh(name)
    start = time.perf_counter()
    queries = VARIANTS[name][1](bench, folder)
    seconds = time.perf_counter() - start
    run = Run(name, seconds, {}, events=bench.events)
    for query in queries:
        label = query.name or name
        run.batches[label] = [_batch(p) for p in query.recentProgress]
        run.plans[label] = query._jsq.explainInternal(False)
        read_rows = sum(b["rows"] for b in run.batches[label])
        if read_rows != bench.events:
            raise AssertionError(f"{name}: query {label} read {read_rows:,} of {bench.events:,}")
    if (folder / "out").exists():
        run.result = checksum(bench.spark, folder / "out")
    shutil.rmtree(folder, ignore_errors=True)
    return run


def _batch(progress: Any) -> dict[str, int]:
    return {"batch": progress.batchId, "rows": progress.numInputRows, **progress.durationMs}


def checksum(spark: SparkSession, path: Path) -> tuple[int, int]:
    """(rows, sum of row hashes) of a surge output folder, read through Spark's file log."""
    from pyspark.sql import functions as F

    out = spark.read.parquet(str(path))
    row = F.hash(
        F.col("tag_s2id").cast("string"),
        F.col("tag_vehicle_type").cast("string"),
        F.col("window_timestamp").cast("timestamp"),
        F.col("bookings").cast("long"),
        F.col("unique_customers").cast("long"),
    )
    total = out.select(F.count(F.lit(1)), F.sum(row.cast("long"))).first()
    return int(total[0]), int(total[1] or 0)


def run_all(bench: Bench, warm: Bench, names: list[str], repeat: int) -> dict[str, list[Run]]:
    for name in names:  # untimed, on the small topic
        measure(warm, name)
    runs: dict[str, list[Run]] = {name: [] for name in names}
    for attempt in range(repeat):
        for name in names:
            if attempt == 0 or VARIANTS[name][2]:
                runs[name].append(measure(bench, name))
                print(
                    f"  {name:<12} run {attempt + 1}: {runs[name][-1].seconds:7.1f} s", flush=True
                )
    return runs


# --- reporting --------------------------------------------------------------------------


def best(runs: dict[str, list[Run]], *names: str) -> Run | None:
    candidates = [r for name in names for r in runs.get(name, [])]
    return min(candidates, key=lambda r: r.seconds) if candidates else None


def print_table(runs: dict[str, list[Run]]) -> None:
    b, c = best(runs, "python", "python-row"), best(runs, "jvm", "jvm-once")
    print(f"\n{'variant':<40}{'runs':>5}{'best s':>9}{'events/s':>12}{'vs (b)':>9}{'vs (c)':>9}")
    for name, variant_runs in runs.items():
        run = best(runs, name)
        assert run is not None
        vs_b = f"{run.rate / b.rate:.2f}x" if b else "-"
        vs_c = f"{run.rate / c.rate:.2f}x" if c else "-"
        line = f"{VARIANTS[name][0]:<40}{len(variant_runs):>5}{run.seconds:>9.1f}"
        print(f"{line}{run.rate:>12,.0f}{vs_b:>9}{vs_c:>9}")
    print("(b) = the faster Python form, (c) = the faster JVM form; best of the runs counted")
    a = best(runs, "engine")
    if a and b:
        _target("(a) >= 5x (b)", a.rate / b.rate, TARGET_VS_PYTHON)
    if a and c:
        _target("(a) >= 0.9x (c)", a.rate / c.rate, TARGET_VS_JVM)


def _target(label: str, ratio: float, goal: float) -> None:
    print(f"target {label:<18} {ratio:6.2f}x  {'met' if ratio >= goal else 'NOT met'}")


def print_results(runs: dict[str, list[Run]]) -> bool:
    """Print each output's rows and checksum; whether every run of every variant agrees."""
    results = {(r.variant, i): r.result for n, rs in runs.items() for i, r in enumerate(rs)}
    results = {k: v for k, v in results.items() if v is not None}
    if not results:
        return True
    print("\nresult check (rows, checksum of the aggregated rows in each Parquet output):")
    for (name, i), (rows, total) in results.items():
        print(f"  {name:<12} run {i + 1}: {rows:>9,} rows  checksum {total:>22,}")
    same = len(set(results.values())) == 1
    print("  all the same" if same else "  MISMATCH: the variants computed different things")
    return same


def print_batches(run: Run) -> None:
    print(f"\n(a) micro-batches of its best run ({run.seconds:.1f} s), durationMs from Spark:")
    print(
        f"  {'query':<28}{'batch':>6}{'rows':>9}"
        + "".join(f"{p:>14}" for p in PHASES)
        + f"{'trigger':>10}"
    )
    for query, batches in run.batches.items():
        for b in [*batches, _sum(batches)]:
            cells = "".join(f"{b.get(p, 0):>14,}" for p in PHASES)
            batch = b["batch"] if b["batch"] >= 0 else "all"
            print(f"  {query:<28}{batch:>6}{b['rows']:>9,}{cells}{b['triggerExecution']:>10,}")
    for query, plan in run.plans.items():
        operators = [line.strip()[:60] for line in plan.splitlines() if "decode_" in line]
        print(f"  decoder calls in the physical plan of {query}:")
        for operator in operators:
            print(f"    {operator} ...")


def _sum(batches: list[dict[str, int]]) -> dict[str, int]:
    total: dict[str, int] = {"batch": -1}
    for b in batches:
        for key, value in b.items():
            if key != "batch":
                total[key] = total.get(key, 0) + value
    return total


def print_split(runs: dict[str, list[Run]]) -> None:
    t = {name: best(runs, name) for name in runs}
    needed = ("read", "decode", "engine-main", "engine")
    if not all(t.get(n) for n in needed):
        return
    s = {name: run.seconds for name, run in t.items() if run}
    a = s["engine"]
    rows = [
        ("Kafka read → rows (read)", s["read"]),
        ("JVM decode, once a record (decode − read)", s["decode"] - s["read"]),
        (
            "filter, S2, window state, Parquet (engine-main − decode)",
            s["engine-main"] - s["decode"],
        ),
        ("dead-letters query beside it ((a) − engine-main)", a - s["engine-main"]),
    ]
    print(f"\nwhere (a)'s {a:.1f} s go (best runs, each pass alone on the same 2 cores):")
    for label, seconds in rows:
        print(f"  {label:<60}{seconds:>7.1f} s {seconds / a:>6.0%}")
    if "engine-dead" in s:
        print(f"  {'(the dead-letters query alone: engine-dead)':<60}{s['engine-dead']:>7.1f} s")
    if "jvm" in s and "jvm-once" in s:
        print(
            f"  {'(c) decoding in filter and project vs once: jvm − jvm-once':<60}"
            f"{s['jvm'] - s['jvm-once']:>7.1f} s"
        )


# --- main -------------------------------------------------------------------------------


def load(broker: Any, args: argparse.Namespace, start: datetime) -> tuple[str, str]:
    """The benchmark topic and the warm-up topic, pre-loaded; prints what it took."""
    topic, warmup = f"bookings-{uuid.uuid4().hex[:6]}", f"warmup-{uuid.uuid4().hex[:6]}"
    t0 = time.perf_counter()
    sent = booking_preload.preload(
        broker.bootstrap,
        topic,
        args.events,
        seed=SEED,
        start=start,
        partitions=args.partitions,
        malformed=args.malformed,
    )
    seconds = time.perf_counter() - t0
    print(
        f"preloaded {sent.sent:,} bookings ({sent.malformed:,} malformed) into {topic} "
        f"({args.partitions} partitions) in {seconds:.1f} s ({sent.sent / seconds:,.0f}/s); "
        f"event times {sent.first_arrival:%Y-%m-%d %H:%M} to {sent.last_arrival:%H:%M} UTC"
    )
    booking_preload.preload(
        broker.bootstrap,
        warmup,
        args.warmup_events,
        seed=SEED + 1,
        start=start,
        partitions=args.partitions,
        malformed=args.malformed,
    )
    return topic, warmup


def run(args: argparse.Namespace) -> bool:
    from workbench.schemas.registry import default_registry
    from workbench.spark import session

    forms = {"python": "pandas", "python-row": "row"}
    skipped = {name for name, form in forms.items() if form not in args.python.split(",")}
    names = [n for n in args.only.split(",") if n] or [n for n in VARIANTS if n not in skipped]
    start = datetime.now(UTC).replace(microsecond=0) - timedelta(days=1)
    root = Path(tempfile.mkdtemp(prefix="bench-streaming-"))
    try:
        with booking_preload.local_broker() as broker:
            topic, warmup = load(broker, args, start)
            spark = session(master="local[2]", app_name="streaming-throughput")
            hand.ship(spark)
            bench = Bench(
                spark,
                default_registry(),
                broker.bootstrap,
                topic,
                args.events,
                args.max_offsets,
                root,
            )
            warm = replace(bench, topic=warmup, events=args.warmup_events)
            print(
                f"Spark {spark.version} on {spark.sparkContext.master}, shuffle partitions "
                f"{spark.conf.get('spark.sql.shuffle.partitions')}, maxOffsetsPerTrigger "
                f"{args.max_offsets:,}, AvailableNow; timed runs:"
            )
            runs = run_all(bench, warm, names, args.repeat)
            spark.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print_table(runs)
    same = print_results(runs)
    engine_run = best(runs, "engine")
    if engine_run:
        print_batches(engine_run)
    print_split(runs)
    return same


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=2_000_000, help="bookings in the topic")
    parser.add_argument("--warmup-events", type=int, default=50_000, help="warm-up topic size")
    parser.add_argument("--partitions", type=int, default=4, help="topic partitions")
    parser.add_argument("--max-offsets", type=int, default=500_000, help="maxOffsetsPerTrigger")
    parser.add_argument("--malformed", type=float, default=0.0001, help="undecodable share")
    parser.add_argument("--repeat", type=int, default=2, help="runs of each JVM variant")
    parser.add_argument("--python", default="pandas", help="Python forms: pandas,row")
    parser.add_argument("--only", default="", help=f"variants, of {','.join(VARIANTS)}")
    args = parser.parse_args()
    sys.exit(0 if run(args) else 1)


if __name__ == "__main__":
    main()
