"""Streaming throughput: the surge dagger over Kafka, the engine against hand-written PySpark.

One run starts its own Kafka broker (free ports, a temporary folder, stopped at the end, even
on error), pre-loads ``--events`` seeded BookingLogMessage records into a 4-partition topic
(event times from a day ago, up to 5 s out of order, ``--malformed`` of them undecodable) and
runs, on one local[2] SparkSession, each variant over the whole topic with
Trigger.AvailableNow, the same maxOffsetsPerTrigger and the same shuffle partitions:

  (a)  engine       StreamingJob with the bundled surge-pricing spec (Parquet sink)
  (b)  python       Kafka → pandas_udf protobuf decoding → s2sphere pandas_udf → window → Parquet
  (b') python-row   the same with plain row-at-a-time udfs
  (b") python-dict  row udfs decoding through MessageToDict, as tutorials do (``--python dict``)
  (c)  jvm          Kafka → the JVM decoder UDF (the 6 fields the SQL reads) → dagger_s2id
                    → window → Parquet, by hand
  (F)  flink        the same dagger as Flink SQL on Flink's local MiniCluster (see below)
  (F') flink-cp     the same, checkpointing every 3 s (Spark checkpoints every micro-batch)

and, to split (a)'s time, passes over the same topic, each alone:

  read         Kafka → noop sink
  decode       Kafka → JVM decoder (the 6 fields) → noop sink
  aggregate    (c) into the noop sink (no Parquet write)
  jvm-letters  (c) collecting its undecodable records as the engine collects its dead letters
  engine-main  (a) without its dead-letter handling (the job's result into its Parquet writer)

Every variant first runs ``--warmups`` times (5), untimed and interleaved, over a warm-up
topic (JIT, Python workers, Kafka consumers; after 2, the JIT compilers still took 1-3 CPU-s
of each run, more of the engine's: docs/benchmarks.md, 27), and the repeated ones once more over the
benchmark topic (the first pass over it cost every variant 10-50% more CPU than its later
passes, whichever ran first). Then the JVM variants run ``--repeat`` times,
interleaved, each round in another order (a variant's time depends on the one before it),
and the Python ones once; the best run counts. A variant's time is wall clock
from building its queries to the end of the last one; events/s is the topic's size over
that. Each run also counts the machine's busy CPU seconds (``/proc/stat``: the JVM, the
broker serving it, any Python workers), the work it took: on 2 shared cores a run's wall
time varies with the JIT's state and with what else the machine does, and the median CPU
per run says whether two variants do the same work when single runs disagree.

The Flink anchor (F) is what users migrating from Dagger know: Flink 2.2 SQL, the spec's SQL
unchanged (``flink_sql.py`` says what Flink needs around it: the table's DDL with ``rowtime``
and its watermark, the UDFs S2Id and DistinctCount in Java), Flink's Kafka connector (from the
earliest offsets, bounded at the latest) and its protobuf format (the Java class protoc makes
from booking.proto; malformed records skipped), into a CSV file sink. It runs in a second JVM
(``flink_cluster.py``) on a MiniCluster of one TaskManager with 2 slots, parallelism 2: the
same 2 cores as ``local[2]``. Its time is counted as a Spark variant's is: the JVM and the
MiniCluster are started once before the runs and not counted (as the SparkSession is not;
their start is printed), and a run's time is wall clock from handing the script to the warm
JVM (a new TableEnvironment, DDL, planning, code generation, job submission) to the end of the
job, its files committed. (F) does not checkpoint (a bounded job), where Spark commits
offsets and state every micro-batch (~3 s apart here); (F') checkpoints every 3 s into the
run's folder. At the end of input Flink's watermark jumps to +inf and it also closes the last
window, which Spark (AvailableNow) keeps open past its final watermark: Flink's rows up to
(a)'s last window must equal (a)'s exactly (window end, S2 cell, vehicle type, bookings,
customers; the start is the end − 60 s in both), else the exit status is 1.

It prints the preload; a table of variant, best seconds, events/s and the ratios against (b)
(the fastest Python form) and (c), with the issue's targets, and (a)/Flink, (a)/(c),
(a)/read; the result check (rows and a checksum of every Parquet output, which must all
agree, and Flink's rows against (a)'s, else the exit status is 1); (a)'s and (c)'s
micro-batches from Spark's progress (durationMs phases) with how often each plan scans Kafka
and where it decodes; where (a)'s time goes, stage by stage; and with ``--plans`` each
variant's physical plan.

    .venv/bin/python benchmarks/streaming_throughput.py [--events 2000000] [--repeat 3]
        [--warmups 5] [--max-offsets 500000] [--python pandas,row,dict]
        [--only engine,jvm,flink,read]
        [--conf spark.sql.shuffle.partitions=2 ...] [--flink-conf KEY=VALUE ...]
        [--flink-gc spark|jvm-default] [--plans]

Flink's JVM has the Spark driver's heap (1g) and, by default, its garbage collector
(``workbench.runtime.spark.GC``); ``--flink-gc jvm-default`` runs it with the JVM's own (G1), as
Flink ships.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shutil
import signal
import statistics
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import booking_preload
import flink_build
import flink_sql
import surge_pipelines as hand
from flink_cluster import FlinkCluster, Row, read_rows

from workbench.runtime.spark import GC

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming import StreamingQuery

    from workbench.schemas.registry import SchemaRegistry
    from workbench.spec import DaggerSpec
    from workbench.streaming.job import StreamingJob

SEED = 42
PHASES = ("addBatch", "getBatch", "latestOffset", "queryPlanning", "walCommit", "commitOffsets")
TARGET_VS_PYTHON, TARGET_VS_JVM = 5.0, 1.0  # (c): the same work by hand (issue 15)
TARGET_VS_FLINK, TARGET_VS_READ = 1.0, 0.6


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
    flink: FlinkCluster | None = None
    flink_conf: tuple[tuple[str, str], ...] = ()  # SET in its script (--flink-conf)

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
    rows: list[Row] | None = None  # every output row, sorted: (a)'s and Flink's
    detail: str = ""
    cpu: float = 0.0  # the machine's busy CPU seconds over the timed part (machine_cpu)

    @property
    def rate(self) -> float:
        return self.events / self.seconds


def machine_cpu() -> float:
    """Busy CPU seconds of the whole machine since boot (user, nice, system, irq, softirq,
    steal in /proc/stat): every process a run keeps busy (the JVM, the broker serving it,
    Python workers) counts, and on a quiet machine little else does."""
    with open("/proc/stat", encoding="ascii") as stat:
        fields = [int(v) for v in stat.readline().split()[1:9]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = fields
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


class Clock:
    """Wall seconds and machine CPU seconds from its start to :meth:`stop`."""

    def __init__(self) -> None:
        self._cpu, self._start = machine_cpu(), time.perf_counter()

    def stop(self) -> tuple[float, float]:
        return time.perf_counter() - self._start, machine_cpu() - self._cpu


# --- variants: each builds and runs its queries to the end, returning them ----------------

Variant = Callable[[Bench, Path], list["StreamingQuery"]]


def await_all(queries: list[StreamingQuery]) -> list[StreamingQuery]:
    for query in queries:
        query.awaitTermination()
    return queries


def surge_spec(bench: Bench) -> dict[str, Any]:
    """The bundled surge spec's YAML, its stream on the bench's topic and broker."""
    import yaml

    from workbench.dev.demo import spec_path

    data: dict[str, Any] = yaml.safe_load(spec_path().read_text())
    stream = data["streams"][0] | {
        "topics": [bench.topic],
        "bootstrap_servers": bench.bootstrap,
        "starting_offsets": "earliest",
        "max_offsets_per_trigger": bench.max_offsets,
    }
    return data | {"streams": [stream]}


def engine_spec(bench: Bench, folder: Path) -> DaggerSpec:
    """The bundled surge spec on the bench's topic, into Parquet and Parquet dead letters."""
    from workbench.spec import parse
    from workbench.streaming.job import with_bootstrap

    data = surge_spec(bench)
    data |= {
        "sinks": [{"type": "parquet", "path": str(folder / "out")}],
        "dead_letter": {"type": "parquet", "path": str(folder / "dead")},
    }
    return with_bootstrap(parse(data), bench.bootstrap)


def engine_job(bench: Bench, folder: Path) -> StreamingJob:
    from workbench.streaming.job import StreamingJob

    spec = engine_spec(bench, folder)
    checkpoint = folder / "checkpoint"
    return StreamingJob(spec, bench.spark, checkpoint=checkpoint, available_now=True, emit=None)


def engine(bench: Bench, folder: Path) -> list[StreamingQuery]:
    job = engine_job(bench, folder)
    job.run(handle_signals=False)
    return job.queries


def engine_main(bench: Bench, folder: Path) -> list[StreamingQuery]:
    """(a) without its dead-letter handling: the job's result rows into its Parquet writer."""
    job = engine_job(bench, folder)
    result = job.plan()
    writer = job.spec.sinks[0].open(job.context, 0)
    return await_all([_each_batch(job, result, writer.write)])


def _each_batch(
    job: StreamingJob, frame: DataFrame, write: Callable[[DataFrame, int], int]
) -> StreamingQuery:
    """``frame`` run as the job runs its query: each micro-batch persisted, then written."""
    from workbench.streaming.job import QUERY

    def each(batch: DataFrame, batch_id: int) -> None:
        batch = batch.persist()
        try:
            write(batch, batch_id)
        finally:
            batch.unpersist()

    return (
        frame.writeStream.queryName(job.query_name)
        .option("checkpointLocation", str(job.checkpoint / QUERY))
        .outputMode("append")
        .trigger(availableNow=True)
        .foreachBatch(each)
        .start()
    )


def python(form: str) -> Variant:
    def run(bench: Bench, folder: Path) -> list[StreamingQuery]:
        result = hand.python_pipeline(bench.raw(), form)
        return await_all([hand.to_parquet(result, folder / "out", folder / "checkpoint")])

    return run


def jvm_surge(bench: Bench) -> DataFrame:
    return hand.surge(hand.jvm_rows(bench.raw(), bench.registry), hand.jvm_s2id)


def jvm(bench: Bench, folder: Path) -> list[StreamingQuery]:
    return await_all([hand.to_parquet(jvm_surge(bench), folder / "out", folder / "checkpoint")])


def jvm_letters(bench: Bench, folder: Path) -> list[StreamingQuery]:
    """(c) collecting its undecodable records as the engine collects its dead letters."""
    rows = hand.jvm_rows(bench.raw(), bench.registry, letters=True)
    frame = hand.surge(rows, hand.jvm_s2id)
    return await_all([hand.to_parquet(frame, folder / "out", folder / "checkpoint")])


def to_noop(frame: DataFrame, folder: Path) -> list[StreamingQuery]:
    writer = frame.writeStream.format("noop").option("checkpointLocation", str(folder / "cp"))
    return await_all([writer.trigger(availableNow=True).start()])


def read(bench: Bench, folder: Path) -> list[StreamingQuery]:
    return to_noop(bench.raw(), folder)


def decode(bench: Bench, folder: Path) -> list[StreamingQuery]:
    from pyspark.sql import functions as F

    from workbench.sources.protobuf import decoder

    decode = decoder(
        bench.spark, bench.registry, hand.MESSAGE, required_field="event_timestamp",
        fields=hand.FIELDS,
    )  # fmt: skip
    return to_noop(bench.raw().select(decode(F.col("value")).alias("d")), folder)


def aggregate(bench: Bench, folder: Path) -> list[StreamingQuery]:
    """(c) into the noop sink: everything but the Parquet write (the windows still close)."""
    return to_noop(jvm_surge(bench), folder)


def flink(checkpoint_every: str = "") -> Measure:
    """(F): the surge spec as a Flink SQL script, run on the bench's warm MiniCluster JVM;
    with ``checkpoint_every``, checkpointing at that interval into the run's folder."""
    return lambda bench, name: measure_flink(bench, name, checkpoint_every)


def measure_flink(bench: Bench, name: str, checkpoint_every: str) -> Run:
    from workbench.schemas.registry import default_registry

    assert bench.flink is not None, "the Flink JVM starts in run() when Flink is asked for"
    folder = bench.fresh(name)
    descriptor = default_registry().descriptor(hand.MESSAGE)
    script = folder / "surge.sql"
    settings = dict(bench.flink_conf)
    if checkpoint_every:
        settings["execution.checkpointing.interval"] = checkpoint_every
        settings["execution.checkpointing.dir"] = (folder / "checkpoints").as_uri()
    text = flink_sql.script(surge_spec(bench), descriptor, str(folder / "out"), settings)
    script.write_text(text)
    bench.flink.gc()  # as measure_spark does in the Spark JVM
    clock = Clock()
    timing = bench.flink.run(script)
    seconds, cpu = clock.stop()
    rows = read_rows(folder / "out")
    files = sum(1 for p in (folder / "out").rglob("part-*"))
    shutil.rmtree(folder, ignore_errors=True)
    detail = f"(submit {timing.submit:.1f} s, job {timing.net_runtime:.1f} s, {files} files)"
    return Run(name, seconds, {}, events=bench.events, rows=rows, detail=detail, cpu=cpu)


Measure = Callable[[Bench, str], Run]


def spark(variant: Variant) -> Measure:
    """A Spark variant measured by :func:`measure_spark`."""
    return lambda bench, name: measure_spark(variant, bench, name)


#: name -> (label, measure, repeated); the labelled ones are the issue's (a), (b), (c)
VARIANTS: dict[str, tuple[str, Measure, bool]] = {
    "engine": ("(a)  engine: StreamingJob, surge spec", spark(engine), True),
    "python": ("(b)  PySpark: pandas_udf, s2sphere", spark(python("pandas")), False),
    "python-row": ("(b') PySpark: row udf, s2sphere", spark(python("row")), False),
    "python-dict": ('(b") PySpark: udf, MessageToDict', spark(python("dict")), False),
    "jvm": ("(c)  by hand: JVM decoder, S2Id", spark(jvm), True),
    "jvm-letters": ("     pass: (c) collecting dead letters", spark(jvm_letters), True),
    "flink": ("(F)  Flink 2.2 SQL, MiniCluster 2 slots", flink(), True),
    "flink-cp": ("(F') the same, checkpoints every 3 s", flink("3s"), True),
    "read": ("     pass: Kafka read → noop", spark(read), True),
    "decode": ("     pass: + JVM decode → noop", spark(decode), True),
    "aggregate": ("     pass: (c) into noop, no Parquet", spark(aggregate), True),
    "engine-main": ("     pass: (a) without dead letters", spark(engine_main), True),
}
#: the variant whose rows Flink's must equal exactly
EXACT = "engine"
FLINK = ("flink", "flink-cp")
PYTHON = {"python": "pandas", "python-row": "row", "python-dict": "dict"}


# --- measuring --------------------------------------------------------------------------


def measure(bench: Bench, name: str) -> Run:
    return VARIANTS[name][1](bench, name)


def settle(spark: SparkSession) -> None:
    """No state or garbage of the run before left in the next: the state stores of ended
    queries stay loaded until Spark's maintenance (every 60 s) unloads them, so their maps
    outlived a collection and a full one fell inside a later run (docs/benchmarks.md, 24)."""
    java = spark._jvm
    assert java is not None, "a classic (not Spark Connect) session"
    java.org.apache.spark.sql.execution.streaming.state.StateStore.stop()
    java.System.gc()


def measure_spark(variant: Variant, bench: Bench, name: str) -> Run:
    """Run one Spark variant over the bench's topic: its time, progress, plans and result."""
    folder = bench.fresh(name)
    settle(bench.spark)
    clock = Clock()
    queries = variant(bench, folder)
    seconds, cpu = clock.stop()
    run = Run(name, seconds, {}, events=bench.events, cpu=cpu)
    for query in queries:
        label = query.name or name
        run.batches[label] = [_batch(p) for p in query.recentProgress]
        run.plans[label] = query._jsq.explainInternal(False)
        scanned = sum(b["rows"] for b in run.batches[label])  # every scan of the topic
        if scanned == 0 or scanned % bench.events:
            raise AssertionError(f"{name}: query {label} scanned {scanned:,} of {bench.events:,}")
    if (folder / "out").exists():
        run.result = checksum(bench.spark, folder / "out")
        if name == EXACT and bench.flink is not None:
            run.rows = exact_rows(bench.spark, folder / "out")
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
    assert total is not None
    return int(total[0]), int(total[1] or 0)


def exact_rows(spark: SparkSession, path: Path) -> list[Row]:
    """Every row of a surge output folder as Flink's are read: (window end ms, ...), sorted."""
    from pyspark.sql import functions as F

    out = spark.read.parquet(str(path)).select(
        F.unix_millis(F.col("window_timestamp").cast("timestamp")),
        F.col("tag_s2id").cast("string"),
        F.col("tag_vehicle_type").cast("string"),
        F.col("bookings").cast("long"),
        F.col("unique_customers").cast("long"),
    )
    return sorted((tuple(r) for r in out.collect()), key=repr)


def rotated(names: list[str], attempt: int) -> list[str]:
    """The order of round ``attempt``: ``names`` rotated by it, so that each variant follows
    a different one in each round. A variant's time depends on the one run before it in the
    same JVM (docs/benchmarks.md, item 22: (a) right after (c) took 0.90-0.92x (c)'s time
    over 5 rounds, (a) right after (c) collecting dead letters 0.99x)."""
    shift = attempt % len(names) if names else 0
    return names[shift:] + names[:shift]


def run_all(
    bench: Bench, warm: Bench, names: list[str], repeat: int, warmups: int = 1
) -> dict[str, list[Run]]:
    """Warm every variant up ``warmups`` times, interleaved, then run them interleaved: the
    JVM ones ``repeat`` times, each round in another order (:func:`rotated`). The warm-ups'
    machine CPU seconds are printed: they fall while the JIT compilers still work and settle
    once the code is compiled."""
    for attempt in range(warmups):
        cpu = "  ".join(f"{name} {measure(warm, name).cpu:.1f}" for name in names)
        print(f"  warm-up {attempt + 1}, machine CPU s: {cpu}")
    if warmups:  # a first pass over the benchmark topic cost every variant more than the next
        repeated = [name for name in names if VARIANTS[name][2]]
        cpu = "  ".join(f"{name} {measure(bench, name).cpu:.1f}" for name in repeated)
        print(f"  warm-up on the benchmark topic, machine CPU s: {cpu}")
    runs: dict[str, list[Run]] = {name: [] for name in names}
    for attempt in range(repeat):
        for name in rotated(names, attempt):
            if attempt == 0 or VARIANTS[name][2]:
                runs[name].append(measure(bench, name))
                last = runs[name][-1]
                print(
                    f"  {name:<12} run {attempt + 1}: {last.seconds:7.1f} s  "
                    f"cpu {last.cpu:5.1f} s {last.detail}"
                )
    return runs


# --- reporting --------------------------------------------------------------------------


def best(runs: dict[str, list[Run]], *names: str) -> Run | None:
    candidates = [r for name in names for r in runs.get(name, [])]
    return min(candidates, key=lambda r: r.seconds) if candidates else None


def print_table(runs: dict[str, list[Run]]) -> None:
    b, c, a = best(runs, *PYTHON), best(runs, "jvm"), best(runs, "engine")
    head = f"{'variant':<40}{'runs':>5}{'best s':>9}{'events/s':>12}{'vs (b)':>9}{'vs (c)':>9}"
    print(f"\n{head}{'cpu s':>8}")
    for name, variant_runs in runs.items():
        run = best(runs, name)
        assert run is not None
        vs_b = f"{run.rate / b.rate:.2f}x" if b else "-"
        vs_c = f"{run.rate / c.rate:.2f}x" if c else "-"
        line = f"{VARIANTS[name][0]:<40}{len(variant_runs):>5}{run.seconds:>9.1f}"
        print(f"{line}{run.rate:>12,.0f}{vs_b:>9}{vs_c:>9}{median_cpu(variant_runs):>8.1f}")
    print("cpu s: the median over a variant's runs of the machine's busy CPU seconds")
    if b:
        print(f"(b) = the fastest Python form ({b.variant}); the best run of each variant counts")
    if a and b:
        _target("(a) >= 5x (b)", a.rate / b.rate, TARGET_VS_PYTHON)
        for name in PYTHON:
            other = best(runs, name)
            if other and other is not b:
                print(f"       (a) vs {name}: {a.rate / other.rate:.2f}x")
    if a and c:
        _target("(a) >= 1.0x (c)", a.rate / c.rate, TARGET_VS_JVM)
    f, r = best(runs, "flink"), best(runs, "read")
    if a and f:
        _target("(a) >= 1.0x Flink", a.rate / f.rate, TARGET_VS_FLINK)
    if a and r:
        _target("(a) >= 0.6x read", a.rate / r.rate, TARGET_VS_READ)
    if a:
        pairs = (("Flink", f), ("Flink-cp", best(runs, "flink-cp")), ("(c)", c), ("read", r))
        ratios = "  ".join(f"(a)/{label} {a.rate / o.rate:.2f}x" for label, o in pairs if o)
        print(f"ratios of the best runs' events/s: {ratios}")
        work = "  ".join(
            f"(a)/{label} {median_cpu(runs[name]) / median_cpu(runs['engine']):.2f}x"
            for label, name in (("Flink", "flink"), ("(c)", "jvm"), ("read", "read"))
            if runs.get(name)
        )
        print(f"ratios of events per machine CPU-second (median runs): {work}")
        rounds = [
            f"{o.seconds / e.seconds:.2f}x"
            for e, o in zip(runs["engine"], runs.get("jvm", []), strict=False)
        ]
        if rounds:
            print(f"(a)/(c) round by round (events/s): {', '.join(rounds)}")


def median_cpu(variant_runs: list[Run]) -> float:
    return statistics.median(r.cpu for r in variant_runs)


def _target(label: str, ratio: float, goal: float) -> None:
    print(f"target {label:<16} {ratio:6.2f}x  {'met' if ratio >= goal else 'NOT met'}")


def print_results(runs: dict[str, list[Run]]) -> bool:
    """Print each output's rows and checksum; whether every run of every variant agrees."""
    results = {
        (r.variant, i): r.result
        for rs in runs.values()
        for i, r in enumerate(rs)
        if r.result is not None
    }
    if not results:
        return True
    print("\nresult check (rows, checksum of the aggregated rows in each Parquet output):")
    for (name, i), (rows, total) in results.items():
        print(f"  {name:<12} run {i + 1}: {rows:>9,} rows  checksum {total:>22,}")
    same = len(set(results.values())) == 1
    print("  all the same" if same else "  MISMATCH: the variants computed different things")
    return same


def print_flink_check(runs: dict[str, list[Run]]) -> bool:
    """Print whether every Flink run's rows equal (a)'s exactly; whether they all do."""
    reference = next((r for r in runs.get(EXACT, []) if r.rows is not None), None)
    flink_runs = [r for name in FLINK for r in runs.get(name, []) if r.rows is not None]
    if not flink_runs:
        return True
    if reference is None or not reference.rows:
        print("\nFlink's rows NOT checked: run (a) too (--only engine,flink)")
        return False
    last = max(row[0] for row in reference.rows)
    print(
        f"\nFlink check: every row of windows ending up to (a)'s last, "
        f"{datetime.fromtimestamp(last / 1000, UTC):%Y-%m-%d %H:%M:%S}, equal to (a)'s "
        f"{len(reference.rows):,} rows (window end, S2 cell, vehicle, bookings, customers):"
    )
    same, expected = True, Counter(reference.rows)
    for run in flink_runs:
        assert run.rows is not None
        closed = [row for row in run.rows if row[0] <= last]
        later = sorted({row[0] for row in run.rows if row[0] > last})
        equal = Counter(closed) == expected
        same &= equal
        print(
            f"  {run.variant:<8} run: {len(closed):,} rows {'equal' if equal else 'DIFFERENT'}; "
            f"+{len(run.rows) - len(closed):,} rows of {len(later)} window(s) Flink closes at "
            "the end of input and Spark keeps open"
        )
        if not equal:
            only_a = sorted(set(reference.rows) - set(closed))[:5]
            only_f = sorted(set(closed) - set(reference.rows))[:5]
            print(f"    only in (a): {only_a}\n    only in Flink: {only_f}")
    return same


def print_batches(run: Run, label: str = "(a)") -> None:
    print(f"\n{label} micro-batches of its best run ({run.seconds:.1f} s), durationMs from Spark:")
    phases = "".join(f"{p:>14}" for p in PHASES)
    print(f"  {'query':<27}{'batch':>6}{'rows':>10}{phases}{'trigger':>9}")
    for query, batches in run.batches.items():
        for b in [*batches, _sum(batches)]:
            cells = "".join(f"{b.get(p, 0):>14,}" for p in PHASES)
            batch = b["batch"] if b["batch"] >= 0 else "all"
            print(f"  {query:<27}{batch:>6}{b['rows']:>10,}{cells}{b['triggerExecution']:>9,}")
    triggers = sum(b["triggerExecution"] for bs in run.batches.values() for b in bs)
    print(
        f"  outside its micro-batches (building, starting and ending its queries): "
        f"{run.seconds * 1000 - triggers:,.0f} ms of {run.seconds * 1000:,.0f}"
    )
    for query, plan in run.plans.items():
        scanned = sum(b["rows"] for b in run.batches[query])
        decoders = operators(plan, "decode_") or ["none (the last batch had no data)"]
        print(
            f"  {query}: numInputRows {scanned:,} for {run.events:,} records; its last "
            f"physical plan scans Kafka {len(operators(plan, 'MicroBatchScan'))} time(s) and "
            f"decodes in {', '.join(decoders)}"
        )


def operators(plan: str, text: str) -> list[str]:
    """The operators (Project, Filter, MicroBatchScan...) of a physical plan naming ``text``."""
    lines = [line for line in plan.splitlines() if text in line]
    return [re.sub(r"^[\s:+|-]*(\*\(\d+\)\s*)?", "", line).split("[")[0].strip() for line in lines]


def _sum(batches: list[dict[str, int]]) -> dict[str, int]:
    total: dict[str, int] = {"batch": -1}
    for b in batches:
        for key, value in b.items():
            if key != "batch":
                total[key] = total.get(key, 0) + value
    return total


#: (a)'s time, stage by stage: (label, variant timed with the stage, variant timed without)
STAGES = (
    ("Kafka read to rows", "read", None),
    ("JVM protobuf decode", "decode", "read"),
    ("filter, S2Id, window aggregate, state store", "aggregate", "decode"),
    ("Parquet write", "jvm", "aggregate"),
    ("engine without dead letters vs (c)", "engine-main", "jvm"),
    ("dead-letter handling", "engine", "engine-main"),
)


def print_split(runs: dict[str, list[Run]]) -> None:
    seconds = {name: run.seconds for name in runs if (run := best(runs, name))}
    if not all(name in seconds for stage in STAGES for name in stage[1:] if name):
        return
    total = seconds["engine"]
    print(f"\nwhere (a)'s {total:.1f} s go (differences of best runs; each pass alone on 2 cores):")
    for label, with_stage, without in STAGES:
        cost = seconds[with_stage] - (seconds[without] if without else 0.0)
        pass_names = f"{with_stage} − {without}" if without else with_stage
        print(f"  {label:<45}{pass_names:<26}{cost:>7.1f} s {cost / total:>6.0%}")


# --- main -------------------------------------------------------------------------------


def load(broker: Any, args: argparse.Namespace, start: datetime) -> tuple[str, str]:
    """The benchmark topic and the warm-up topic, pre-loaded; prints what it took."""
    topic, warmup = f"bookings-{uuid.uuid4().hex[:6]}", f"warmup-{uuid.uuid4().hex[:6]}"
    options = {"start": start, "partitions": args.partitions, "malformed": args.malformed}
    t0 = time.perf_counter()
    sent = booking_preload.preload(broker.bootstrap, topic, args.events, seed=SEED, **options)
    seconds = time.perf_counter() - t0
    print(
        f"preloaded {sent.sent:,} bookings ({sent.malformed:,} malformed) into {topic} "
        f"({args.partitions} partitions) in {seconds:.1f} s ({sent.sent / seconds:,.0f}/s); "
        f"event times {sent.first_arrival:%Y-%m-%d %H:%M} to {sent.last_arrival:%H:%M} UTC"
    )
    booking_preload.preload(broker.bootstrap, warmup, args.warmup_events, seed=SEED + 1, **options)
    return topic, warmup


def variant_names(args: argparse.Namespace) -> list[str]:
    if args.only:
        return args.only.split(",")
    forms = args.python.split(",")
    return [n for n in VARIANTS if n not in PYTHON or PYTHON[n] in forms]


def partition(setting: str) -> tuple[str, str, str]:
    return setting.partition("=")


def start_flink(stack: contextlib.ExitStack, root: Path, gc: str) -> FlinkCluster:
    """The Flink JVM and its MiniCluster (2 slots), started till ``stack`` closes; ``gc``:
    ``spark`` (the Spark driver's collector) or ``jvm-default``."""
    log = Path(tempfile.gettempdir()) / f"{root.name}-flink.log"
    collector = GC if gc == "spark" else ""
    cluster = stack.enter_context(FlinkCluster(slots=2, log=log, collector=collector))
    print(
        f"Flink {flink_build.FLINK} MiniCluster (1 TaskManager, 2 slots, parallelism 2) ready "
        f"in {cluster.started:.1f} s (its own start {cluster.minicluster:.1f} s; not counted); "
        f"heap {cluster.heap}, collector {cluster.collector or 'the JVM default (G1)'}; "
        f"JVM log {log}"
    )
    return cluster


def run(args: argparse.Namespace) -> bool:
    from workbench.runtime.spark import session
    from workbench.schemas.registry import default_registry

    names = variant_names(args)
    start = datetime.now(UTC).replace(microsecond=0) - timedelta(days=1)
    root = Path(tempfile.mkdtemp(prefix="bench-streaming-"))
    try:
        with booking_preload.local_broker() as broker, contextlib.ExitStack() as stack:
            topic, warmup = load(broker, args, start)
            conf = dict(item.split("=", 1) for item in args.conf)
            spark = session(master="local[2]", app_name="streaming-throughput", conf=conf)
            hand.ship(spark)
            bench = Bench(
                spark, default_registry(), broker.bootstrap, topic, args.events,
                args.max_offsets, root,
            )  # fmt: skip
            if set(FLINK) & set(names):
                conf_pairs = tuple((k, v) for k, _, v in map(partition, args.flink_conf))
                flink = start_flink(stack, root, args.flink_gc)
                bench = replace(bench, flink=flink, flink_conf=conf_pairs)
                print(f"  Flink options: {dict(conf_pairs) or 'defaults'}")
            warm = replace(bench, topic=warmup, events=args.warmup_events)
            print(
                f"Spark {spark.version} on {spark.sparkContext.master} ({GC}), shuffle partitions "
                f"{spark.conf.get('spark.sql.shuffle.partitions')}, maxOffsetsPerTrigger "
                f"{args.max_offsets:,}, AvailableNow{''.join(f', {c}' for c in args.conf)}; "
                f"timed runs after {args.warmups} warm-up(s) on {args.warmup_events:,} events:"
            )
            runs = run_all(bench, warm, names, args.repeat, args.warmups)
            spark.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print_table(runs)
    same = print_results(runs)
    same = print_flink_check(runs) and same
    for name, label in (("engine", "(a)"), ("jvm", "(c)")):
        best_run = best(runs, name)
        if best_run:
            print_batches(best_run, label)
    print_split(runs)
    if args.plans:
        print_plans(runs)
    return same


def print_plans(runs: dict[str, list[Run]]) -> None:
    """Each variant's last physical plan (of its best run), query by query (``--plans``)."""
    for name in runs:
        run = best(runs, name)
        for query, plan in run.plans.items() if run else ():
            print(f"\nphysical plan of {name} ({query}):\n{plan}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=2_000_000, help="bookings in the topic")
    parser.add_argument("--warmup-events", type=int, default=500_000, help="warm-up topic size")
    parser.add_argument("--partitions", type=int, default=4, help="topic partitions")
    parser.add_argument("--max-offsets", type=int, default=500_000, help="maxOffsetsPerTrigger")
    parser.add_argument("--malformed", type=float, default=0.0001, help="undecodable share")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each JVM variant")
    parser.add_argument(
        "--warmups", type=int, default=5, help="untimed runs of each variant on the warm-up topic"
    )
    parser.add_argument("--python", default="pandas,row", help="Python forms: pandas,row,dict")
    parser.add_argument("--only", default="", help=f"variants, of {','.join(VARIANTS)}")
    parser.add_argument("--plans", action="store_true", help="print each variant's plan")
    parser.add_argument(
        "--conf", action="append", default=[], metavar="KEY=VALUE", help="a Spark setting"
    )
    parser.add_argument(
        "--flink-conf", action="append", default=[], metavar="KEY=VALUE",
        help="a Flink option SET in the Flink script (e.g. execution.checkpointing.interval=3s)",
    )  # fmt: skip
    parser.add_argument(
        "--flink-gc", choices=("spark", "jvm-default"), default="spark",
        help="Flink's collector: the Spark driver's (default) or the JVM's own (G1)",
    )  # fmt: skip
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop the broker on the way out
    sys.exit(0 if run(args) else 1)


if __name__ == "__main__":
    main()
