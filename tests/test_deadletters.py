"""Dead letters to a Kafka topic (raw bytes + dlq.* headers), and the log sink's output."""

from __future__ import annotations

from readback import kafka_messages
from streaming import new_topic, publish_events, surge_spec

from workbench.job import StreamingJob


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
