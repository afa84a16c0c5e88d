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
(:data:`~workbench.spec.DEFAULT_RECURSION_DEPTH` unless given); deeper
levels are left out.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from workbench.exceptions import UnknownNameError
from workbench.spec import DEFAULT_RECURSION_DEPTH

if TYPE_CHECKING:
    from pyspark.sql import Column, SparkSession
    from pyspark.sql.types import StructType

    from workbench.schemas.registry import SchemaRegistry

JAVA_CLASS = "io.daggerworkbench.udf.ProtoDecode"
MESSAGE, ERROR = "message", "error"


def decoded_type(
    registry: SchemaRegistry, message: str, max_recursion_depth: int = DEFAULT_RECURSION_DEPTH
) -> StructType:
    """``struct<message: <the message's Spark type>, error: string>``, what a decoder gives."""
    from pyspark.sql import types as T

    from workbench.schemas.sparktypes import decoder_options, spark_schema

    options = decoder_options(max_recursion_depth)
    return T.StructType(
        [
            T.StructField(MESSAGE, spark_schema(registry.descriptor(message), options)),
            T.StructField(ERROR, T.StringType()),
        ]
    )


def decoder(
    spark: SparkSession,
    registry: SchemaRegistry,
    message: str,
    required_field: str | None = None,
    emit_defaults: bool = True,
    max_recursion_depth: int = DEFAULT_RECURSION_DEPTH,
) -> Callable[[Column], Column]:
    """A function from a binary column of ``message`` records to their decoded struct.

    ``message`` is a full, Java or unique simple name (see ``SchemaRegistry.resolve``);
    ``required_field`` a top-level field (the event time) whose absence is an error;
    ``max_recursion_depth`` how often a message may nest in itself (1 to 10). The
    UDF is registered on ``spark`` once, under :func:`function_name`, so SQL can call it too.

    Project the struct once (``frame.select(decode(col).alias("decoded"))``) and read its
    fields from there: every mention of the decode expression itself runs the UDF again.
    The UDF is registered as nondeterministic, so the optimizer never duplicates it.
    """
    from pyspark.sql import functions as F

    full = registry.resolve(message)
    returns = decoded_type(registry, full, max_recursion_depth)
    _check_required(returns, full, required_field)
    name = function_name(registry, full, required_field, emit_defaults, max_recursion_depth)
    if not spark.catalog.functionExists(name):
        jvm = spark._jvm
        assert jvm is not None, "the decoder needs a classic (not Spark Connect) session"
        udf = getattr(jvm, JAVA_CLASS)(
            bytearray(registry.descriptor_set()),
            full,
            required_field,
            emit_defaults,
            max_recursion_depth,
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
) -> str:
    """The session function a :func:`decoder` registers: ``decode_<message>_<hash>``, the hash
    over the schemas and options, so different schemas or options never share a name."""
    full = registry.resolve(message)
    h = hashlib.sha256(registry.descriptor_set())
    h.update(f"\0{full}\0{required_field}\0{emit_defaults}\0{max_recursion_depth}".encode())
    simple = re.sub(r"[^0-9a-z]+", "_", full.rsplit(".", 1)[-1].lower())
    return f"decode_{simple}_{h.hexdigest()[:10]}"


def _check_required(returns: StructType, message: str, field: str | None) -> None:
    columns = returns[MESSAGE].dataType.fieldNames()  # type: ignore[attr-defined]
    if field is not None and field not in columns:
        raise UnknownNameError("field", field, columns, where=f"in message {message}")
