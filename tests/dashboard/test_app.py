"""The dashboard's widgets driven from Python over real stores, its settings, and the
notebook it is served from."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
import yaml

from workbench.atlas import cells
from workbench.dashboard import notebook
from workbench.dashboard.app import ALL_SERVICES, Dashboard
from workbench.dashboard.config import DashboardConfig
from workbench.dev.ports import free_port
from workbench.exceptions import SpecError

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]


def latest(rows, metric="bookings", service=None):
    """{token: value} of the latest window, summed over services: what the map shows."""
    end = max(r["window_timestamp"] for r in rows)
    out: dict[str, float] = {}
    for r in rows:
        if r["window_timestamp"] == end and service in (None, r["tag_vehicle_type"]):
            token = cells.to_token(r["tag_s2id"])
            out[token] = out.get(token, 0.0) + r[metric]
    return out


def drawn(board):
    """{token: value} of the cells on the dashboard's map."""
    page = board.map.value
    assert page.startswith('<iframe class="atlas-frame"')
    shown = board._last
    return dict(zip(shown.rows["atlas_token"], shown.rows[shown.metric], strict=True))


@pytest.fixture
def board(influx_v1_results):
    server, database = influx_v1_results
    config = DashboardConfig.load(store=f"influx1:{server.url}/{database}", hours=24 * 3)
    return Dashboard(config)


def test_widgets_drive_the_map_and_chart(board, surge_rows):
    assert board.refresh()
    assert list(board.metric.options) == ["bookings", "unique_customers"]
    assert list(board.service.options) == [ALL_SERVICES, "BIKE", "CAR"]
    assert board.message.value == ""
    assert drawn(board) == latest(surge_rows)  # every row is in Jakarta
    assert '<path class="line"' in board.chart.value
    board.service.value = "CAR"  # observing the control refreshes
    assert drawn(board) == latest(surge_rows, service="CAR")
    board.metric.value = "unique_customers"
    assert drawn(board) == latest(surge_rows, "unique_customers", "CAR")
    board.area.value = "surabaya"  # no results there: its map, empty, says so
    assert board.message.value == "" and "no results" in board.chart.value
    assert board._last is not None and len(board._last.rows) == 0
    assert "unique_customers · Surabaya · CAR" in board.map.value


def test_an_unreachable_or_empty_store_is_one_sentence(tmp_path):
    down = Dashboard(DashboardConfig.load(store=f"victoriametrics:http://127.0.0.1:{free_port()}"))
    assert not down.refresh()
    assert "Cannot reach the results store (VictoriaMetrics" in down.message.value
    assert 'class="dashboard-message problem"' in down.message.value
    (tmp_path / "empty").mkdir()
    empty = Dashboard(DashboardConfig.load(store=f"parquet:{tmp_path / 'empty'}"))
    assert not empty.refresh()  # nothing yet: the city's map, saying so
    assert empty.message.value == "" and "no results" in empty.map.value


def test_settings_from_yaml_environment_and_arguments(tmp_path, monkeypatch):
    path = tmp_path / "dashboard.yaml"
    path.write_text("store: parquet:/data/surge\nhours: 2\nmetrics: [bookings]\n")
    monkeypatch.setenv("WORKBENCH_DASHBOARD_REFRESH", "10")
    config = DashboardConfig.load(path, area="bandung")
    assert (config.store, config.hours, config.metrics) == (
        "parquet:/data/surge",
        2.0,
        ["bookings"],
    )
    assert (config.refresh_seconds, config.area) == (10.0, "bandung")
    monkeypatch.setenv("WORKBENCH_DASHBOARD_STORE", "parquet:/elsewhere")
    env = config.environment(tmp_path / "resolved.yaml")
    assert "WORKBENCH_DASHBOARD_STORE" not in env
    written = Path(env["WORKBENCH_DASHBOARD_CONFIG"])
    assert yaml.safe_load(written.read_text()) == dataclasses.asdict(config)
    assert written.stat().st_mode & 0o077 == 0  # it may hold credentials
    path.write_text("stor: x\n")
    with pytest.raises(SpecError, match="Did you mean store"):
        DashboardConfig.load(path)
    with pytest.raises(SpecError, match="positive number"):
        DashboardConfig.load(None, hours="-1")


def test_the_notebooks_are_the_generated_one():
    for name in notebook.FILES:
        text = (ROOT / name).read_text()
        assert text == notebook.render(), f"{name} drifted: python -m workbench.dashboard.notebook"
        cells_ = json.loads(text)["cells"]
        assert all(c.get("outputs", []) == [] for c in cells_)
        assert cells_[1]["metadata"]["tags"] == ["parameters"]
