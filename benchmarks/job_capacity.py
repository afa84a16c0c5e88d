"""Job capacity: how many demo-rate daggers this machine keeps up with at once.

One run starts its own Kafka broker (free ports) and ``workbench serve`` (temporary folders;
both stopped at the end, even on error). One producer publishes seeded bookings in real
time at the demo's wall rate (``--rate`` 300 bookings per event-time second, ``--speedup``
6: 1,800 a wall second) into one topic; every dagger is the bundled surge-pricing spec
reading that topic from its end into its own Parquet folder, submitted as a job of the
service (one OS process group each: Python and its Spark driver JVM, ``local[2]``), or,
with ``--jobs-per-app N``, as streaming queries of shared Spark applications of up to N
jobs each (the cluster's ``jobs_per_app``; one ``local[2]`` driver per application).

Steps of ``--jobs`` (2,4,6,8,10): the service runs that many jobs at once (each step adds
jobs to the ones already running); once all are RUNNING and ``--warmup`` seconds passed, it
samples every 10 s for ``--minutes`` (10, the issue's figure), from the job service's API
(each job's ``records`` and ``last_batch_at``) and from the broker (the topic's end offsets
against the offsets of each job's last planned batch in its checkpoint):

  published/s   the producer's rate over the step (end offsets of the topic)
  processed     each job's decoded records per second between its first and last batch of
                the step, over the published rate (min over jobs)
  lag           the records published but not yet planned (topic end − checkpoint offsets),
                in seconds of input at the end of the step (max over jobs), and its growth
                (the lag's peak over the step's second half minus that over its first half,
                in seconds of input, max over jobs)
  API behind    the largest ``offsets_behind_latest`` the API showed (to compare with lag)
  RSS/job       resident memory of each job's process group (Python + JVM) at the end of
                the step, a shared application's divided by the jobs it runs: mean and
                max; the machine's available memory and load average

A job keeps up when processed ≥ 0.98 and its lag's peak does not grow by more than one
trigger interval of input (a job falling behind grows its lag by what it misses). The run
stops after the first step in which a job does not keep up. ``--driver-memory 1g`` bounds
each driver's heap (``spark.driver.memory`` in the spec's ``spark_conf``) to compare RSS.

    .venv/bin/python benchmarks/job_capacity.py [--jobs 2,4,6,8,10] [--minutes 10]
        [--warmup 60] [--rate 300] [--speedup 6] [--partitions 3] [--driver-memory 1g]
        [--jobs-per-app 10]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import booking_preload
from job_service import call, epoch, serving

SAMPLE_S = 10.0
TRIGGER_S = 10.0  # the bundled spec's trigger_interval: one tooth of the lag's sawtooth
KEEP_UP_RATIO = 0.98


@dataclass
class Sample:
    """One job at one moment: its totals (from the API) and its lag (from the broker)."""

    wall: float
    records: int
    last_batch_at: float | None
    lag: int
    status: str
    behind: int  # the API's offsets_behind_latest, to compare with ``lag``


@dataclass
class Job:
    name: str
    checkpoint: Path = Path()
    pid: int = 0
    samples: list[Sample] = field(default_factory=list)

    def rate(self) -> float:
        """Decoded records per second between the step's first and last batch."""
        batches = [s for s in self.samples if s.last_batch_at is not None]
        if len(batches) < 2:
            return 0.0
        first, last = batches[0], batches[-1]
        seconds = (last.last_batch_at or 0.0) - (first.last_batch_at or 0.0)
        return (last.records - first.records) / seconds if seconds > 0 else 0.0

    def lag_growth(self) -> int:
        """How much the lag's peak grew: its maximum over the second half of the step minus
        that over the first half (the lag is a sawtooth, one tooth per trigger)."""
        lags = [s.lag for s in self.samples]
        half = len(lags) // 2
        return max(lags[half:]) - max(lags[:half]) if half else 0


# --- the producer and the jobs ----------------------------------------------------------


class Producer(threading.Thread):
    """Publishes demo bookings in real time until :meth:`stop`."""

    def __init__(self, bootstrap: str, topic: str, args: argparse.Namespace):
        super().__init__(daemon=True)
        self.bootstrap, self.topic, self.args = bootstrap, topic, args
        self._finish = threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        from workbench.dev.producer import publish

        generator = booking_preload.FastGenerator(
            seed=1, start=datetime.now(UTC), rate_per_s=self.args.rate, out_of_order_seconds=5.0
        )
        try:
            publish(
                self.bootstrap, "bookings", topic=self.topic, duration_s=10**9,
                generator=generator, speedup=self.args.speedup, stop=self._finish.is_set,
            )  # fmt: skip
        except BaseException as err:  # noqa: BLE001 - reported by the benchmark
            self.error = err

    def stop(self) -> None:
        self._finish.set()
        self.join(30)


def spec_yaml(name: str, bootstrap: str, topic: str, out: Path, driver_memory: str) -> str:
    import yaml

    from workbench.dev.demo import spec_path

    data = yaml.safe_load(spec_path().read_text())
    stream = data["streams"][0] | {
        "bootstrap_servers": bootstrap,
        "topics": [topic],
        "starting_offsets": "latest",
        "group_id": f"capacity-{name}",
    }
    data |= {"name": name, "streams": [stream], "sinks": [{"type": "parquet", "path": str(out)}]}
    if driver_memory:
        data["spark_conf"] = {"spark.driver.memory": driver_memory}
    return yaml.safe_dump(data, sort_keys=False)


def add_jobs(served: Any, jobs: list[Job], n: int, bench: Bench) -> None:
    while len(jobs) < n:
        name = f"capacity-{len(jobs) + 1}-{uuid.uuid4().hex[:4]}"
        text = spec_yaml(name, bench.bootstrap, bench.topic, bench.root / "out" / name,
                         bench.args.driver_memory)  # fmt: skip
        call(served, "POST", "jobs", {"name": name, "team": "pricing", "spec_yaml": text})
        jobs.append(Job(name))
    deadline = time.monotonic() + 600
    for job in jobs:
        while True:
            view = call(served, "GET", f"jobs/{job.name}")
            if view["status"] in ("RUNNING", "LAGGING") and view["metrics"]["batches"]:
                job.checkpoint, job.pid = Path(view["checkpoint"]), view["run"]["pid"]
                break
            if view["status"] == "FAILED" or time.monotonic() > deadline:
                raise RuntimeError(f"{job.name} did not start: {view['status']}, "
                                   f"{view.get('last_error')}")  # fmt: skip
            time.sleep(1)


# --- measuring --------------------------------------------------------------------------


@dataclass
class Bench:
    bootstrap: str
    topic: str
    root: Path
    args: argparse.Namespace


def end_offsets(bootstrap: str, topic: str) -> dict[str, int]:
    from workbench.notebook.examples import end_offsets as ends

    return {str(p): int(o) for p, o in ends(bootstrap, topic).items()}


def planned_offsets(checkpoint: Path, topic: str) -> dict[str, int]:
    """The end offsets of the job's last planned micro-batch (its checkpoint's offset log)."""
    from workbench.streaming.checkpoints import QUERY

    folder = checkpoint / QUERY / "offsets"
    if not folder.is_dir():
        return {}
    logs = sorted((int(p.name), p) for p in folder.iterdir() if p.name.isdigit())
    for _, path in reversed(logs):
        for line in path.read_text().splitlines()[2:]:
            try:
                offsets = json.loads(line)
            except ValueError:
                break  # a log being written: the one before
            if isinstance(offsets, dict) and topic in offsets:
                return {str(p): int(o) for p, o in offsets[topic].items()}
    return {}


def sample(served: Any, jobs: list[Job], bench: Bench) -> int:
    """Sample every job; returns the topic's end offset total."""
    ends = end_offsets(bench.bootstrap, bench.topic)
    for job in jobs:
        view = call(served, "GET", f"jobs/{job.name}")
        metrics = view["metrics"]
        planned = planned_offsets(job.checkpoint, bench.topic)
        lag = sum(max(end - planned.get(p, 0), 0) for p, end in ends.items())
        batch_at = epoch(metrics["last_batch_at"]) if metrics["last_batch_at"] else None
        job.samples.append(
            Sample(
                time.time(),
                int(metrics["records"] or 0),
                batch_at,
                lag,
                view["status"],
                int(metrics["offsets_behind_latest"] or 0),
            )  # fmt: skip
        )
    return sum(ends.values())


def measure(served: Any, jobs: list[Job], bench: Bench) -> dict[str, Any]:
    """One step: sample for ``--minutes``; what it measured."""
    time.sleep(bench.args.warmup)
    for job in jobs:
        job.samples.clear()
    t0, published0 = time.time(), sample(served, jobs, bench)
    while time.time() - t0 < bench.args.minutes * 60:
        time.sleep(SAMPLE_S)
        published = sample(served, jobs, bench)
    rate = (published - published0) / (time.time() - t0)
    sharing = {pid: sum(1 for j in jobs if j.pid == pid) for pid in {j.pid for j in jobs}}
    group = {pid: rss_mb(pid) for pid in sharing}
    rss = [group[job.pid] / sharing[job.pid] for job in jobs]
    ratios = {job.name: job.rate() / rate for job in jobs}
    growth = {job.name: job.lag_growth() for job in jobs}
    kept = [
        j for j in jobs
        if ratios[j.name] >= KEEP_UP_RATIO and growth[j.name] <= TRIGGER_S * rate
        and all(s.status in ("RUNNING", "LAGGING") for s in j.samples)
    ]  # fmt: skip
    return {
        "jobs": len(jobs),
        "kept": len(kept),
        "rate": rate,
        "ratio": min(ratios.values()),
        "lag_s": max(j.samples[-1].lag for j in jobs) / rate,
        "growth_s": max(growth.values()) / rate,
        "behind": max(s.behind for j in jobs for s in j.samples),
        "rss": rss,
        "apps": len(sharing),
    }


def rss_mb(pgid: int) -> float:
    """Resident memory of every process in the group ``pgid`` (Python and its JVM), MB."""
    total_kb = 0
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if int((proc / "stat").read_text().rpartition(")")[2].split()[2]) != pgid:
                continue
            status = (proc / "status").read_text().splitlines()
        except (OSError, ValueError, IndexError):
            continue
        total_kb += sum(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))
    return total_kb / 1024


def available_mb() -> float:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) / 1024
    return float("nan")


# --- reporting --------------------------------------------------------------------------

COLUMNS = (
    f"{'jobs':>4}{'apps':>5}{'kept up':>9}{'published/s':>13}{'processed':>11}{'lag s':>8}"
    f"{'lag growth s':>14}{'API behind':>12}{'RSS/job MB':>16}{'avail MB':>10}{'load':>6}"
)


def print_step(step: dict[str, Any]) -> None:
    rss = step["rss"]
    memory = f"{sum(rss) / len(rss):,.0f} ({max(rss):,.0f})"
    print(
        f"{step['jobs']:>4}{step['apps']:>5}{step['kept']:>5}/{step['jobs']:<3}{step['rate']:>13,.0f}"
        f"{step['ratio']:>10.3f}x{step['lag_s']:>8.1f}{step['growth_s']:>14.1f}"
        f"{step['behind']:>12,}{memory:>16}"
        f"{available_mb():>10,.0f}{os.getloadavg()[0]:>6.1f}",
        flush=True,
    )


# --- main -------------------------------------------------------------------------------


def run(args: argparse.Namespace) -> int:
    from workbench.kafka.admin import create_topics

    steps = [int(n) for n in args.jobs.split(",")]
    root = Path(tempfile.mkdtemp(prefix="bench-capacity-"))
    kept_up = 0
    try:
        settings = {}
        if args.jobs_per_app > 1:
            settings = {"clusters": {"local": {"master": "local[2]",
                                               "jobs_per_app": args.jobs_per_app}}}  # fmt: skip
        with (
            booking_preload.local_broker() as broker,
            serving(root / "service", settings) as served,
        ):
            topic = f"capacity-{uuid.uuid4().hex[:6]}"
            create_topics(broker.bootstrap, {topic: args.partitions})
            bench = Bench(broker.bootstrap, topic, root, args)
            producer = Producer(broker.bootstrap, topic, args)
            producer.start()
            memory = args.driver_memory or "default heap"
            how = "local[2], driver memory " + memory
            if args.jobs_per_app > 1:
                how = f"in shared applications of up to {args.jobs_per_app} jobs, local[2] each"
            print(
                f"{os.cpu_count()} cores, {available_mb():,.0f} MB available; demo rate "
                f"{args.rate * args.speedup:,.0f} bookings/s into {topic} ({args.partitions} "
                f"partitions); each job the surge spec, {how}; "
                f"{args.minutes:g} min a step after {args.warmup:g} s of warm-up"
            )
            print(COLUMNS)
            jobs: list[Job] = []
            try:
                for n in steps:
                    add_jobs(served, jobs, n, bench)
                    step = measure(served, jobs, bench)
                    print_step(step)
                    if producer.error is not None:
                        raise RuntimeError(f"the producer failed: {producer.error}")
                    if step["kept"] < n:
                        break
                    kept_up = n
            finally:
                producer.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"kept up with {kept_up} demo-rate dagger(s) at once" + (
        "" if kept_up < steps[-1] else " (every step; try more with --jobs)"))  # fmt: skip
    return kept_up


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", default="2,4,6,8,10", help="jobs at once, step by step")
    parser.add_argument("--minutes", type=float, default=10.0, help="measured minutes a step")
    parser.add_argument("--warmup", type=float, default=60.0, help="seconds before measuring")
    parser.add_argument("--rate", type=float, default=300.0, help="bookings per event second")
    parser.add_argument("--speedup", type=float, default=6.0, help="event seconds per second")
    parser.add_argument("--partitions", type=int, default=3, help="topic partitions")
    parser.add_argument("--driver-memory", default="", help="spark.driver.memory of each job")
    parser.add_argument(
        "--jobs-per-app", type=int, default=1, help="jobs a shared Spark application runs"
    )
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop the servers on the way out
    run(args)


if __name__ == "__main__":
    main()
