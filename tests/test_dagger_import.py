"""Importing Dagger .properties files: every key that matters lands in the spec."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from workbench import spec as spec_module
from workbench.dagger_import.convert import import_job, import_properties
from workbench.exceptions import SpecError, UnsupportedDaggerError

pytestmark = pytest.mark.unit

FIXTURES = Path(__file__).parent / "fixtures" / "dagger"


def test_influx_job_maps_streams_sql_watermark_and_sink():
    spec = import_properties(FIXTURES / "booking-s2.properties")
    assert spec.name == "booking-s2-aggregation"
    assert spec.sql.startswith("SELECT S2Id(pickup_lat, pickup_long, 13) AS tag_s2id")
    assert "FROM `data_stream` GROUP BY TUMBLE" in spec.sql  # continuation lines joined
    assert (spec.watermark_delay_ms, spec.trigger_interval_ms) == (1000, 10000)
    stream = spec.streams[0]
    assert stream.table == "data_stream"
    assert stream.message == "esb.booking.BookingLogMessage"  # from the Java class
    assert stream.event_timestamp_field == "event_timestamp"  # from field number 16
    assert stream.topic_pattern == "booking-log|booking-log-v2"
    assert (stream.bootstrap_servers, stream.group_id, stream.cluster) == (
        "localhost:9092",
        "dummy-consumer-group",
        "local-kafka-stream",
    )
    assert stream.starting_offsets == "latest"
    assert stream.kafka_options == {
        "kafka.security.protocol": "SASL_PLAINTEXT",
        "kafka.sasl.mechanism": "SCRAM-SHA-512",
    }
    sink = spec.sinks[0]
    assert (sink.type, sink.api, sink.database, sink.measurement) == (
        "influx",
        1,
        "DAGGER",
        "concurrent_test",
    )
    assert (sink.username, sink.password, sink.retention_policy) == ("root", "root", "autogen")
    assert (sink.batch_size, sink.flush_interval_ms) == (100, 1000)


def test_imported_spec_round_trips_through_yaml(tmp_path):
    spec = import_properties(FIXTURES / "booking-s2.properties")
    path = tmp_path / "spec.yaml"
    path.write_text(spec.to_yaml())
    assert spec_module.load(path) == spec


def test_kafka_json_sink_and_job_name_slug():
    spec = import_properties(FIXTURES / "payments-kafka.properties")
    assert spec.name == "payments-to-kafka"
    sink = spec.sinks[0]
    assert (sink.type, sink.topic, sink.format, sink.bootstrap_servers) == (
        "kafka",
        "payments-out",
        "json",
        "localhost:9092",
    )
    assert sink.kafka_options == {"kafka.linger.ms": "5"}


def _import_changed(tmp_path: Path, old: str, new: str) -> SpecError:
    text = (FIXTURES / "payments-kafka.properties").read_text()
    bad = tmp_path / "bad.properties"
    bad.write_text(text.replace(old, new))
    with pytest.raises(SpecError) as info:
        import_properties(bad)
    return info.value


def test_unknown_proto_class_names_the_known_messages(tmp_path):
    err = _import_changed(tmp_path, "esb.payment.PaymentMessage", "com.acme.Nope")
    assert "Unknown message 'com.acme.Nope'" in str(err)
    assert "esb.payment.PaymentMessage" in str(err)


def test_unknown_timestamp_field_number_lists_fields(tmp_path):
    err = _import_changed(
        tmp_path,
        '"INPUT_SCHEMA_EVENT_TIMESTAMP_FIELD_INDEX":"8"',
        '"INPUT_SCHEMA_EVENT_TIMESTAMP_FIELD_INDEX":"99"',
    )
    assert "Unknown field number '99'" in str(err)
    assert "8 (event_timestamp)" in str(err)


def test_missing_sql_is_named(tmp_path):
    text = (FIXTURES / "payments-kafka.properties").read_text()
    bad = tmp_path / "bad.properties"
    bad.write_text("\n".join(x for x in text.splitlines() if not x.startswith("FLINK_SQL")))
    with pytest.raises(SpecError, match="FLINK_SQL_QUERY"):
        import_properties(bad)


def test_deduplication_transformer_becomes_deduplicate():
    result = import_job(FIXTURES / "dedup.properties")
    dedup = result.spec.deduplicate
    assert dedup is not None
    assert (dedup.keys, dedup.within_ms) == (["order_number"], 3_600_000)
    assert result.unsupported == []
    # every key left out is named, with why
    named = {d.key for d in result.dropped}
    assert {
        "PROCESSOR_PREPROCESSOR_CONFIG",
        "SCHEMA_REGISTRY_STENCIL_ENABLE",
        "SCHEMA_REGISTRY_STENCIL_URLS",
        "METRIC_TELEMETRY_ENABLE",
        "FUNCTION_FACTORY_CLASSES",
        "PYTHON_UDF_ENABLE",
        "STREAMS[0].SOURCE_KAFKA_CONSUMER_CONFIG_AUTO_COMMIT_ENABLE",
        "STREAMS[0].SOURCE_DETAILS",
    } == named


def test_the_imported_deduplicate_round_trips(tmp_path):
    spec = import_properties(FIXTURES / "dedup.properties")
    path = tmp_path / "spec.yaml"
    path.write_text(spec.to_yaml())
    assert "deduplicate:\n  keys:\n  - order_number\n  within: 3600s" in path.read_text()
    assert spec_module.load(path) == spec


def test_enrichment_fails_the_import_unless_ignored(tmp_path):
    text = (FIXTURES / "dedup.properties").read_text()
    bad = tmp_path / "enrich.properties"
    bad.write_text(
        text.replace(
            '"transformers"', '"external_source": {"es": [{"host": "es"}]}, "transformers"'
        )
        + "PROCESSOR_LONGBOW_GCP_PROJECT_ID=p\n"
    )
    with pytest.raises(UnsupportedDaggerError) as info:
        import_properties(bad)
    message = str(info.value)
    assert "2 key(s) cannot be carried over" in message
    assert "PROCESSOR_POSTPROCESSOR_CONFIG.external_source.es: Elasticsearch enrichment" in message
    assert "PROCESSOR_LONGBOW_GCP_PROJECT_ID: Longbow" in message
    assert "--ignore-unsupported" in message
    spec = import_properties(bad, ignore_unsupported=True)
    assert spec.deduplicate is not None  # what can be carried still is


def test_the_cli_fails_on_unsupported_keys_and_lists_them_when_ignored(tmp_path):
    text = (FIXTURES / "dedup.properties").read_text()
    bad = tmp_path / "enrich.properties"
    bad.write_text(
        text.replace('"transformers"', '"external_source": {"http": [{}]}, "transformers"')
    )
    out = tmp_path / "spec.yaml"
    failed = _cli("import-dagger", str(bad), "--out", str(out))
    assert failed.returncode == 1 and not out.exists()
    assert "external_source.http: HTTP enrichment is not supported" in failed.stderr
    ok = _cli("import-dagger", str(bad), "--out", str(out), "--ignore-unsupported")
    assert ok.returncode == 0, ok.stderr
    assert (
        "warning: not carried over: PROCESSOR_POSTPROCESSOR_CONFIG.external_source.http: "
        "HTTP enrichment is not supported" in ok.stderr
    )
    assert "note: not carried over: METRIC_TELEMETRY_ENABLE" in ok.stderr
    assert "deduplicate:" in out.read_text()


def test_an_event_time_field_that_is_not_a_time_is_refused(tmp_path):
    err = _import_changed(
        tmp_path,
        '"INPUT_SCHEMA_EVENT_TIMESTAMP_FIELD_INDEX":"8"',
        '"INPUT_SCHEMA_EVENT_TIMESTAMP_FIELD_INDEX":"1"',
    )
    assert err.key == "STREAMS[0].INPUT_SCHEMA_EVENT_TIMESTAMP_FIELD_INDEX"
    assert "the event time must be a google.protobuf.Timestamp or int64" in str(err)


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "workbench.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_daggers_default_config_and_a_dedup_job_import_validate_and_run(kafka_broker, tmp_path):
    """As a team migrating met it: a job with Dagger's own default FUNCTION_FACTORY_CLASSES
    (``FunctionFactory``) and a DeDuplicationTransformer over a SQL that does not select
    the event time. ``import-dagger`` writes a spec without an error; it validates, runs,
    and writes the rows the Dagger job writes: the first row of each order number, with
    the internal source's columns."""
    import json
    from collections import Counter

    from confluent_kafka import Consumer
    from streaming import new_topic, publish_events

    source = new_topic(kafka_broker.bootstrap, "dagger-dedup")
    out = new_topic(kafka_broker.bootstrap, "dagger-dedup-out", partitions=1)
    first = publish_events(kafka_broker.bootstrap, source, 120, seed=21)
    publish_events(kafka_broker.bootstrap, source, 120, seed=21)  # every booking twice
    text = (FIXTURES / "dedup.properties").read_text()
    text = text.replace(
        "SELECT order_number, customer_id, rowtime FROM", "SELECT order_number, customer_id FROM"
    )
    text = text.replace(
        "com.gotocompany.dagger.functions.udfs.factories.FunctionFactory", "FunctionFactory"
    )
    text = text.replace('"booking-log"', json.dumps(source)).replace(
        "localhost:9092", kafka_broker.bootstrap
    )
    text = text.replace('"latest"', '"earliest"').replace("SINK_TYPE=log", "SINK_TYPE=kafka")
    text += (
        f"SINK_KAFKA_BROKERS={kafka_broker.bootstrap}\nSINK_KAFKA_TOPIC={out}\n"
        "SINK_KAFKA_DATA_TYPE=JSON\n"
    )  # fmt: skip
    props, spec = tmp_path / "dedup.properties", tmp_path / "spec.yaml"
    props.write_text(text)

    imported = _cli("import-dagger", str(props), "--out", str(spec))
    assert imported.returncode == 0, imported.stderr
    assert "warning" not in imported.stderr, imported.stderr
    checked = _cli("validate", str(spec))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    ran = subprocess.run(
        [sys.executable, "-m", "workbench.cli.main", "run", str(spec), "--available-now",
         "--checkpoint", str(tmp_path / "checkpoint")],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr[-3000:]

    consumer = Consumer({"bootstrap.servers": kafka_broker.bootstrap, "group.id": out,
                         "auto.offset.reset": "earliest"})  # fmt: skip
    consumer.subscribe([out])
    rows = []
    try:
        while (got := consumer.poll(10)) is not None:
            rows.append(json.loads(got.value()))
    finally:
        consumer.close()
    dagger = {}  # Dagger's transformer: the first row of each key passes
    for event in first.events:
        dagger.setdefault(event["order_number"], event["customer_id"])
    assert Counter((r["order_number"], r["customer_id"]) for r in rows) == Counter(dagger.items())
    assert {tuple(sorted(r)) for r in rows} == {("customer_id", "order_number")}


def test_a_dedup_over_a_group_by_without_the_event_time_is_refused(tmp_path):
    """A query the rowtime cannot be added to: the import fails for it, and with
    ``--ignore-unsupported`` the spec has no ``deduplicate`` (so it still validates)."""
    text = (
        (FIXTURES / "dedup.properties")
        .read_text()
        .replace(
            "SELECT order_number, customer_id, rowtime FROM `data_stream_0`",
            "SELECT order_number, COUNT(*) AS n FROM `data_stream_0` GROUP BY order_number",
        )
    )
    props = tmp_path / "grouped.properties"
    props.write_text(text)
    with pytest.raises(UnsupportedDaggerError, match="cannot be added to this SELECT"):
        import_properties(props)
    assert import_properties(props, ignore_unsupported=True).deduplicate is None
