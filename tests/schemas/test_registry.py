"""Finding messages by the names people use, and what the registry says about them."""

from __future__ import annotations

import functools
import http.server
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest
from google.protobuf import descriptor_pb2

from workbench.exceptions import SchemaError, UnknownNameError
from workbench.schemas import SchemaRegistry, default_registry, default_registry_with
from workbench.schemas.registry import java_names

pytestmark = pytest.mark.unit

PING = """syntax = "proto3";
package {package};
message Ping {{ string id = 1; }}
"""


@pytest.fixture(scope="module")
def registry() -> SchemaRegistry:
    return default_registry()


def write(folder, name: str, text: str):
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    "name",
    [
        "esb.booking.BookingLogMessage",
        ".esb.booking.BookingLogMessage",
        "com.example.esb.booking.BookingLogMessage",
        "com.example.esb.booking.BookingLogProto$BookingLogMessage",
        "com.example.esb.booking.BookingLogProto.BookingLogMessage",
        "BookingLogMessage",
    ],
)
def test_booking_by_every_name(registry, name):
    assert registry.resolve(name) == "esb.booking.BookingLogMessage"
    assert registry.descriptor(name).full_name == "esb.booking.BookingLogMessage"


def test_nested_messages_by_java_and_simple_name(registry):
    assert registry.resolve("com.example.esb.booking.BookingLogMessage$Item") == (
        "esb.booking.BookingLogMessage.Item"
    )
    assert registry.resolve("Item") == "esb.booking.BookingLogMessage.Item"


def test_messages_leave_out_well_known_types_and_map_entries(registry):
    assert registry.messages() == [
        "esb.api.ApiLogMessage",
        "esb.booking.BookingLogMessage",
        "esb.booking.BookingLogMessage.Item",
        "esb.driver.DriverLocationMessage",
        "esb.payment.PaymentMessage",
    ]
    assert registry.resolve("google.protobuf.Timestamp") == "google.protobuf.Timestamp"


def test_unknown_message_lists_the_known_ones(registry):
    with pytest.raises(UnknownNameError) as caught:
        registry.descriptor("esb.booking.BookingMessage")
    text = str(caught.value)
    assert text.startswith("Unknown message 'esb.booking.BookingMessage'.")
    assert "Did you mean esb.booking.BookingLogMessage" in text
    assert "Known: esb.api.ApiLogMessage, esb.booking.BookingLogMessage," in text
    assert caught.value.known == registry.messages()


def test_ambiguous_simple_name_asks_for_the_full_one(tmp_path):
    write(tmp_path, "a/ping.proto", PING.format(package="a"))
    write(tmp_path, "b/ping.proto", PING.format(package="b"))
    registry = SchemaRegistry(tmp_path)
    assert registry.resolve("b.Ping") == "b.Ping"
    with pytest.raises(SchemaError, match=r"'Ping' is ambiguous: a\.Ping, b\.Ping\. Use the full"):
        registry.resolve("Ping")


def test_field_tree_of_a_booking(registry):
    fields = {f.name: f for f in registry.fields("BookingLogMessage")}
    assert list(fields)[:3] == ["order_number", "order_url", "service_type"]
    assert (fields["pickup_lat"].type, fields["pickup_lat"].number) == ("double", 7)
    status = fields["status"]
    assert (status.kind, status.type) == ("enum", "esb.booking.BookingStatus")
    assert status.enum_values == [
        "BOOKING_STATUS_UNKNOWN",
        "CREATED",
        "DRIVER_FOUND",
        "PICKED_UP",
        "COMPLETED",
        "CANCELLED",
    ]
    items = fields["items"]
    assert (items.kind, items.repeated, items.type) == (
        "message",
        True,
        "esb.booking.BookingLogMessage.Item",
    )
    assert [(c.name, c.type) for c in items.children] == [
        ("id", "string"),
        ("quantity", "int32"),
        ("name", "string"),
    ]
    metadata = fields["metadata"].to_dict()
    assert (metadata["kind"], metadata["type"], metadata["repeated"]) == (
        "map",
        "map<string, string>",
        False,
    )
    assert fields["event_timestamp"].type == "google.protobuf.Timestamp"


def test_recursive_message_tree_stops(tmp_path):
    write(
        tmp_path,
        "n.proto",
        'syntax = "proto3";\nmessage Node { string v = 1; repeated Node kids = 2; }\n',
    )
    (value, kids) = SchemaRegistry(tmp_path).fields("Node")
    assert (kids.type, kids.repeated, kids.children) == ("Node", True, [])


def test_well_known_types_are_shown_as_one_value():
    folder = Path(__file__).resolve().parent.parent / "fixtures" / "protos" / "booking"
    fields = {f.name: f for f in SchemaRegistry(folder).fields("BookingLogMessage")}
    for name in ("profile_data", "note", "tags", "tip_amount", "extension", "event_timestamp"):
        assert fields[name].type.startswith("google.protobuf.") and fields[name].children == []
    assert fields["profile_data"].type == "google.protobuf.Struct"
    assert [c.name for c in fields["category"].children] == ["name", "parent", "children"]


def test_field_by_number(registry):
    assert registry.field_by_number("com.example.esb.booking.BookingLogMessage", 16).name == (
        "event_timestamp"
    )
    assert registry.field_by_number("PaymentMessage", 8).name == "event_timestamp"
    with pytest.raises(
        UnknownNameError,
        match=r"Unknown field number '60' in message "
        r"esb\.payment\.PaymentMessage.*8 \(event_",
    ):
        registry.field_by_number("PaymentMessage", 60)


def test_message_class_round_trips(registry):
    cls = registry.message_class("com.example.esb.payment.PaymentMessage")
    payment = cls(payment_id="pay-1", amount=42500.0, method=2)
    payment.event_timestamp.FromDatetime(datetime(2026, 11, 21, 8, 0, tzinfo=UTC))
    back = cls.FromString(payment.SerializeToString())
    assert (back.payment_id, back.amount, back.method) == ("pay-1", 42500.0, 2)
    assert back.DESCRIPTOR.fields_by_name["method"].enum_type.values_by_number[2].name == "WALLET"
    assert back.event_timestamp.seconds == 1795248000


def test_descriptor_set_file_holds_every_file_with_imports(registry):
    path = registry.descriptor_set_path()
    assert path == registry.descriptor_set_path() and path.suffix == ".desc"
    names = [f.name for f in descriptor_pb2.FileDescriptorSet.FromString(path.read_bytes()).file]
    assert names == [
        "google/protobuf/timestamp.proto",
        "esb/apilog.proto",
        "esb/booking.proto",
        "esb/driver.proto",
        "esb/payment.proto",
    ]


def test_descriptor_set_files_and_folders_as_sources(registry, tmp_path):
    desc = tmp_path / "demo.desc"
    desc.write_bytes(registry.descriptor_set())
    assert SchemaRegistry(desc).messages() == registry.messages()
    write(tmp_path / "extra", "fleet/ping.proto", PING.format(package="fleet"))
    (tmp_path / "extra" / "demo.pb").write_bytes(registry.descriptor_set())
    mixed = SchemaRegistry(tmp_path / "extra")
    assert mixed.messages() == sorted([*registry.messages(), "fleet.Ping"])


def test_descriptor_set_over_http(registry, tmp_path):
    (tmp_path / "demo.desc").write_bytes(registry.descriptor_set())
    handler = functools.partial(QuietHandler, directory=str(tmp_path))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        assert SchemaRegistry(f"{base}/demo.desc").resolve("PaymentMessage") == (
            "esb.payment.PaymentMessage"
        )
        with pytest.raises(SchemaError, match=r"Could not download .*/missing\.desc.*404"):
            SchemaRegistry(f"{base}/missing.desc")
    finally:
        server.shutdown()
        server.server_close()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


def test_bad_sources_say_what_to_give(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(SchemaError, match=r"neither a folder, a \.desc/\.pb descriptor set nor"):
        SchemaRegistry(tmp_path / "notes.txt")
    (tmp_path / "junk.desc").write_bytes(b"\xff\xff\xff")
    with pytest.raises(SchemaError, match=r"junk\.desc is not a serialized FileDescriptorSet"):
        SchemaRegistry(tmp_path / "junk.desc")


def test_descriptor_set_without_imports_is_refused(registry, tmp_path):
    full = descriptor_pb2.FileDescriptorSet.FromString(registry.descriptor_set())
    partial = descriptor_pb2.FileDescriptorSet(
        file=[f for f in full.file if f.name == "esb/payment.proto"]
    )
    (tmp_path / "payment.desc").write_bytes(partial.SerializeToString())
    with pytest.raises(
        SchemaError,
        match=r"imports 'google/protobuf/timestamp\.proto'.*"
        r"--include_imports",
    ):
        SchemaRegistry(tmp_path / "payment.desc")


def test_two_different_definitions_of_one_file_are_refused(tmp_path):
    write(tmp_path / "a", "fleet/ping.proto", PING.format(package="fleet"))
    write(tmp_path / "b", "fleet/ping.proto", PING.format(package="fleet").replace("id", "key"))
    (tmp_path / "b.desc").write_bytes(SchemaRegistry(tmp_path / "b").descriptor_set())
    with pytest.raises(SchemaError, match=r"'fleet/ping\.proto' differs between"):
        SchemaRegistry(tmp_path / "a", tmp_path / "b.desc")


def test_default_registry_adds_workbench_schemas_folders(tmp_path, monkeypatch):
    write(tmp_path / "team", "fleet/ping.proto", PING.format(package="fleet"))
    monkeypatch.setenv("WORKBENCH_SCHEMAS", str(tmp_path / "team"))
    assert "fleet.Ping" in default_registry(refresh=True).messages()
    monkeypatch.delenv("WORKBENCH_SCHEMAS")
    assert "fleet.Ping" not in default_registry(refresh=True).messages()


def java_file(name: str, **options) -> descriptor_pb2.FileDescriptorProto:
    proto = descriptor_pb2.FileDescriptorProto(name=name, package="fleet")
    proto.message_type.add(name="Ping").nested_type.add(name="Pong")
    for key, value in options.items():
        setattr(proto.options, key, value)
    return proto


def test_java_names_follow_protoc():
    assert java_names(java_file("fleet/ride_events2x.proto"), "fleet.Ping") == [
        "fleet.RideEvents2X$Ping",
        "fleet.RideEvents2X.Ping",
    ]
    assert java_names(java_file("fleet/ping.proto"), "fleet.Ping.Pong") == [
        "fleet.PingOuterClass$Ping$Pong",
        "fleet.PingOuterClass.Ping.Pong",
    ]
    multiple = java_file(
        "p.proto", java_package="com.x", java_multiple_files=True, java_outer_classname="Outer"
    )
    assert java_names(multiple, "fleet.Ping") == [
        "com.x.Outer$Ping",
        "com.x.Outer.Ping",
        "com.x.Ping",
    ]


def test_default_registry_with_extra_sources(tmp_path):
    """A spec's ``schemas`` (or ``--schemas``) come on top of the default registry."""
    write(tmp_path / "team", "fleet/ping.proto", PING.format(package="fleet"))
    assert default_registry_with([]) is default_registry()
    both = default_registry_with([tmp_path / "team"])
    assert both.sources == [*default_registry().sources, str(tmp_path / "team")]
    assert "fleet.Ping" in both.messages()
    assert set(default_registry().messages()) < set(both.messages())
