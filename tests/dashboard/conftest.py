"""Surge results in every store the dashboard reads, written by the real sink writers."""

from __future__ import annotations

import uuid

import pytest
from surge_results import surge_rows as make_rows
from surge_results import write_influx_v1

from workbench.sinks.influx import InfluxConfig
from workbench.sinks.influx_writer import InfluxWriter


@pytest.fixture(scope="session")
def surge_rows():
    return make_rows()


@pytest.fixture(scope="session")
def influx_v1_results(influxdb_v1, surge_rows):
    return influxdb_v1, write_influx_v1(influxdb_v1, surge_rows)


@pytest.fixture(scope="session")
def victoria_results(victoria_metrics, surge_rows):
    """``(server, measurement)``: the rows written by the v2 sink writer."""
    measurement = f"surge{uuid.uuid4().hex[:6]}"
    config = InfluxConfig(api=2, url=victoria_metrics.url, bucket="dagger", measurement=measurement)
    with InfluxWriter(config) as writer:
        writer.write(surge_rows)
    victoria_metrics.flush()
    return victoria_metrics, measurement


@pytest.fixture(scope="session")
def parquet_results(spark, surge_rows, tmp_path_factory):
    """A Parquet sink folder: the rows written by the sink's writer as micro-batch 0."""
    from workbench.sinks.parquet import ParquetConfig, ParquetWriter
    from workbench.sinks.registry import SinkContext

    root = tmp_path_factory.mktemp("dashboard") / "parquet"
    query = root.parent / "checkpoint" / "sinks"  # the query id a job's checkpoint holds
    query.mkdir(parents=True)
    (query / "metadata").write_text('{"id": "dashboard-test-query"}')
    context = SinkContext(
        spark=spark,
        job="dashboard-test",
        checkpoint=root.parent / "checkpoint",
        registry=None,
        output_mode="append",
        trigger={},
    )
    ParquetWriter(ParquetConfig(path=str(root)), context).write(
        spark.createDataFrame(surge_rows), 0
    )
    return root
