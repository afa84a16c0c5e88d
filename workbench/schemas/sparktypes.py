"""The Spark SQL type of a decoded protobuf message, computed without a JVM.

This mirrors Spark 4.3's ``SchemaConverters.toSqlType`` (spark-protobuf connector) with the
options the workbench decodes with (:data:`DECODER_OPTIONS`), plus JSON text for the
well-known types that hold JSON, which ``from_protobuf`` refuses as recursive:

* field names as in the .proto; proto3 fields are nullable, proto2 ``required`` are not;
* enums are ``STRING`` (``INT`` with ``enums.as.ints``);
* int32/sint32/sfixed32/fixed32/uint32 are ``INT``; the 64-bit kinds ``BIGINT`` (only
  uint32/uint64 are widened, to ``BIGINT``/``DECIMAL(20,0)``, with ``upcast.unsigned.ints``);
* any message *named* ``Timestamp`` or ``Duration`` with fields (seconds, nanos) is
  ``TIMESTAMP`` or ``INTERVAL DAY TO SECOND``, whatever its package;
* ``google.protobuf.Struct``, ``Value`` and ``ListValue`` are ``STRING`` holding JSON text
  (always: Spark has no option for them); such fields carry the metadata :data:`JSON_TEXT`;
* wrappers (``google.protobuf.Int32Value`` ...) are their value, a nullable scalar
  (``unwrap.primitive.wrapper.types``, on for the workbench; off: ``STRUCT<value: ...>``);
  ``Any`` is ``STRING`` JSON with its ``@type`` (``convert.any.fields.to.json``, on for the
  workbench; off: ``STRUCT<type_url, value>``);
* repeated fields are ``ARRAY<T>`` whose elements are not null; maps are
  ``MAP<K, V>`` whose values are not null;
* a message field with no fields left (e.g. ``google.protobuf.Empty``) is dropped, unless
  ``retain.empty.message.types``; a message may hold itself at most
  ``recursive.fields.max.depth`` times along a path (1..10; for the workbench a stream's
  ``max_recursion_depth``, default :data:`DEFAULT_RECURSION_DEPTH`), the
  field that would nest it once more is dropped (``-1``: recursion is an error);
* with ``mode=PERMISSIVE`` everything becomes nullable.

Proto2 extensions (off by default in Spark) are not included.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import cast

from google.protobuf.descriptor import Descriptor, FieldDescriptor
from pyspark.sql import types as T

from workbench.exceptions import SchemaError
from workbench.schemas import DEFAULT_RECURSION_DEPTH

_INT = {
    FieldDescriptor.TYPE_INT32,
    FieldDescriptor.TYPE_SINT32,
    FieldDescriptor.TYPE_SFIXED32,
    FieldDescriptor.TYPE_FIXED32,
    FieldDescriptor.TYPE_UINT32,
}
_LONG = {
    FieldDescriptor.TYPE_INT64,
    FieldDescriptor.TYPE_SINT64,
    FieldDescriptor.TYPE_SFIXED64,
    FieldDescriptor.TYPE_FIXED64,
    FieldDescriptor.TYPE_UINT64,
}
_SIMPLE = {
    FieldDescriptor.TYPE_FLOAT: T.FloatType(),
    FieldDescriptor.TYPE_DOUBLE: T.DoubleType(),
    FieldDescriptor.TYPE_BOOL: T.BooleanType(),
    FieldDescriptor.TYPE_STRING: T.StringType(),
    FieldDescriptor.TYPE_BYTES: T.BinaryType(),
}
_WRAPPERS = {
    "google.protobuf.BoolValue": T.BooleanType(),
    "google.protobuf.Int32Value": T.IntegerType(),
    "google.protobuf.Int64Value": T.LongType(),
    "google.protobuf.StringValue": T.StringType(),
    "google.protobuf.BytesValue": T.BinaryType(),
    "google.protobuf.FloatValue": T.FloatType(),
    "google.protobuf.DoubleValue": T.DoubleType(),
}
_UNSIGNED_WRAPPERS = {
    "google.protobuf.UInt32Value": (T.IntegerType(), T.LongType()),
    "google.protobuf.UInt64Value": (T.LongType(), T.DecimalType(20, 0)),
}
_JSON_TYPES = {"google.protobuf.Struct", "google.protobuf.Value", "google.protobuf.ListValue"}
_DUMMY = "__dummy_field_in_empty_struct"
#: Field metadata marking JSON text (Struct, Value, ListValue, Any; in arrays and map values).
JSON_TEXT = "workbench.json"
#: Field metadata: the sub-fields dropped where recursion reached its depth (the decoder
#: skips them; a recording may hold them).
CUT = "workbench.cut"

#: The ``from_protobuf`` options matching the workbench's JVM decoder.
DECODER_OPTIONS = {
    "unwrap.primitive.wrapper.types": "true",
    "convert.any.fields.to.json": "true",
    "recursive.fields.max.depth": str(DEFAULT_RECURSION_DEPTH),
}


def decoder_options(max_recursion_depth: int = DEFAULT_RECURSION_DEPTH) -> dict[str, str]:
    """:data:`DECODER_OPTIONS` with another recursion depth."""
    return {**DECODER_OPTIONS, "recursive.fields.max.depth": str(max_recursion_depth)}


@dataclass(frozen=True)
class ProtobufOptions:
    """The ``from_protobuf`` options that change the result type (keys as Spark spells them)."""

    enums_as_ints: bool = False
    upcast_unsigned_ints: bool = False
    unwrap_wrappers: bool = False
    any_as_json: bool = False
    retain_empty_messages: bool = False
    recursive_max_depth: int = -1
    permissive: bool = False

    @classmethod
    def parse(cls, options: Mapping[str, str] | None) -> ProtobufOptions:
        """Read Spark's option keys (case-insensitive) the way Spark does."""
        opts = {k.lower(): str(v) for k, v in (options or {}).items()}
        depth = opts.get("recursive.fields.max.depth", "-1")
        if not depth.strip().lstrip("-").isdigit():
            raise SchemaError(
                f"from_protobuf option recursive.fields.max.depth='{depth}' must "
                "be a whole number (1 to 10)."
            )
        return cls(
            enums_as_ints=_flag(opts, "enums.as.ints"),
            upcast_unsigned_ints=_flag(opts, "upcast.unsigned.ints"),
            unwrap_wrappers=_flag(opts, "unwrap.primitive.wrapper.types"),
            any_as_json=_flag(opts, "convert.any.fields.to.json"),
            retain_empty_messages=_flag(opts, "retain.empty.message.types"),
            recursive_max_depth=int(depth),
            permissive=_permissive(opts.get("mode", "FAILFAST")),
        )


def _flag(opts: Mapping[str, str], key: str) -> bool:
    value = opts.get(key, "false").strip().lower()
    if value not in ("true", "false"):
        raise SchemaError(f"from_protobuf option {key}='{opts[key]}' must be true or false.")
    return value == "true"


def _permissive(mode: str) -> bool:
    """FAILFAST (the default) or PERMISSIVE; Spark reads any other name as PERMISSIVE, except
    DROPMALFORMED, which from_protobuf rejects."""
    mode = mode.strip().upper()
    if mode == "DROPMALFORMED":
        raise SchemaError(
            "from_protobuf does not support mode DROPMALFORMED: use FAILFAST or "
            "PERMISSIVE (malformed messages become a row of nulls)."
        )
    return mode != "FAILFAST"


def spark_schema(descriptor: Descriptor, options: Mapping[str, str] | None = None) -> T.StructType:
    """The ``StructType`` of ``from_protobuf(col, <descriptor's message>, ..., options)``
    (Struct, Value and ListValue as JSON text); ``None``: what the workbench decodes,
    :data:`DECODER_OPTIONS`. Pass ``{}`` for Spark's own defaults."""
    if options is None:
        options = DECODER_OPTIONS
    opts = ProtobufOptions.parse(options)
    fields = _struct_fields(descriptor, {descriptor.full_name: 1}, opts)
    if not fields and opts.retain_empty_messages:
        fields = [T.StructField(_DUMMY, T.StringType())]
    schema = T.StructType(fields)
    return cast(T.StructType, _as_nullable(schema)) if opts.permissive else schema


def ddl(descriptor: Descriptor, options: Mapping[str, str] | None = None) -> str:
    """:func:`spark_schema` as a DDL string, as Spark's ``StructType.toDDL`` writes it."""
    return ",".join(
        f"{_quote(f.name)} {_sql(f.dataType)}{_not_null(f)}"
        for f in spark_schema(descriptor, options).fields
    )


def _struct_fields(
    descriptor: Descriptor, seen: dict[str, int], opts: ProtobufOptions
) -> list[T.StructField]:
    found = (_struct_field(fd, seen, opts) for fd in descriptor.fields)
    return [f for f in found if f is not None]


def _struct_field(
    fd: FieldDescriptor, seen: dict[str, int], opts: ProtobufOptions
) -> T.StructField | None:
    data_type = _data_type(fd, seen, opts)
    if data_type is None:
        return None
    meta: dict | None = {JSON_TEXT: True} if _holds_json(fd, opts) else None
    if isinstance(data_type, T.StructType) and fd.message_type is not None:
        cut = sorted({f.name for f in fd.message_type.fields} - set(data_type.names))
        if cut:
            meta = {**(meta or {}), CUT: cut}
    if isinstance(data_type, T.MapType):
        return T.StructField(fd.name, data_type, metadata=meta)
    if fd.is_repeated:
        return T.StructField(fd.name, T.ArrayType(data_type, containsNull=False), metadata=meta)
    return T.StructField(fd.name, data_type, nullable=not fd.is_required, metadata=meta)


def _holds_json(fd: FieldDescriptor, opts: ProtobufOptions) -> bool:
    """Whether the field's strings (its values, for a map) are JSON text."""
    message = fd.message_type
    if message is not None and message.GetOptions().map_entry:
        message = message.fields_by_name["value"].message_type
    if message is None:
        return False
    return message.full_name in _JSON_TYPES or (
        opts.any_as_json and message.full_name == "google.protobuf.Any"
    )


def is_json_text(field: T.StructField) -> bool:
    """Whether ``field`` (its elements or map values, if a collection) holds JSON text."""
    return bool(field.metadata.get(JSON_TEXT))


def _data_type(
    fd: FieldDescriptor, seen: dict[str, int], opts: ProtobufOptions
) -> T.DataType | None:
    if fd.type in _INT:
        wide = fd.type == FieldDescriptor.TYPE_UINT32 and opts.upcast_unsigned_ints
        return T.LongType() if wide else T.IntegerType()
    if fd.type in _LONG:
        wide = fd.type == FieldDescriptor.TYPE_UINT64 and opts.upcast_unsigned_ints
        return T.DecimalType(20, 0) if wide else T.LongType()
    if fd.type == FieldDescriptor.TYPE_ENUM:
        return T.IntegerType() if opts.enums_as_ints else T.StringType()
    if fd.type in _SIMPLE:
        return _SIMPLE[fd.type]
    return _message_type(fd, seen, opts)


def _message_type(
    fd: FieldDescriptor, seen: dict[str, int], opts: ProtobufOptions
) -> T.DataType | None:
    message = fd.message_type
    special = _special_type(message, opts)
    if special is not None:
        return special
    if fd.is_repeated and message.GetOptions().map_entry:
        return _map_type(message, seen, opts)
    return _nested_type(fd, seen, opts)


def _special_type(message: Descriptor, opts: ProtobufOptions) -> T.DataType | None:
    """Struct/Value/ListValue as JSON, Timestamp/Duration (matched by simple name and fields),
    Any as JSON, unwrapped wrappers."""
    if message.full_name in _JSON_TYPES:
        return T.StringType()
    if [f.name for f in message.fields] == ["seconds", "nanos"]:
        if message.name == "Duration":
            return T.DayTimeIntervalType()
        if message.name == "Timestamp":
            return T.TimestampType()
    if opts.any_as_json and message.full_name == "google.protobuf.Any":
        return T.StringType()
    if opts.unwrap_wrappers and message.full_name in _WRAPPERS:
        return _WRAPPERS[message.full_name]
    if opts.unwrap_wrappers and message.full_name in _UNSIGNED_WRAPPERS:
        narrow, wide = _UNSIGNED_WRAPPERS[message.full_name]
        return wide if opts.upcast_unsigned_ints else narrow
    return None


def _map_type(entry: Descriptor, seen: dict[str, int], opts: ProtobufOptions) -> T.MapType | None:
    types = {f.name: _struct_field(f, seen, opts) for f in entry.fields}
    key, value = types.get("key"), types.get("value")
    if key is None or value is None:
        return None
    return T.MapType(key.dataType, value.dataType, valueContainsNull=False)


def _nested_type(
    fd: FieldDescriptor, seen: dict[str, int], opts: ProtobufOptions
) -> T.DataType | None:
    name, limit = fd.message_type.full_name, opts.recursive_max_depth
    depth = seen.get(name, 0)
    if name in seen and (limit <= 0 or limit > 10):
        raise SchemaError(
            f"Field {fd.full_name} makes message {name} recursive: set how deep it may "
            "nest (a stream's max_recursion_depth, from_protobuf's "
            "recursive.fields.max.depth), 1 to 10."
        )
    if name in seen and depth >= limit:
        return None
    fields = _struct_fields(fd.message_type, {**seen, name: depth + 1}, opts)
    if fields:
        return T.StructType(fields)
    return (
        T.StructType([T.StructField(_DUMMY, T.StringType())])
        if opts.retain_empty_messages
        else None
    )


def _as_nullable(data_type: T.DataType) -> T.DataType:
    """Spark's ``DataType.asNullable``: every field, element and value may be null."""
    if isinstance(data_type, T.StructType):
        return T.StructType(
            [
                T.StructField(f.name, _as_nullable(f.dataType), True, f.metadata)
                for f in data_type.fields
            ]
        )
    if isinstance(data_type, T.ArrayType):
        return T.ArrayType(_as_nullable(data_type.elementType), True)
    if isinstance(data_type, T.MapType):
        return T.MapType(_as_nullable(data_type.keyType), _as_nullable(data_type.valueType), True)
    return data_type


_PLAIN_NAME = re.compile(r"[A-Za-z0-9_]+")
_SQL_NAMES = {
    T.IntegerType: "INT",
    T.LongType: "BIGINT",
    T.StringType: "STRING",
    T.DoubleType: "DOUBLE",
    T.FloatType: "FLOAT",
    T.BooleanType: "BOOLEAN",
    T.BinaryType: "BINARY",
    T.TimestampType: "TIMESTAMP",
    T.DayTimeIntervalType: "INTERVAL DAY TO SECOND",
}


def _quote(name: str) -> str:
    if _PLAIN_NAME.fullmatch(name) and not name.isdigit():
        return name
    return "`" + name.replace("`", "``") + "`"


def _not_null(field: T.StructField) -> str:
    return "" if field.nullable else " NOT NULL"


def _sql(data_type: T.DataType) -> str:
    if isinstance(data_type, T.StructType):
        inner = ", ".join(
            f"{_quote(f.name)}: {_sql(f.dataType)}{_not_null(f)}" for f in data_type.fields
        )
        return f"STRUCT<{inner}>"
    if isinstance(data_type, T.ArrayType):
        return f"ARRAY<{_sql(data_type.elementType)}>"
    if isinstance(data_type, T.MapType):
        return f"MAP<{_sql(data_type.keyType)}, {_sql(data_type.valueType)}>"
    if isinstance(data_type, T.DecimalType):
        return f"DECIMAL({data_type.precision},{data_type.scale})"
    return _SQL_NAMES[type(data_type)]
