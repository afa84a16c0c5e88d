"""A dagger edited and restarted on a new checkpoint, writing into the same sinks.

Batch ids restart at 0 with every checkpoint. Spark's file-sink log in a Parquet folder
used to skip the new query's batches as "already committed" while the job reported
them written; the Kafka sink's commit marker kept only the newest query's batch. Each
test drives the path a user takes (``workbench run`` on the real broker, real folders)
and compares what the job reported with what the sinks hold: nothing missing, nothing
doubled.
"""

from __future__ import annotations

import json
import re
import uuid
from collections import Counter
from datetime import timedelta

import pyarrow.dataset as ds
import pytest
from cli_runner import workbench
from geo_reference import surge_windows
from readback import kafka_messages
from streaming import (
    START,
    SURGE_SQL,
    closed,
    influx_v1_rows,
    influx_v1_sink,
    kafka_sink,
    new_topic,
    publish_events,
    surge_spec,
)

from workbench.streaming.job import JobFailedError, StreamingJob

EDITED_SQL = SURGE_SQL.replace("INTERVAL '60' SECOND", "INTERVAL '120' SECOND")


def written(stdout: str, sink: str) -> int:
    """The rows the job reported written to ``sink`` (its ``stopped:`` line)."""
    line = next(ln for ln in stdout.splitlines() if ln.startswith("stopped:"))
    found = re.search(re.escape(sink) + r": ([\d,]+)", line)
    assert found, line
    return int(found.group(1).replace(",", ""))


def rows(windows: dict) -> Counter:
    return Counter(windows.items())


def parquet_rows(spark, path) -> Counter:
    """The folder's rows, as Spark reads it (through the file-sink log)."""
    return Counter(
        (
            (str(r.tag_s2id), r.tag_vehicle_type, int(r.window_timestamp.timestamp() * 1000)),
            (int(r.bookings), int(r.unique_customers)),
        )
        for r in spark.read.parquet(str(path)).collect()
    )


def kafka_rows(bootstrap, topic) -> Counter:
    from streaming import to_ms

    out = Counter()
    for m in kafka_messages(bootstrap, topic):
        r = json.loads(m.value())
        key = (str(r["tag_s2id"]), r["tag_vehicle_type"], to_ms(r["window_timestamp"]))
        out[(key, (int(r["bookings"]), int(r["unique_customers"])))] += 1
    return out


def test_edited_dagger_on_a_new_checkpoint_continues_the_same_sinks(spark, kafka_broker, tmp_path):
    bootstrap = kafka_broker.bootstrap
    topic, out = new_topic(bootstrap, "edit-in"), new_topic(bootstrap, "edit-out")
    first = publish_events(bootstrap, topic, 1500, malformed=0.02)
    parquet = tmp_path / "surge"
    sinks = [{"type": "parquet", "path": str(parquet)}, kafka_sink(bootstrap, out)]
    name = f"surge-edit-{uuid.uuid4().hex[:6]}"
    c1, c2 = tmp_path / "c1", tmp_path / "c2"
    spec = surge_spec(bootstrap, topic, tmp_path, sinks, name=name)
    (tmp_path / "v1.yaml").write_text(spec.to_yaml())
    run1 = workbench(
        "run", tmp_path / "v1.yaml", "--available-now", "--checkpoint", tmp_path / "c1"
    )
    assert run1.returncode == 0, run1.stderr[-3000:]

    later = START + timedelta(hours=1)
    second = publish_events(bootstrap, topic, 1000, seed=12, malformed=0.02, start=later)
    (tmp_path / "v2.yaml").write_text(spec.model_copy(update={"sql": EDITED_SQL}).to_yaml())
    run2 = workbench(
        "run", tmp_path / "v2.yaml", "--available-now", "--checkpoint", tmp_path / "c2"
    )
    assert run2.returncode == 0, run2.stderr[-3000:]

    everything = first.events + second.events
    v1 = rows(closed(surge_windows(first.events), first.events))
    v2 = rows(closed(surge_windows(everything, window_s=120), everything))
    assert len(v1) > 15 and len(v2) > 15
    sink = f"parquet {parquet}"
    assert written(run1.stdout, sink) == sum(v1.values())
    assert written(run2.stdout, sink) == sum(v2.values())  # not skipped as batches 0..n of c1

    assert parquet_rows(spark, parquet) == v1 + v2  # one table: both versions, once each
    files = ds.dataset(str(parquet), format="parquet", partitioning="hive").to_table()
    assert files.num_rows == sum(v1.values()) + sum(v2.values())
    generations = json.loads((parquet / "_dagger_generations.json").read_text())["generations"]
    assert [g["checkpoint"] for g in generations] == [str(c1), str(c2)]

    kafka = f"kafka {out} (json)"
    assert written(run1.stdout, kafka) == sum(v1.values())
    assert written(run2.stdout, kafka) == sum(v2.values())
    assert kafka_rows(bootstrap, out) == v1 + v2

    # Dead letters: a folder per query and batch, a letter per record. The second query
    # re-read the first records from the start: their bad ones are lettered already.
    letters = spark.read.parquet(str(tmp_path / "dead-letters")).collect()
    by_run = Counter(r.run for r in letters)
    assert sorted(by_run.values()) == sorted([first.malformed, second.malformed])
    assert f" {first.malformed} dead letters" in run1.stdout
    assert f" {second.malformed} dead letters" in run2.stdout

    # A rollback to v1 on a new checkpoint reads every record again: no letter is new.
    run3 = workbench(
        "run", tmp_path / "v1.yaml", "--available-now", "--checkpoint", tmp_path / "c3"
    )
    assert run3.returncode == 0, run3.stderr[-3000:]
    assert " 0 dead letters" in run3.stdout
    letters = spark.read.parquet(str(tmp_path / "dead-letters")).collect()
    places = Counter((r.topic, r.partition, r.offset) for r in letters)
    assert len(places) == first.malformed + second.malformed
    assert set(places.values()) == {1}, [p for p, n in places.items() if n > 1]


def _forget_last_commit(checkpoint) -> int:
    """What a crash between the sinks' write and Spark's commit leaves: the last batch
    written but not committed in the checkpoint, so the next run replays it."""
    commits = checkpoint / "sinks" / "commits"
    last = max(int(p.name) for p in commits.iterdir() if p.name.isdigit())
    (commits / str(last)).unlink()
    (commits / f".{last}.crc").unlink(missing_ok=True)
    return last


def test_replays_are_skipped_and_reported_and_an_old_checkpoint_cannot_break_the_log(
    spark, kafka_broker, influxdb_v1, tmp_path
):
    bootstrap = kafka_broker.bootstrap
    topic, out = new_topic(bootstrap, "replay-in"), new_topic(bootstrap, "replay-out")
    sent = publish_events(bootstrap, topic, 1200)
    parquet = tmp_path / "surge"
    influx = influx_v1_sink(influxdb_v1)
    sinks = [{"type": "parquet", "path": str(parquet)}, kafka_sink(bootstrap, out), influx]
    v1 = surge_spec(bootstrap, topic, tmp_path, sinks)
    v2 = v1.model_copy(update={"sql": EDITED_SQL})
    c1, c2 = tmp_path / "c1", tmp_path / "c2"
    psink, ksink = f"parquet {parquet}", f"kafka {out} (json)"
    isink = v1.sinks[2].describe()

    def run(spec, checkpoint):
        return StreamingJob(spec, spark, checkpoint=checkpoint, available_now=True, emit=None).run()

    first = run(v1, c1)
    windows1 = closed(surge_windows(sent.events), sent.events)
    expected1 = rows(windows1)
    n1 = sum(expected1.values())
    assert first.rows_written == {psink: n1, ksink: n1, isink: n1}

    _forget_last_commit(c1)
    replay = run(v1, c1)  # the replayed batch is in every sink already
    assert replay.rows_written[psink] == replay.rows_written[ksink] == 0
    assert replay.rows_skipped[psink] == replay.rows_skipped[ksink] > 0
    assert replay.rows_written[isink] == replay.rows_skipped[psink]  # points rewritten
    assert isink not in replay.rows_skipped
    assert parquet_rows(spark, parquet) == expected1 == kafka_rows(bootstrap, out)
    assert influx_v1_rows(influxdb_v1, influx) == windows1

    run(v2, c2)  # the edited dagger: a new generation
    windows2 = closed(surge_windows(sent.events, window_s=120), sent.events)
    expected2 = rows(windows2)
    assert parquet_rows(spark, parquet) == expected1 + expected2 == kafka_rows(bootstrap, out)
    # Points are keyed by tags and time: the edited version overwrites the windows it shares.
    assert influx_v1_rows(influxdb_v1, influx) == {**windows1, **windows2}

    _forget_last_commit(c1)  # the old checkpoint's replay, after the newer one wrote
    again = run(v1, c1)
    assert again.rows_written[psink] == again.rows_written[ksink] == 0
    assert parquet_rows(spark, parquet) == expected1 + expected2 == kafka_rows(bootstrap, out)

    publish_events(bootstrap, topic, 300, seed=4, start=START + timedelta(hours=1))
    with pytest.raises(JobFailedError, match="resumed after a newer run") as failed:
        run(v1, c1)  # new batches of the old checkpoint have no place in the log
    assert "\n" not in str(failed.value) and "--checkpoint" in str(failed.value)
    assert parquet_rows(spark, parquet) == expected1 + expected2
