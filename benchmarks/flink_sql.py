"""The bundled surge dagger as a Flink SQL script, for the Flink anchor of the benchmark.

Dagger (the Flink system our users migrate from) declared a stream's table from its proto
descriptor and config; Flink SQL says the same in DDL. :func:`script` writes, in order:

* ``SET`` for any Flink option the benchmark is given (``--flink-conf``);
* ``CREATE TEMPORARY FUNCTION`` for the spec's UDFs (S2Id, DistinctCount: Java classes in
  ``benchmarks/flink/java``), as Dagger registered its UDFs;
* the stream's table: every field of the message (:func:`columns`, derived from the
  descriptor as Dagger derives it), the Kafka connector (from the earliest offsets, bounded
  at the latest, so the job ends) and Flink's protobuf format (the generated Java class,
  malformed records skipped: ``protobuf.ignore-parse-errors``, where the engine sends them
  to dead letters), plus what Dagger added implicitly: ``rowtime`` from
  ``event_timestamp_field`` and a watermark ``watermark_delay`` behind it;
* a CSV file sink with the result's columns;
* ``INSERT INTO`` the sink the dagger's SQL, adapted by :func:`adapt` (see its docstring
  for every difference; the SQL itself runs unchanged).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from google.protobuf.descriptor import Descriptor, FieldDescriptor

from workbench.sources.kafka import FETCH_WAIT

#: the spec's UDF names -> the Flink implementations
FUNCTIONS = {
    "S2Id": "io.daggerworkbench.flinkbench.S2Id",
    "DistinctCount": "io.daggerworkbench.flinkbench.DistinctCount",
}
#: the surge result's columns and their Flink types, in the SQL's order
RESULT = {
    "tag_s2id": "STRING",
    "tag_vehicle_type": "STRING",
    "bookings": "BIGINT",
    "unique_customers": "BIGINT",
    "window_timestamp": "TIMESTAMP_LTZ(3)",
}
_SCALAR = {
    FieldDescriptor.TYPE_DOUBLE: "DOUBLE",
    FieldDescriptor.TYPE_FLOAT: "FLOAT",
    FieldDescriptor.TYPE_INT64: "BIGINT",
    FieldDescriptor.TYPE_UINT64: "BIGINT",
    FieldDescriptor.TYPE_INT32: "INT",
    FieldDescriptor.TYPE_FIXED64: "BIGINT",
    FieldDescriptor.TYPE_FIXED32: "INT",
    FieldDescriptor.TYPE_BOOL: "BOOLEAN",
    FieldDescriptor.TYPE_STRING: "STRING",
    FieldDescriptor.TYPE_BYTES: "BYTES",
    FieldDescriptor.TYPE_UINT32: "INT",
    FieldDescriptor.TYPE_ENUM: "STRING",  # the value's name, as the engine gives it
    FieldDescriptor.TYPE_SFIXED32: "INT",
    FieldDescriptor.TYPE_SFIXED64: "BIGINT",
    FieldDescriptor.TYPE_SINT32: "INT",
    FieldDescriptor.TYPE_SINT64: "BIGINT",
}


def flink_type(field: FieldDescriptor) -> str:
    """The Flink SQL type Flink's protobuf format maps ``field`` to."""
    message = field.message_type
    if message is not None and message.GetOptions().map_entry:
        key, value = message.fields_by_name["key"], message.fields_by_name["value"]
        return f"MAP<{flink_type(key)}, {flink_type(value)}>"
    if message is not None:
        inner = ", ".join(f"`{f.name}` {flink_type(f)}" for f in message.fields)
        kind = f"ROW<{inner}>"
    else:
        kind = _SCALAR[field.type]
    return f"ARRAY<{kind}>" if field.is_repeated else kind


def columns(descriptor: Descriptor) -> list[str]:
    """``name TYPE`` for every field of the message, in field order."""
    return [f"`{field.name}` {flink_type(field)}" for field in descriptor.fields]


def seconds(duration: str) -> int:
    """'10s', '2m' or '1h' as whole seconds (the spec's ``watermark_delay``)."""
    match = re.fullmatch(r"(\d+)\s*([smh])", duration.strip())
    if match is None:
        raise ValueError(f"unsupported duration {duration!r}: use e.g. 10s, 2m or 1h")
    return int(match[1]) * {"s": 1, "m": 60, "h": 3600}[match[2]]


def adapt(sql: str) -> str:
    """The dagger's SQL as Flink SQL: the statement as written, its trailing ``;`` and blank
    lines dropped. Nothing else changes: Flink still parses the legacy group windows
    (``TUMBLE``, ``TUMBLE_END``) Dagger used, backquoted names, ``count(1)``, and the UDFs by
    the names :data:`FUNCTIONS` registers. What Flink needs besides is declared around it:
    ``rowtime`` and its watermark in the table (Dagger added them from the stream's config)
    and the UDFs (Dagger registered them itself)."""
    return sql.strip().rstrip(";").strip()


def source_table(
    table: str, descriptor: Descriptor, stream: Mapping[str, Any], delay_s: int, java_class: str
) -> str:
    """The stream's table: the message's columns, ``rowtime`` and the watermark, Kafka."""
    stamp = stream["event_timestamp_field"]
    rowtime = f"TO_TIMESTAMP_LTZ(`{stamp}`.`seconds` * 1000 + `{stamp}`.`nanos` / 1000000, 3)"
    options = {
        "connector": "kafka",
        "topic": ";".join(stream["topics"]),
        "properties.bootstrap.servers": stream["bootstrap_servers"],
        "properties.group.id": stream.get("group_id", "flink-surge"),
        "scan.startup.mode": "earliest-offset",
        "scan.bounded.mode": "latest-offset",
        "format": "protobuf",
        "protobuf.message-class-name": java_class,
        "protobuf.ignore-parse-errors": "true",
        "protobuf.read-default-values": "true",  # proto3: unset fields read as their defaults
        # the Kafka consumer settings the engine's source has (FETCH_WAIT)
        **{f"properties.{key.removeprefix('kafka.')}": v for key, v in FETCH_WAIT.items()},
    }
    body = [
        *columns(descriptor),
        f"`rowtime` AS {rowtime}",
        f"WATERMARK FOR `rowtime` AS `rowtime` - INTERVAL '{delay_s}' SECOND",
    ]
    return _create(table, body, options)


def sink_table(path: str) -> str:
    body = [f"`{name}` {kind}" for name, kind in RESULT.items()]
    return _create("surge_out", body, {"connector": "filesystem", "path": path, "format": "csv"})


def _create(name: str, body: list[str], options: Mapping[str, str]) -> str:
    columns_text = ",\n  ".join(body)
    with_text = ",\n  ".join(f"'{k}' = '{v}'" for k, v in options.items())
    return f"CREATE TABLE `{name}` (\n  {columns_text}\n) WITH (\n  {with_text}\n)"


def java_class(descriptor: Descriptor) -> str:
    """The class protoc generates for the message (``java_package``, multiple files)."""
    options = descriptor.file.GetOptions()
    package = options.java_package or descriptor.file.package
    return f"{package}.{descriptor.name}"


def script(
    spec: Mapping[str, Any],
    descriptor: Descriptor,
    out: str,
    settings: Mapping[str, str] | None = None,
) -> str:
    """The whole Flink SQL script of the spec (one stream) writing CSV into ``out``, after a
    ``SET`` for each of ``settings`` (Flink options, e.g. ``execution.checkpointing.interval``)."""
    stream = spec["streams"][0]
    delay = seconds(spec.get("watermark_delay", "0s"))
    table = source_table(stream["table"], descriptor, stream, delay, java_class(descriptor))
    functions = [
        f"CREATE TEMPORARY FUNCTION {name} AS '{cls}' LANGUAGE JAVA"
        for name, cls in FUNCTIONS.items()
    ]
    insert = f"INSERT INTO `surge_out`\n{adapt(spec['sql'])}"
    sets = [f"SET '{key}' = '{value}'" for key, value in (settings or {}).items()]
    return ";\n".join([*sets, *functions, table, sink_table(out), insert]) + ";\n"
