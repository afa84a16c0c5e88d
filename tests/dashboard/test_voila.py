"""The dashboard as a city head sees it: Voila on 127.0.0.1 over an InfluxDB holding surge
results, loaded in Debian's Chromium (Playwright) with no network; then the store goes
down. And ``workbench dashboard --local --config FILE`` as a user starts it: every setting of the
file reaches the page (credentials only the store), and SIGTERM or SIGINT stops it all.

Screenshots go to ``artifacts/`` (kept by CI).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests
from surge_results import surge_rows, write_influx_v1

from workbench.dashboard.config import DashboardConfig
from workbench.dashboard.processes import alive, descendants
from workbench.dashboard.serve import start, stop
from workbench.dev.ports import free_port
from workbench.dev.timeseries import InfluxServer
from workbench.sinks.influx import InfluxConfig
from workbench.sinks.influx_writer import InfluxWriter

ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts"
LOOPBACK = ("http://127.0.0.1", "ws://127.0.0.1", "data:", "blob:", "about:")


def wait_for_port(port: int, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), 0.5).close()
            return
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"Voila did not listen on {port} within {timeout:.0f}s")


@pytest.fixture
def influx(tmp_path):
    with InfluxServer(tmp_path / "influxdb", free_port()) as server:
        yield server


@pytest.fixture
def dashboard(influx):
    """``(url, influx server)``: Voila serving the dashboard over the server's results."""
    database = write_influx_v1(influx, surge_rows())
    config = DashboardConfig.load(store=f"influx1:{influx.url}/{database}", refresh_seconds=3)
    port = free_port()
    server = start(config, port)
    try:
        wait_for_port(port)
        yield f"http://127.0.0.1:{port}/", influx
    finally:
        stop(server)


@pytest.fixture
def page(chromium):
    tab = chromium.new_page(viewport={"width": 1200, "height": 1000})
    tab.problems, tab.requests = [], []
    tab.on("console", lambda m: tab.problems.append(m.text) if m.type == "error" else None)
    tab.on("pageerror", lambda e: tab.problems.append(str(e)))
    tab.on("request", lambda r: tab.requests.append(r.url))
    tab.route("http*://**/*", _loopback_only)  # the network is off
    yield tab
    tab.close()


def _loopback_only(route):
    if route.request.url.startswith("http://127.0.0.1"):
        route.continue_()
    else:
        route.abort("internetdisconnected")


def options(select) -> list[str]:
    return [text.replace("\xa0", " ") for text in select.locator("option").all_inner_texts()]


def legend(page) -> str:
    return page.frame_locator("iframe.atlas-frame").locator(".atlas-legend").inner_text()


def test_dashboard_in_chromium_then_store_down(dashboard, page):
    url, influx = dashboard
    ARTIFACTS.mkdir(exist_ok=True)
    page.goto(url, timeout=120_000)
    page.wait_for_selector("iframe.atlas-frame", timeout=120_000)
    map_frame = page.frame_locator("iframe.atlas-frame")
    map_frame.locator("#deck-container canvas").wait_for(timeout=120_000)
    city, service, metric = page.locator(".city-dashboard select").all()
    assert city.input_value() == "Jakarta"  # the option labels are the values in the page
    assert options(service) == ["All services", "BIKE", "CAR"]
    assert options(metric) == ["bookings", "unique_customers"]
    assert "bookings · Jakarta · all services" in legend(page)
    assert page.locator("svg.dashboard-chart path.line").count() >= 1
    assert "def " not in page.inner_text("body")  # code cells hidden
    page.wait_for_timeout(1000)
    page.screenshot(path=str(ARTIFACTS / "dashboard.png"), full_page=True)

    service.select_option("CAR")
    page.wait_for_function(
        "() => document.querySelector('iframe.atlas-frame')?.srcdoc.includes('Jakarta · CAR')",
        timeout=120_000,
    )
    map_frame.locator("#deck-container canvas").wait_for(timeout=120_000)
    assert page.problems == []
    assert [u for u in page.requests if not u.startswith(LOOPBACK)] == []
    assert page.locator("script[src*=workbench-deck]").count() == 0  # fetched once, as text

    influx.stop()
    message = page.locator(".dashboard-message.problem")
    message.wait_for(timeout=120_000)  # the next timed refresh
    assert "Cannot reach the results store" in message.inner_text()
    assert "Traceback" not in page.inner_text("body")
    assert page.locator("iframe.atlas-frame").count() == 0
    page.screenshot(path=str(ARTIFACTS / "dashboard-store-down.png"), full_page=True)
    assert page.problems == []


def port_open(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), 0.5).close()
        return True
    except OSError:
        return False


def dashboard_cli(*args: str, log: Path) -> subprocess.Popen:
    """``workbench dashboard ARGS`` as a user starts it, its output in ``log``; its temporary
    files in a folder of its own next to ``log`` (:func:`private_folders`)."""
    temp = log.parent / "tmp"
    temp.mkdir(exist_ok=True)
    with log.open("wb") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "workbench.cli.main", "dashboard", *args],
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env={**os.environ, "TMPDIR": str(temp)},
        )


def stopped_by(parent: subprocess.Popen, sig: int, port: int) -> None:
    """Send ``sig`` to the CLI; it exits, the port closes and no child of it is left."""
    children = descendants(parent.pid)
    assert children, "the CLI has no Voila child"
    parent.send_signal(sig)
    assert parent.wait(40) == 0
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and (port_open(port) or any(map(alive, children))):
        time.sleep(0.2)
    assert not port_open(port)
    assert [pid for pid in children if alive(pid)] == []


def private_folders(log: Path) -> list[Path]:
    """The private folders the dashboard CLI writing ``log`` has left (it should leave
    none): its own temporary folder only, as other tests' dashboards run at the same time."""
    return list((log.parent / "tmp").glob("workbench-dashboard-*"))


class SecuredInflux(InfluxServer):
    """InfluxDB 1.x with authentication on; :meth:`add_admin` creates its first user."""

    def _arguments(self):
        arguments = super()._arguments()
        config = self.state_dir / "influxdb.conf"
        config.write_text(config.read_text().replace("auth-enabled = false", "auth-enabled = true"))
        return arguments

    def add_admin(self, user: str, password: str) -> None:
        query = f"CREATE USER \"{user}\" WITH PASSWORD '{password}' WITH ALL PRIVILEGES"
        requests.post(f"{self.url}/query", params={"q": query}, timeout=10).raise_for_status()


PASSWORD = "s3cret-Pa55word"


@pytest.fixture
def secured_results(tmp_path):
    """``(server, database)``: surge results under other column and measurement names, in
    an InfluxDB that answers only with a user and password."""
    with SecuredInflux(tmp_path / "influxdb", free_port()) as server:
        server.add_admin("analyst", PASSWORD)
        auth = {"u": "analyst", "p": PASSWORD}
        database = "citydb"
        query = {"q": f'CREATE DATABASE "{database}"', **auth}
        requests.post(f"{server.url}/query", params=query, timeout=10).raise_for_status()
        refused = requests.get(f"{server.url}/query", params={"q": "SHOW DATABASES"}, timeout=10)
        assert refused.status_code == 401
        rows = [
            {
                "tag_cell": r["tag_s2id"],
                "tag_service": r["tag_vehicle_type"],
                "unique_customers": r["unique_customers"],
                "bookings": r["bookings"],
                "window_timestamp": r["window_timestamp"],
            }
            for r in surge_rows()
        ]
        config = InfluxConfig(
            api=1,
            url=server.url,
            database=database,
            measurement="city_surge",
            username="analyst",
            password=PASSWORD,
        )
        with InfluxWriter(config) as writer:
            writer.write(rows)
        yield server, database


def test_every_setting_of_the_config_file_reaches_the_page_then_sigterm_stops_it(
    secured_results, page, tmp_path
):
    server, database = secured_results
    config = tmp_path / "dashboard.yaml"
    config.write_text(
        f"store: influx1:{server.url}/{database}\n"
        f"store_options: {{username: analyst, password: {PASSWORD}}}\n"
        "measurement: city_surge\n"
        "cell_column: tag_cell\n"
        "service_column: tag_service\n"
        "metrics: [unique_customers]\n"
        "style: light\n"
        "area: Jakarta\n"
        "hours: 12\n"
        "refresh_seconds: 5\n"
    )
    port, log = free_port(), tmp_path / "cli.log"
    parent = dashboard_cli("--local", "--config", str(config), "--port", str(port), log=log)
    try:
        wait_for_port(port)
        page.goto(f"http://127.0.0.1:{port}/", timeout=120_000)
        page.wait_for_selector("iframe.atlas-frame", timeout=120_000)
        city, service, metric = page.locator(".city-dashboard select").all()
        assert city.input_value() == "Jakarta"
        assert options(metric) == ["unique_customers"]  # the file's metrics, nothing else
        assert options(service) == ["All services", "BIKE", "CAR"]  # from tag_service
        map_frame = page.frame_locator("iframe.atlas-frame")
        note = map_frame.locator("#atlas-note")  # style: light, and no network
        note.wait_for(state="visible", timeout=120_000)
        assert note.inner_text() == (
            'basemap "light" unavailable offline — showing bundled coastlines'
        )
        map_frame.locator("#deck-container canvas").wait_for(timeout=120_000)
        page.wait_for_timeout(1000)
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "dashboard-config-file.png"), full_page=True)
        shown = page.content() + page.locator("iframe.atlas-frame").get_attribute("srcdoc")
        assert PASSWORD not in shown and PASSWORD not in page.url
        assert "Cannot reach" not in shown and "unique_customers · Jakarta" in legend(page)
        stopped_by(parent, signal.SIGTERM, port)
    finally:
        if parent.poll() is None:
            parent.kill()
    output = log.read_text()
    assert "city dashboard on http://127.0.0.1" in output
    assert PASSWORD not in output
    assert private_folders(log) == []  # the config file with the password is gone


def test_ctrl_c_stops_the_dashboard_and_its_kernels(parquet_results, tmp_path):
    port, log = free_port(), tmp_path / "cli.log"
    parent = dashboard_cli(
        "--local", "--store", f"parquet:{parquet_results}", "--port", str(port), log=log
    )
    try:
        wait_for_port(port)
        answer = requests.get(f"http://127.0.0.1:{port}/", timeout=180)  # runs a kernel
        assert answer.status_code == 200
        assert len(descendants(parent.pid)) >= 2  # Voila and the visitor's kernel
        stopped_by(parent, signal.SIGINT, port)
    finally:
        if parent.poll() is None:
            parent.kill()
