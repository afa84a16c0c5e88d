"""A job's lone Parquet sink written by its streaming query itself (``workbench.sinks.streamed``):
replays, generations and dead letters behave as through ``foreachBatch``, on the real broker
and real folders."""

from __future__ import annotations

import shutil

import pytest
from geo_reference import surge_windows
from streaming import closed, new_topic, publish_events, surge_spec
from test_generations import EDITED_SQL, parquet_rows, rows

from workbench.streaming.job import JobFailedError, StreamingJob


def _forget_after(checkpoint, batch: int) -> None:
    """What a crash after ``batch`` wrote its folder, before its dead letters and Spark's
    commit, leaves: ``batch`` planned but not committed, and no batch after it."""
    for log in ("offsets", "commits"):
        for path in (checkpoint / "sinks" / log).iterdir():
            number = path.name.lstrip(".").removesuffix(".crc")
            if number.isdigit() and int(number) >= batch + (log == "offsets"):
                path.unlink()


def test_a_replayed_batch_is_computed_for_its_dead_letters_and_skipped_in_the_folder(
    spark, kafka_broker, tmp_path
):
    bootstrap = kafka_broker.bootstrap
    topic = new_topic(bootstrap, "streamed")
    sent = publish_events(bootstrap, topic, 1500, malformed=0.03, rate_per_s=4.0)
    parquet, dead = tmp_path / "surge", tmp_path / "dead-letters"
    sinks = [{"type": "parquet", "path": str(parquet)}]
    spec = surge_spec(bootstrap, topic, tmp_path, sinks, {"max_offsets_per_trigger": 500})
    psink, c1 = f"parquet {parquet}", tmp_path / "c1"

    def run(spec, checkpoint):
        job = StreamingJob(spec, spark, checkpoint=checkpoint, available_now=True, emit=None)
        totals = job.run()
        assert job.queries[0].lastProgress["sink"]["description"] == f"DaggerFileSink[{parquet}]"
        return totals

    first = run(spec, c1)
    expected = rows(closed(surge_windows(sent.events), sent.events))
    assert parquet_rows(spark, parquet) == expected
    assert first.rows_written == {psink: sum(expected.values())}
    assert first.dead_letters == sent.malformed > 10

    # The last batch with dead letters crashed after its folder's commit: its letters are
    # gone and the query replays it. The folder skips it; its dead letters come back whole.
    folders = sorted(dead.glob("run=*/batch=*"), key=lambda p: int(p.name.split("=")[1]))
    last = int(folders[-1].name.split("=")[1])
    _forget_after(c1, last)
    shutil.rmtree(folders[-1])
    replay = run(spec, c1)
    assert replay.rows_written == {psink: 0} and replay.rows_skipped[psink] > 0
    assert parquet_rows(spark, parquet) == expected
    assert len(spark.read.parquet(str(dead)).collect()) == sent.malformed

    # An edited dagger on a new checkpoint continues the folder; the old checkpoint cannot
    # then write new batches into it, and says so in one line.
    run(spec.model_copy(update={"sql": EDITED_SQL}), tmp_path / "c2")
    edited = rows(closed(surge_windows(sent.events, window_s=120), sent.events))
    assert parquet_rows(spark, parquet) == expected + edited
    publish_events(bootstrap, topic, 300, seed=4)
    with pytest.raises(JobFailedError, match="resumed after a newer run") as failed:
        run(spec, c1)
    assert "\n" not in str(failed.value) and "--checkpoint" in str(failed.value)
    assert parquet_rows(spark, parquet) == expected + edited
