"""Shared fixtures: one SparkSession for the whole run; no streaming query outlives a test."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("WORKBENCH_SPARK_MASTER", "local[2]")
# Every Spark driver the tests start (this process's, the job service's jobs, the CLI's)
# compiles with C1 only: tests run seconds over small data, where C2's compile threads only
# take CPU from the other workers. Speed is the benchmarks' business, with both compilers.
os.environ.setdefault("WORKBENCH_JIT", "quick")
# Kernels start Spark when a cell first uses it, not in the background as they load: most
# kernels the tests start (JupyterLab's, Voila's) never use it, and a background start with
# its preview warm-up costs 10 CPU-seconds each. tests/test_kernel.py starts its kernels
# without this, as a user's start.
os.environ.setdefault("WORKBENCH_SPARK_START", "on-use")

pytest_plugins = [
    "services_kafka",
    "services_kafka_clusters",
    "services_timeseries",
    "services_kernel",
    "services_browser",
    "services_postgres",
    "services_spark",
    "notify.receivers",  # http_receiver, smtp_receiver: stand-ins for notifier receivers
    "file_order",  # longest test files first (tests/durations.json)
    "machine_speed",  # a fixed workload timed before and after the run
    "tiers",  # one tier mark per test (unit, integration, e2e, lab, packaging); unit's guard
]


def pytest_terminal_summary(terminalreporter):
    """Figures tests report (``record_property("figure", text)``), printed after the run:
    the property travels with the report, so it shows from pytest-xdist's workers too."""
    figures = [
        f"{report.nodeid}: {value}"
        for report in terminalreporter.stats.get("passed", [])
        for name, value in report.user_properties
        if name == "figure" and report.when == "call"
    ]
    if figures:
        terminalreporter.section("figures")
        for line in figures:
            terminalreporter.write_line(line)


@pytest.fixture(scope="session")
def spark():
    from workbench.runtime.spark import session

    spark = session(app_name="workbench-tests")
    yield spark
    spark.stop()


@pytest.fixture(autouse=True)
def _stop_leftover_queries(request):
    yield
    if "spark" in request.fixturenames:
        for query in request.getfixturevalue("spark").streams.active:
            query.stop()
