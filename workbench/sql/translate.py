"""Translate dagger SQL (Flink style) into Spark SQL, one pipeline for every mode.

Preview, replay and production all run the SQL this module returns, so what an
analyst previews is what the streaming job computes.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from workbench.exceptions import SqlError
from workbench.sql import enums, functions, joins, laterals, literals, names, windows
from workbench.sql.dialect import dagger_dialect
from workbench.sql.parse import parse

_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Translation:
    source: str  # the dagger SQL as written
    sql: str  # the Spark SQL to run
    tables: list[str]  # stream tables the query reads, in order of use
    views: dict[str, str] = field(default_factory=dict)  # table → view name used in ``sql``


def translate(
    sql: str,
    tables: Mapping[str, Any] | Iterable[str],
    views: Mapping[str, str] | None = None,
    enum_fields: enums.Enums | None = None,
) -> Translation:
    """Spark SQL for ``sql`` over ``tables``.

    ``tables`` maps each stream table to its Spark schema (a ``StructType``, used to
    tell arrays of rows from arrays of values in UNNEST) or is just the table names.
    ``views`` renames tables to the temp-view names the plan registers.
    ``enum_fields`` gives each table's enum fields and their values (see :mod:`.enums`).
    """
    schemas = dict(tables) if isinstance(tables, Mapping) else {t: None for t in tables}
    views = dict(views) if views is not None else {t: t for t in schemas}
    with _room_for_nesting():
        try:
            return _translate(sql, schemas, views, enum_fields)
        except RecursionError:
            raise SqlError(
                "The SQL nests too deeply to translate: simplify it (fewer nested "
                "parentheses or subqueries, or a WITH clause).",
                sql,
            ) from None


def _translate(
    sql: str,
    schemas: dict[str, Any],
    views: dict[str, str],
    enum_fields: enums.Enums | None,
) -> Translation:
    tree = parse(sql)
    used = names.check_and_rename(tree, sql, views)
    functions.check_names(tree, sql)
    enums.check(tree, sql, enum_fields or {}, views)
    literals.check(tree, sql, schemas, views, enum_fields or {})
    originals = _unaliased_projections(tree)
    windows.rewrite(tree, sql)
    laterals.rewrite(tree, sql, _element_fields(tree, schemas, views))
    joins.rewrite(tree, sql)
    functions.rewrite(tree, sql)
    _keep_names(originals)
    _quote_unusual_names(tree)
    return Translation(sql, tree.sql(dialect=dagger_dialect()), used, views)


@contextmanager
def _room_for_nesting(frames: int = 20_000) -> Iterator[None]:
    """sqlglot parses and generates recursively, about 20 frames per nesting level."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, frames))
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


def _quote_unusual_names(tree: exp.Expr) -> None:
    """Names Spark only reads quoted (``ä``, ``статус``: Flink takes them as they are)."""
    for identifier in tree.find_all(exp.Identifier):
        if not identifier.quoted and not _PLAIN_NAME.fullmatch(identifier.name):
            identifier.set("quoted", True)


def _unaliased_projections(tree: exp.Expr) -> list[tuple[exp.Select, int, str]]:
    dialect = dagger_dialect()
    found = []
    for select in tree.find_all(exp.Select):
        for i, projection in enumerate(select.expressions):
            if not isinstance(projection, exp.Alias | exp.Column | exp.Star):
                text = projection.sql(dialect=dialect, normalize_functions=False)
                found.append((select, i, text))
    return found


def _keep_names(originals: list[tuple[exp.Select, int, str]]) -> None:
    """A rewritten projection keeps the name its original expression would have had."""
    dialect = dagger_dialect()
    for select, i, text in originals:
        projection = select.expressions[i]
        if projection.sql(dialect=dialect, normalize_functions=False) != text:
            projection.replace(exp.alias_(projection, exp.to_identifier(text, quoted=True)))


def _element_fields(
    tree: exp.Expr, schemas: Mapping[str, Any], views: Mapping[str, str]
) -> laterals.ElementFields:
    by_view = {view.lower(): schemas.get(table) for table, view in views.items()}
    aliases = {
        t.alias_or_name.lower(): by_view.get(t.name.lower()) for t in tree.find_all(exp.Table)
    }

    def answer(parts: list[str]) -> list[str] | None:
        head = parts[0].lower()
        if head in aliases and len(parts) > 1:
            return _row_fields(aliases[head], parts[1:])
        found = [f for f in (_row_fields(s, parts) for s in by_view.values()) if f is not None]
        return found[0] if len(found) == 1 else None

    return answer


def _row_fields(schema: Any, path: list[str]) -> list[str] | None:
    from pyspark.sql.types import ArrayType, StructType

    node = schema
    for part in path:
        if not isinstance(node, StructType):
            return None
        match = [f for f in node.fields if f.name.lower() == part.lower()]
        if not match:
            return None
        node = match[0].dataType
    if not isinstance(node, ArrayType):
        return None
    element = node.elementType
    return [f.name for f in element.fields] if isinstance(element, StructType) else []
