"""Protobuf records to Spark rows, decoded on the JVM (no Python in the hot loop).

Spark's ``from_protobuf`` lives in the ``spark-protobuf`` connector, which the Maven mirror
does not carry, so the workbench decodes with its own Java UDF
(``io.daggerworkbench.udf.ProtoDecode`` in the UDF jar). :func:`decoder` registers it for a
message and returns a function from a binary column to a ``struct<message, error>`` column:

* ``message`` has the type :func:`workbench.schemas.sparktypes.spark_schema` gives the
  message (``from_protobuf``'s, default options); ``error`` is null;
* a record that is null, does not parse, or lacks ``required_field`` gets a null ``message``
  and an ``error`` saying why (``cannot decode esb.booking.BookingLogMessage: ...``,
  ``missing event time field 'event_timestamp'``, ``empty record``), for a dead-letter
  output; the job never fails on a bad record.

Unset fields read as in ``from_protobuf``: repeated fields and maps empty, fields with a
declared (proto2) default that default, the rest null. ``emit_defaults`` (the default) adds
what Dagger's generated getters (and Spark's ``emit.default.values``) give: unset proto3
scalars read as their defaults (0, "", false, the enum's first value). Messages,
``optional`` fields and oneof members are null when unset either way.

Values as Spark holds them: enums by name (an unknown number as protobuf-java names it,
``UNKNOWN_ENUM_VALUE_<Enum>_<number>``); uint32/uint64 as INT/BIGINT holding the same bits
(2**63 reads as -2**63); Timestamp as TIMESTAMP and Duration as INTERVAL DAY TO SECOND, to
the microsecond (nanos truncated; seconds outside 0001..9999 years are an error); wrappers
as their value (null when unset); ``Struct``, ``Value``, ``ListValue`` as compact JSON text
(``{"a":1}``, ``"x"``, ``[1,true]``; whole numbers without ``.0``), ``Any`` as JSON with its
``@type`` (the packed message's fields when its type is in the registry, else its bytes in
base64 as ``value``). A message holding itself nests at most ``max_recursion_depth`` times
(:data:`~workbench.schemas.DEFAULT_RECURSION_DEPTH` unless given); deeper
levels are left out.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING

from workbench.exceptions import UnknownNameError
from workbench.schemas import DEFAULT_RECURSION_DEPTH

if TYPE_CHECKING:
    from pyspark.sql import Column, SparkSession
    from pyspark.sql.types import StructType

    from workbench.schemas.registry import SchemaRegistry

JAVA_CLASS = "io.daggerworkbench.udf.ProtoDecode"
MESSAGE, ERROR = "message", "error"


def decoded_type(
    registry: SchemaRegistry,
    message: str,
    max_recursion_depth: int = DEFAULT_RECURSION_DEPTH,
    fields: Collection[str] | None = None,
) -> StructType:
    """``struct<message: <the message's Spark type>, error: string>``, what a decoder gives;
    with ``fields``, the message's columns are those top-level fields only."""
    from pyspark.sql import types as T

    from workbench.schemas.sparktypes import decoder_options, spark_schema

    options = decoder_options(max_recursion_depth)
    columns = spark_schema(registry.descriptor(message), options)
    if fields is not None:
        columns = T.StructType([f for f in columns.fields if f.name in fields])
    return T.StructType([T.StructField(MESSAGE, columns), T.StructField(ERROR, T.StringType())])


def decoder(
    spark: SparkSession,
    registry: SchemaRegistry,
    message: str,
    required_field: str | None = None,
    emit_defaults: bool = True,
    max_recursion_depth: int = DEFAULT_RECURSION_DEPTH,
    fields: Collection[str] | None = None,
) -> Callable[[Column], Column]:
    """A function from a binary column of ``message`` records to their decoded struct.

    ``message`` is a full, Java or unique simple name (see ``SchemaRegistry.resolve``);
    ``required_field`` a top-level field (the event time) whose absence is an error;
    ``max_recursion_depth`` how often a message may nest in itself (1 to 10); ``fields``
    the top-level fields to decode (None: all; the required field is always decoded): the
    others get no column and are skipped on the wire, framed but not read, so a record
    whose bytes in a skipped field are bad (not UTF-8, a broken nested message) decodes. The
    UDF is registered on ``spark`` once, under :func:`function_name`, so SQL can call it too.

    Project the struct once (``frame.select(decode(col).alias("decoded"))``) and read its
    fields from there: every mention of the decode expression itself runs the UDF again.
    The UDF is registered as nondeterministic, so the optimizer never duplicates it.
    """
    from pyspark.sql import functions as F

    full = registry.resolve(message)
    _check_required(decoded_type(registry, full, max_recursion_depth), full, required_field)
    if fields is not None:
        fields = _kept(registry, full, {*fields, *([required_field] if required_field else [])})
    returns = decoded_type(registry, full, max_recursion_depth, fields)
    name = function_name(registry, full, required_field, emit_defaults, max_recursion_depth, fields)
    if not spark.catalog.functionExists(name):
        jvm = spark._jvm
        assert jvm is not None, "the decoder needs a classic (not Spark Connect) session"
        udf = getattr(jvm, JAVA_CLASS)(
            bytearray(registry.descriptor_set()),
            full,
            required_field,
            emit_defaults,
            max_recursion_depth,
            None if fields is None else ",".join(fields),
        )
        session = spark._jsparkSession
        # Nondeterministic in name only: it keeps the optimizer from copying the call into
        # a pushed-down filter (`error IS NULL`) and the projection, decoding twice.
        session.udf().register(name, udf.asUdf(session.parseDataType(returns.json())))
    return functools.partial(F.call_function, name)


def function_name(
    registry: SchemaRegistry,
    message: str,
    required_field: str | None = None,
    emit_defaults: bool = True,
    max_recursion_depth: int = DEFAULT_RECURSION_DEPTH,
    fields: Collection[str] | None = None,
) -> str:
    """The session function a :func:`decoder` registers: ``decode_<message>_<hash>``, the hash
    over the schemas and options, so different schemas or options never share a name."""
    full = registry.resolve(message)
    h = hashlib.sha256(registry.descriptor_set())
    h.update(f"\0{full}\0{required_field}\0{emit_defaults}\0{max_recursion_depth}".encode())
    if fields is not None:
        h.update(f"\0{','.join(sorted(fields))}".encode())
    simple = re.sub(r"[^0-9a-z]+", "_", full.rsplit(".", 1)[-1].lower())
    return f"decode_{simple}_{h.hexdigest()[:10]}"


def _kept(registry: SchemaRegistry, message: str, fields: set[str]) -> list[str]:
    """``fields`` with every member of a oneof one of them is in (the member set last on the
    wire wins, so its siblings are read too), sorted."""
    kept = set(fields)
    for field in registry.descriptor(message).fields:
        oneof = field.containing_oneof
        if field.name in fields and oneof is not None:
            kept.update(member.name for member in oneof.fields)
    return sorted(kept)


def _check_required(returns: StructType, message: str, field: str | None) -> None:
    columns = returns[MESSAGE].dataType.fieldNames()  # type: ignore[attr-defined]
    if field is not None and field not in columns:
        raise UnknownNameError("field", field, columns, where=f"in message {message}")
