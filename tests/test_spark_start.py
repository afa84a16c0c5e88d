"""Starting Spark ahead of use: a background start hands over its session, or its error once,
and never keeps a caller waiting past its timeout. (The kernel's real background start of
Spark: tests/test_kernel.py; the CLI's start line: tests/test_cli.py.)"""

from __future__ import annotations

import threading

import pytest

import workbench.notebook as wb
import workbench.notebook.api as wb_api
from workbench.exceptions import SparkStartError
from workbench.runtime.spark_start import BackgroundStart, StartTimes

pytestmark = pytest.mark.unit


def test_the_start_line_names_each_phase():
    times = StartTimes({"jars": 0.04, "JVM": 1.26, "SparkContext": 0.9})
    assert times.line() == "spark: started in 2.2s (jars 0.0s, JVM 1.3s, SparkContext 0.9s)"
    with times.phase("UDFs"):
        pass
    assert list(times.phases) == ["jars", "JVM", "SparkContext", "UDFs"]


def test_a_failed_start_surfaces_once_at_first_use():
    def broken():
        raise RuntimeError("Java gateway process exited before sending its port number\nstack")

    start = BackgroundStart(broken)
    start.begin()
    with pytest.raises(SparkStartError) as err:
        start.wait(timeout_s=30, hint=" See the log.")
    assert str(err.value) == (
        "Spark failed to start in the background: RuntimeError: Java gateway process exited "
        "before sending its port number. See the log. Run the cell again to retry."
    )
    assert start.done


def test_a_start_that_hangs_is_an_error_not_a_hang():
    release = threading.Event()
    start = BackgroundStart(lambda: release.wait(30) and "session")  # type: ignore[arg-type,return-value]
    start.begin()
    with pytest.raises(SparkStartError, match=r"has been starting for \d+s and is not up yet"):
        start.wait(timeout_s=0.2)
    release.set()
    assert start.wait(timeout_s=30) == "session"


def test_the_notebook_raises_the_background_error_then_starts_again(monkeypatch):
    def broken():
        raise OSError("no java")

    failed = BackgroundStart(broken)
    failed.begin()
    monkeypatch.setitem(wb_api._state, "start", failed)
    with pytest.raises(SparkStartError, match="OSError: no java. Spark's log: %dagger_logs"):
        wb.spark()
    assert wb_api._state["start"] is None  # the next wb.spark() starts Spark itself


@pytest.mark.integration
def test_the_driver_maps_the_class_archive_only_when_there_is_one(monkeypatch, tmp_path):
    from workbench.runtime import jvm_archive
    from workbench.runtime.spark import driver_java_options

    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path))
    monkeypatch.delenv(jvm_archive.ENV, raising=False)
    monkeypatch.delenv("WORKBENCH_JIT", raising=False)
    archive = jvm_archive.path()
    assert archive.parent == tmp_path / "jvm" and archive.name.startswith("spark-4.")
    assert "SharedArchiveFile" not in driver_java_options()  # none made yet
    archive.write_bytes(b"made by setup")
    assert driver_java_options().endswith(f" -XX:SharedArchiveFile={archive}")
    monkeypatch.setenv(jvm_archive.ENV, "off")
    assert "SharedArchiveFile" not in driver_java_options()


@pytest.mark.integration
def test_drivers_compile_with_both_jits_unless_told_quick(monkeypatch):
    from workbench.runtime.spark import QUICK_JIT, driver_java_options, short_lived_conf

    monkeypatch.delenv("WORKBENCH_JIT", raising=False)
    assert QUICK_JIT not in driver_java_options()  # a job's stream needs C2
    assert driver_java_options(quick_jit=True).endswith(f" {QUICK_JIT}")
    assert short_lived_conf()["spark.driver.extraJavaOptions"].endswith(f" {QUICK_JIT}")
    monkeypatch.setenv("WORKBENCH_JIT", "quick")
    assert driver_java_options().endswith(f" {QUICK_JIT}")
    assert QUICK_JIT not in driver_java_options(quick_jit=False)  # told otherwise


@pytest.mark.integration
def test_every_spark_jvm_collects_garbage_with_the_parallel_collector(monkeypatch):
    from workbench.runtime.spark import GC, driver_java_options, executor_java_options

    assert GC == "-XX:+UseParallelGC"
    for quick in (True, False):
        assert f" {GC}" in driver_java_options(quick_jit=quick)
    assert f" {GC}" in executor_java_options()
