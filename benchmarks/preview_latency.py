"""Preview latency: from a ``%%dagger`` cell (the surge SQL) to its rendered results table.

One run starts its own Kafka broker (free ports, a temporary folder, stopped at the end),
pre-loads ``--events`` seeded BookingLogMessage records into a ``--partitions`` topic, installs
the workbench kernel into a temporary prefix and drives real kernels through jupyter_client,
as JupyterLab does:

  cold   a new kernel process: kernel start → ready → sample the topic (every record) →
         ``%%dagger`` → the first ``execute_result`` carrying ``text/html``; Spark's start,
         the JVM decode of the sample and the query are all inside this time. Timed as the
         kernel starts Spark now ("after": in the background as it loads, the driver JVM
         mapping the class archive of ``workbench setup`` and compiling with the C1 JIT
         only) and as it did before ("before": at the first use, no archive, both JIT
         compilers: ``WORKBENCH_SPARK_START=on-use``, ``WORKBENCH_JVM_ARCHIVE=off``,
         ``WORKBENCH_KERNEL_JIT=full``), and "after, unhurried": the first ``%%dagger`` sent
         once the kernel's start and preview warm-up have ended (an analyst who reads
         a little first, not Run All); alternating, ``--cold`` kernels each; each prints
         the kernel's Spark start line (its phases) and when Spark was up after the kernel
         started, and how long the kernel's shutdown took;
  warm   the same kernel again (Spark up, the decoded sample cached): ``%%dagger`` sent →
         its ``text/html`` result received, ``--repeat`` times.

Every time is wall clock on the client side, so it includes the kernel's message round trip
and the rendering (``Preview._repr_html_``) of the table. Inside the kernel, each warm cell
also reports ``Preview.elapsed_s`` (plan → rows in pandas) and the rendering time.

    .venv/bin/python benchmarks/preview_latency.py [--events 10000] [--repeat 5] [--cold 1]

(the class archive is made first if ``workbench setup`` has not made it).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import booking_preload
import yaml

from workbench.dev.demo import spec_path

SEED = 42
TARGET_WARM_S = 2.0
SURGE_SQL = yaml.safe_load(spec_path().read_text())["sql"]
TIMEOUT = 600
TARGET_COLD_S = 8.0
#: The kernel's environment for each way of starting Spark.
MODES = {
    "before": {
        "WORKBENCH_SPARK_START": "on-use",
        "WORKBENCH_JVM_ARCHIVE": "off",
        "WORKBENCH_KERNEL_JIT": "full",
    },
    "after": {"WORKBENCH_SPARK_START": "background", "WORKBENCH_JVM_ARCHIVE": "on"},
    "after, unhurried": {"WORKBENCH_SPARK_START": "background", "WORKBENCH_JVM_ARCHIVE": "on"},
}
#: Waits (after the sample) until the kernel's start and preview warm-up have ended: an
#: analyst who reads the notebook a little before the first %%dagger, as opposed to Run All.
SETTLE_CELL = "import workbench.notebook as wb\nwb.background_start().join(240)"


def install_kernel(prefix: Path, bootstrap: str) -> Path:
    from workbench.lab.kernel import install

    install(prefix=prefix, env={"WORKBENCH_BOOTSTRAP_SERVERS": bootstrap})
    return prefix / "share" / "jupyter" / "kernels"


@contextlib.contextmanager
def kernel(
    kernel_dirs: Path, env: dict[str, str] | None = None, times: dict | None = None
) -> Iterator[Any]:
    """A started kernel's client; ``env`` is added to its environment; ``times["shutdown"]``
    gets the seconds its shutdown took."""
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager

    from workbench.lab.kernel import KERNEL_NAME

    specs = KernelSpecManager(kernel_dirs=[str(kernel_dirs)])
    manager = KernelManager(kernel_name=KERNEL_NAME, kernel_spec_manager=specs)
    saved = {k: os.environ.get(k) for k in env or {}}
    os.environ.update(env or {})
    try:
        manager.start_kernel()
    finally:
        for key, value in saved.items():
            os.environ.pop(key) if value is None else os.environ.__setitem__(key, value)
    client = manager.client()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=TIMEOUT)
        yield client
    finally:
        client.stop_channels()
        t0 = time.perf_counter()
        manager.shutdown_kernel(now=False)
        if times is not None:
            times["shutdown"] = time.perf_counter() - t0


def execute(client: Any, code: str) -> tuple[float, dict[str, Any]]:
    """Run ``code``: seconds until its first text/html result (or its end), and that data."""
    t0 = time.perf_counter()
    msg_id = client.execute(code)
    first, data, error = None, {}, None
    while True:
        msg = client.get_iopub_msg(timeout=TIMEOUT)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        kind, content = msg["msg_type"], msg["content"]
        if kind in ("execute_result", "display_data") and "text/html" in content["data"]:
            if first is None:
                first, data = time.perf_counter() - t0, content["data"]
        elif kind == "error":
            error = f"{content['ename']}: {content['evalue']}"
        elif kind == "stream" and "text/html" not in data:
            data = {"text/plain": data.get("text/plain", "") + content["text"]}
        elif kind == "status" and content["execution_state"] == "idle":
            break
    client.get_shell_msg(timeout=TIMEOUT)
    if error:
        raise RuntimeError(f"cell failed: {error}")
    return (first if first is not None else time.perf_counter() - t0), data


def setup_cell(topic: str) -> str:
    return (
        "import workbench.notebook as wb\n"
        f"wb.add_stream('booking', 'BookingLogMessage', topics=['{topic}'])\n"
        "s = wb.sample('booking', last=1_000_000, progress=False)\n"
        "print(len(s))"
    )


TIMED_CELL = """import time, json
t0 = time.perf_counter()
p = wb.preview('''{sql}''')
t1 = time.perf_counter()
page = p._repr_html_()
t2 = time.perf_counter()
print(json.dumps({{"elapsed": p.elapsed_s, "preview": t1 - t0, "render": t2 - t1,
                  "rows": len(p.rows), "records": p.counts["records"]}}))
"""


#: In the kernel, after the first table: its Spark start line, and when Spark was up.
SPARK_START_CELL = """import json, workbench.runtime.spark as ws
print(json.dumps({"line": ws.last_start().line(), "ready_at": ws.last_start().ready_at}))
"""


def cold_run(kernel_dirs: Path, topic: str, mode: str) -> dict[str, Any]:
    times: dict[str, Any] = {"mode": mode}
    began, t0 = time.time(), time.perf_counter()
    with kernel(kernel_dirs, MODES[mode], times) as client:
        ready = time.perf_counter() - t0
        sampled, out = execute(client, setup_cell(topic))
        if mode.endswith("unhurried"):
            execute(client, SETTLE_CELL)
        times["asked"] = time.perf_counter() - t0
        first, data = execute(client, f"%%dagger\n{SURGE_SQL}")
        summary = data["text/plain"].splitlines()[0]
        total = time.perf_counter() - t0
        _, started = execute(client, SPARK_START_CELL)
    spark = json.loads(started["text/plain"].strip().splitlines()[-1])
    times.update(ready=ready, sample=sampled, first=first, total=total, summary=summary,
                 spark=spark["line"], spark_up=spark["ready_at"] - began)  # fmt: skip
    return times


#: The baseline in the same warm kernel: the smallest Spark job there is, shown as a table.
BASELINE_CELL = "wb.spark().range(1).toPandas()"


def warm_runs(
    kernel_dirs: Path, topic: str, repeat: int
) -> tuple[list[float], list[float], list[dict]]:
    with kernel(kernel_dirs) as client:
        execute(client, setup_cell(topic))
        execute(client, f"%%dagger\n{SURGE_SQL}")  # Spark up, the decoded sample cached
        cells = [execute(client, f"%%dagger\n{SURGE_SQL}")[0] for _ in range(repeat)]
        baseline = [execute(client, BASELINE_CELL)[0] for _ in range(repeat)]
        inside = []
        for _ in range(repeat):
            _, data = execute(client, TIMED_CELL.format(sql=SURGE_SQL))
            inside.append(json.loads(data["text/plain"].strip().splitlines()[-1]))
    return cells, baseline, inside


def run(args: argparse.Namespace) -> bool:
    root = Path(tempfile.mkdtemp(prefix="bench-preview-"))
    start = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=3)
    try:
        with booking_preload.local_broker() as broker:
            topic = "booking-log"
            loaded = booking_preload.preload(
                broker.bootstrap, topic, args.events, seed=SEED, start=start,
                partitions=args.partitions, malformed=0.001,
            )  # fmt: skip
            print(
                f"{loaded.sent:,} bookings in '{topic}' ({args.partitions} partitions, "
                f"{loaded.malformed} malformed) at {broker.bootstrap}"
            )
            kernels = install_kernel(root, broker.bootstrap)
            colds = [cold_run(kernels, topic, mode) for _ in range(args.cold) for mode in MODES]
            cells, baseline, inside = warm_runs(kernels, topic, args.repeat)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return report(colds, cells, baseline, inside)


def report(
    colds: list[dict], cells: list[float], baseline: list[float], inside: list[dict]
) -> bool:
    print(f"\npreview of the surge SQL over {inside[0]['records']:,} sampled bookings "
          f"({inside[0]['rows']:,} result rows):")  # fmt: skip
    for mode in MODES:
        runs = [c for c in colds if c["mode"] == mode]
        for i, cold in enumerate(runs, 1):
            print(
                f"  cold kernel, {mode} #{i}: {cold['total']:.1f}s to the first table (kernel "
                f"ready {cold['ready']:.1f}s, sample {cold['sample']:.1f}s, first %%dagger "
                f"sent at {cold['asked']:.1f}s took {cold['first']:.1f}s); Spark up "
                f"{cold['spark_up']:.1f}s after the kernel started; shutdown "
                f"{cold['shutdown']:.1f}s\n    {cold['spark']}\n"
                f"    {cold['summary']}"
            )
    firsts = {m: statistics.median(c["first"] for c in colds if c["mode"] == m) for m in MODES}
    cold_ok = firsts["after"] <= TARGET_COLD_S
    print(
        "  first %%dagger of a cold kernel, median: "
        + ", ".join(f"{m} {s:.1f}s" for m, s in firsts.items())
        + f" (target <= {TARGET_COLD_S:g}s after: {'met' if cold_ok else 'MISSED'})"
    )
    median = statistics.median(cells)
    ok = median <= TARGET_WARM_S
    print(
        f"  warm kernel: %%dagger to its table {median:.2f}s median, {min(cells):.2f}s best, "
        f"{max(cells):.2f}s worst of {len(cells)} (target <= {TARGET_WARM_S:g}s: "
        f"{'met' if ok else 'MISSED'})"
    )
    base = statistics.median(baseline)
    print(
        f"    baseline, the same kernel: {BASELINE_CELL} {base:.2f}s median; the preview is "
        f"{median / base:.1f}x that; cold (after) / warm: "
        f"{statistics.median(c['total'] for c in colds if c['mode'] == 'after') / median:.0f}x"
    )
    print(
        "    inside the kernel: preview() "
        f"{statistics.median(r['preview'] for r in inside):.2f}s median (plan to pandas "
        f"{statistics.median(r['elapsed'] for r in inside):.2f}s), _repr_html_ "
        f"{statistics.median(r['render'] for r in inside) * 1000:.0f}ms"
    )
    return ok and cold_ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=10_000, help="bookings in the topic")
    parser.add_argument("--partitions", type=int, default=4, help="topic partitions")
    parser.add_argument("--repeat", type=int, default=5, help="warm previews timed")
    parser.add_argument("--cold", type=int, default=1, help="cold kernels timed, per mode")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop the broker on the way out
    from workbench.dev.setup import build_jvm_archive as build

    print(f"Spark JVM class archive: {build()}")
    sys.exit(0 if run(args) else 1)


if __name__ == "__main__":
    main()
