"""A spec's streams resolved against the schema registry: message, Spark schema, event time.

Resolution checks what can be checked without Kafka: the message exists, and its
event-timestamp field exists and can hold a time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from workbench.exceptions import SpecError, UnknownNameError
from workbench.schemas import default_registry_with, spark_schema

if TYPE_CHECKING:
    from workbench.schemas import SchemaRegistry
    from workbench.spec import DaggerSpec, StreamSpec

_TIME_TYPES = {"google.protobuf.Timestamp"}
_MILLIS_TYPES = {"int64", "uint64", "sint64", "fixed64", "sfixed64"}


def _type_name(field: Any) -> str:
    """The .proto spelling of a scalar field's type (``int64``, ``string``, ...)."""
    names = {
        getattr(field, attr): attr.removeprefix("TYPE_").lower()
        for attr in dir(field)
        if attr.startswith("TYPE_") and isinstance(getattr(field, attr), int)
    }
    return names.get(field.type, "value")


def time_field_problem(field: Any) -> str | None:
    """Why the protobuf ``field`` cannot hold an event time (None when it can): it must
    be a google.protobuf.Timestamp or a 64-bit integer of epoch milliseconds."""
    if field.message_type is not None and field.message_type.full_name in _TIME_TYPES:
        return None
    kind = field.message_type.full_name if field.message_type else _type_name(field)
    if kind in _MILLIS_TYPES and not field.is_repeated:
        return None
    return (
        f"'{field.name}' (field {field.number}) is a {kind}; the event time must be a "
        "google.protobuf.Timestamp or int64 epoch milliseconds"
    )


@dataclass(frozen=True)
class ResolvedStream:
    spec: StreamSpec
    message: str  # full protobuf name
    schema: Any  # pyspark StructType, as from_protobuf decodes it


def registry_for(spec: DaggerSpec) -> SchemaRegistry:
    """The registry ``spec`` decodes with: the default one plus the spec's ``schemas``."""

    return default_registry_with(spec.schemas)


def resolve(spec: DaggerSpec, registry: SchemaRegistry | None = None) -> list[ResolvedStream]:
    registry = registry or registry_for(spec)
    return [_resolve(i, stream, registry) for i, stream in enumerate(spec.streams)]


def _resolve(index: int, stream: StreamSpec, registry: SchemaRegistry) -> ResolvedStream:
    from workbench.schemas.sparktypes import decoder_options

    key = f"streams[{index}]"
    try:
        descriptor = registry.descriptor(stream.message)
    except UnknownNameError as err:
        raise SpecError(f"{key}.message", str(err)) from None
    field = descriptor.fields_by_name.get(stream.event_timestamp_field)
    if field is None:
        known = UnknownNameError(
            "field", stream.event_timestamp_field, [f.name for f in descriptor.fields]
        )
        raise SpecError(f"{key}.event_timestamp_field", f"{known} (in {descriptor.full_name})")
    problem = time_field_problem(field)
    if problem:
        raise SpecError(f"{key}.event_timestamp_field", f"{problem}. Name another field.")
    options = decoder_options(stream.max_recursion_depth)
    return ResolvedStream(stream, descriptor.full_name, spark_schema(descriptor, options))
