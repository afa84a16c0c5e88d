"""spark_schema(): the Spark types from_protobuf gives each protobuf type and option.

The comparison with Spark's own from_protobuf needs the spark-protobuf connector, which
this environment cannot fetch (no Spark 4.x spark-protobuf on Maven Central here), so these
tests pin the mapping itself; decoding real messages is tested with the Kafka source.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from pyspark.sql import types as T

from workbench.exceptions import SchemaError
from workbench.schemas import SchemaRegistry, ddl, default_registry, spark_schema

pytestmark = pytest.mark.unit

FROM_PROTOBUF_CLASS = "org.apache.spark.sql.protobuf.ProtobufDataToCatalyst"
TS = "2026-11-21T08:15:30.250Z"
TS_VALUE = datetime(2026, 11, 21, 8, 15, 30, 250000, tzinfo=UTC)

#: a fully populated instance of every demo message, in protobuf's JSON form
FULL = {
    "esb.booking.BookingLogMessage": {
        "order_number": "F-1001",
        "order_url": "https://api.example.com/v1/bookings/F-1001",
        "service_type": "GO_FOOD",
        "status": "COMPLETED",
        "customer_id": "cust-000042",
        "driver_id": "drv-00007",
        "pickup_lat": -6.2253,
        "pickup_long": 106.8087,
        "dropoff_lat": -6.261,
        "dropoff_long": 106.8133,
        "service_area_id": 2,
        "vehicle_type": "BIKE",
        "amount": 61500.0,
        "currency": "IDR",
        "items": [
            {"id": "bakso", "quantity": 2, "name": "Bakso Malang"},
            {"id": "es-teh", "quantity": 1, "name": "Es Teh Manis"},
        ],
        "event_timestamp": TS,
        "metadata": {"platform": "android", "promo_code": "GAJIAN"},
    },
    "esb.driver.DriverLocationMessage": {
        "driver_id": "drv-00007",
        "lat": -6.1862,
        "long": 106.823,
        "accuracy": 4.5,
        "speed_kmh": 23.5,
        "status": "BUSY",
        "service_area_id": 1,
        "vehicle_type": "CAR",
        "event_timestamp": TS,
    },
    "esb.payment.PaymentMessage": {
        "payment_id": "pay-00aa",
        "order_number": "F-1001",
        "customer_id": "cust-000042",
        "amount": 61500.0,
        "currency": "IDR",
        "method": "WALLET",
        "status": "FAILED",
        "event_timestamp": TS,
    },
    "esb.api.ApiLogMessage": {
        "request_id": "9f0c",
        "service": "payment-gateway",
        "path": "/v1/payments",
        "method": "POST",
        "status_code": 503,
        "latency_ms": 12_000_000_000,
        "client_id": "ios-4.62.0",
        "event_timestamp": TS,
    },
}

ALL_TYPES = """
syntax = "proto3";
package t;
import "google/protobuf/any.proto";
import "google/protobuf/duration.proto";
import "google/protobuf/empty.proto";
import "google/protobuf/timestamp.proto";
import "google/protobuf/wrappers.proto";
enum Color { COLOR_UNKNOWN = 0; RED = 1; }
message Nothing {}
message Timestamp { int64 seconds = 1; int32 nanos = 2; }
message Inner { string a = 1; repeated int32 b = 2; Color c = 3; Nothing gone = 4; }
message All {
  int32 i32 = 1; int64 i64 = 2; uint32 u32 = 3; uint64 u64 = 4; sint32 s32 = 5; fixed32 f32 = 6;
  fixed64 f64 = 7; float fl = 8; double db = 9; bool bo = 10; string st = 11; bytes by = 12;
  Color color = 13; optional string opt = 14; repeated Color colors = 15; repeated Inner ri = 16;
  map<int32, Inner> by_id = 17; map<string, Color> paint = 18;
  google.protobuf.Timestamp ts = 19; google.protobuf.Duration du = 20;
  google.protobuf.UInt32Value w_u32 = 21; google.protobuf.UInt64Value w_u64 = 22;
  google.protobuf.StringValue w_s = 23; google.protobuf.Any any = 24;
  google.protobuf.Empty empty = 25; Timestamp own_ts = 26;
  oneof pick { string p_s = 27; Inner p_i = 28; }
}
message Person { string name = 1; Person friend = 2; }
"""

PROTO2 = """
syntax = "proto2";
package p;
message Req {
  required string id = 1;
  optional int32 n = 2 [default = 7];
  repeated int64 xs = 3;
  optional group G = 4 { optional string g = 1; }
}
"""

OPTION_SETS = [
    {},
    {"enums.as.ints": "true"},
    {"upcast.unsigned.ints": "true"},
    {"unwrap.primitive.wrapper.types": "true", "upcast.unsigned.ints": "true"},
    {"convert.any.fields.to.json": "true"},
    {"retain.empty.message.types": "true"},
    {"mode": "PERMISSIVE"},
]


@pytest.fixture(scope="module")
def all_types(tmp_path_factory) -> SchemaRegistry:
    folder = tmp_path_factory.mktemp("all-types")
    (folder / "all.proto").write_text(ALL_TYPES)
    (folder / "p2.proto").write_text(PROTO2)
    return SchemaRegistry(folder)


def test_booking_schema_is_what_dagger_users_expect():
    schema = spark_schema(
        default_registry().descriptor("com.example.esb.booking.BookingLogMessage")
    )
    fields = {f.name: f for f in schema.fields}
    assert fields["status"].dataType == T.StringType()
    assert fields["event_timestamp"].dataType == T.TimestampType()
    assert fields["items"].dataType == T.ArrayType(
        T.StructType(
            [
                T.StructField("id", T.StringType()),
                T.StructField("quantity", T.IntegerType()),
                T.StructField("name", T.StringType()),
            ]
        ),
        containsNull=False,
    )
    assert fields["metadata"].dataType == T.MapType(T.StringType(), T.StringType(), False)
    assert all(f.nullable for f in schema.fields)


def test_spark_drops_empty_messages_and_types_timestamps_by_name(all_types):
    """With Spark's own defaults (``{}``): wrappers and Any stay structs."""
    names = [f.name for f in spark_schema(all_types.descriptor("t.All"), {}).fields]
    assert "empty" not in names and "du" in names
    types = {f.name: f.dataType for f in spark_schema(all_types.descriptor("t.All"), {}).fields}
    assert types["own_ts"] == T.TimestampType()  # t.Timestamp, not google's
    assert types["du"] == T.DayTimeIntervalType(
        T.DayTimeIntervalType.DAY, T.DayTimeIntervalType.SECOND
    )
    assert types["u32"] == T.IntegerType() and types["f64"] == T.LongType()
    assert types["w_u64"] == T.StructType([T.StructField("value", T.LongType())])
    assert types["any"] == T.StructType(
        [T.StructField("type_url", T.StringType()), T.StructField("value", T.BinaryType())]
    )
    assert types["p_s"] == T.StringType() and "gone" not in types["p_i"].fieldNames()


def test_workbench_defaults_unwrap_wrappers_and_write_any_as_json(all_types):
    types = {f.name: f.dataType for f in spark_schema(all_types.descriptor("t.All")).fields}
    assert types["w_u32"] == T.IntegerType() and types["w_u64"] == T.LongType()
    assert types["w_s"] == T.StringType() and types["any"] == T.StringType()
    person = spark_schema(all_types.descriptor("t.Person"))  # recursion: 3 levels by default
    assert _depth(person, "friend") == 2  # Person in Person in Person, then no friend


def _depth(schema: T.StructType, field: str) -> int:
    depth = 0
    while field in schema.fieldNames():
        schema, depth = schema[field].dataType, depth + 1
    return depth


def test_ddl_is_what_spark_writes(spark, all_types):
    registry = default_registry()
    for message in ["esb.booking.BookingLogMessage", "esb.api.ApiLogMessage"]:
        schema = spark_schema(registry.descriptor(message))
        assert ddl(registry.descriptor(message)) == schema.toDDL()
    options = {"upcast.unsigned.ints": "true"}
    assert (
        ddl(all_types.descriptor("t.All"), options)
        == spark_schema(all_types.descriptor("t.All"), options).toDDL()
    )
    assert ddl(registry.descriptor("PaymentMessage")).startswith("payment_id STRING,order_number")


def test_bad_option_values_are_rejected(all_types):
    with pytest.raises(SchemaError, match="enums.as.ints"):
        spark_schema(all_types.descriptor("t.All"), {"enums.as.ints": "yes"})
    with pytest.raises(SchemaError, match="DROPMALFORMED"):
        spark_schema(all_types.descriptor("t.All"), {"mode": "DROPMALFORMED"})


def test_descriptor_set_file_is_what_spark_reads():
    path = Path(default_registry().descriptor_set_path())
    assert path.read_bytes() == default_registry().descriptor_set()
