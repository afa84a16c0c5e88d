"""A column compared with a literal of another type: an error where it is written.

Spark plans ``amount > 'expensive'`` (a DOUBLE against text) and fails as it runs, casting
the text row by row (``CAST_INVALID_INPUT``, a Java ``NumberFormatException``); it refuses
``rowtime > 5`` only at analysis, in terms of the translated SQL. Flink refuses both when it
validates the query. Here, when the streams' Spark schemas are known, a comparison (``=``,
``<>``, ``<``, ``<=``, ``>``, ``>=``, ``IN``, ``BETWEEN``) of a stream column with a
literal must hold a literal Spark reads as the column's type: a number for a numeric
column, text for a string column, a timestamp for a timestamp. Enum fields decode as their
value names (strings), so they compare with a name in quotes (which :mod:`.enums` checks),
never with the enum's number.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from sqlglot import exp

from workbench.sql import names, positions
from workbench.sql.enums import Enums

#: Text Spark casts to BOOLEAN (case-insensitive).
_BOOLEANS = {"true", "false", "t", "f", "yes", "no", "y", "n", "1", "0"}
_INTEGER = re.compile(r"[+-]?\d+")
_PARTIAL_DATE = re.compile(r"\d{4}(-\d{1,2})?")


def check(
    tree: exp.Expr,
    sql: str,
    schemas: Mapping[str, Any],
    views: Mapping[str, str],
    enums: Enums,
) -> None:
    """Raise at the literal of the first comparison that Spark could only fail on."""
    fields = {t: {f.name.lower(): f.dataType for f in s.fields} for t, s in schemas.items() if s}
    if not fields:
        return
    for column, literal in _comparisons(tree):
        table = names.stream_of(column, views, lambda t, n: n in fields.get(t, {}))
        if table is None:
            continue
        name = column.name.lower()
        problem = _problem(fields[table][name], column, literal, (enums.get(table) or {}).get(name))
        if problem:
            raise positions.error(problem, sql, literal)


def _comparisons(tree: exp.Expr) -> Iterator[tuple[exp.Column, exp.Expr]]:
    """(stream column, literal) of every comparison of one with the other."""
    for node in tree.find_all(*_OPERATORS, exp.In, exp.Between):
        if isinstance(node, exp.In):
            pairs = [(node.this, v) for v in node.expressions]
        elif isinstance(node, exp.Between):
            pairs = [(node.this, node.args.get("low")), (node.this, node.args.get("high"))]
        else:
            pairs = [(node.this, node.expression), (node.expression, node.this)]
        for column, other in pairs:
            if isinstance(column, exp.Column) and _is_literal(other):
                yield column, other


def _is_literal(node: Any) -> bool:
    if isinstance(node, exp.Boolean):
        return True
    return isinstance(node, exp.Expr) and (node.is_number or node.is_string)


def _problem(
    kind: Any, column: exp.Column, literal: exp.Expr, enum_values: Sequence[str] | None
) -> str | None:
    """Why Spark cannot compare a column of Spark type ``kind`` with ``literal`` (None: it
    can)."""
    from pyspark.sql import types as T

    rule = next((r for r in _RULES if isinstance(kind, tuple(getattr(T, t) for t in r[0]))), None)
    if rule is None:
        return None
    _, readable, want, example = rule
    name, given, op = column.sql(), literal.sql(), _operator(literal)
    if enum_values is not None:
        if literal.is_string:
            return None  # a value name: .enums checks that it is one of the enum's
        named = [v for v in enum_values if not v.endswith("UNKNOWN")] or list(enum_values)
        return (
            f"{given} cannot be compared with {name}, an enum field: it holds the enum's "
            f"value names as text, so compare it with one in quotes, e.g. {name} {op} "
            f"'{named[0] if named else 'NAME'}' (wb.schema() and `workbench schemas show` "
            "list them)."
        )
    if readable(literal):
        return None
    spark_type = kind.simpleString().upper()
    return (
        f"{given} cannot be compared with {name} ({spark_type}): give {want}, e.g. "
        f"{name} {op} {example}."
    )


def _operator(literal: exp.Expr) -> str:
    parent = literal.parent
    while isinstance(parent, exp.Neg | exp.Paren):
        parent = parent.parent
    return _OPERATORS.get(type(parent), "=")  # IN, BETWEEN: shown as =


def _number(literal: exp.Expr) -> bool:
    if literal.is_number:
        return True
    if not literal.is_string:
        return False
    try:
        Decimal(literal.name.strip())
    except InvalidOperation:
        return False
    return True


def _integer(literal: exp.Expr) -> bool:
    """A number, or text Spark casts to BIGINT (``'3'``, not ``'1.5'``)."""
    if literal.is_number:
        return True
    return literal.is_string and _INTEGER.fullmatch(literal.name.strip()) is not None


def _text(literal: exp.Expr) -> bool:
    return literal.is_string


def _timestamp(literal: exp.Expr) -> bool:
    if not literal.is_string:
        return False
    text = literal.name.strip()
    if _PARTIAL_DATE.fullmatch(text):  # Spark reads '2026' and '2026-01' too
        return True
    try:
        datetime.fromisoformat(text)
    except ValueError:
        return False
    return True


def _boolean(literal: exp.Expr) -> bool:
    if isinstance(literal, exp.Boolean):
        return True
    return literal.is_string and literal.name.strip().lower() in _BOOLEANS


_OPERATORS: dict[type, str] = {
    exp.EQ: "=", exp.NEQ: "<>", exp.GT: ">", exp.GTE: ">=", exp.LT: "<", exp.LTE: "<=",
    exp.NullSafeEQ: "<=>",
}  # fmt: skip
#: (pyspark type classes, literals Spark reads as them, what to give, an example)
_RULES: list[tuple[tuple[str, ...], Callable[[exp.Expr], bool], str, str]] = [
    (("ByteType", "ShortType", "IntegerType", "LongType"), _integer, "an integer", "100"),
    (("FloatType", "DoubleType", "DecimalType"), _number, "a number", "100"),
    (("StringType", "VarcharType", "CharType"), _text, "text in quotes", "'100'"),
    (("TimestampType", "TimestampNTZType", "DateType"), _timestamp, "a timestamp",
     "TIMESTAMP '2026-01-01 00:00:00'"),
    (("BooleanType",), _boolean, "TRUE or FALSE", "TRUE"),
]  # fmt: skip
