"""The dashboard of a dagger that is not the surge dagger: driver supply per 5 minutes, in a
Parquet folder with two windows missing. Its heading, metrics and window come from the
dagger; times are on Jakarta's clock (UTC+7) with UTC on hover; the missing windows are a
gap in the line; the axes say what they show; a city with no results shows its map saying
``no results``; no page shows the server's folder. Screenshots: ``artifacts/dashboard-
dagger*.png``."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
import yaml
from geo_reference import s2_id

from workbench.dashboard.app import Dashboard
from workbench.dashboard.config import DashboardConfig

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "artifacts"
JAKARTA = ZoneInfo("Asia/Jakarta")
WINDOW = timedelta(minutes=5)
CELLS = [(-6.2253, 106.8087), (-6.1862, 106.8230), (-6.2610, 106.8133)]  # Jakarta
#: 5-minute windows over the last hour, but for two (a gap)
MISSING = (4, 5)


def windows(now: datetime) -> list[datetime]:
    last = now.replace(second=0, microsecond=0) - timedelta(minutes=now.minute % 5)
    ends = [last - WINDOW * i for i in range(12)][::-1]
    return [end for i, end in enumerate(ends) if i not in MISSING]


@pytest.fixture
def supply(tmp_path):
    """(spec path, results folder, window ends) of a driver-supply dagger with 5-minute
    windows, its results written as its Parquet sink lays them out (read whole)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    spec = yaml.safe_load((ROOT / "workbench/data/daggers/driver-supply.yaml").read_text())
    spec["name"] = "driver-supply-5m"
    spec["description"] = "Available drivers per S2 cell and vehicle type, every 5 minutes."
    spec["sql"] = spec["sql"].replace("INTERVAL '60' SECOND", "INTERVAL '5' MINUTE")
    path = tmp_path / "driver-supply-5m.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    ends = windows(datetime.now(UTC))
    rows = [
        {
            "tag_s2id": str(s2_id(lat, lng, 13)),
            "tag_vehicle_type": vehicle,
            "available_drivers": 3 + i + k,
            "pings": 40 + i,
            "window_timestamp": end.replace(tzinfo=None),
        }
        for i, end in enumerate(ends)
        for k, (lat, lng) in enumerate(CELLS)
        for vehicle in ("BIKE", "CAR")
    ]
    folder = tmp_path / "srv" / "results" / "driver-supply"
    part = folder / f"dt={ends[-1]:%Y-%m-%d}" / f"hour={ends[-1]:%H}"
    part.mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows), part / "part-0.parquet")
    return path, folder, ends


def board_for(spec: Path, folder: Path) -> Dashboard:
    config = DashboardConfig.load(
        store=f"parquet:{folder}", dagger=str(spec), measurement="driver_supply", hours=3
    )
    return Dashboard(config)


def shown(board: Dashboard) -> str:
    return "".join(getattr(child, "value", "") for child in board.widget.children)


def test_heading_window_clock_gaps_axes_and_no_path(supply):
    spec, folder, ends = supply
    board = board_for(spec, folder)
    assert board.refresh()
    assert list(board.metric.options) == ["available_drivers", "pings"]
    page = shown(board)
    assert "<h2>driver-supply-5m</h2>" in page and "every 5 minutes" in page
    assert "surge" not in page.lower() and "per minute" not in page
    chart = board.chart.value
    assert "available_drivers per 5 min in Jakarta" in chart  # the title
    assert 'class="axis-label y"' in chart and ">available_drivers per 5 min</text>" in chart
    assert "window end, WIB, UTC+7 (UTC on hover)" in chart  # the x axis
    # the missing windows are a gap: two lines, one on each side of it
    assert chart.count('<path class="line"') == 2
    assert chart.count('<circle class="point"') == len(ends)
    last = ends[-1]
    local = f"{last.astimezone(JAKARTA):%H:%M}"
    assert f"<title>{local} WIB ({last:%H:%M} UTC): " in chart  # a point: both clocks
    ticks = re.findall(r'<text class="tick"[^>]*><title>([^<]*)</title>([^<]*)</text>', chart)
    assert ticks[-1] == (f"{last:%Y-%m-%d %H:%M} UTC", local)  # Jakarta's time, UTC on hover
    assert board._last is not None
    assert f"5 min window ending {local} WIB ({last:%H:%M} UTC)" in board._last.notes
    status = board.status.value
    assert "driver-supply-5m · updated <time" in status and re.search(r'title="[^"]* UTC"', status)
    assert " WIB</time>" in status
    assert str(folder) not in page and "/srv/" not in page

    board.area.value = "bandung"  # no results there: its map, empty, says so
    assert board.message.value == ""
    assert board._last is not None and len(board._last.rows) == 0
    assert "Bandung" in board._last.title and "no results" in board.map.value
    assert "no results" in board.chart.value
    assert str(folder) not in shown(board)


def test_problems_name_no_server_path(supply, tmp_path):
    spec, folder, _ = supply
    board = board_for(spec, tmp_path / "srv" / "nothing-here")
    assert not board.refresh()
    message = board.message.value
    assert "The results folder does not exist" in message, message
    assert "/srv/" not in shown(board) and str(tmp_path) not in shown(board)
    missing = board_for(tmp_path / "srv" / "gone.yaml", folder)
    assert not missing.refresh()
    assert "The dashboard&#x27;s dagger spec cannot be read" in missing.message.value
    assert "/srv/" not in shown(missing)


def test_the_dashboard_in_chromium(supply, chromium):
    from test_voila import wait_for_port

    from workbench.dashboard.serve import start, stop
    from workbench.dev.ports import free_port

    spec, folder, ends = supply
    config = DashboardConfig.load(store=f"parquet:{folder}", dagger=str(spec), hours=3)
    port = free_port()
    server = start(config, port)
    page = chromium.new_page(viewport={"width": 1200, "height": 1100})
    try:
        page.problems = []
        page.on("pageerror", lambda e: page.problems.append(str(e)))
        wait_for_port(port)
        page.goto(f"http://127.0.0.1:{port}/", timeout=120_000)
        page.frame_locator("iframe.atlas-frame").locator("#deck-container canvas").wait_for(
            timeout=120_000
        )
        page.wait_for_timeout(1500)  # deck.gl's first frames
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "dashboard-dagger.png"), full_page=True)
        assert page.locator(".dashboard-heading h2").inner_text() == "driver-supply-5m"
        assert page.locator("svg.dashboard-chart path.line").count() == 2
        last = f"{ends[-1].astimezone(JAKARTA):%H:%M}"
        tick = page.locator("svg.dashboard-chart text.tick").last.text_content()
        assert tick == f"{ends[-1]:%Y-%m-%d %H:%M} UTC{last}"  # <title> (on hover), then text
        footer = page.locator(".dashboard-status time")
        assert footer.get_attribute("title").endswith(" UTC")
        assert str(folder) not in page.content() and "/srv/" not in page.content()

        page.locator(".city-dashboard select").first.select_option("Bandung")
        page.wait_for_function(
            "() => document.querySelector('iframe.atlas-frame')?.srcdoc.includes('Bandung')",
            timeout=120_000,
        )
        frame = page.frame_locator("iframe.atlas-frame")
        frame.locator("#atlas-note:has-text('no results')").wait_for(timeout=120_000)
        page.wait_for_timeout(1500)
        page.screenshot(path=str(ARTIFACTS / "dashboard-dagger-no-results.png"), full_page=True)
        assert page.locator(".dashboard-message").count() == 0
        assert str(folder) not in page.content()
        assert page.problems == []
    finally:
        page.close()
        stop(server)
