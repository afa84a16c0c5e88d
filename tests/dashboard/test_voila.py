"""The dashboard as a city head sees it: Voila on 127.0.0.1 over an InfluxDB holding surge
results, loaded in Debian's Chromium (Playwright); then the store goes down.

Screenshots go to ``artifacts/`` (kept by CI).
"""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest
from surge_results import surge_rows, write_influx_v1

from workbench.dashboard.config import DashboardConfig
from workbench.dashboard.serve import start
from workbench.infra.ports import free_port
from workbench.infra.timeseries import InfluxServer

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
        server.terminate()
        server.wait(20)


@pytest.fixture
def page(chromium):
    tab = chromium.new_page(viewport={"width": 1200, "height": 1000})
    tab.problems, tab.requests = [], []
    tab.on("console", lambda m: tab.problems.append(m.text) if m.type == "error" else None)
    tab.on("pageerror", lambda e: tab.problems.append(str(e)))
    tab.on("request", lambda r: tab.requests.append(r.url))
    yield tab
    tab.close()


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
    map_frame.locator("#deck-container canvas").wait_for(timeout=30_000)
    city, service, metric = page.locator(".city-dashboard select").all()
    assert city.input_value() == "Jakarta"  # the option labels are the values in the page
    assert options(service) == ["All services", "BIKE", "CAR"]
    assert options(metric) == ["bookings", "unique_customers"]
    assert "bookings · Jakarta · all services" in legend(page)
    assert page.locator("svg.dashboard-chart polyline").count() == 1
    assert "def " not in page.inner_text("body")  # code cells hidden
    page.wait_for_timeout(1000)
    page.screenshot(path=str(ARTIFACTS / "dashboard.png"), full_page=True)

    service.select_option("CAR")
    page.wait_for_function(
        "() => document.querySelector('iframe.atlas-frame')?.srcdoc.includes('Jakarta · CAR')",
        timeout=30_000,
    )
    map_frame.locator("#deck-container canvas").wait_for(timeout=30_000)
    assert page.problems == []
    assert [u for u in page.requests if not u.startswith(LOOPBACK)] == []

    influx.stop()
    message = page.locator(".dashboard-message.problem")
    message.wait_for(timeout=30_000)  # the next timed refresh
    assert "Cannot reach the results store" in message.inner_text()
    assert "Traceback" not in page.inner_text("body")
    assert page.locator("iframe.atlas-frame").count() == 0
    page.screenshot(path=str(ARTIFACTS / "dashboard-store-down.png"), full_page=True)
    assert page.problems == []
