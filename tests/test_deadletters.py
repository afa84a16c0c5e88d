"""Dead letters to a Kafka topic (raw bytes + dlq.* headers), floods of them past the taps' budget
to either dead-letter type, and the log sink's output."""

from __future__ import annotations

from collections import Counter

import pytest
from geo_reference import surge_windows
from readback import kafka_messages
from streaming import closed, new_topic, publish_events, surge_rows, surge_spec

from workbench.sinks.dead_parquet import _arrow_schema
from workbench.streaming.deadletters import COLUMNS
from workbench.streaming.job import StreamingJob

pytestmark = pytest.mark.unit


def test_dead_letters_to_kafka_keep_bytes_offsets_and_errors(spark, kafka_broker, tmp_path):
    bootstrap = kafka_broker.bootstrap
    topic = new_topic(bootstrap, "dlq-in")
    dlq = f"{topic}-dead"
    sent = publish_events(bootstrap, topic, 1500, malformed=0.03)
    spec = surge_spec(
        bootstrap,
        topic,
        tmp_path,
        [{"type": "log", "rows": 3}],
        dead_letter={"type": "kafka", "topic": dlq, "bootstrap_servers": bootstrap},
    )
    totals = StreamingJob(spec, spark, available_now=True, emit=None).run()

    letters = kafka_messages(bootstrap, dlq)
    assert len(letters) == sent.malformed == totals.dead_letters > 20
    source = {(m.partition(), m.offset()): m.value() for m in kafka_messages(bootstrap, topic)}
    for letter in letters:
        headers = {k: v.decode() for k, v in letter.headers()}
        assert headers["dlq.topic"] == topic and headers["dlq.table"] == "booking"
        assert "esb.booking.BookingLogMessage" in headers["dlq.error"]
        origin = (int(headers["dlq.partition"]), int(headers["dlq.offset"]))
        assert source[origin] == letter.value()


def test_a_new_checkpoint_writes_no_letter_twice_to_the_kafka_topic(spark, kafka_broker, tmp_path):
    """An edit or rollback starts a new checkpoint that reads the topic again: the letters the
    topic holds (by their dlq.* headers) are not written again, only the new records'."""
    bootstrap = kafka_broker.bootstrap
    topic = new_topic(bootstrap, "dlq-again")
    dead = {"type": "kafka", "topic": f"{topic}-dead", "bootstrap_servers": bootstrap}
    spec = surge_spec(bootstrap, topic, tmp_path, [{"type": "log", "rows": 1}], dead_letter=dead)

    def run(checkpoint) -> int:
        at = tmp_path / checkpoint
        job = StreamingJob(spec, spark, checkpoint=at, available_now=True, emit=None)
        return job.run().dead_letters

    first = publish_events(bootstrap, topic, 1000, malformed=0.04)
    assert run("c1") == first.malformed > 20
    second = publish_events(bootstrap, topic, 500, seed=3, malformed=0.04)
    assert run("c2") == second.malformed  # from the earliest offsets again
    places = Counter(
        (h["dlq.topic"], h["dlq.partition"], h["dlq.offset"])
        for h in (
            dict((k, v.decode()) for k, v in m.headers())
            for m in kafka_messages(bootstrap, dead["topic"])
        )
    )
    assert set(places.values()) == {1}, [p for p, n in places.items() if n > 1]
    assert len(places) == first.malformed + second.malformed


def test_log_sink_prints_each_batch(spark, kafka_broker, tmp_path, capsys):
    bootstrap = kafka_broker.bootstrap
    topic = new_topic(bootstrap, "log-in")
    publish_events(bootstrap, topic, 1500)
    spec = surge_spec(bootstrap, topic, tmp_path, [{"type": "log", "rows": 2}], name="logged")
    totals = StreamingJob(spec, spark, available_now=True, emit=None).run()
    out = capsys.readouterr().out
    written = totals.rows_written["log"]
    assert written > 10
    assert f"[logged] batch 0: {written} rows" in out or "[logged] batch 1:" in out
    assert "tag_s2id" in out and "only showing top 2 rows" in out


@pytest.mark.parametrize("dead", ["parquet", "kafka"])
def test_a_flood_of_undecodable_records_is_written_whole_past_the_taps_budget(
    spark, kafka_broker, tmp_path, monkeypatch, dead
):
    """Half the records undecodable and taps that hold a few letters: the rest are read again
    from Kafka where they were spilled, and every dead letter is written once, with its bytes,
    by either dead-letter type, while the results stay exact."""
    from workbench.sources import kafka, letters

    monkeypatch.setattr(letters, "HELD_BYTES", 2_000)  # 3 or 4 letters; a flood spills past it
    spans = []
    again = kafka.letters_again
    monkeypatch.setattr(
        kafka, "letters_again", lambda *a, **k: spans.append(a[3]) or again(*a, **k)
    )
    bootstrap = kafka_broker.bootstrap
    topic = new_topic(bootstrap, "flood-in")
    sent = publish_events(bootstrap, topic, 1200, malformed=0.5)
    assert sent.malformed > 500
    out = tmp_path / "parquet"
    dead_letter = (
        {"type": "kafka", "topic": f"{topic}-dead", "bootstrap_servers": bootstrap}
        if dead == "kafka"
        else {"type": "parquet", "path": str(tmp_path / "dead-letters")}
    )
    spec = surge_spec(
        bootstrap,
        topic,
        tmp_path,
        [{"type": "parquet", "path": str(out)}],
        stream_options={"max_offsets_per_trigger": 500},
        dead_letter=dead_letter,
    )
    totals = StreamingJob(spec, spark, available_now=True, emit=None).run()

    assert len(spans) >= 2  # spilled in more than one micro-batch
    source = {(m.partition(), m.offset()): m.value() for m in kafka_messages(bootstrap, topic)}
    if dead == "kafka":
        found = [
            (dict((k, v.decode()) for k, v in m.headers()), m.value())
            for m in kafka_messages(bootstrap, f"{topic}-dead")
        ]
        places = [(int(h["dlq.partition"]), int(h["dlq.offset"])) for h, _ in found]
        values, errors = [v for _, v in found], [h["dlq.error"] for h, _ in found]
    else:
        rows = spark.read.parquet(str(tmp_path / "dead-letters")).collect()
        assert any(p.name.startswith("part-r") for p in (tmp_path / "dead-letters").rglob("*"))
        places = [(r.partition, r.offset) for r in rows]
        values, errors = [bytes(r.value) for r in rows], [r.error for r in rows]
    assert len(places) == len(set(places)) == sent.malformed == totals.dead_letters
    assert all(source[p] == v for p, v in zip(places, values, strict=True))
    assert all("esb.booking.BookingLogMessage" in e for e in errors)
    parquet = spark.read.parquet(str(out)).collect()
    expected = closed(surge_windows(sent.events), sent.events)
    assert surge_rows(r.asDict() for r in parquet) == expected


def test_the_dead_letter_parquet_schema_has_a_letters_fields_in_order():
    """Held letters (dicts) and spilled ones (Spark's columns) are written with this schema."""
    assert _arrow_schema().names == list(COLUMNS)
