"""Real company protos: google.protobuf.Struct, Value, ListValue, Any, wrappers, Duration and
recursive messages, decoded the same way by the JVM decoder (Kafka: jobs, samples, previews)
and by ``replay`` over JSON Lines recordings.

The fixture ``booking_log.proto`` has the shape of Dagger's own test booking message. Records
are encoded by Python's protobuf runtime from the message's protobuf JSON form; the expected
values are written here by hand.
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import yaml
from cli_runner import workbench
from google.protobuf import json_format

from workbench.schemas import SchemaRegistry
from workbench.schemas.sparktypes import decoder_options, spark_schema
from workbench.sources.protobuf import decoder

pytestmark = pytest.mark.unit

FOLDER = Path(__file__).resolve().parent.parent / "fixtures" / "protos" / "booking"
MESSAGE = "wbtest.booking.BookingLogMessage"

#: one booking in protobuf's JSON form; Struct keys sorted, as Python serializes them
BOOKING = {
    "service_type": "GO_FOOD",
    "order_number": "B-1001",
    "event_timestamp": "2026-11-21T08:00:00.123456Z",
    "customer_id": "cust-42",
    "profile_data": {
        "age": 31,
        "name": 'Budi "B" Santoso',
        "score": 1.5,
        "tags": ["vip", True, None],
        "tier": "gold",
        "wallet": {"balance": 120000, "currency": "IDR"},
    },
    "event_properties": {},
    "metadata": {"platform": "android"},
    "routes": [{"distance_in_kms": 2.5, "estimated_duration": "600s"}],
    "note": "ring the bell",
    "tags": [1, "two", {"three": 3}],
    "tip_amount": "5000",
    "promo_code": "",
    "is_scheduled": True,
    "seats": 0,
    "points": "18446744073709551615",
    "rating": 4.5,
    "extension": {
        "@type": "type.googleapis.com/wbtest.booking.PromoApplied",
        "code": "GAJIAN",
        "discount": "2000",
    },
    "wait_time": "90.250s",
    "category": {"name": "a", "parent": {"name": "b", "parent": {"name": "c", "parent": {}}}},
    "attributes": [{"k": 1}, {}],
    "flags": {"beta": True, "cohort": "x"},
    "offers": ["7", "0"],
}

PROFILE = (
    '{"age":31,"name":"Budi \\"B\\" Santoso","score":1.5,"tags":["vip",true,null],'
    '"tier":"gold","wallet":{"balance":120000,"currency":"IDR"}}'
)


@pytest.fixture(scope="module")
def booking() -> SchemaRegistry:
    return SchemaRegistry(FOLDER)


def encode(registry: SchemaRegistry, event: dict) -> bytes:
    message = registry.message_class(MESSAGE)()
    pool = registry.descriptor(MESSAGE).file.pool
    json_format.ParseDict(event, message, descriptor_pool=pool)
    return message.SerializeToString(deterministic=True)


def decode(spark, registry, events, **options):
    frame = spark.createDataFrame([(encode(registry, e),) for e in events], "value binary")
    decode_ = decoder(spark, registry, MESSAGE, **options)
    return [r.d for r in frame.select(decode_(frame["value"]).alias("d")).collect()]


def test_every_well_known_type_decodes_to_a_queryable_value(spark, booking):
    (row,) = decode(spark, booking, [BOOKING])
    assert row.error is None
    got = row.message
    assert got.profile_data == PROFILE
    assert got.event_properties == "{}" and got.key_values is None  # set but empty; unset
    assert got.note == '"ring the bell"' and got.tags == '[1,"two",{"three":3}]'
    assert (got.tip_amount, got.promo_code, got.is_scheduled) == (5000, "", True)
    assert (got.seats, got.surge_factor, got.points, got.rating) == (0, None, -1, 4.5)
    assert got.extension == (
        '{"@type":"type.googleapis.com/wbtest.booking.PromoApplied",'
        '"code":"GAJIAN","discount":2000}'
    )
    assert got.wait_time == timedelta(seconds=90.25)
    assert got.routes[0].estimated_duration == timedelta(minutes=10)
    assert got.attributes == ['{"k":1}', "{}"]
    assert got.flags == {"beta": "true", "cohort": '"x"'}
    assert got.offers == [7, 0]


def test_any_of_an_unknown_type_keeps_its_bytes(spark, booking):
    message = booking.message_class(MESSAGE)()
    message.extension.type_url = "type.googleapis.com/other.pkg.Unknown"
    message.extension.value = b"\x08\x01"
    frame = spark.createDataFrame([(message.SerializeToString(),)], "value binary")
    (row,) = frame.select(decoder(spark, booking, MESSAGE)(frame["value"]).alias("d")).collect()
    assert row.d.message.extension == (
        '{"@type":"type.googleapis.com/other.pkg.Unknown","value":"CAE="}'
    )


EDGES = [  # (a Value's content, the decoder's text)
    (float("nan"), '"NaN"'),
    (float("-inf"), '"-Infinity"'),
    (1e21, "1.0E21"),
    (2.0**53, "9.007199254740992E15"),
    (2.0**53 - 1, "9007199254740991"),
    (0.1, "0.1"),
    (-2.5e-7, "-2.5E-7"),
    ('q"\\ \n\t\u0001 é 𝄞', '"q\\"\\\\ \\n\\t\\u0001 é 𝄞"'),
    ({"b": 1, "a": [None, False], "@type": "t"}, '{"@type":"t","a":[null,false],"b":1}'),
]


def test_json_text_edge_cases_read_the_same_from_kafka_and_recordings(spark, booking):
    """The decoder's text for each Value, and the replay rewrite (workbench_json_text) of the
    same value as Python writes it in a recording, are the same text."""
    from workbench.schemas.jsontext import FUNCTION, JAVA_CLASS

    message = booking.message_class(MESSAGE)()
    for value, _ in EDGES:
        message.attributes.add().update({"v": value})
    (row,) = decode_records(spark, booking, [message.SerializeToString()])
    texts = list(row.message.attributes)
    assert texts == ['{"v":' + text + "}" for _, text in EDGES]
    spark.udf.registerJavaFunction(FUNCTION, JAVA_CLASS)
    recorded = [json.dumps({"v": value}) for value, _ in EDGES]  # NaN: Python writes NaN
    frame = spark.createDataFrame([(t,) for t in recorded], "t string")
    rewritten = [r[0] for r in frame.selectExpr(f"{FUNCTION}(t)").collect()]
    assert rewritten == texts


def decode_records(spark, registry, records):
    frame = spark.createDataFrame([(r,) for r in records], "value binary")
    decode_ = decoder(spark, registry, MESSAGE)
    return [r.d for r in frame.select(decode_(frame["value"]).alias("d")).collect()]


def _levels(category) -> int:
    depth = 0
    while category is not None:
        depth += 1
        category = getattr(category, "parent", None)  # a Row without the field: None
    return depth


@pytest.mark.parametrize(("depth", "levels"), [(None, 3), (1, 1), (2, 2), (5, 4)])
def test_recursive_messages_nest_to_max_recursion_depth(spark, booking, depth, levels):
    """Category holds itself: 3 levels by default (the 4th and deeper are left out)."""
    options = {} if depth is None else {"max_recursion_depth": depth}
    (row,) = decode(spark, booking, [BOOKING], **options)
    assert row.error is None
    assert _levels(row.message.category) == levels  # BOOKING's category has 4 levels
    schema = spark_schema(booking.descriptor(MESSAGE), decoder_options(depth or 3))
    assert row.message.category["name"] == "a" and "category" in schema.fieldNames()


def test_json_query_reads_struct_fields_and_durations_convert(spark, booking):
    from workbench.udfs.registry import UDFS

    UDFS.get("JsonQuery").register(spark)
    frame = spark.createDataFrame([(encode(booking, BOOKING),)], "value binary")
    decoded = frame.select(decoder(spark, booking, MESSAGE)(frame["value"]).alias("d"))
    decoded.select("d.message.*").createOrReplaceTempView("wkt_booking")
    row = spark.sql(
        "SELECT JsonQuery(profile_data, '$.tier') AS tier, "
        "JsonQuery(profile_data, '$.wallet.balance') AS balance, "
        "JsonQuery(extension, '$.code') AS code, JsonQuery(note, '$') AS note, "
        "unix_millis(timestamp_millis(0) + wait_time) AS wait_ms "  # as the README says
        "FROM wkt_booking"
    ).first()
    assert row.wait_ms == 90_250
    assert (row.tier, row.balance, row.code, row.note) == (
        '"gold"',
        "120000",
        '"GAJIAN"',
        '"ring the bell"',
    )


# --- through the CLI: validate and replay -------------------------------------------------

SQL = (
    "SELECT order_number, profile_data, JsonQuery(profile_data, '$.tier') AS tier, "
    "tags, note, tip_amount, promo_code, extension, attributes, flags, category "
    "FROM booking"
)


def spec_file(tmp_path: Path, **stream_keys) -> Path:
    spec = {
        "name": "wkt-booking",
        "streams": [
            {
                "table": "booking",
                "message": MESSAGE,
                "topics": ["booking-log"],
                **stream_keys,
            }
        ],
        "schemas": [str(FOLDER)],
        "sql": SQL,
    }
    path = tmp_path / f"spec-{uuid.uuid4().hex[:6]}.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


@pytest.mark.integration
def test_validate_accepts_a_message_with_struct_fields(tmp_path):
    shallow = spec_file(tmp_path, max_recursion_depth=1)
    for spec, category in [
        (spec_file(tmp_path), "category struct<name:string,parent:struct<name:string,parent:"),
        (shallow, "category struct<name:string>"),
    ]:
        result = workbench("validate", str(spec))
        assert result.returncode == 0, result.stderr
        assert "profile_data string, tier string" in result.stdout
        assert "tip_amount bigint" in result.stdout and "extension string" in result.stdout
        assert category in result.stdout


def test_a_bad_max_recursion_depth_is_one_clear_line(tmp_path):
    result = workbench("validate", str(spec_file(tmp_path, max_recursion_depth=11)))
    assert result.returncode != 0
    assert "streams[0].max_recursion_depth" in result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) <= 2


def test_replay_reads_json_fields_as_the_decoder_does(spark, booking, tmp_path):
    """A recording holds a Struct as a JSON object (spaced, escaped as any JSON writer
    likes) or as a string of JSON text; replay gives the decoder's text for each."""
    (decoded,) = decode(spark, booking, [BOOKING])
    recording = tmp_path / "booking.jsonl"
    extension = {"code": "GAJIAN", "discount": 2000, "@type": BOOKING["extension"]["@type"]}
    as_objects = {**BOOKING, "tip_amount": 5000, "offers": [7, 0], "points": -1}
    as_objects["extension"] = extension  # "@type" last: replay writes it first
    as_text = {**as_objects, "order_number": "B-1002", "profile_data": PROFILE, "note": "x y"}
    recording.write_text(
        json.dumps(as_objects, indent=None, ensure_ascii=True) + "\n" + json.dumps(as_text) + "\n"
    )
    out = tmp_path / "out.jsonl"
    result = workbench(
        "replay", str(spec_file(tmp_path)), "--table", f"booking={recording}", "--out", str(out)
    )
    assert result.returncode == 0, result.stderr
    first, second = (json.loads(line) for line in out.read_text().splitlines())
    message = decoded.message
    for row in (first, second):
        assert row["profile_data"] == message.profile_data == PROFILE
        assert row["tier"] == '"gold"'
        assert row["tags"] == message.tags and row["extension"] == message.extension
        assert row["attributes"] == message.attributes
        assert row["flags"] == message.flags
        assert (row["tip_amount"], row["promo_code"]) == (5000, "")
    assert first["note"] == message.note and second["note"] == '"x y"'


def publish(bootstrap: str, registry: SchemaRegistry, count: int) -> str:
    """``count`` bookings (B-0, B-1, ...) on a new topic; returns the topic."""
    from confluent_kafka import Producer

    from workbench.kafka.admin import create_topics

    topic = f"wkt-{uuid.uuid4().hex[:6]}"
    create_topics(bootstrap, {topic: 1})
    producer = Producer({"bootstrap.servers": bootstrap})
    start = datetime(2026, 11, 21, 8, 0, tzinfo=UTC)
    for i in range(count):
        stamp = (start + timedelta(seconds=i)).isoformat().replace("+00:00", "Z")
        event = {**BOOKING, "order_number": f"B-{i}", "event_timestamp": stamp}
        producer.produce(topic, encode(registry, event))
    producer.flush()
    return topic


def test_samples_decode_struct_fields_at_the_streams_depth(spark, kafka_broker, booking):
    """Samples (and so notebook previews) share the job's decode step."""
    from workbench.lab.sampling import sample
    from workbench.spec import StreamSpec

    topic = publish(kafka_broker.bootstrap, booking, 2)
    keys = {"table": "booking", "message": MESSAGE, "topics": [topic]}
    for depth, levels in ((1, 1), (3, 3)):
        stream = StreamSpec(
            **keys, bootstrap_servers=kafka_broker.bootstrap, max_recursion_depth=depth
        )
        taken = sample(stream, last=5, schemas=[str(FOLDER)])
        rows = taken.decoded(spark).rows.orderBy("order_number").collect()
        assert [r.order_number for r in rows] == ["B-0", "B-1"]
        assert {(r.profile_data, r.tip_amount, r.extension) for r in rows} == {
            (
                PROFILE,
                5000,
                json.dumps(
                    {"@type": BOOKING["extension"]["@type"], "code": "GAJIAN", "discount": 2000},
                    separators=(",", ":"),
                ),
            )
        }
        assert _levels(rows[0].category) == levels


def test_the_streaming_job_decodes_struct_fields(spark, kafka_broker, booking, tmp_path):
    """The JVM decoder on the job's path (Kafka source), JsonQuery in the job's SQL."""
    from workbench.spec import parse
    from workbench.streaming.job import StreamingJob

    topic = publish(kafka_broker.bootstrap, booking, 3)
    out = tmp_path / "out"
    spec = parse(
        {
            "name": "wkt-job",
            "streams": [
                {
                    "table": "booking",
                    "message": MESSAGE,
                    "bootstrap_servers": kafka_broker.bootstrap,
                    "topics": [topic],
                    "starting_offsets": "earliest",
                    "max_recursion_depth": 2,
                }
            ],
            "schemas": [str(FOLDER)],
            "sql": "SELECT order_number, JsonQuery(profile_data, '$.wallet.currency') AS cur, "
            "profile_data, tip_amount, category, event_timestamp FROM booking",
            "sinks": [{"type": "parquet", "path": str(out), "time_column": "event_timestamp"}],
            "checkpoint": str(tmp_path / "checkpoint"),
            "dead_letter": {"path": str(tmp_path / "dead")},
        }
    )
    StreamingJob(spec, spark, available_now=True, emit=None).run()
    rows = sorted(spark.read.parquet(str(out)).collect(), key=lambda r: r.order_number)
    assert [r.order_number for r in rows] == ["B-0", "B-1", "B-2"]
    assert {(r.cur, r.profile_data, r.tip_amount) for r in rows} == {('"IDR"', PROFILE, 5000)}
    assert _levels(rows[0].category) == 2
