"""Preview latency: from a ``%%dagger`` cell (the surge SQL) to its rendered results table.

One run starts its own Kafka broker (free ports, a temporary folder, stopped at the end),
pre-loads ``--events`` seeded BookingLogMessage records into a ``--partitions`` topic, installs
the workbench kernel into a temporary prefix and drives real kernels through jupyter_client,
as JupyterLab does:

  cold   a new kernel process: kernel start → ready → sample the topic (every record) →
         ``%%dagger`` → the first ``execute_result`` carrying ``text/html``; Spark's start,
         the JVM decode of the sample and the query are all inside this time;
  warm   the same kernel again (Spark up, the decoded sample cached): ``%%dagger`` sent →
         its ``text/html`` result received, ``--repeat`` times.

Every time is wall clock on the client side, so it includes the kernel's message round trip
and the rendering (``Preview._repr_html_``) of the table. Inside the kernel, each warm cell
also reports ``Preview.elapsed_s`` (plan → rows in pandas) and the rendering time.

    .venv/bin/python benchmarks/preview_latency.py [--events 10000] [--repeat 5] [--cold 1]
"""

from __future__ import annotations

import argparse
import contextlib
import json
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

from workbench.demo import spec_path

SEED = 42
TARGET_WARM_S = 2.0
SURGE_SQL = yaml.safe_load(spec_path().read_text())["sql"]
TIMEOUT = 600


def install_kernel(prefix: Path, bootstrap: str) -> Path:
    from workbench.kernel import install

    install(prefix=prefix, env={"WORKBENCH_BOOTSTRAP_SERVERS": bootstrap})
    return prefix / "share" / "jupyter" / "kernels"


@contextlib.contextmanager
def kernel(kernel_dirs: Path) -> Iterator[Any]:
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager

    from workbench.kernel import KERNEL_NAME

    specs = KernelSpecManager(kernel_dirs=[str(kernel_dirs)])
    manager = KernelManager(kernel_name=KERNEL_NAME, kernel_spec_manager=specs)
    manager.start_kernel()
    client = manager.client()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=TIMEOUT)
        yield client
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=False)


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


def cold_run(kernel_dirs: Path, topic: str) -> dict[str, float]:
    t0 = time.perf_counter()
    with kernel(kernel_dirs) as client:
        ready = time.perf_counter() - t0
        sampled, out = execute(client, setup_cell(topic))
        first, data = execute(client, f"%%dagger\n{SURGE_SQL}")
        summary = data["text/plain"].splitlines()[0]
        total = time.perf_counter() - t0
    return {"ready": ready, "sample": sampled, "first": first, "total": total, "summary": summary}


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
            colds = [cold_run(kernels, topic) for _ in range(args.cold)]
            cells, baseline, inside = warm_runs(kernels, topic, args.repeat)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return report(colds, cells, baseline, inside)


def report(
    colds: list[dict], cells: list[float], baseline: list[float], inside: list[dict]
) -> bool:
    print(f"\npreview of the surge SQL over {inside[0]['records']:,} sampled bookings "
          f"({inside[0]['rows']:,} result rows):")  # fmt: skip
    for i, cold in enumerate(colds, 1):
        print(
            f"  cold kernel #{i}: {cold['total']:.1f}s to the first table (kernel ready "
            f"{cold['ready']:.1f}s, sample {cold['sample']:.1f}s, first %%dagger incl. Spark "
            f"start {cold['first']:.1f}s)\n    {cold['summary']}"
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
        f"{median / base:.1f}x that; cold / warm: {colds[0]['total'] / median:.0f}x"
    )
    print(
        "    inside the kernel: preview() "
        f"{statistics.median(r['preview'] for r in inside):.2f}s median (plan to pandas "
        f"{statistics.median(r['elapsed'] for r in inside):.2f}s), _repr_html_ "
        f"{statistics.median(r['render'] for r in inside) * 1000:.0f}ms"
    )
    return ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=10_000, help="bookings in the topic")
    parser.add_argument("--partitions", type=int, default=4, help="topic partitions")
    parser.add_argument("--repeat", type=int, default=5, help="warm previews timed")
    parser.add_argument("--cold", type=int, default=1, help="cold kernels timed")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop the broker on the way out
    sys.exit(0 if run(args) else 1)


if __name__ == "__main__":
    main()
