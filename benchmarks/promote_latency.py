"""Promote latency: ``workbench promote`` to the first point the job writes, on a warm service.

One run starts its own Kafka broker (free ports), Debian's InfluxDB 1.x (``influxd``) and
``workbench serve`` (temporary folders; all stopped at the end, even on error). It promotes
``notebooks/surge_pricing.ipynb`` as users do, through the CLI, with its sinks replaced by
an InfluxDB sink (a fresh database per run) and a fresh topic per run (the notebook
publishes its 3,000 demo events there, as it does by default). One promotion first, untimed,
warms the service and the machine; then ``--runs`` timed ones, each a new job, stopped once
its first point is in InfluxDB.

Each run's time is split along one wall clock (the service's event times and the job's
progress times come from the job service's API):

  papermill     the CLI starts; papermill runs the notebook in promote mode (the kernel
                publishes, samples, previews and replays the sample for parity)
  parity        the comparison of the preview's rows with the replay's
  submit        the spec and notebook to the service (its ``submit`` event)
  spawn         the supervisor spawns the job's process (``spawn`` event)
  Spark start   the process starts Spark and the query (``running`` event: heartbeat RUNNING)
  first batch   the first micro-batch ends (the job's first ``progress`` record)
  first point   the first point is visible in InfluxDB (polled every 0.1 s); the bundled
                spec's windows close on the watermark, so this is a later micro-batch

It prints each run, then the best and the median of each step and of the total, and the
total against the issue's 30 s target and the 2-4 minutes of the system we rebuild.

    .venv/bin/python benchmarks/promote_latency.py [--runs 3] [--timeout 300]
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import booking_preload
import requests
from job_service import ADMIN_TOKEN, ROOT, call, epoch, serving

NOTEBOOK = ROOT / "notebooks" / "surge_pricing.ipynb"
TARGET_S = 30.0
BEFORE_S = (120.0, 240.0)  # the system we rebuild: 2-4 minutes to production
STEPS = ("papermill", "parity", "submit", "spawn", "Spark start", "first batch", "first point")


@dataclass
class Run:
    name: str
    marks: dict[str, float] = field(default_factory=dict)  # step -> epoch when it ended
    start: float = 0.0
    batches: int = 0  # micro-batches ended when the first point was seen

    def steps(self) -> dict[str, float]:
        out, before = {}, self.start
        for step in STEPS:
            out[step] = self.marks[step] - before
            before = self.marks[step]
        return out

    @property
    def total(self) -> float:
        return self.marks["first point"] - self.start


# --- one promotion ----------------------------------------------------------------------


def promote(served: Any, bootstrap: str, sink: dict, name: str, work: Path) -> Run:
    """``workbench promote`` as a user runs it; the run with its CLI step ends marked."""
    command = [
        sys.executable, "-m", "workbench.cli.main", "promote", str(NOTEBOOK), "--team", "pricing",
        "--name", name, "--server", served.url, "--token", ADMIN_TOKEN,
        "--workdir", str(work / name),
        "-p", "bootstrap_servers", bootstrap, "-p", "topic", f"promote-{name}",
        "-p", "sinks", json.dumps([sink]),
    ]  # fmt: skip
    run = Run(name, start=time.time())
    lines = []
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True) as cli:  # fmt: skip
        assert cli.stdout is not None
        for line in cli.stdout:
            lines.append(line.rstrip())
            step = line.split(":", 1)[0]
            if step in ("papermill", "parity"):
                run.marks[step] = time.time()
    if cli.returncode != 0 or "parity" not in run.marks:
        raise RuntimeError(f"workbench promote failed ({cli.returncode}):\n" + "\n".join(lines))
    return run


def first_point(served: Any, name: str, influx: Any, sink: dict, timeout: float) -> float:
    """When the sink's measurement first has a point (polled every 0.1 s); the job's error
    if it fails first."""
    query = {"q": f'SELECT * FROM "{sink["measurement"]}" LIMIT 1', "db": sink["database"]}
    deadline = time.monotonic() + timeout
    for polls in range(sys.maxsize):
        answer = requests.post(influx.url + "/query", params=query, timeout=10).json()
        if any(r.get("series") for r in answer.get("results", [])):
            return time.time()
        if polls % 10 == 9 and (job := call(served, "GET", f"jobs/{name}"))["status"] == "FAILED":
            raise RuntimeError(f"{name} FAILED before its first point: {job['last_error']}")
        if time.monotonic() > deadline:
            break
        time.sleep(0.1)
    raise TimeoutError(f"no point in InfluxDB {sink['database']} within {timeout:.0f} s")


def service_marks(served: Any, run: Run) -> None:
    """The submit, spawn, running and first-batch times from the job service's API."""
    events = call(served, "GET", f"jobs/{run.name}/events")["events"]
    first: dict[str, float] = {}
    for event in events:
        first.setdefault(event["action"], epoch(event["time"]))
    missing = {"submit", "spawn"} - first.keys()
    started = [first[a] for a in ("running", "lagging") if a in first]
    if missing or not started:
        raise RuntimeError(f"{run.name}: events lack {missing or 'running'}: {events}")
    progress = call(served, "GET", f"jobs/{run.name}/progress?last=200")["progress"]
    if not progress:
        raise RuntimeError(f"{run.name}: a point in InfluxDB but no progress record")
    run.marks |= {"submit": first["submit"], "spawn": first["spawn"], "Spark start": min(started)}
    run.marks["first batch"] = min(p["time"] for p in progress)
    run.batches = sum(p["time"] <= run.marks["first point"] for p in progress)


def measure(served: Any, influx: Any, bootstrap: str, work: Path, timeout: float) -> Run:
    from readback import influxql
    from streaming import influx_v1_sink

    sink = influx_v1_sink(influx)
    name = f"promote-{uuid.uuid4().hex[:6]}"
    try:
        run = promote(served, bootstrap, sink, name, work)
        run.marks["first point"] = first_point(served, name, influx, sink, timeout)
        service_marks(served, run)
    finally:
        stop(served, name)
        influxql(influx, f'DROP DATABASE "{sink["database"]}"')
    return run


def stop(served: Any, name: str) -> None:
    """Stop the job and wait until it is (so the next run has the machine to itself)."""
    if served.call("POST", f"jobs/{name}/stop", "root").status_code != 200:
        return  # never submitted
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if call(served, "GET", f"jobs/{name}")["status"] in ("STOPPED", "FAILED"):
            return
        time.sleep(0.5)


# --- reporting --------------------------------------------------------------------------


def print_run(i: int, run: Run) -> None:
    steps = run.steps()
    cells = "".join(f"{steps[s]:>12.1f}" for s in STEPS)
    note = f"   (the point from micro-batch #{run.batches})"
    print(f"{f'run {i}':<8}{cells}{run.total:>9.1f}{note}", flush=True)


def print_summary(runs: list[Run]) -> None:
    print(f"\n{'':<8}" + "".join(f"{s:>12}" for s in STEPS) + f"{'total':>9}")
    for label, pick in (("best", min), ("median", statistics.median)):
        cells = "".join(f"{pick(r.steps()[s] for r in runs):>12.1f}" for s in STEPS)
        print(f"{label:<8}{cells}{pick(r.total for r in runs):>9.1f}")
    print("(each column on its own: a step's best and a total's best may be different runs)")
    best, median = min(r.total for r in runs), statistics.median(r.total for r in runs)
    for label, total in (("best", best), ("median", median)):
        verdict = "met" if total <= TARGET_S else "NOT met"
        low, high = (b / total for b in BEFORE_S)
        print(
            f"{label} {total:.1f} s: {total / TARGET_S:.2f}x the {TARGET_S:.0f} s target "
            f"({verdict}); {low:.1f}x-{high:.1f}x faster than the 2-4 minutes before"
        )


def header() -> None:
    print(f"\nseconds of each step (wall clock), {NOTEBOOK.name} promoted to a warm service:")
    print(f"{'':<8}" + "".join(f"{s:>12}" for s in STEPS) + f"{'total':>9}")


# --- main -------------------------------------------------------------------------------


def run(args: argparse.Namespace) -> list[Run]:
    from workbench.dev.ports import free_port
    from workbench.dev.timeseries import InfluxServer

    root = Path(tempfile.mkdtemp(prefix="bench-promote-"))
    runs: list[Run] = []
    try:
        with (
            booking_preload.local_broker() as broker,
            InfluxServer(root / "influx", free_port()) as influx,
            serving(root / "service") as served,
        ):
            t0 = time.monotonic()
            measure(served, influx, broker.bootstrap, root / "work", args.timeout)
            print(f"warm-up promotion (untimed) done in {time.monotonic() - t0:.1f} s")
            header()
            for i in range(1, args.runs + 1):
                runs.append(measure(served, influx, broker.bootstrap, root / "work", args.timeout))
                print_run(i, runs[-1])
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="timed promotions")
    parser.add_argument("--timeout", type=float, default=300, help="seconds to the first point")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop the servers on the way out
    print_summary(run(args))


if __name__ == "__main__":
    main()
