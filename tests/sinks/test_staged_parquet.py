"""The Parquet sink's folder read as users read it, with pandas and pyarrow (not Spark, which
reads through ``_spark_metadata``): a job SIGKILLed mid-batch and restarted leaves exactly
the committed rows, and an edit that adds a column gives readers that column
(``workbench.sinks.staging``)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
from cli_job import Job
from geo_reference import surge_windows
from streaming import SURGE_SQL, closed, new_topic, publish_events, surge_rows, surge_spec

from workbench.sinks.generations import logged_files
from workbench.sinks.staging import ORPHANS, SCHEMA_FILE
from workbench.spec import DaggerSpec
from workbench.streaming.job import StreamingJob


def unlogged(folder: Path) -> list[Path]:
    """Data files under ``folder`` (staged ones too) that its log does not hold yet: files of
    a batch being written ([] when a staging folder went while it was walked: the job
    published or dropped it meanwhile)."""
    held = set(logged_files(folder) or ())
    try:
        found = list(folder.rglob("*.parquet"))
    except FileNotFoundError:
        return []
    return [p for p in found if p not in held and p.name != SCHEMA_FILE and ORPHANS not in p.parts]


def visible(folder: Path) -> list[Path]:
    """The data files a reader of the folder reads (none under a ``_`` or ``.`` name; the
    schema file has no rows)."""
    return [
        p
        for p in folder.rglob("*.parquet")
        if not any(part[:1] in "_." for part in p.relative_to(folder).parts)
        and p.name != SCHEMA_FILE
    ]


def parquet_job(bootstrap: str, tmp_path: Path, per_batch: int) -> tuple[str, Path, DaggerSpec]:
    """A new topic, and the surge dagger reading it into the Parquet folder ``tmp/surge``."""
    topic, folder = new_topic(bootstrap, "staged"), tmp_path / "surge"
    sinks = [{"type": "parquet", "path": str(folder)}]
    options = {"max_offsets_per_trigger": per_batch}
    return topic, folder, surge_spec(bootstrap, topic, tmp_path, sinks, options)


def kill_mid_batch(job: Job, folder: Path, timeout_s: float = 240) -> list[Path]:
    """SIGKILL ``job`` (its Python and driver JVM) while a batch's files are being written;
    the files of that batch seen just before."""
    deadline = time.monotonic() + timeout_s
    while not (writing := unlogged(folder)):
        assert job.proc.poll() is None, "job exited:\n" + "\n".join(job.lines[-30:])
        assert time.monotonic() < deadline, "no batch was seen writing:\n" + "\n".join(job.lines)
        time.sleep(0.005)
    os.killpg(job.proc.pid, signal.SIGKILL)
    job.proc.wait(30)
    return writing


def test_a_job_killed_mid_batch_leaves_pandas_and_pyarrow_exactly_the_committed_rows(
    kafka_broker, tmp_path, record_property
):
    topic, folder, spec = parquet_job(kafka_broker.bootstrap, tmp_path, 300)
    spec_file = tmp_path / "spec.yaml"
    spec_file.write_text(spec.to_yaml())
    # 2 events a second of event time: each batch of 300 closes windows, so writes files
    sent = publish_events(kafka_broker.bootstrap, topic, 6000, rate_per_s=2.0)
    expected = closed(surge_windows(sent.events), sent.events)
    log = (tmp_path / "job.log").open("w")

    first = Job(spec_file, log)
    first.wait_for(lambda: logged_files(folder), 240, "a committed batch")
    writing = kill_mid_batch(first, folder)
    # The killed batch's files are not among the folder's: readers see committed rows only
    held = set(logged_files(folder) or ())
    assert set(visible(folder)) <= held, sorted(set(visible(folder)) - held)
    killed = pd.read_parquet(folder)
    assert len(killed) < len(expected)
    surge_rows(killed.to_dict("records"))  # no window twice
    left = [p for p in folder.rglob("*.parquet") if p not in held and p.name != SCHEMA_FILE]
    record_property(
        "figure",
        f"SIGKILL mid-batch: {len(writing)} files of the batch being written, "
        f"{len(left)} left after the kill (none visible); pandas read {len(killed)} rows",
    )

    second = Job(spec_file, log)
    second.wait_for(
        lambda: len(pq.read_table(folder, columns=["bookings"])) >= len(expected),
        300,
        "every closed window in the folder",
    )
    second.proc.send_signal(signal.SIGTERM)
    assert second.proc.wait(120) == 0, "\n".join(second.lines[-30:])
    log.close()

    assert len(expected) > 100
    assert surge_rows(pd.read_parquet(folder).to_dict("records")) == expected
    assert surge_rows(pq.read_table(folder).to_pylist()) == expected
    assert not (folder / "_dagger_staging").exists()


WIDER_SQL = SURGE_SQL.replace(
    "DistinctCount(customer_id) AS unique_customers,",
    "DistinctCount(customer_id) AS unique_customers,\n       max(pickup_lat) AS max_pickup_lat,",
)


def test_an_edit_that_adds_a_column_gives_pandas_and_pyarrow_the_column(
    spark, kafka_broker, tmp_path
):
    topic, folder, spec = parquet_job(kafka_broker.bootstrap, tmp_path, 800)
    first = publish_events(kafka_broker.bootstrap, topic, 1500)

    def run(spec, checkpoint):
        job = StreamingJob(spec, spark, checkpoint=checkpoint, available_now=True, emit=None)
        return job.run()

    run(spec, tmp_path / "c1")
    v1 = len(closed(surge_windows(first.events), first.events))
    # v2 adds a column, on a new checkpoint (its own generation of the folder) from earliest
    run(spec.model_copy(update={"sql": WIDER_SQL}), tmp_path / "c2")

    for frame in (pd.read_parquet(folder), pq.read_table(folder).to_pandas()):
        assert "max_pickup_lat" in frame.columns, list(frame.columns)
        assert len(frame) == 2 * v1
        assert frame["max_pickup_lat"].isna().sum() == v1  # v1's rows: no value
        assert frame["max_pickup_lat"].notna().sum() == v1
