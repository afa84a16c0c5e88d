"""The kernel's preview warm-up gives way to real work: stopped, its Spark jobs are
cancelled and it ends without an error. (A whole warm-up in a real kernel:
tests/test_kernel.py.)"""

from __future__ import annotations

import threading
import time

import pytest
from polling import wait_for

from workbench.notebook import warmup

pytestmark = pytest.mark.unit


def test_a_warm_up_gives_way_to_real_work(spark):
    running = threading.Thread(target=warmup.warm_up, args=(spark,))
    running.start()
    wait_for(lambda: "spark" in warmup._running or not running.is_alive(), 60, "the warm-up")
    started = time.monotonic()
    warmup.stop()
    assert time.monotonic() - started < 0.5  # the caller goes on at once
    running.join(120)  # what is not a Spark job (planning) still runs to its end
    assert not running.is_alive() and warmup.failures == []
    warmup.warm_up(spark)  # stopped: no more warm-ups in this process
    assert not warmup._running


def test_a_notebook_being_promoted_is_not_warmed_up(monkeypatch):
    import workbench.notebook.api as wb
    from workbench.paths import PROMOTE_DIR_ENV
    from workbench.runtime import spark as spark_module
    from workbench.runtime.spark_start import StartTimes

    times, calls = StartTimes(), []
    monkeypatch.setattr(spark_module, "last_start", lambda: times)
    monkeypatch.setitem(wb._state, "started", times)  # the background start made Spark
    monkeypatch.setattr(warmup, "warm_up", calls.append)
    wb._warm_up("session")
    assert calls == ["session"]
    monkeypatch.setenv(PROMOTE_DIR_ENV, "/tmp/promote-record")
    wb._warm_up("session")
    assert calls == ["session"]
