"""Whether a dagger's SQL still fits when its streams' messages move to another schema set.

Spark alone resolves a query's columns (``workbench validate`` plans it); the job service
has no Spark, but it knows the set a job runs on today and the set a new version asks
for. A column the SQL names that is a field of a stream's message today (at any depth)
and of none of those messages in the new set is what the new runs would fail on:
:func:`check` refuses it at its line and column (a :class:`SqlError`), with the new set's
close names (a renamed field: the wire format keeps it, the SQL does not).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from workbench.exceptions import UnknownNameError, did_you_mean

if TYPE_CHECKING:
    from google.protobuf.descriptor import Descriptor

    from workbench.schemas.registry import SchemaRegistry
    from workbench.spec import DaggerSpec


def check(spec: DaggerSpec, before: SchemaRegistry, after: SchemaRegistry) -> None:
    """Refuse (SqlError) a column of ``spec.sql`` that ``before``'s stream messages have
    and ``after``'s do not."""
    from workbench.sql import positions
    from workbench.sql.parse import parse

    old, new = field_names(spec, before), field_names(spec, after)
    gone = old - new
    if not gone:
        return
    tree = parse(spec.sql)
    for column in tree.find_all(exp.Column):
        for part in column.parts:
            if part.name in gone and part is not column.args.get("table"):
                raise positions.error(
                    f"Unknown column '{part.name}': the new schema set's stream messages "
                    f"have no field '{part.name}'.{did_you_mean(part.name, new)}",
                    spec.sql,
                    part,
                )


def field_names(spec: DaggerSpec, registry: SchemaRegistry) -> set[str]:
    """Every field name of the spec's stream messages in ``registry``, nested ones too."""
    names: set[str] = set()
    for stream in spec.streams:
        try:
            _collect(registry.descriptor(stream.message), names, set())
        except UnknownNameError:
            continue  # the stream check names it
    return names


def _collect(message: Descriptor, names: set[str], seen: set[str]) -> None:
    if message.full_name in seen or message.full_name.startswith("google.protobuf."):
        return
    seen.add(message.full_name)
    for field in message.fields:
        names.add(field.name)
        if field.message_type is not None:
            _collect(field.message_type, names, seen)
