"""Time-series server fixtures: one InfluxDB 1.x and one VictoriaMetrics for the session.

Each runs Debian's binary on a free loopback port with its state in a temporary folder;
each fixture yields the server object (``.url``; VictoriaMetrics also has ``.flush()``).
"""

from __future__ import annotations

import pytest

from workbench.dev.ports import free_port
from workbench.dev.timeseries import InfluxServer, VictoriaMetrics


@pytest.fixture(scope="session")
def influxdb_v1(tmp_path_factory):
    with InfluxServer(tmp_path_factory.mktemp("influxdb"), free_port()) as server:
        yield server


@pytest.fixture(scope="session")
def victoria_metrics(tmp_path_factory):
    with VictoriaMetrics(tmp_path_factory.mktemp("victoria-metrics"), free_port()) as server:
        yield server
