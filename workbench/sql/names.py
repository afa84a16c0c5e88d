"""Table names: every table the SQL reads is a known stream; views get unique names.

Spark resolves tables in a session-wide namespace, so each plan registers its inputs
under its own view names; the SQL keeps the table name as the alias so qualified
columns (``booking.status``) still resolve.
"""

from __future__ import annotations

from collections.abc import Mapping

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
