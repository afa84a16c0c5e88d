"""The first preview's one-off costs, paid in the background before an analyst asks.

A preview on a JVM that has just started takes 10–20 times longer than the same preview
a minute later: every Spark, Arrow and decoder class loads and runs interpreted on first
use. :func:`warm_up` runs the surge dagger's preview once over a few hundred generated
bookings (encoded here, no Kafka), right after the kernel's background start of Spark,
so that the analyst's first ``%%dagger`` finds those paths loaded and compiled. It leaves
nothing behind (its decoded sample is dropped from the cache) and never fails a start: a
warm-up that fails is logged (in the kernel's Spark log, not in a cell) and forgotten. It
never holds up real work either: the session is handed over as soon as it is up, and the
first use of Spark calls :func:`stop`, which skips a warm-up not begun yet and cancels the
Spark jobs of a running one (its job group) until it ends, quietly: the cancelled job's
error ends the warm-up and shows in no cell (the preview's collect does not let PySpark's
Arrow warning repeat it, Java stack and all, on stderr).
"""

from __future__ import annotations

import logging
import threading
import time
import traceback
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from workbench import spec
from workbench.dev.demo import spec_path
from workbench.lab import sampling
from workbench.runtime import jvm_log
from workbench.sources.partitions import Record

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

EVENTS = 300
TOPIC = "workbench-warm-up"
GROUP = "workbench-warm-up"  # the Spark job group of its jobs
_stopped = threading.Event()
_running: dict[str, Any] = {}  # "spark": the session a warm-up runs on, while it runs
#: The traceback of each warm-up that failed (not stopped) in this process.
failures: list[str] = []


def warm_up(spark: SparkSession) -> None:
    """The surge dagger previewed over :data:`EVENTS` generated bookings, unless
    :func:`stop` was called."""
    _running["spark"] = spark  # before the check: stop() sees it, or it sees stop()
    if _stopped.is_set():
        _running.clear()
        return
    try:
        spark.sparkContext.setJobGroup(GROUP, "preview warm-up", interruptOnCancel=True)
        _preview(spark)
    except Exception:  # noqa: BLE001 - a warm-up must not stop the kernel's Spark
        if not _stopped.is_set():
            failures.append(traceback.format_exc())
            _log(f"the preview warm-up failed:\n{failures[-1]}")
    finally:
        _running.clear()


def _log(text: str) -> None:
    """Into the kernel's Spark log (``wb.spark_log()``), not into the cell that runs now."""
    target = jvm_log.current()
    if target is None:
        logging.getLogger("workbench.warmup").error(text)
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("a", encoding="utf-8") as log:
        log.write(text)


def stop(timeout_s: float = 120.0) -> None:
    """No warm-up from now on; a running one's Spark jobs are cancelled until it ends (by a
    daemon thread: the caller does not wait)."""
    _stopped.set()
    if _running.get("spark") is not None:
        threading.Thread(target=_cancel, args=(timeout_s,), daemon=True).start()


def _cancel(timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while (spark := _running.get("spark")) is not None and time.monotonic() < deadline:
        spark.sparkContext.cancelJobGroup(GROUP)
        time.sleep(0.05)  # between the warm-up's jobs: cancel the next one too


def _preview(spark: SparkSession) -> None:
    from workbench.dev.generator import Generator
    from workbench.lab.preview import preview

    dagger = spec.load(spec_path())
    stream = dagger.streams[0]
    generated = Generator(seed=1, start=datetime.now(UTC)).records("bookings", EVENTS)
    records = [
        Record(TOPIC, 0, offset, int(r.arrival.timestamp() * 1000), None, r.payload)
        for offset, r in enumerate(generated)
    ]
    sample = sampling.Sample(
        stream, stream.message, "warm-up", {TOPIC: {0: (0, EVENTS)}}, records,
        tuple(dagger.schemas), mode="warm-up",
    )  # fmt: skip
    preview(dagger, sample, spark=spark)
    found = sampling.CACHE.pop((spark.sparkContext.applicationId, sample.key, EVENTS), None)
    if found is not None:
        found.cached.unpersist()
