"""A dashboard limited to some service areas (a viewer's): the city picker lists only
those, opens on the first, and reading any other city is refused, not only hidden."""

from __future__ import annotations

import pytest

from workbench.dashboard.app import Dashboard
from workbench.dashboard.config import DashboardConfig
from workbench.dashboard.errors import AreaNotAllowedError
from workbench.exceptions import UnknownNameError

pytestmark = pytest.mark.unit


@pytest.fixture
def store(influx_v1_results):
    server, database = influx_v1_results
    return f"influx1:{server.url}/{database}"


def test_the_picker_lists_only_the_allowed_areas(store, monkeypatch):
    monkeypatch.setenv("WORKBENCH_DASHBOARD_AREAS", "surabaya,bandung")  # as the hook sets it
    board = Dashboard(DashboardConfig.load(store=store, hours=24 * 3))
    assert list(board.area.options) == [("Bandung", "bandung"), ("Surabaya", "surabaya")]
    assert board.area.value == "bandung"  # "jakarta" (the default) is not allowed
    assert not board.refresh()  # no results in Bandung: said, not drawn
    with pytest.raises(AreaNotAllowedError, match="shows only Bandung, Surabaya"):
        board._area("jakarta")
    board.area.options = [("Jakarta", "jakarta")]  # a tampered picker still reads nothing
    assert not board.refresh()
    assert "shows only Bandung, Surabaya; &#x27;jakarta&#x27; is not one" in board.message.value


def test_everyone_else_sees_every_area(store):
    config = DashboardConfig.load(store=store, hours=24 * 3, area="surabaya")
    board = Dashboard(config)
    assert [key for _, key in board.area.options] == ["jakarta", "bandung", "surabaya"]
    assert board.area.value == "surabaya"
    assert board.refresh() is False  # no results in Surabaya
    board.area.value = "jakarta"
    assert board.message.value == "" and board.map.value


def test_unknown_areas_in_the_settings_are_said():
    with pytest.raises(UnknownNameError):
        DashboardConfig.load(areas="medan").allowed_areas()
