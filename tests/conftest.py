"""Shared fixtures: one SparkSession for the whole run; no streaming query outlives a test."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("WORKBENCH_SPARK_MASTER", "local[2]")

pytest_plugins = [
    "services_kafka",
    "services_kafka_clusters",
    "services_timeseries",
    "services_kernel",
    "services_browser",
    "services_postgres",
    "notify.receivers",  # http_receiver, smtp_receiver: stand-ins for notifier receivers
]


@pytest.fixture(scope="session")
def spark():
    from workbench.spark import session

    spark = session(app_name="workbench-tests")
    yield spark
    spark.stop()


@pytest.fixture(autouse=True)
def _stop_leftover_queries(request):
    yield
    if "spark" in request.fixturenames:
        for query in request.getfixturevalue("spark").streams.active:
            query.stop()
