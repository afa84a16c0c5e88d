"""The JVM protobuf decoder against Python's protobuf runtime (upb).

Every record is decoded twice: in Spark by ``workbench.sources.protobuf.decoder`` and here,
by parsing it with the generated Python class and converting the message with
:func:`expected_row`, written from the rules (Spark's ``from_protobuf`` types with the
decoder's options: wrappers unwrapped, Struct/Value/ListValue/Any as JSON text; the
``emit_defaults`` rule), not from the Java code. Rows must be equal, timestamps to the
microsecond. Records Python cannot parse must come back as errors. Inputs: the four demo
messages from the generator, random messages of a fixture proto that has every field shape,
hand-made wire encodings (packed and unpacked, merged messages, unknown fields, ...) and
mutations of valid records.
"""

from __future__ import annotations

import base64
import json
import math
import random
import struct
from pathlib import Path
from typing import Any

import pytest
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import DecodeError, Message
from google.protobuf.unknown_fields import UnknownFieldSet
from pyspark.sql import Row
from pyspark.sql import types as T

from workbench.dev.generator import MESSAGES, Generator, encode, malformed_bytes
from workbench.exceptions import UnknownNameError
from workbench.schemas.compiler import compile_protos
from workbench.schemas.registry import SchemaRegistry, default_registry
from workbench.schemas.sparktypes import spark_schema
from workbench.sources.protobuf import decoded_type, decoder, function_name

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "protos" / "decode"
EVERYTHING, READING = "wbtest.Everything", "wbtest.legacy.Reading"
SEED = 20240501
INT32 = (FieldDescriptor.TYPE_INT32, FieldDescriptor.TYPE_SINT32, FieldDescriptor.TYPE_SFIXED32)
UINT32 = (FieldDescriptor.TYPE_UINT32, FieldDescriptor.TYPE_FIXED32)
INT64 = (FieldDescriptor.TYPE_INT64, FieldDescriptor.TYPE_SINT64, FieldDescriptor.TYPE_SFIXED64)
UINT64 = (FieldDescriptor.TYPE_UINT64, FieldDescriptor.TYPE_FIXED64)


@pytest.fixture(scope="module")
def demo() -> SchemaRegistry:
    return default_registry()


@pytest.fixture(scope="module")
def fixture_registry() -> SchemaRegistry:
    return SchemaRegistry(compile_protos([FIXTURES]))


# --- the reference: a message as the row from_protobuf's type says ---------------------


def expected_row(message: Message, emit_defaults: bool) -> dict[str, Any]:
    """``message`` as a dict of its columns (fields with no Spark column left out)."""
    present = {fd.name for fd, _ in message.ListFields()}
    return {
        fd.name: _column(message, fd, fd.name in present, emit_defaults)
        for fd in message.DESCRIPTOR.fields
        if _has_column(fd)
    }


def _has_column(fd: FieldDescriptor) -> bool:
    """Spark drops message fields whose type has no columns (google.protobuf.Empty)."""
    if fd.message_type is None or fd.message_type.full_name in (*JSON_TYPES, ANY, *WRAPPERS):
        return True
    return any(_has_column(f) for f in fd.message_type.fields)


JSON_TYPES = ("google.protobuf.Struct", "google.protobuf.Value", "google.protobuf.ListValue")
ANY = "google.protobuf.Any"
WRAPPERS = {
    f"google.protobuf.{kind}Value"
    for kind in ("Double", "Float", "Int64", "UInt64", "Int32", "UInt32", "Bool", "String", "Bytes")
}


class JsonText(str):
    """Expected JSON text: equal to any text holding the same JSON value (key order and number
    spelling aside: ``3.4E38`` is ``3.4e+38``)."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, str) and json.loads(self) == json.loads(other)

    __hash__ = str.__hash__


def json_value(message: Message) -> Any:
    """A Struct, Value or ListValue as the Python value of its JSON."""
    name = message.DESCRIPTOR.full_name
    if name == "google.protobuf.Struct":
        return {k: json_value(v) for k, v in message.fields.items()}
    if name == "google.protobuf.ListValue":
        return [json_value(v) for v in message.values]
    kind = message.WhichOneof("kind")
    if kind in ("struct_value", "list_value"):
        return json_value(getattr(message, kind))
    if kind == "number_value" and not math.isfinite(message.number_value):
        return str(message.number_value).replace("inf", "Infinity").replace("nan", "NaN")
    return None if kind in (None, "null_value") else getattr(message, kind)


def any_json(message: Message) -> dict[str, Any]:
    """An Any whose type is not in the registry: its type URL and base64 bytes."""
    packed = {"value": base64.b64encode(message.value).decode()}
    if not message.type_url:
        return packed if message.value else {}
    return {"@type": message.type_url, **packed}


def _column(message: Message, fd: FieldDescriptor, present: bool, emit_defaults: bool) -> Any:
    value = getattr(message, fd.name)
    if not present:  # unset; for fields without presence: equal to the default
        if _is_map(fd):
            return {}
        if fd.is_repeated:
            return []
        if fd.has_default_value or (emit_defaults and not fd.has_presence):
            return _value(fd, fd.default_value, emit_defaults)
        return None
    if _is_map(fd):
        key_fd, value_fd = (
            fd.message_type.fields_by_name["key"],
            fd.message_type.fields_by_name["value"],
        )
        return {
            _value(key_fd, k, emit_defaults): _value(value_fd, v, emit_defaults)
            for k, v in value.items()
        }
    if fd.is_repeated:
        return [_value(fd, v, emit_defaults) for v in value]
    return _value(fd, value, emit_defaults)


def _value(fd: FieldDescriptor, value: Any, emit_defaults: bool) -> Any:
    if fd.message_type is not None and fd.message_type.full_name in JSON_TYPES:
        return JsonText(json.dumps(json_value(value)))
    if fd.message_type is not None and fd.message_type.full_name == ANY:
        return JsonText(json.dumps(any_json(value)))
    if fd.message_type is not None and fd.message_type.full_name in WRAPPERS:
        return _value(fd.message_type.fields_by_name["value"], value.value, emit_defaults)
    if fd.message_type is not None:
        time = _time_type(fd.message_type)
        if time is not None:
            low, high = TIME_RANGE[fd.message_type.name]
            if not low <= value.seconds <= high:
                raise OutOfRange(fd.full_name)
            micros = value.seconds * 1_000_000 + math.trunc(value.nanos / 1000)
            return time.fromInternal(micros)
        return expected_row(value, emit_defaults)
    if fd.enum_type is not None:
        known = fd.enum_type.values_by_number.get(value)
        return known.name if known else f"UNKNOWN_ENUM_VALUE_{fd.enum_type.name}_{value}"
    if fd.type in UINT32:  # Spark's INT holds the bits
        return value - (1 << 32) if value >= 1 << 31 else value
    if fd.type in UINT64:  # and its BIGINT
        return value - (1 << 64) if value >= 1 << 63 else value
    if isinstance(value, bytes) and fd.type == FieldDescriptor.TYPE_STRING:
        return value.decode(errors="replace")  # invalid UTF-8 (proto2): as protobuf-java reads it
    return value


#: Valid seconds of a Timestamp (years 1 to 9999) and a Duration (10000 years either way);
#: values outside are errors (they would overflow Spark's microseconds).
TIME_RANGE = {
    "Timestamp": (-62_135_596_800, 253_402_300_799),
    "Duration": (-315_576_000_000, 315_576_000_000),
}


class OutOfRange(ValueError):
    """A Timestamp or Duration outside :data:`TIME_RANGE`."""


def _time_type(message: Descriptor) -> T.DataType | None:
    if [f.name for f in message.fields] != ["seconds", "nanos"]:
        return None
    return {"Timestamp": T.TimestampType(), "Duration": T.DayTimeIntervalType()}.get(message.name)


def _is_map(fd: FieldDescriptor) -> bool:
    return fd.message_type is not None and fd.message_type.GetOptions().map_entry


def _upb_moved_map_entries(message: Message) -> bool:
    """Whether upb kept a map entry as an unknown field (it does when the entry holds an
    unknown or mis-typed field); protobuf-java, which Spark parses with, keeps the entry
    (default key/value for what is missing), and so does the decoder."""
    maps = {fd.number for fd in message.DESCRIPTOR.fields if _is_map(fd)}
    if any(f.field_number in maps for f in UnknownFieldSet(message)):
        return True
    for fd, value in message.ListFields():
        if fd.message_type is None or _is_map(fd):
            continue
        if any(_upb_moved_map_entries(v) for v in (value if fd.is_repeated else [value])):
            return True
    return False


UPB_DIFFERS = "upb differs"


def reference(registry: SchemaRegistry, message: str, record: bytes | None, emit: bool) -> Any:
    """(row dict, None), or (None, an error marker) when Python cannot read the record, or
    (None, UPB_DIFFERS) when upb and protobuf-java read it differently."""
    if record is None:
        return None, "empty record"
    try:
        parsed = registry.message_class(message).FromString(record)
    except DecodeError:
        return None, "cannot decode"
    if not parsed.IsInitialized():  # upb parses it; protobuf-java (and Spark) refuse
        return None, "cannot decode"
    if _upb_moved_map_entries(parsed):
        return None, UPB_DIFFERS
    try:
        return expected_row(parsed, emit), None
    except OutOfRange:
        return None, "cannot decode"


# --- running the decoder ----------------------------------------------------------------


def decode(spark, registry, message, records, **options) -> list[Row]:
    """Each record's decoded struct, in order."""
    frame = spark.createDataFrame(list(enumerate(records)), "i int, value binary")
    decoded = decoder(spark, registry, message, **options)
    rows = frame.select("i", decoded(frame["value"]).alias("d")).collect()
    return [row.d for row in sorted(rows, key=lambda r: r.i)]


def assert_matches_python(spark, registry, message, records, emit_defaults=True) -> int:
    """Checks each record against :func:`reference`; returns how many were left out because
    upb and protobuf-java disagree on them."""
    rows = decode(spark, registry, message, records, emit_defaults=emit_defaults)
    skipped = 0
    for index, (record, row) in enumerate(zip(records, rows, strict=True)):
        want, error = reference(registry, message, record, emit_defaults)
        got = row.message.asDict(recursive=True) if row.message is not None else None
        where = f"record {index}: {record!r}"
        if error == UPB_DIFFERS:
            skipped += 1
        elif error is None:
            assert row.error is None, where
            assert got == want, where
        else:
            assert got is None, where
            assert row.error is not None and row.error.startswith(error), where
    return skipped


# --- the demo messages ------------------------------------------------------------------


@pytest.mark.parametrize("emit_defaults", [True, False])
@pytest.mark.parametrize("kind", sorted(MESSAGES))
def test_demo_messages_decode_like_python(spark, demo, kind, emit_defaults):
    records = Generator(seed=SEED).encoded(kind, 400, demo)
    assert_matches_python(spark, demo, MESSAGES[kind], records, emit_defaults)


@pytest.mark.parametrize("kind", sorted(MESSAGES))
def test_decoded_type_is_from_protobufs(spark, demo, kind):
    message = MESSAGES[kind]
    frame = spark.createDataFrame([(b"",)], "value binary")
    decoded = frame.select(decoder(spark, demo, message)(frame["value"]).alias("d"))
    assert decoded.schema["d"].dataType == decoded_type(demo, message)
    assert decoded_type(demo, message)["message"].dataType == spark_schema(demo.descriptor(message))


def test_timestamps_keep_microseconds(spark, demo):
    event = Generator(seed=SEED).take("api_logs", 1)[0]
    event["event_timestamp"] = "2024-05-01T08:00:00.123456789Z"
    (row,) = decode(spark, demo, MESSAGES["api_logs"], [encode(event, MESSAGES["api_logs"])])
    stamp = row.message.event_timestamp
    assert stamp == T.TimestampType().fromInternal(1714550400_123456)


def test_malformed_records_are_errors_naming_the_message(spark, demo):
    rng = random.Random(SEED)
    records = [malformed_bytes(rng) for _ in range(60)]
    message = MESSAGES["bookings"]
    for row in decode(spark, demo, message, records):
        assert row.message is None
        assert row.error.startswith(f"cannot decode {message}: ")


def test_missing_event_time_is_an_error(spark, demo):
    message = MESSAGES["payments"]
    event = Generator(seed=SEED).take("payments", 1)[0]
    unset = {k: v for k, v in event.items() if k != "event_timestamp"}
    epoch = {**event, "event_timestamp": "1970-01-01T00:00:00Z"}
    records = [encode(e, message) for e in (event, unset, epoch)] + [b""]
    rows = decode(spark, demo, message, records, required_field="event_timestamp")
    assert rows[0].error is None and rows[0].message.event_timestamp is not None
    for row in rows[1:]:
        assert row == Row(message=None, error="missing event time field 'event_timestamp'")
    unchecked = decode(spark, demo, message, records[1:2])
    assert unchecked[0].error is None and unchecked[0].message.event_timestamp is None


def test_null_record_is_an_error(spark, demo):
    (row,) = decode(spark, demo, MESSAGES["api_logs"], [None])
    assert row == Row(message=None, error="empty record")


def test_names_resolve_through_the_registry(spark, demo):
    java = decode(spark, demo, "com.example.esb.api.ApiLogMessage", [b""])
    assert java[0].error is None
    with pytest.raises(UnknownNameError, match="ApiLogMessage"):
        decoder(spark, demo, "ApiLogMesage")
    with pytest.raises(UnknownNameError, match="event_timestamp"):
        decoder(spark, demo, "ApiLogMessage", required_field="event_time")


def test_registration_is_per_options_and_idempotent(spark, demo):
    message = MESSAGES["bookings"]
    names = {
        function_name(demo, message),
        function_name(demo, "BookingLogMessage"),
        function_name(demo, message, emit_defaults=True),
    }
    assert len(names) == 1
    other = function_name(demo, message, required_field="event_timestamp")
    assert other not in names and function_name(demo, message, emit_defaults=False) not in names
    decoder(spark, demo, message)
    decoder(spark, demo, message)
    assert spark.catalog.functionExists(names.pop())
    sql = spark.sql(f"SELECT {function_name(demo, message)}(CAST('' AS BINARY)).error AS e")
    assert sql.first().e is None


# --- every field shape ------------------------------------------------------------------

_TEXTS = ("", "a", "Jakarta", "Kopi ☕ susu", "𝄞 clef", "é" * 40, "x" * 300)
_INT32 = (0, 1, -1, 127, 128, -(2**31), 2**31 - 1)
_INT64 = (0, 1, -1, 300, -(2**63), 2**63 - 1, 2**40)


def random_message(message: Message, rng: random.Random, depth: int = 0) -> Message:
    """Fills about two thirds of ``message``'s fields with edge and random values."""
    for fd in message.DESCRIPTOR.fields:
        if rng.random() < 0.35:
            continue
        target = getattr(message, fd.name)
        if _is_map(fd):
            key_fd, value_fd = fd.message_type.fields
            for _ in range(rng.randint(0, 3)):
                key = _scalar(key_fd, rng)
                if value_fd.message_type is not None:
                    _fill(target[key], rng, depth)
                else:
                    target[key] = _scalar(value_fd, rng)
        elif fd.is_repeated and fd.message_type is not None:
            for _ in range(rng.randint(0, 3)):
                _fill(target.add(), rng, depth)
        elif fd.is_repeated:
            target.extend(_scalar(fd, rng) for _ in range(rng.randint(0, 4)))
        elif fd.message_type is not None:
            _fill(target, rng, depth)
        else:
            setattr(message, fd.name, _scalar(fd, rng))
    return message


def _fill(message: Message, rng: random.Random, depth: int) -> None:
    message.SetInParent()
    name = message.DESCRIPTOR.full_name
    if name == "google.protobuf.Timestamp":
        message.seconds = rng.choice((0, -1, 1, rng.randint(-2208988800, 4102444800)))
        message.nanos = rng.choice((0, 999, 1000, 999_999_999, rng.randrange(10**9)))
    elif name == "google.protobuf.Duration":
        seconds = rng.choice((0, 1, -1, rng.randint(-(10**9), 10**9)))
        nanos = rng.choice((0, 1, 999, 123_456_789, rng.randrange(10**9)))
        message.seconds, message.nanos = seconds, -nanos if seconds < 0 else nanos
    elif depth < 3:
        random_message(message, rng, depth + 1)


def _scalar(fd: FieldDescriptor, rng: random.Random) -> Any:
    t = fd.type
    if fd.enum_type is not None:
        numbers = [v.number for v in fd.enum_type.values]
        return rng.choice(numbers if fd.enum_type.is_closed else [*numbers, 77, -5])
    if t in INT32:
        return rng.choice((*_INT32, rng.randint(-(2**31), 2**31 - 1)))
    if t in UINT32:
        return rng.choice((0, 1, 2**31, 2**32 - 1, rng.randrange(2**32)))
    if t in INT64:
        return rng.choice((*_INT64, rng.randint(-(2**63), 2**63 - 1)))
    if t in UINT64:
        return rng.choice((0, 1, 2**63, 2**64 - 1, rng.randrange(2**64)))
    if t in (FieldDescriptor.TYPE_FLOAT, FieldDescriptor.TYPE_DOUBLE):
        return rng.choice((0.0, -0.0, 1.5, -2.25e-7, 3.4e38, rng.uniform(-1e6, 1e6)))
    if t == FieldDescriptor.TYPE_BOOL:
        return rng.random() < 0.5
    if t == FieldDescriptor.TYPE_STRING:
        return rng.choice(_TEXTS)
    if t == FieldDescriptor.TYPE_BYTES:
        return rng.randbytes(rng.choice((0, 1, 5, 64)))
    raise AssertionError(f"no random value for {fd.full_name}")


def random_records(registry, message, n, seed=SEED) -> list[bytes]:
    rng = random.Random(seed)
    cls = registry.message_class(message)
    return [random_message(cls(), rng).SerializePartialToString() for _ in range(n)]


@pytest.mark.parametrize("emit_defaults", [True, False])
def test_every_field_shape_decodes_like_python(spark, fixture_registry, emit_defaults):
    records = random_records(fixture_registry, EVERYTHING, 300)
    assert_matches_python(spark, fixture_registry, EVERYTHING, records, emit_defaults)


@pytest.mark.parametrize("emit_defaults", [True, False])
def test_proto2_rules(spark, fixture_registry, emit_defaults):
    records = random_records(fixture_registry, READING, 200)
    assert_matches_python(spark, fixture_registry, READING, records, emit_defaults)


def test_fixture_type_is_from_protobufs(spark, fixture_registry):
    frame = spark.createDataFrame([(b"",)], "value binary")
    decoded = frame.select(decoder(spark, fixture_registry, EVERYTHING)(frame["value"]).alias("d"))
    schema = decoded.schema["d"].dataType["message"].dataType
    assert schema == spark_schema(fixture_registry.descriptor(EVERYTHING))
    assert "nothing" not in schema.fieldNames()


def test_defaults_rule_on_an_empty_message(spark, fixture_registry):
    """Repeated fields and maps are empty, not null, either way (as in from_protobuf)."""
    emitted, bare = (
        decode(spark, fixture_registry, EVERYTHING, [b""], emit_defaults=emit)[0].message
        for emit in (True, False)
    )
    assert (emitted.name, emitted["count"], emitted.u64, emitted.flag) == ("", 0, 0, False)
    assert (emitted.color, emitted.blob, emitted.ratio) == ("COLOR_UNSPECIFIED", b"", 0.0)
    for row in (emitted, bare):
        assert (row.words, row.counts, row.legs, row.colors) == ([], {}, [], [])
    for presence in ("maybe", "maybe_text", "text", "origin", "wrapped", "at", "took"):
        assert emitted[presence] is None and bare[presence] is None
    assert all(value is None for value in bare if value not in ([], {}))


def test_proto2_declared_defaults_and_required_fields(spark, fixture_registry):
    records = [b"\x0a\x01s", b"\x10\x05"]  # only the required sensor; only value=5
    for emit in (True, False):
        rows = decode(spark, fixture_registry, READING, records, emit_defaults=emit)
        only_sensor, no_sensor = rows
        assert only_sensor.message == Row(
            sensor="s", value=7, level="HIGH", levels=[], extra=None, samples=[], by_name={}
        )
        assert no_sensor.message is None
        assert no_sensor.error.endswith("Message missing required fields: sensor")


# --- wire encodings Python's serializer does not write ----------------------------------


def varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    return bytes([*out, n])


def tag(number: int, wire: int) -> bytes:
    return varint(number << 3 | wire)


def field_varint(number: int, n: int) -> bytes:
    return tag(number, 0) + varint(n)


def field_bytes(number: int, payload: bytes) -> bytes:
    return tag(number, 2) + varint(len(payload)) + payload


POINT_A, POINT_B = field_bytes(3, b"a") + tag(1, 1) + struct.pack("<d", 1.5), tag(2, 1) + b"\0" * 8
HAND_MADE = {
    "unpacked repeated": b"".join(field_varint(18, n) for n in (1, 2, 2**63)),
    "packed then unpacked": field_bytes(18, varint(5) + varint(6)) + field_varint(18, 7),
    "empty packed run": field_bytes(18, b""),
    "packed enums": field_bytes(17, varint(1) + varint(77) + varint(-1)),
    "message merged": field_bytes(23, POINT_A) + field_bytes(23, POINT_B + field_bytes(3, b"b")),
    "repeated messages not merged": field_bytes(20, b"") + field_bytes(20, field_bytes(3, b"t")),
    "oneof last wins": field_bytes(26, b"text") + field_varint(27, 5),
    "oneof message": field_varint(27, 5) + field_bytes(28, POINT_A) + field_bytes(28, POINT_B),
    "oneof back to text": field_bytes(28, POINT_A) + field_bytes(26, b""),
    "scalar last wins": field_varint(2, 5) + field_varint(2, 9),
    "scalar back to default": field_varint(2, 5) + field_varint(2, 0),
    "optional zero is set": field_varint(24, 0) + field_bytes(25, b""),
    "negative int32 in ten bytes": field_varint(2, -1),
    "int32 from a 64-bit varint": field_varint(2, 2**40 + 3),
    "bool from any varint": field_varint(14, 2),
    "unknown fields": field_varint(999, 1)
    + field_bytes(1000, b"\xff\xff")
    + tag(1001, 5)
    + b"\0" * 4
    + tag(1002, 1)
    + b"\0" * 8
    + tag(1003, 3)
    + field_varint(1, 4)
    + tag(1003, 4)
    + field_varint(2, 3),
    "known field with another wire type": field_bytes(2, b"abc") + tag(1, 0) + varint(4),
    "map duplicate keys": field_bytes(21, field_bytes(1, b"k") + field_varint(2, 1))
    + field_bytes(21, field_bytes(1, b"k") + field_varint(2, 2)),
    "map entry without key or value": field_bytes(21, b"") + field_bytes(22, field_varint(1, 3)),
    "map of enums, unknown number": field_bytes(38, field_bytes(1, b"c") + field_varint(2, 42)),
    "timestamp merged": field_bytes(31, field_varint(1, 10)) + field_bytes(31, field_varint(2, 5)),
    "duration negative": field_bytes(32, field_varint(1, -1) + field_varint(2, -1)),
    "wrapper of zero": field_bytes(29, b"") + field_bytes(30, field_bytes(1, b"")),
    "empty message field": field_bytes(33, b""),
    "far field": field_bytes(5000, b"\x00\x01"),
    "invalid utf-8": field_bytes(1, b"\xc3\x28"),
    "surrogate in utf-8": field_bytes(19, b"\xed\xa0\x80"),
    "overlong utf-8": field_bytes(1, b"\xc0\xaf"),
    "4-byte utf-8": field_bytes(1, "𝄞".encode()),
    "garbage inside an empty message": field_bytes(33, b"\x0a\x05"),
    "garbage inside a nested message": field_bytes(23, b"\x08"),
    "truncated varint": b"\x10\xff",
    "truncated fixed64": tag(13, 1) + b"\0" * 3,
    "length past the end": field_bytes(1, b"abc")[:-1],
    "zero tag": b"\x00",
    "wire type 7": tag(5, 7),
    "stray end group": tag(7, 4),
    "group never ended": tag(1003, 3) + field_varint(1, 1),
    "group ended by another": tag(1003, 3) + tag(1004, 4),
    "eleven-byte varint": tag(2, 0) + b"\xff" * 10 + b"\x01",
    "negative length": tag(1, 2) + varint(-1),
    "length past 32 bits": tag(1, 2) + varint(2**32 + 1) + b"a",
    "tag past 32 bits": varint(1 << 35 | 2 << 3) + varint(1),
}
READING_MADE = {
    "required only": field_bytes(1, b"s"),
    "required missing": field_varint(2, 5),
    "closed enum, unknown number": field_bytes(1, b"s") + field_varint(3, 9),
    "closed enums repeated": field_bytes(1, b"s") + b"".join(field_varint(4, n) for n in (1, 9, 2)),
    "closed enums packed": field_bytes(1, b"s") + field_bytes(4, varint(2) + varint(0)),
    "group": field_bytes(1, b"s")
    + tag(5, 3)
    + field_bytes(6, b"n")
    + field_varint(7, 1)
    + tag(5, 4),
    "group twice merges": field_bytes(1, b"s")
    + tag(5, 3)
    + field_varint(7, 1)
    + tag(5, 4)
    + tag(5, 3)
    + field_varint(7, 2)
    + tag(5, 4),
    "group sent as bytes is unknown": field_bytes(1, b"s") + field_bytes(5, b""),
    "unpacked into packed field": field_bytes(1, b"s") + field_varint(8, 3) + field_varint(8, 4),
    "invalid utf-8 is not checked in proto2": field_bytes(1, b"s\xff"),
}


@pytest.mark.parametrize("emit_defaults", [True, False])
def test_hand_made_encodings_decode_like_python(spark, fixture_registry, emit_defaults):
    for message, cases in ((EVERYTHING, HAND_MADE), (READING, READING_MADE)):
        records = list(cases.values())
        assert assert_matches_python(spark, fixture_registry, message, records, emit_defaults) == 0


def test_map_entries_with_unknown_fields_are_kept(spark, fixture_registry):
    """As protobuf-java (so Spark) reads them, not as upb does (see _upb_moved_map_entries)."""
    records = [
        field_bytes(21, field_varint(9, 1) + field_bytes(1, b"z")),  # an unknown field
        field_bytes(22, field_varint(1, 3) + field_varint(2, 24)),  # value as a varint
    ]
    counts, points = decode(spark, fixture_registry, EVERYTHING, records)
    assert counts.message.counts == {"z": 0}
    assert points.message.points == {3: Row(lat=0.0, lng=0.0, label="")}


def test_mutated_records_decode_like_python(spark, fixture_registry):
    """Truncations, bit flips and spliced bytes of valid records: where Python still parses
    one, the rows agree; where it does not, the decoder reports an error."""
    rng = random.Random(SEED + 1)
    mutated = []
    for record in random_records(fixture_registry, EVERYTHING, 150, seed=SEED + 2):
        data = bytearray(record)
        for _ in range(4):
            if not data:
                break
            choice = rng.random()
            at = rng.randrange(len(data))
            if choice < 0.3:
                del data[at:]
            elif choice < 0.8:
                data[at] ^= 1 << rng.randrange(8)
            else:
                data[at:at] = rng.randbytes(rng.randint(1, 3))
            mutated.append(bytes(data))
    skipped = assert_matches_python(spark, fixture_registry, EVERYTHING, mutated)
    assert skipped < len(mutated) // 20


# --- decoding some fields only ----------------------------------------------------------


@pytest.mark.parametrize(
    "fields", [["count", "words", "legs"], ["text"], ["at", "points", "attrs", "maybe"]]
)
def test_a_pruned_decoder_gives_the_kept_fields_as_the_full_one(spark, fixture_registry, fields):
    """Pruned decoding: the same values for the kept fields (a kept oneof member brings its
    siblings, since the member set last wins), no column for the others, same errors."""
    rng = random.Random(SEED)
    records = random_records(fixture_registry, EVERYTHING, 200) + [
        malformed_bytes(rng) for _ in range(20)
    ]
    full = decode(spark, fixture_registry, EVERYTHING, records)
    pruned = decode(spark, fixture_registry, EVERYTHING, records, fields=fields)
    kept = pruned[0].message.__fields__ if pruned[0].message else None
    oneof = {"text", "number", "place"}
    want = sorted({*fields, *(oneof if oneof & set(fields) else ())})
    columns = decoded_type(fixture_registry, EVERYTHING, fields=want)["message"].dataType
    assert sorted(columns.fieldNames()) == want
    assert kept is None or sorted(kept) == want
    for index, (a, b) in enumerate(zip(full, pruned, strict=True)):
        if b.error is not None:  # never stricter than the full decoder
            assert a.error is not None and b.message is None, index
        elif a.error is None:
            assert {f: a.message[f] for f in want} == b.message.asDict(), index
    assert sum(b.error is None for b in pruned) >= 200


def test_a_pruned_decoder_skips_the_other_fields_on_the_wire(spark, demo):
    """A field the pruned decoder skips is framed, not read: bad UTF-8 in it is no error."""
    message = MESSAGES["bookings"]
    event = Generator(seed=SEED).take("bookings", 1)[0]
    good = encode(event, message)
    bad_text = good + b"\x12\x02\xff\xfe"  # order_url (2) = invalid UTF-8, appended (last wins)
    records = [good, bad_text, good[:-3]]
    full = decode(spark, demo, message, records, required_field="event_timestamp")
    pruned = decode(
        spark, demo, message, records, required_field="event_timestamp", fields=["status"]
    )
    assert full[0].error is None and full[1].error is not None
    assert pruned[0].message.asDict() == {
        "status": full[0].message.status,
        "event_timestamp": full[0].message.event_timestamp,
    }
    assert pruned[1] == pruned[0]
    assert pruned[2].error is not None  # a truncated record still is not a record
    assert function_name(demo, message, fields=["status"]) != function_name(demo, message)


def test_a_pruned_decoder_names_an_unknown_field(spark, demo):
    with pytest.raises(Exception, match="has no field 'no_such_field'"):
        decode(spark, demo, MESSAGES["bookings"], [b""], fields=["no_such_field"])
