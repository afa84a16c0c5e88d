"""Parse dagger SQL into a sqlglot tree, turning parser errors into :class:`SqlError`."""

from __future__ import annotations

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from workbench.exceptions import SqlError
from workbench.sql.dialect import dagger_dialect


def parse(sql: str) -> exp.Query:
    if not sql or not sql.strip():
        raise SqlError("The SQL is empty: write a SELECT over the stream tables.", sql or "")
    try:
        statements = [s for s in sqlglot.parse(sql, read=dagger_dialect()) if s is not None]
    except ParseError as err:
        raise _from_parse_error(err, sql) from None
    except TokenError as err:
        raise SqlError(f"Cannot read the SQL: {err}.", sql) from None
    if len(statements) != 1:
        raise SqlError(
            f"Expected one SQL query, found {len(statements)}: remove the extra "
            "statements (a dagger runs a single query).",
            sql,
        )
    tree = statements[0]
    if not isinstance(tree, exp.Query):
        raise SqlError(
            f"A dagger's SQL must be a query (SELECT ...), not {tree.key.upper()}.", sql, 1, 1
        )
    return tree


def _from_parse_error(err: ParseError, sql: str) -> SqlError:
    first = err.errors[0] if err.errors else {}
    line, col = first.get("line"), first.get("col")
    highlight = first.get("highlight") or ""
    description = first.get("description") or str(err)
    if description.startswith("Required keyword"):
        description = "incomplete expression: something is missing here"
    start = col - len(highlight) + 1 if col and highlight else col
    return SqlError(f"Syntax error: {description}.", sql, line, start, len(highlight) or 1)
