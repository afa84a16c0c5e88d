"""The Dagger Workbench kernel: installed into a temporary prefix, listed by Jupyter, started
for real through jupyter_client, and running the magics over a sample of the real broker."""

from __future__ import annotations

import contextlib
import html
import json
import os
import re
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from geo_reference import surge_windows
from streaming import SURGE_SQL, new_topic, publish_events

from workbench.cli.main import main
from workbench.lab.kernel import DISPLAY_NAME, KERNEL_NAME
from workbench.notebook import START_ENV

TIMEOUT = 300


@pytest.fixture(scope="module")
def installed(tmp_path_factory, kafka_broker):
    prefix = tmp_path_factory.mktemp("prefix")
    servers = f"WORKBENCH_BOOTSTRAP_SERVERS={kafka_broker.bootstrap}"
    assert main(["kernel", "install", "--prefix", str(prefix), "--env", servers]) == 0
    return prefix / "share" / "jupyter"


def as_users_start() -> dict[str, str]:
    """This environment without the suite's ``WORKBENCH_SPARK_START=on-use``
    (tests/conftest.py): the kernel starts Spark in the background as it loads, as a
    user's does."""
    return {k: v for k, v in os.environ.items() if k != START_ENV}


@pytest.fixture(scope="module")
def kernel(installed):
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager

    specs = KernelSpecManager(kernel_dirs=[str(installed / "kernels")])
    manager = KernelManager(kernel_name=KERNEL_NAME, kernel_spec_manager=specs)
    manager.start_kernel(env=as_users_start())
    client = manager.client()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=TIMEOUT)
        yield client
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=False)


def execute(client, code: str) -> tuple[dict, list[dict]]:
    """Run ``code``; the execute reply and every output message's content."""
    msg_id = client.execute(code)
    outputs = []
    while True:
        msg = client.get_iopub_msg(timeout=TIMEOUT)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        kind = msg["msg_type"]
        if kind == "status" and msg["content"]["execution_state"] == "idle":
            break
        if kind in ("execute_result", "display_data", "stream", "error"):
            outputs.append(msg["content"] | {"output_type": kind})
    reply = client.get_shell_msg(timeout=TIMEOUT)
    while reply["parent_header"].get("msg_id") != msg_id:  # e.g. a late kernel_info_reply
        reply = client.get_shell_msg(timeout=TIMEOUT)
    return reply["content"], outputs


def test_jupyter_lists_the_kernel(installed):
    listed = subprocess.run(
        [str(Path(sys.executable).parent / "jupyter"), "kernelspec", "list", "--json"],
        env={"JUPYTER_PATH": str(installed), "PATH": str(Path(sys.executable).parent)},
        capture_output=True,
        text=True,
        check=True,
    )
    spec = json.loads(listed.stdout)["kernelspecs"][KERNEL_NAME]["spec"]
    assert spec["display_name"] == DISPLAY_NAME
    assert spec["argv"][:3] == [sys.executable, "-m", "ipykernel_launcher"]
    assert "--ext=workbench.notebook" in spec["argv"]


BACKGROUND_START = """
import workbench.notebook as wb, workbench.runtime.spark as ws
start = wb.background_start()
print(start is not None and start.begun and ws.last_start() is None)
start.join(240)  # the start, then the preview warm-up
print(ws.last_start().line())
from workbench.notebook import warmup
print(warmup.failures)
jvm = wb.spark()._jvm
print(list(jvm.java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments()))
"""


def test_the_kernel_starts_spark_before_a_cell_asks(kernel, record_property):
    """No cell has used Spark yet (this is the kernel's first cell): the start the kernel
    began as it loaded brings the session up and warms up the preview path; the first
    %%dagger (next test) uses it."""
    reply, outputs = execute(kernel, BACKGROUND_START)
    assert reply["status"] == "ok", outputs
    printed = "".join(o["text"] for o in outputs if o["output_type"] == "stream")
    begun, line, failures, jvm_flags = printed.split("\n")[:4]
    assert begun == "True" and line.startswith("spark: started in ") and "warm-up" in line
    assert failures == "[]"  # the preview warm-up ran through
    assert "'-XX:TieredStopAtLevel=1'" in jvm_flags  # previews: the quick JIT only
    record_property("figure", f"kernel's background {line}")


def test_a_kernel_shuts_down_fast_while_spark_starts(installed):
    """Shut down right after it is ready, Spark's JVM still starting: the kernel exits
    within Jupyter's grace period (no kill) and the JVM follows it."""
    import time

    import psutil
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager
    from polling import wait_for

    specs = KernelSpecManager(kernel_dirs=[str(installed / "kernels")])
    manager = KernelManager(kernel_name=KERNEL_NAME, kernel_spec_manager=specs)
    manager.start_kernel(env=as_users_start())
    client = manager.client()
    client.start_channels()
    client.wait_for_ready(timeout=TIMEOUT)
    kernel_process = psutil.Process(manager.provisioner.pid)
    jvm = wait_for(lambda: kernel_process.children(recursive=True), 60, "the JVM's launch")
    client.stop_channels()
    started = time.monotonic()
    manager.shutdown_kernel(now=False)
    assert time.monotonic() - started < manager.shutdown_wait_time  # it exited, no kill
    wait_for(lambda: not any(p.is_running() and p.status() != "zombie" for p in jvm), 120,
             "the JVM to exit")  # fmt: skip


def test_magics_in_a_real_kernel(kernel, kafka_broker):
    topic = new_topic(kafka_broker.bootstrap, "kernel", partitions=2)
    sent = publish_events(kafka_broker.bootstrap, topic, 800, seed=41, malformed=0.01)

    reply, outputs = execute(kernel, "%dagger_streams")
    assert reply["status"] == "ok", outputs
    shown = outputs[-1]["data"]["text/html"]
    assert "booking" in shown and html.escape(kafka_broker.bootstrap) in shown  # --env reached it

    setup = (
        "import workbench.notebook as wb\n"
        f"wb.add_stream('booking', 'BookingLogMessage', topics=['{topic}'])\n"
        "wb.sample('booking', last=10_000, progress=False)"
    )
    reply, outputs = execute(kernel, setup)
    assert reply["status"] == "ok", outputs

    reply, outputs = execute(kernel, f"%%dagger\n{SURGE_SQL}")  # Spark is up: the kernel started it
    assert reply["status"] == "ok", outputs
    assert [o for o in outputs if o["output_type"] == "stream"] == []  # no JVM warnings
    result = next(o for o in outputs if o["output_type"] == "execute_result")["data"]
    expected = surge_windows(sent.events)
    summary = result["text/plain"].splitlines()[0]
    assert summary.startswith(f"{len(expected):,} rows in ")
    assert f"from 800 sample records: {len(sent.events)} decoded, {sent.malformed} undecodable" in (
        summary
    )
    assert shown_rows(result["text/html"]) == expected_rows(expected)[:50]

    reply, outputs = execute(kernel, "%%dagger\nSELECT nope FROM booking")
    assert reply["status"] == "error" and reply["ename"] == "SqlError"
    assert "Line 1, Col: 8." in outputs[-1]["traceback"][0]


def test_a_misspelled_column_shows_one_error_and_no_java(kernel, kafka_broker):
    """The cell shows the workbench's one error; the Java stack Spark and PySpark print
    goes to the kernel's Spark log, which %dagger_logs shows on request."""
    topic = new_topic(kafka_broker.bootstrap, "typo", partitions=1)
    publish_events(kafka_broker.bootstrap, topic, 50, seed=5)
    setup = (
        "import workbench.notebook as wb\n"
        f"wb.add_stream('booking', 'BookingLogMessage', topics=['{topic}'])\n"
        "wb.sample('booking', last=100, progress=False)"
    )
    assert execute(kernel, setup)[0]["status"] == "ok"
    typo = (
        "SELECT servce_area_id, COUNT(*) AS n FROM booking\n"
        "GROUP BY servce_area_id, TUMBLE(rowtime, INTERVAL '1' MINUTE)"
    )
    reply, outputs = execute(kernel, f"%%dagger\n{typo}")
    assert reply["status"] == "error"
    assert [o["output_type"] for o in outputs] == ["error"], outputs  # no stderr, one error
    shown = "\n".join(outputs[0]["traceback"])
    assert shown.startswith("SqlError: Unknown column 'servce_area_id'")
    assert "at org.apache" not in shown and len(shown) < 2000

    reply, outputs = execute(kernel, "%dagger_logs 400")
    assert reply["status"] == "ok"
    log = outputs[-1]["data"]["text/plain"]
    assert "spark-" in log and "UNRESOLVED_COLUMN" in log and "at org.apache" in log


IN_THE_WARM_UPS_COLLECT = """
import sys, threading, time
import workbench.notebook as wb
from workbench.notebook import warmup
wb.add_stream('booking', 'BookingLogMessage', topics=[{topic!r}])
wb.sample('booking', last=1000, progress=False)

def collecting():
    \"\"\"The warm-up (in the background start's thread) collects its rows through Arrow.\"\"\"
    start = next((t for t in threading.enumerate() if t.name == "spark-start"), None)
    frame = sys._current_frames().get(start.ident) if start is not None else None
    while frame is not None and frame.f_code.co_name != "_collect_as_arrow":
        frame = frame.f_back
    return frame is not None

deadline = time.monotonic() + 240
while not collecting() and time.monotonic() < deadline:
    time.sleep(0.002)
assert collecting(), "the warm-up never reached its collect"
get_ipython().run_cell_magic("dagger", "", {sql!r})
"""

WARM_UP_JOBS = """
tracker = wb.spark().sparkContext.statusTracker()
print(sorted({str(tracker.getJobInfo(j).status) for j in tracker.getJobIdsForGroup(warmup.GROUP)}))
print(warmup.failures)
"""


def test_the_first_preview_of_a_cold_kernel_shows_no_java(installed, kafka_broker):
    """Issue 36: the first %%dagger of a cold kernel, run while the background warm-up
    collects its rows, cancels the warm-up's Spark job; PySpark's Arrow warning about that
    cancelled job printed ~8 KB of Java stack into the cell above the right rows. The cell
    shows the rows only."""
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager

    topic = new_topic(kafka_broker.bootstrap, "cold", partitions=1)
    sent = publish_events(kafka_broker.bootstrap, topic, 300, seed=7)
    specs = KernelSpecManager(kernel_dirs=[str(installed / "kernels")])
    manager = KernelManager(kernel_name=KERNEL_NAME, kernel_spec_manager=specs)
    manager.start_kernel(env=as_users_start())
    client = manager.client()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=TIMEOUT)
        cell = IN_THE_WARM_UPS_COLLECT.format(topic=topic, sql=SURGE_SQL)
        reply, outputs = execute(client, cell)
        assert reply["status"] == "ok", outputs
        shown = json.dumps(outputs)
        for java in ("java.", "Traceback", "at org.apache", "UserWarning", "Exception"):
            assert java not in shown, shown[:3000]
        assert [o["output_type"] for o in outputs] == ["execute_result"], outputs
        result = outputs[0]["data"]
        expected = surge_windows(sent.events)
        assert result["text/plain"].splitlines()[0].startswith(f"{len(expected):,} rows in ")
        assert shown_rows(result["text/html"]) == expected_rows(expected)[:50]

        reply, outputs = execute(client, WARM_UP_JOBS)
        assert reply["status"] == "ok", outputs
        statuses, failures = outputs[-1]["text"].splitlines()[-2:]
        assert "FAILED" in statuses  # the preview did cancel a warm-up job
        assert failures == "[]"  # cancelled, not failed
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=False)


def shown_rows(page: str) -> list[tuple]:
    """The rows of the first HTML table: (s2 cell, vehicle, bookings, customers, window end)."""
    body = page.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    rows = []
    for tr in re.findall(r"<tr>(.*?)</tr>", body, re.S):
        cells = re.findall(r"<td>(.*?)</td>", tr, re.S)
        rows.append((cells[0], cells[1], int(cells[2]), int(cells[3]), cells[4]))
    return rows


def expected_rows(windows: dict) -> list[tuple]:
    from datetime import UTC, datetime

    rows = [
        (
            cell,
            vehicle,
            n,
            unique,
            datetime.fromtimestamp(end / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S"),
        )
        for (cell, vehicle, end), (n, unique) in windows.items()
    ]
    return sorted(rows, key=lambda r: (r[4], *r[:4]))  # by window, then keys


ROOT = Path(__file__).resolve().parent.parent


def test_readme_commands_are_make_targets_that_run(installed, tmp_path):
    """The Notebooks section (docs/notebooks.md) says `make lab` (the CLI is in .venv/bin, so a bare
    `workbench kernel install` fails in a fresh shell); the command `make lab` runs starts
    a JupyterLab that answers /api/status with its token and lists the kernel."""

    from workbench.dev.ports import free_ports

    readme = (ROOT / "docs" / "notebooks.md").read_text()
    notebooks = readme.split("## Notebooks", 1)[1].split("```")[1]
    commands = [line.split("#")[0].strip() for line in notebooks.splitlines() if line.strip()]
    assert commands == ["make lab"]
    assert "`make kernel`" in readme.split("## Notebooks", 1)[1].split("##", 1)[0]

    (port,) = free_ports(1)
    args = f"--no-browser --port {port} --ServerApp.ip=127.0.0.1 --IdentityProvider.token=t0k"
    with _make_lab(args, installed, port) as planned:
        assert ".venv/bin/workbench kernel install" in planned
        assert any(" lab --ServerApp.root_dir=notebooks" in line for line in planned)
        status = _get(f"http://127.0.0.1:{port}/api/status", "t0k")
        kernels = _get(f"http://127.0.0.1:{port}/api/kernelspecs", "t0k")
        assert "started" in status and KERNEL_NAME in kernels["kernelspecs"]
        with pytest.raises(urllib.error.HTTPError):  # the token is needed
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status", timeout=5)


def test_make_lab_takes_a_root_dir_in_lab_args(installed, tmp_path):
    """`make lab LAB_ARGS=--ServerApp.root_dir=...` once failed: the Makefile gave
    --notebook-dir=notebooks too, and Jupyter refuses two root dirs. The lab now serves
    the folder LAB_ARGS names."""
    from workbench.dev.ports import free_ports

    (tmp_path / "mine.ipynb").write_text("{}")
    (port,) = free_ports(1)
    args = (
        f"--no-browser --port {port} --ServerApp.ip=127.0.0.1 --IdentityProvider.token=t0k "
        f"--ServerApp.root_dir={tmp_path}"
    )
    with _make_lab(args, installed, port):
        listing = _get(f"http://127.0.0.1:{port}/api/contents", "t0k")
    assert [item["name"] for item in listing["content"]] == ["mine.ipynb"]


@contextlib.contextmanager
def _make_lab(args: str, installed: Path, port: int):
    """The JupyterLab `make kernel lab LAB_ARGS=args` starts, once it answers on ``port``
    (yields the lines make plans)."""
    import os
    import shlex
    import signal

    from polling import wait_for

    planned = subprocess.run(
        ["make", "-n", "kernel", "lab", f"LAB_ARGS={args}"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout.splitlines()  # fmt: skip
    (lab,) = [line for line in planned if "/jupyter lab " in line]
    argv = shlex.split(lab)
    argv[0] = str(Path(sys.executable).parent / "jupyter")  # this environment's .venv/bin
    env = os.environ | {"JUPYTER_PATH": str(installed)}
    with tempfile.TemporaryFile("w+") as log:
        server = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                                  start_new_session=True)  # fmt: skip

        def answers() -> bool:
            if server.poll() is not None:
                log.seek(0)
                raise AssertionError(f"the lab exited: {log.read()[-2000:]}")
            try:
                return bool(_get(f"http://127.0.0.1:{port}/api/status", "t0k"))
            except OSError:
                return False

        try:
            wait_for(answers, 120, "the lab to answer")
            yield planned
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(30)


def _get(url: str, token: str) -> dict:

    request = urllib.request.Request(url, headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(request, timeout=5) as answer:
        return json.loads(answer.read())


def test_a_running_kernel_leaves_no_artifacts_in_the_notebook_folder(installed, tmp_path):
    """Spark 4.0.0 made ``artifacts/spark-<uuid>/`` in the kernel's working folder, the
    notebook's folder, for as long as the kernel ran. A kernel started there as JupyterLab
    starts one, after a cell that used Spark, leaves the folder as it was."""
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager

    (tmp_path / "mine.ipynb").write_text("{}")
    specs = KernelSpecManager(kernel_dirs=[str(installed / "kernels")])
    manager = KernelManager(kernel_name=KERNEL_NAME, kernel_spec_manager=specs)
    manager.start_kernel(env=as_users_start(), cwd=str(tmp_path))
    client = manager.client()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=TIMEOUT)
        cell = (
            "import os, workbench.notebook as wb\n"
            "spark = wb.spark()\n"
            "print(spark.range(5).selectExpr('sum(id) AS n').collect()[0].n, os.getcwd())"
        )
        reply, outputs = execute(client, cell)
        assert reply["status"] == "ok", outputs
        printed = "".join(o["text"] for o in outputs if o["output_type"] == "stream")
        assert printed.split() == ["10", str(tmp_path)]
        assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.ipynb"]  # kernel running
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=False)
