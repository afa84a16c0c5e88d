"""Table names: every table the SQL reads is a known stream; views get unique names.

Spark resolves tables in a session-wide namespace, so each plan registers its inputs
under its own view names; the SQL keeps the table name as the alias so qualified
columns (``booking.status``) still resolve.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from sqlglot import exp

from workbench.exceptions import SqlError, did_you_mean
from workbench.sql import positions


def _ctes(tree: exp.Expr) -> set[str]:
    return {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}


def stream_tables(tree: exp.Expr) -> list[exp.Table]:
    """The table references that name streams (not CTEs, not lateral functions)."""
    ctes = _ctes(tree)
    return [t for t in tree.find_all(exp.Table) if t.name and t.name.lower() not in ctes]


def check_and_rename(tree: exp.Expr, sql: str, views: Mapping[str, str]) -> list[str]:
    """Check table names against ``views`` (table → view name) and point them at the views.

    Table names match case-insensitively, as in Flink. Returns the tables used.
    """
    lookup = {name.lower(): name for name in views}
    used: list[str] = []
    for table in stream_tables(tree):
        name = lookup.get(table.name.lower())
        if name is None:
            pos = positions.of(table)
            raise SqlError(
                f"Unknown table '{table.name}'.{did_you_mean(table.name, views)}",
                sql,
                pos.line if pos else None,
                pos.column if pos else None,
                pos.length if pos else 1,
            )
        if name not in used:
            used.append(name)
        if views[name] != table.name:
            alias = table.alias or table.name
            table.set("this", exp.to_identifier(views[name]))
            table.set("alias", exp.TableAlias(this=exp.to_identifier(alias)))
    return used


def stream_of(
    column: exp.Column, views: Mapping[str, str], has: Callable[[str, str], bool]
) -> str | None:
    """The stream table ``column`` reads, when that is certain (after :func:`check_and_rename`):
    its qualifier names a stream of its SELECT, or it is unqualified, every relation of its
    SELECT is a stream and exactly one of them ``has(table, field)`` (lower case)."""
    select = column.find_ancestor(exp.Select)
    if select is None or len(column.parts) > 2:
        return None
    tables = {view.lower(): table for table, view in views.items()}
    relations = [select.args.get("from_"), *(select.args.get("joins") or [])]
    sources = [r.this for r in relations if r is not None]
    streams = {
        s.alias_or_name.lower(): tables[s.name.lower()]
        for s in sources
        if isinstance(s, exp.Table) and s.name.lower() in tables
    }
    name = column.name.lower()
    if column.table:
        table = streams.get(column.table.lower())
        return table if table is not None and has(table, name) else None
    if len(streams) != len(sources):  # a subquery might provide the column
        return None
    found = {t for t in streams.values() if has(t, name)}
    return found.pop() if len(found) == 1 else None
