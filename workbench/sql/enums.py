"""Enum fields compared with a value outside the enum: an error, not an empty result.

Protobuf enums decode as their value names (strings), so ``status = 'COMPLETE'`` on a
``BookingStatus`` field is valid SQL that never holds: the query silently returns
nothing. When a stream's enum fields are known (:func:`values_of`), a comparison of
one with a string literal (``=``, ``<>``, ``IN``) must name one of its values.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from sqlglot import exp

from workbench.exceptions import did_you_mean
from workbench.sql import names, positions

if TYPE_CHECKING:
    from workbench.schemas import SchemaRegistry

#: table -> enum field (lower case) -> the enum's value names
Enums = Mapping[str, Mapping[str, Sequence[str]]]


def values_of(registry: SchemaRegistry, message: str) -> dict[str, list[str]]:
    """The message's top-level enum fields (lower case) and their value names."""
    return {
        f.name.lower(): list(f.enum_values) for f in registry.fields(message) if f.kind == "enum"
    }


def check(tree: exp.Expr, sql: str, enums: Enums, views: Mapping[str, str]) -> None:
    """Raise at the literal of the first comparison with a value outside its enum."""
    if not any(enums.values()):
        return
    for node in tree.find_all(exp.EQ, exp.NEQ, exp.In):
        for column, literal in _comparisons(node):
            values = _field_values(column, views, enums)
            if values is not None and literal.name not in values:
                raise positions.error(
                    f"'{literal.name}' is not a value of the enum field '{column.name}', so "
                    f"this comparison never holds.{did_you_mean(literal.name, values)}",
                    sql,
                    literal,
                )


def _comparisons(node: exp.Expr) -> list[tuple[exp.Column, exp.Literal]]:
    if isinstance(node, exp.In):
        column, literals = node.this, node.expressions
    else:
        column, literals = node.this, [node.expression]
        if isinstance(node.expression, exp.Column):
            column, literals = node.expression, [node.this]
    if not isinstance(column, exp.Column):
        return []
    return [(column, v) for v in literals if isinstance(v, exp.Literal) and v.is_string]


def _field_values(
    column: exp.Column, views: Mapping[str, str], enums: Enums
) -> Sequence[str] | None:
    """The enum values of the stream field ``column`` reads, when that is certain."""
    table = names.stream_of(column, views, lambda t, n: n in (enums.get(t) or {}))
    return None if table is None else enums[table][column.name.lower()]
