"""Alert latency and the cost of alert rules: a metric rule on a running job, end to end.

One run starts its own Kafka broker (free ports), a webhook receiver (a threaded
``http.server`` on 127.0.0.1 that records each POST's arrival time and JSON) and
``workbench serve`` (a temporary state folder; the receiver is team ``pricing``'s webhook
notifier ``bench-hook`` in its ``service.yaml``; failed deliveries retried every 1 to 10 s),
all stopped at the end, even on error. Every job is the bundled surge-pricing spec (bookings
per S2 cell, vehicle type and minute), submitted through the REST API, one Spark driver
(``local[2]``) each, Parquet sink, run one at a time.

1. **Latency.** A job reads a topic a producer thread feeds in real time (``--rate``
   bookings a second, event time = wall time), with ``emit: updates`` (a window's row in
   the micro-batch that changes it; with ``emit: final`` an alert waits for the window to
   close, a minute and the watermark delay) and one rule ``bookings >= --threshold``
   grouped by ``tag_s2id`` (``for: 0``, ``group_wait: 0s``), which the background never
   reaches. ``--crossings`` times, at a random moment of the trigger cycle, it publishes
   ``--threshold`` bookings at once at a new pickup point (a new cell, so a new alert) and
   times from the publish call to the webhook's receipt of that alert's ``firing``
   notification. The split: publish → the micro-batch that read it starts (its
   ``progress.jsonl`` line: time − duration), → its ``alerts.jsonl`` line is written (the
   line's ``time``), → the webhook's receipt (the service's ingestion tick, its state
   machine, the outbox and the dispatcher). Target: latency ≤ trigger interval + 2 s.
2. **Throughput.** ``--records`` bookings pre-loaded in a 4-partition topic; a fresh job
   reads them all (``max_offsets_per_trigger`` a tenth of them, about the demo's 10 s
   batches at its 1,800 bookings/s; trigger 0 s: batches back to back) as (a) no rules,
   (b) 20 metric rules (``bookings > 5·k`` or ``unique_customers > 5·k``, grouped by
   ``tag_s2id``; many fire), (c) the same 20 rules with the webhook receiver down
   (connection refused; once it is back, that job's firing notifications, kept in the
   outbox, must all arrive, once each). The runs go a b c a c b a, so each variant's runs
   are centred on the same moment and a linear drift of the machine cancels. A run's
   records/s = the decoded records of its micro-batches over their summed durations
   (Spark's ``triggerExecution``, which includes the sink's write and the rules'
   observations), from the job's ``progress.jsonl``, its first two batches left out
   (warm-up). b/a and c/a are shown as the mean of the runs' records/s over the (a) runs'
   mean, and as the median micro-batch rate over (a)'s (less moved by other work on the
   machine). Target: ≥ 0.95. Beside each run, the CPU seconds the service process used
   meanwhile (its ingestion and delivery compete with the job on a small machine).

Defaults take ~10 minutes on two cores (runs a b c a c b a); ``--quick`` (3 crossings,
40,000 records, runs a b c) ~4.

    .venv/bin/python benchmarks/alert_latency.py [--crossings 10] [--records 200000]
        [--trigger 10s] [--rate 100] [--threshold 200] [--quick]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import booking_preload
import requests
import yaml

TEAM, TOKEN, HOOK, RULE = "pricing", "bench-root-token", "bench-hook", "bench-hot"
TARGET_SLACK_S, TARGET_RATIO = 2.0, 0.95
WARMUP_BATCHES = 2
RULES = 20


# --- the webhook receiver ---------------------------------------------------------------


class Receiver:
    """A webhook on 127.0.0.1:``port`` recording (arrival time, JSON) of each POST;
    :meth:`down` closes its socket (connections refused) until :meth:`up`."""

    def __init__(self, port: int):
        self.port, self.url = port, f"http://127.0.0.1:{port}/hook"
        self.received: list[tuple[float, dict[str, Any]]] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    def up(self) -> None:
        if self._server is not None:
            return
        record = self._record

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                record(time.time(), json.loads(body or b"{}"))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *_: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def down(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()

    def _record(self, at: float, body: dict[str, Any]) -> None:
        with self._lock:
            self.received.append((at, body))

    def alerts(self, status: str = "firing") -> list[tuple[float, dict[str, Any]]]:
        """(arrival, alert) of every alert of ``status`` received so far."""
        with self._lock:
            got = list(self.received)
        return [
            (at, a) for at, body in got for a in body.get("alerts", []) if a["status"] == status
        ]


# --- the job service --------------------------------------------------------------------


@dataclass
class Service:
    """``workbench serve`` over ``state``, called as its admin."""

    state: Path
    process: subprocess.Popen
    url: str = ""

    def call(self, method: str, path: str, body: dict | None = None) -> Any:
        answer = requests.request(
            method, f"{self.url}/workbench/api/{path}", json=body, timeout=60,
            headers={"Authorization": f"token {TOKEN}"},
        )  # fmt: skip
        if answer.status_code >= 400:
            raise RuntimeError(f"{method} {path}: {answer.status_code} {answer.text}")
        return answer.json()

    def wait(self, job: int, ok: Callable[[dict], bool], what: str, timeout: float) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            view = self.call("GET", f"jobs/{job}")
            if ok(view):
                return view
            if view["status"] == "FAILED" or time.monotonic() > deadline:
                raise RuntimeError(f"job {job} not {what}: {view['status']}, {view['last_error']}")
            time.sleep(0.5)

    def stop_job(self, job: int) -> None:
        self.call("POST", f"jobs/{job}/stop")
        self.wait(job, lambda v: v["run"] is None, "stopped", 120)

    def cpu_s(self) -> float:
        """CPU seconds the service process has used (its ingestion and dispatch threads;
        not its jobs, which are processes of their own)."""
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def run_dir(self, job: int) -> Path:
        return max((self.state / "runs").glob(f"{job}-*"), key=lambda p: p.stat().st_mtime)

    def close(self) -> None:
        """Stop every job (what is left of a run killed), then the service."""
        with contextlib.suppress(Exception):
            for view in self.call("GET", "jobs")["jobs"]:
                with contextlib.suppress(Exception):
                    if view["run"] is not None:
                        self.stop_job(view["id"])
                with contextlib.suppress(Exception):
                    view = self.call("GET", f"jobs/{view['id']}")
                    if view["run"] is not None:
                        os.killpg(view["run"]["pid"], signal.SIGKILL)
        self.process.terminate()
        try:
            self.process.wait(60)
        except subprocess.TimeoutExpired:
            self.process.kill()


@contextlib.contextmanager
def serving(state: Path, hook_url: str) -> Iterator[Service]:
    """A ``workbench serve`` whose team ``pricing`` has the webhook notifier ``bench-hook``."""
    state.mkdir(parents=True)
    (state / "teams.yaml").write_text(yaml.safe_dump({"admins": ["root"], "teams": {TEAM: []}}))
    config = {
        "teams_file": "teams.yaml",
        "tokens": {TOKEN: "root"},
        "policy": {"max_failures": 1, "stop_grace_s": 30, "kill_grace_s": 5},
        "notifiers": {TEAM: {HOOK: {"type": "webhook", "url": hook_url}}},
        "alerting": {"retry_s": 1, "retry_max_s": 10},
    }
    (state / "service.yaml").write_text(yaml.safe_dump(config))
    command = [
        sys.executable,
        "-m",
        "workbench.cli.main",
        "serve",
        "--port",
        "0",
        "--state",
        str(state),
    ]
    with open(state / "serve.log", "ab") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                   start_new_session=True)  # fmt: skip
    service = Service(state, process)
    try:
        deadline = time.monotonic() + 60
        while not service.url:
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("workbench serve did not start: " + tail(state / "serve.log"))
            with contextlib.suppress(OSError, ValueError, KeyError):
                record = json.loads((state / "service.json").read_text())
                service.url = record["url"].rstrip("/") if record["pid"] == process.pid else ""
            time.sleep(0.2)
        yield service
    finally:
        service.close()


def tail(path: Path) -> str:
    return path.read_text(errors="replace")[-2000:] if path.exists() else ""


def submit(service: Service, name: str, spec: dict[str, Any]) -> int:
    body = {"name": name, "team": TEAM, "spec_yaml": yaml.safe_dump(spec, sort_keys=False)}
    job = int(service.call("POST", "jobs", body)["id"])
    running = service.wait(job, lambda v: v["status"] in ("RUNNING", "LAGGING"), "running", 600)
    return int(running["id"])


def surge_spec(name: str, bootstrap: str, topic: str, out: Path, **keys: Any) -> dict[str, Any]:
    """The bundled surge-pricing spec on ``topic``, into Parquet under ``out``."""
    from workbench.dev.demo import spec_path

    data = yaml.safe_load(spec_path().read_text())
    stream = data["streams"][0] | {"bootstrap_servers": bootstrap, "topics": [topic],
                                   "group_id": name, **keys.pop("stream", {})}  # fmt: skip
    return data | {"name": name, "streams": [stream],
                   "sinks": [{"type": "parquet", "path": str(out / name)}], **keys}  # fmt: skip


def jsonl(path: Path) -> list[dict[str, Any]]:
    lines = []
    for raw in path.read_text().splitlines() if path.exists() else []:
        with contextlib.suppress(ValueError):
            lines.append(json.loads(raw))
    return lines


# --- 1. latency ---------------------------------------------------------------------------


@contextlib.contextmanager
def background(bootstrap: str, topic: str, rate: float) -> Iterator[None]:
    """Bookings published in real time (event time = wall time) while inside; raises on
    the way out if publishing failed."""
    from workbench.dev.producer import publish

    finish, failed = threading.Event(), list[BaseException]()
    events = booking_preload.FastGenerator(
        seed=3, start=datetime.now(UTC), rate_per_s=rate, out_of_order_seconds=2.0
    )

    def produce() -> None:
        try:
            publish(bootstrap, "bookings", topic=topic, duration_s=10**9, generator=events,
                    speedup=1.0, stop=finish.is_set)  # fmt: skip
        except BaseException as err:  # noqa: BLE001 - raised in the benchmark's thread
            failed.append(err)

    thread = threading.Thread(target=produce, name="background-bookings", daemon=True)
    thread.start()
    try:
        yield
    finally:
        finish.set()
        thread.join(30)
    if failed:
        raise RuntimeError(f"the background producer failed: {failed[0]}")


@dataclass
class Crossing:
    published: float
    received: float = 0.0
    batch_start: float | None = None
    line_written: float | None = None

    @property
    def latency(self) -> float:
        return self.received - self.published

    def steps(self) -> tuple[float, float, float] | None:
        """Seconds of each of :data:`STEPS` (None: its lines were not found)."""
        if self.batch_start is None or self.line_written is None:
            return None
        return (
            self.batch_start - self.published,
            self.line_written - self.batch_start,
            self.received - self.line_written,
        )


STEPS = (
    "publish → its micro-batch starts",
    "→ its alerts.jsonl line (the batch, the rule)",
    "→ the webhook's receipt (the service)",
)


def crossing_payloads(index: int, count: int) -> list[tuple[str, bytes]]:
    """``count`` new bookings at one pickup point south of the generator's city (cell
    ``index``: 0.03° apart, about three level-13 cells), event time now."""
    from workbench.dev.generator import MESSAGES, encode

    lat, long = -6.55 - 0.03 * index, 106.75
    stamp = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    out = []
    for n in range(count):
        order = f"X-{index}-{n}"
        event = {"order_number": order, "service_type": "GO_RIDE", "status": "CREATED",
                 "customer_id": f"C-{index}-{n}", "pickup_lat": lat, "pickup_long": long,
                 "vehicle_type": "BIKE", "event_timestamp": stamp}  # fmt: skip
        out.append((order, encode(event, MESSAGES["bookings"])))
    return out


def cross(producer: Any, topic: str, index: int, count: int) -> float:
    """Publish a crossing; the wall time its publishing began."""
    payloads = crossing_payloads(index, count)
    started = time.time()
    for key, payload in payloads:
        producer.produce(topic, payload, key=key)
    if producer.flush(30):
        raise RuntimeError("the crossing's bookings were not all acknowledged in 30 s")
    return started


def firing_receipt(receiver: Receiver, seen: set[str], timeout: float) -> tuple[float, str]:
    """(arrival, fingerprint) of the first firing alert of a label set not in ``seen``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for at, alert in receiver.alerts():
            if alert["labels"].get("alertname") == RULE and alert["fingerprint"] not in seen:
                return at, alert["fingerprint"]
        time.sleep(0.02)
    raise RuntimeError(f"no firing notification in {timeout:.0f} s")


def split(crossing: Crossing, run: Path, fingerprint: str) -> None:
    """When the micro-batch that read the crossing started and wrote its observation."""
    for line in jsonl(run / "alerts.jsonl"):
        if any(fingerprint in o["firing"] for o in line.get("observations", [])):
            crossing.line_written = float(line["time"])
            for batch in jsonl(run / "progress.jsonl"):
                if batch["batch"] == line["batch_id"]:
                    crossing.batch_start = float(batch["time"]) - batch["duration_ms"] / 1000
            return


def measure_latency(service: Service, receiver: Receiver, bench: Bench) -> list[Crossing]:
    """The latency job on a live topic: ``--crossings`` crossings timed, then stopped."""
    from workbench.kafka.admin import create_topics

    args = bench.args
    topic = f"alerts-live-{uuid.uuid4().hex[:6]}"
    create_topics(bench.bootstrap, {topic: 3})
    rule = {"name": RULE, "when": f"bookings >= {args.threshold}", "group_by": ["tag_s2id"],
            "group_wait": "0s", "summary": "{tag_s2id}: {bookings} bookings",
            "notify": [HOOK]}  # fmt: skip
    spec = surge_spec("alert-latency", bench.bootstrap, topic, bench.root,
                      emit="updates", trigger_interval=args.trigger, alerts=[rule])  # fmt: skip
    with background(bench.bootstrap, topic, args.rate):
        job = submit(service, "alert-latency", spec)
        service.wait(job, lambda v: (v["metrics"]["batches"] or 0) >= 3, "warm", 300)
        crossings = time_crossings(service.run_dir(job), receiver, bench, topic)
        service.stop_job(job)
    return crossings


def time_crossings(run: Path, receiver: Receiver, bench: Bench, topic: str) -> list[Crossing]:
    from confluent_kafka import Producer

    from workbench.kafka.admin import LOG

    producer = Producer({"bootstrap.servers": bench.bootstrap, "linger.ms": 0, "logger": LOG})
    rng, trigger_s = random.Random(11), spec_trigger_s(bench.args.trigger)
    crossings, seen = list[Crossing](), set[str]()
    for index in range(bench.args.crossings):
        time.sleep(rng.uniform(0, trigger_s))  # a random moment of the trigger cycle
        crossing = Crossing(cross(producer, topic, index, bench.args.threshold))
        crossing.received, fingerprint = firing_receipt(receiver, seen, 60 + 3 * trigger_s)
        seen.add(fingerprint)
        time.sleep(0.5)  # the job's files are written before the notification; flushed
        split(crossing, run, fingerprint)
        crossings.append(crossing)
        print(f"  crossing {index + 1}: {crossing.latency:5.2f} s", flush=True)
    bench.unexpected = len({a["fingerprint"] for _, a in receiver.alerts()} - seen)
    return crossings


def spec_trigger_s(text: str) -> float:
    from workbench.durations import to_millis

    return to_millis(text) / 1000


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def print_latency(crossings: list[Crossing], bench: Bench) -> None:
    trigger = spec_trigger_s(bench.args.trigger)
    latencies = [c.latency for c in crossings]
    median, p90, worst = statistics.median(latencies), quantile(latencies, 0.9), max(latencies)
    print(f"\nalert latency, publish → webhook, {len(crossings)} crossings, trigger {trigger:g} s:")
    print(f"  median {median:5.2f} s   p90 {p90:5.2f} s   max {worst:5.2f} s")
    print(f"  minus the trigger interval: median {median - trigger:+.2f} s, p90 "
          f"{p90 - trigger:+.2f} s, max {worst - trigger:+.2f} s")  # fmt: skip
    met = worst <= trigger + TARGET_SLACK_S
    print(f"target max <= trigger + {TARGET_SLACK_S:g} s: {'met' if met else 'NOT met'}")
    parts = [steps for c in crossings if (steps := c.steps()) is not None]
    if parts:
        print(f"  split ({len(parts)} crossings){'median':>36}{'max':>9}")
        for label, values in zip(STEPS, zip(*parts, strict=True), strict=True):
            print(f"    {label:<46}{statistics.median(values):6.2f} s{max(values):7.2f} s")
    if bench.unexpected:
        print(f"  (also {bench.unexpected} firing alert(s) of background cells)")


# --- 2. throughput ------------------------------------------------------------------------


@dataclass
class Bench:
    bootstrap: str
    root: Path
    args: argparse.Namespace
    unexpected: int = 0
    runs: list[Run] = field(default_factory=list)


@dataclass
class Run:
    variant: str
    rows: int
    seconds: float
    wall: float
    batch_rates: list[float]
    service_cpu_s: float = 0.0

    @property
    def rate(self) -> float:
        return self.rows / self.seconds if self.seconds else 0.0


VARIANTS = {
    "a": "(a) no rules",
    "b": f"(b) {RULES} rules",
    "c": f"(c) {RULES} rules, webhook down",
}
#: the runs in order: each variant's runs centred on the same moment (linear drift cancels)
ORDER, QUICK_ORDER = "abcacba", "abc"


def throughput_rules() -> list[dict[str, Any]]:
    """Twenty metric rules with distinct thresholds over the surge result's columns."""
    rules = []
    for k in range(1, RULES + 1):
        column = "bookings" if k % 2 else "unique_customers"
        rules.append({"name": f"r{k:02d}", "when": f"{column} > {5 * k}",
                      "group_by": ["tag_s2id"], "group_wait": "0s", "notify": [HOOK]})  # fmt: skip
    return rules


def run_backlog(service: Service, bench: Bench, topic: str, variant: str, name: str) -> Run:
    """One fresh job over the whole backlog; its rate from its progress.jsonl."""
    records = bench.args.records
    stream = {"starting_offsets": "earliest", "max_offsets_per_trigger": max(records // 10, 1)}
    rules = [] if variant == "a" else throughput_rules()
    spec = surge_spec(name, bench.bootstrap, topic, bench.root, trigger_interval="0s",
                      stream=stream, alerts=rules)  # fmt: skip
    cpu = service.cpu_s()
    job = submit(service, name, spec)
    run = service.run_dir(job)

    def done(_: dict) -> bool:
        return sum(b["input_rows"] for b in jsonl(run / "progress.jsonl")) >= records

    service.wait(job, done, f"through {records:,} records", 900)
    cpu = service.cpu_s() - cpu
    service.stop_job(job)
    batches = [b for b in jsonl(run / "progress.jsonl") if b["input_rows"]]
    timed = batches[WARMUP_BATCHES:] or batches
    first = timed[0]["time"] - timed[0]["duration_ms"] / 1000
    return Run(
        variant,
        sum(b["input_rows"] for b in timed),
        sum(b["duration_ms"] for b in timed) / 1000,
        timed[-1]["time"] - first,
        [b["input_rows"] * 1000 / max(b["duration_ms"], 1) for b in timed],
        cpu,
    )


def measure_throughput(service: Service, receiver: Receiver, bench: Bench) -> None:
    start = datetime.now(UTC).replace(microsecond=0) - timedelta(days=1)
    topic = f"alerts-backlog-{uuid.uuid4().hex[:6]}"
    records = bench.args.records
    booking_preload.preload(bench.bootstrap, topic, records, seed=5, start=start)
    print(f"\nthroughput over {records:,} pre-loaded bookings, {records // 10:,} a batch, one "
          f"fresh job a run (its first {WARMUP_BATCHES} batches not timed):")  # fmt: skip
    print(f"  {'run':<34}{'batches':>7}{'records':>10}{'batch s':>9}{'records/s':>11}"
          f"{'median batch':>14}{'wall s':>8}{'service CPU s':>15}")  # fmt: skip
    for n, variant in enumerate(QUICK_ORDER if bench.args.quick else ORDER, 1):
        name = f"tput-{variant}-{n}"
        if variant == "c":
            receiver.down()
        try:
            run = run_backlog(service, bench, topic, variant, name)
        finally:
            receiver.up()
        bench.runs.append(run)
        label = f"{n}. {VARIANTS[variant]}"
        print(f"  {label:<34}{len(run.batch_rates):>7}{run.rows:>10,}{run.seconds:>9.1f}"
              f"{run.rate:>11,.0f}{statistics.median(run.batch_rates):>14,.0f}"
              f"{run.wall:>8.1f}{run.service_cpu_s:>15.1f}", flush=True)  # fmt: skip
        if variant == "c":
            print_redelivery(service, receiver, name)


def print_redelivery(service: Service, receiver: Receiver, job: str) -> None:
    """Whether the firing notifications of ``job``, pending while the receiver was down,
    arrive now that it is back, each once."""
    history = service.call("GET", f"jobs/{job}/alerts?last=100000")["alerts"]
    want = sorted(a["fingerprint"] for a in history if a["status"] == "firing")

    def got() -> list[str]:
        alerts = receiver.alerts()
        return sorted(a["fingerprint"] for _, a in alerts if a["labels"]["job"] == job)

    deadline = time.monotonic() + 60
    while len(got()) < len(want) and time.monotonic() < deadline:
        time.sleep(0.5)
    verdict = "all, once each" if got() == want else f"{len(got())} of {len(want)} (MISMATCH)"
    print(f"     its {len(want)} firing notifications once the receiver is back: {verdict}")


def print_throughput(bench: Bench) -> None:
    """Each variant against (a): the mean of its runs' records/s, and the median of its
    micro-batches' rates (less moved by other work on the machine)."""
    base = [r for r in bench.runs if r.variant == "a"]
    if not base:
        return
    mean = statistics.mean(r.rate for r in base)
    median = statistics.median(x for r in base for x in r.batch_rates)
    print(f"\n(a) {mean:,.0f} records/s (mean of {len(base)} run(s)), batches' median "
          f"{median:,.0f}/s")  # fmt: skip
    for variant in "bc":
        runs = [r for r in bench.runs if r.variant == variant]
        if runs:
            by_mean = statistics.mean(r.rate for r in runs) / mean
            by_median = statistics.median(x for r in runs for x in r.batch_rates) / median
            verdict = "met" if min(by_mean, by_median) >= TARGET_RATIO else "NOT met"
            print(f"{variant}/a {by_mean:5.3f}x (batches' median: {by_median:5.3f}x)  "
                  f"target >= {TARGET_RATIO}x: {verdict}")  # fmt: skip


# --- main ---------------------------------------------------------------------------------


def run(args: argparse.Namespace) -> None:
    from workbench.dev.ports import free_port

    root = Path(tempfile.mkdtemp(prefix="bench-alerts-"))
    receiver = Receiver(free_port())
    receiver.up()
    try:
        with (
            booking_preload.local_broker() as broker,
            serving(root / "service", receiver.url) as service,
        ):
            bench = Bench(broker.bootstrap, root, args)
            print(f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; jobs local[2], "
                  f"one at a time; latency job: background {args.rate:g} bookings/s, rule "
                  f"bookings >= {args.threshold} by tag_s2id, emit updates, trigger "
                  f"{args.trigger}", flush=True)  # fmt: skip
            crossings = measure_latency(service, receiver, bench)
            print_latency(crossings, bench)
            measure_throughput(service, receiver, bench)
            print_throughput(bench)
    finally:
        receiver.down()
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--crossings", type=int, default=10, help="alerts timed")
    parser.add_argument("--records", type=int, default=200_000, help="backlog bookings")
    parser.add_argument("--trigger", default="10s", help="the latency job's trigger_interval")
    parser.add_argument("--rate", type=float, default=100.0, help="background bookings/s")
    parser.add_argument("--threshold", type=int, default=200, help="bookings a crossing adds")
    parser.add_argument("--quick", action="store_true", help="3 crossings, 40,000 records")
    args = parser.parse_args()
    if args.quick:
        args.crossings, args.records = min(args.crossings, 3), min(args.records, 40_000)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop the servers on the way out
    run(args)


if __name__ == "__main__":
    main()
