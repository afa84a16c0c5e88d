"""Where the surge dagger's CPU goes: the engine (a) and the hand-tuned path (c), profiled.

One run starts its own Kafka broker and pre-loads the same seeded bookings as
``streaming_throughput.py`` (its helpers), starts one local[2] SparkSession, warms each
variant up on a smaller topic, then runs each variant once over the whole topic while Java
Flight Recorder samples the driver JVM (``jcmd PID JFR.start settings=profile``: every
thread's Java stack every 10 ms). Each sample is put in the first category its stack names,
from the top frame down (the decoder, S2, Kafka, the state store, shuffle, Parquet...; see
:data:`CATEGORIES`), so a sample in ``java.util.HashMap`` under the state store counts as
state store. It prints, per variant:

* wall seconds, Java CPU seconds sampled (samples x 10 ms), GC pause seconds, and the Python
  driver's own CPU seconds (the engine runs each micro-batch's foreachBatch in Python);
* the share and seconds of each category, side by side, and their difference (a) - (c);
* (a)'s micro-batches from Spark's progress (durationMs phases);
* the hottest frames of what no category claimed, to refine the categories.

    .venv/bin/python benchmarks/engine_profile.py [--events 2000000] [--variants engine,jvm]
        [--conf KEY=VALUE ...] [--keep DIR]   # --keep: leave the .jfr files there

Single runs on this 2-core machine vary by up to 2x under load: the shares are steadier than
the seconds, and only differences between variants of the same run mean much.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import tempfile
import uuid
from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import booking_preload
import streaming_throughput as st
import surge_pipelines as hand

#: JFR's sampling period of Java code with ``settings=profile``
PERIOD_S = 0.010

S = "org.apache.spark."
SQL = S + "sql."
#: category: the class-name prefixes that claim a sample; a sample goes to the first category
#: a frame of its stack names, from the top frame down (``S``/``SQL``: Spark's packages)
TABLE = f"""
protobuf decode (our JVM decoder): io.daggerworkbench.udf.Proto io.daggerworkbench.udf.WireInput
  io.daggerworkbench.udf.Utf8
decoder Row -> Spark row conversion: {SQL}catalyst.CatalystTypeConverters
S2 cell ids: com.google.common.geometry. io.daggerworkbench.udf.S2
observed metrics (dead letters): {SQL}execution.CollectMetricsExec
  {SQL}execution.AggregatingAccumulator
state store: {SQL}execution.streaming.state.
aggregation (collect_set, count): {SQL}catalyst.expressions.aggregate. {SQL}execution.aggregate.
Kafka source: org.apache.kafka. {SQL}kafka010.
shuffle and compression: {S}shuffle. {S}storage. net.jpountz. com.github.luben.zstd {S}io.
  {S}util.collection. {S}serializer.
Parquet write: org.apache.parquet. {SQL}execution.datasources.
cache (persist): {SQL}execution.columnar. {SQL}execution.InMemory
planning and optimizer (driver): {SQL}catalyst.optimizer. {SQL}catalyst.analysis.
  {SQL}catalyst.rules. {SQL}execution.QueryExecution {SQL}catalyst.planning.
  {SQL}execution.SparkStrategies
code generation (driver): org.codehaus.janino. org.codehaus.commons.
  {SQL}catalyst.expressions.codegen.CodeGenerator
generated code (filter, project, hash): {SQL}catalyst.expressions.GeneratedClass
scheduler, RPC, Py4J, logging: {S}scheduler. {S}rpc. {S}network. org.apache.log4j
  org.apache.logging. io.netty. py4j. {SQL}execution.streaming. {S}executor.
"""


def _categories(table: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """``TABLE`` as (category, prefixes); an indented line continues the one above."""
    rows: list[tuple[str, list[str]]] = []
    for line in table.strip().splitlines():
        if line.startswith(" "):
            rows[-1][1].extend(line.split())
        else:
            label, _, prefixes = line.partition(": ")
            rows.append((label, prefixes.split()))
    return tuple((label, tuple(prefixes)) for label, prefixes in rows)


CATEGORIES = _categories(TABLE)
OTHER = "other (JDK, Spark core)"


@dataclass
class Profile:
    variant: str
    seconds: float
    python_cpu_s: float
    samples: Counter = field(default_factory=Counter)  # category -> samples
    unclaimed: Counter = field(default_factory=Counter)  # top frame -> samples
    gc_pause_s: float = 0.0
    batches: dict[str, list[dict[str, int]]] = field(default_factory=dict)

    @property
    def java_cpu_s(self) -> float:
        return sum(self.samples.values()) * PERIOD_S


def frame_class(frame: dict[str, Any]) -> str:
    method = frame.get("method", {})
    name = method.get("type", {}).get("name", "")
    return f"{name.replace('/', '.')}.{method.get('name', '')}"


def category(frames: list[str]) -> str:
    for frame in frames:
        for label, prefixes in CATEGORIES:
            if frame.startswith(prefixes):
                return label
    return OTHER


def read_recording(path: Path, profile: Profile) -> None:
    """Fill ``profile`` from the JFR file: samples per category, GC pauses."""
    out = subprocess.run(
        ["jfr", "print", "--json", "--stack-depth", "64", "--events",
         "jdk.ExecutionSample,jdk.GarbageCollection", str(path)],
        check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    for event in json.loads(out)["recording"]["events"]:
        values = event["values"]
        if event["type"] == "jdk.GarbageCollection":
            profile.gc_pause_s += _seconds(values.get("sumOfPauses", "0"))
            continue
        frames = [frame_class(f) for f in (values.get("stackTrace") or {}).get("frames", [])]
        label = category(frames)
        profile.samples[label] += 1
        if label == OTHER and frames:
            profile.unclaimed[frames[0]] += 1


def _seconds(text: Any) -> float:
    """A JFR duration (``PT0.0123S`` or a number of nanoseconds) in seconds."""
    if isinstance(text, int | float):
        return float(text) / 1e9
    text = str(text)
    if text.startswith("PT") and text.endswith("S"):
        return float(text[2:-1] or 0)
    return 0.0


def jcmd(pid: int, *command: str) -> None:
    subprocess.run(["jcmd", str(pid), *command], check=True, capture_output=True, text=True)


def profiled(bench: st.Bench, variant: str, folder: Path) -> Profile:
    """One run of ``variant`` over the bench's topic under JFR."""
    java = bench.spark._jvm
    assert java is not None
    pid = int(java.ProcessHandle.current().pid())
    recording = folder / f"{variant}-{uuid.uuid4().hex[:6]}.jfr"
    jcmd(pid, "JFR.start", f"name={recording.stem}", "settings=profile")
    cpu = resource.getrusage(resource.RUSAGE_SELF)
    try:
        run = st.measure(bench, variant)
    finally:
        jcmd(pid, "JFR.stop", f"name={recording.stem}", f"filename={recording}")
    after = resource.getrusage(resource.RUSAGE_SELF)
    python_cpu = (after.ru_utime - cpu.ru_utime) + (after.ru_stime - cpu.ru_stime)
    profile = Profile(variant, run.seconds, python_cpu, batches=run.batches)
    read_recording(recording, profile)
    return profile


def print_profiles(profiles: list[Profile]) -> None:
    names = [p.variant for p in profiles]
    print(f"\n{'':<42}" + "".join(f"{n:>18}" for n in names))
    rows = (
        ("wall seconds", [p.seconds for p in profiles]),
        ("Java CPU seconds sampled", [p.java_cpu_s for p in profiles]),
        ("GC pauses, seconds", [p.gc_pause_s for p in profiles]),
        ("Python driver CPU seconds", [p.python_cpu_s for p in profiles]),
    )
    for label, values in rows:
        print(f"{label:<42}" + "".join(f"{v:>18.2f}" for v in values))
    labels = [label for label, _ in CATEGORIES] + [OTHER]
    diff = len(profiles) >= 2
    head = "".join(f"{'share  CPU s':>18}" for _ in profiles)
    print(f"\n{'where the Java CPU goes':<42}{head}" + (f"{'first - second':>16}" if diff else ""))
    for label in sorted(labels, key=lambda lb: -profiles[0].samples[lb]):
        cells = []
        for p in profiles:
            total = sum(p.samples.values()) or 1
            cells.append(f"{p.samples[label] / total:>10.0%}{p.samples[label] * PERIOD_S:>8.2f}")
        delta = ""
        if diff:
            delta = (
                f"{(profiles[0].samples[label] - profiles[1].samples[label]) * PERIOD_S:>+16.2f}"
            )
        print(f"  {label:<40}" + "".join(cells) + delta)
    for p in profiles:
        if p.batches:
            print(f"\n{p.variant}: micro-batches (durationMs from Spark's progress)")
            for query, batches in p.batches.items():
                for b in batches:
                    phases = ", ".join(f"{k} {v:,}" for k, v in b.items() if k not in ("batch",))
                    print(f"  {query} batch {b['batch']}: {phases}")
    for p in profiles:
        top = ", ".join(f"{frame} {n}" for frame, n in p.unclaimed.most_common(8))
        print(f"\n{p.variant}: hottest unclaimed frames (samples): {top or '-'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=2_000_000)
    parser.add_argument("--warmup-events", type=int, default=500_000)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--max-offsets", type=int, default=500_000)
    parser.add_argument("--malformed", type=float, default=0.0001)
    parser.add_argument("--variants", default="engine,jvm", help="streaming_throughput variants")
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--keep", type=Path, help="keep the .jfr recordings in this folder")
    args = parser.parse_args()
    if shutil.which("jcmd") is None or shutil.which("jfr") is None:
        raise SystemExit("needs the JDK's jcmd and jfr on PATH")

    from workbench.runtime.spark import session
    from workbench.schemas.registry import default_registry

    names = args.variants.split(",")
    start = datetime.now(UTC).replace(microsecond=0) - timedelta(days=1)
    root = Path(tempfile.mkdtemp(prefix="bench-profile-"))
    recordings = args.keep or root
    recordings.mkdir(parents=True, exist_ok=True)
    try:
        with booking_preload.local_broker() as broker:
            topic, warmup = st.load(broker, args, start)
            conf = dict(item.split("=", 1) for item in args.conf)
            spark = session(master="local[2]", app_name="engine-profile", conf=conf)
            hand.ship(spark)
            bench = st.Bench(
                spark, default_registry(), broker.bootstrap, topic, args.events,
                args.max_offsets, root,
            )  # fmt: skip
            warm = replace(bench, topic=warmup, events=args.warmup_events)
            # The warm-up runs under JFR too: starting a recording deoptimizes compiled
            # code, which made the first profiled variant take 1.5-2x its time (whichever
            # went first), so the profiled runs begin with the JIT settled under JFR.
            for name in names:
                profiled(warm, name, root)
            profiles = [profiled(bench, name, recordings) for name in names]
            spark.stop()
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)
    print(
        f"Spark on local[2], {args.events:,} bookings, maxOffsetsPerTrigger {args.max_offsets:,}"
        f"{''.join(f', {c}' for c in args.conf)}; one profiled run each after a warm-up "
        f"(JFR, {PERIOD_S * 1000:.0f} ms samples; pid {os.getpid()})"
    )
    print_profiles(profiles)


if __name__ == "__main__":
    main()
