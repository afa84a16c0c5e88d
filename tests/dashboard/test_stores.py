"""Store readers against real stores: InfluxDB 1.x, VictoriaMetrics and a Parquet sink
folder, each holding surge results written by the sink writers; exact comparisons."""

from __future__ import annotations

from datetime import timedelta

import pytest
from surge_results import SPAN, START, expected, points

from workbench.dashboard.errors import StoreEmptyError, StoreError, StoreUnreachableError
from workbench.dashboard.stores import Layout, Query, open_store
from workbench.dev.ports import free_port

pytestmark = pytest.mark.unit

ALL = Query("bookings", *SPAN)
#: stores read from a server (InfluxDB, VictoriaMetrics) or written by Spark (Parquet)
SERVED_STORES = ["influx1", "victoriametrics", "parquet"]


@pytest.fixture(
    params=[pytest.param(name, marks=pytest.mark.integration) for name in SERVED_STORES]
)
def store(request):
    if request.param == "influx1":
        server, database = request.getfixturevalue("influx_v1_results")
        return open_store(f"influx1:{server.url}/{database}")
    if request.param == "victoriametrics":
        server, measurement = request.getfixturevalue("victoria_results")
        return open_store(f"victoriametrics:{server.url}", Layout(measurement=measurement))
    return open_store(f"parquet:{request.getfixturevalue('parquet_results')}")


def test_reads_every_point(store, surge_rows):
    frame = store.read(ALL)
    assert list(frame.columns) == ["time", "cell", "service", "value"]
    assert str(frame["time"].dt.tz) == "UTC"
    assert points(frame) == expected(surge_rows)
    assert len(frame) == len(surge_rows) > 100


def test_filters_service_metric_and_time(store, surge_rows):
    frame = store.read(Query("unique_customers", *SPAN, service="CAR"))
    assert points(frame) == expected(surge_rows, "unique_customers", service="CAR")
    first = min(r["window_timestamp"] for r in surge_rows)
    window = store.read(Query("bookings", first, first + timedelta(minutes=1)))
    assert set(window["time"]) == {first}
    assert points(window) == {
        k: v for k, v in expected(surge_rows).items() if k[2] == int(first.timestamp() * 1000)
    }


def test_lists_metrics_and_services(store):
    assert set(store.metrics()) == {"bookings", "unique_customers"}
    assert store.services() == ["BIKE", "CAR"]


def test_an_empty_range_is_a_friendly_error(store):
    before = START - timedelta(days=3)
    with pytest.raises(StoreEmptyError) as err:
        store.read(Query("bookings", before, before + timedelta(hours=1)))
    assert "No 'bookings' results" in str(err.value)


@pytest.mark.parametrize(
    "name",
    [
        "influx1:http://127.0.0.1:{port}/dagger",
        "victoriametrics:http://127.0.0.1:{port}",
    ],
)
def test_an_unreachable_server_is_a_friendly_error(name):
    store = open_store(name.format(port=free_port()))
    with pytest.raises(StoreUnreachableError) as err:
        store.read(ALL)
    assert "Cannot reach the results store" in str(err.value)
    assert "connection refused" in str(err.value)


def test_a_missing_folder_or_database(tmp_path, influxdb_v1):
    with pytest.raises(StoreUnreachableError, match="does not exist"):
        open_store(f"parquet:{tmp_path / 'nothing'}").read(ALL)
    with pytest.raises(StoreEmptyError, match="has no database 'absent'"):
        open_store(f"influx1:{influxdb_v1.url}/absent").read(ALL)


def test_parquet_reads_only_committed_files(parquet_results, surge_rows, tmp_path):
    import shutil

    import pyarrow as pa
    import pyarrow.parquet as pq

    copy = tmp_path / "parquet"
    shutil.copytree(parquet_results, copy)
    stray = next(copy.glob("dt=*/hour=*"))
    row = {**surge_rows[0], "bookings": 10_000}
    pq.write_table(pa.Table.from_pylist([row]), stray / "part-uncommitted.parquet")
    frame = open_store(f"parquet:{copy}").read(ALL)
    assert points(frame) == expected(surge_rows)


def test_store_names_are_checked():
    with pytest.raises(StoreError, match="Did you mean influx1"):
        open_store("influx:http://127.0.0.1:8086/db")
    with pytest.raises(StoreError, match="KIND:TARGET"):
        open_store("parquet")
