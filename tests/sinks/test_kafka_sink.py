"""The Kafka sink's protobuf format: rows encoded as a registry message, keyed by columns."""

from __future__ import annotations

from pathlib import Path

from geo_reference import surge_windows
from readback import kafka_messages
from streaming import closed, new_topic, publish_events, surge_rows, surge_spec

from workbench.schemas import SchemaRegistry, default_registry
from workbench.streaming.job import StreamingJob

PROTOS = Path(__file__).parent.parent / "fixtures" / "protos" / "metrics"


def test_rows_as_protobuf_messages(spark, kafka_broker, tmp_path):
    bootstrap = kafka_broker.bootstrap
    topic, out_topic = new_topic(bootstrap, "proto-in"), new_topic(bootstrap, "proto-out")
    sent = publish_events(bootstrap, topic, 1500)
    sink = {
        "type": "kafka",
        "bootstrap_servers": bootstrap,
        "topic": out_topic,
        "format": "proto",
        "message": "metrics.SurgeMetric",
        "key_columns": ["tag_s2id", "tag_vehicle_type"],
    }
    spec = surge_spec(bootstrap, topic, tmp_path, [sink], schemas=[str(PROTOS)])
    StreamingJob(spec, spark, available_now=True, emit=None).run()

    cls = SchemaRegistry(*default_registry().sources, str(PROTOS)).message_class(
        "metrics.SurgeMetric"
    )
    messages = kafka_messages(bootstrap, out_topic)
    rows = []
    for m in messages:
        metric = cls.FromString(m.value())
        assert m.key().decode() == f"{metric.tag_s2id}|{metric.tag_vehicle_type}"
        rows.append(
            {
                "tag_s2id": metric.tag_s2id,
                "tag_vehicle_type": metric.tag_vehicle_type,
                "bookings": metric.bookings,
                "unique_customers": metric.unique_customers,
                "window_timestamp": metric.window_timestamp.ToMilliseconds(),
            }
        )
    expected = closed(surge_windows(sent.events), sent.events)
    assert len(expected) > 15
    assert surge_rows(rows) == expected
