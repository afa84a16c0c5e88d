"""Parse dagger SQL into a sqlglot tree, turning parser errors into :class:`SqlError`."""

from __future__ import annotations

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import TokenType

from workbench.exceptions import SqlError
from workbench.sql.dialect import dagger_dialect

#: Deepest nesting of parentheses (expressions and subqueries) a query may have.
MAX_NESTING = 100


def parse(sql: str) -> exp.Query:
    if not sql or not sql.strip():
        raise SqlError("The SQL is empty: write a SELECT over the stream tables.", sql or "")
    _check_nesting(sql)
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


def _check_nesting(sql: str) -> None:
    """Refuse parentheses nested deeper than :data:`MAX_NESTING`, at the first one too deep."""
    try:
        tokens = sqlglot.tokenize(sql, read=dagger_dialect())
    except TokenError:
        return  # the parser reports it
    depth = 0
    for token in tokens:
        if token.token_type == TokenType.L_PAREN:
            depth += 1
            if depth > MAX_NESTING:
                raise SqlError(
                    f"The SQL nests parentheses more than {MAX_NESTING} deep: "
                    "simplify the expression (or use a WITH clause).",
                    sql,
                    token.line,
                    token.col,
                )
        elif token.token_type == TokenType.R_PAREN:
            depth = max(depth - 1, 0)


def _from_parse_error(err: ParseError, sql: str) -> SqlError:
    first = err.errors[0] if err.errors else {}
    line, col = first.get("line"), first.get("col")
    highlight = first.get("highlight") or ""
    description = first.get("description") or str(err)
    if description.startswith("Required keyword"):
        description = "incomplete expression: something is missing here"
    start = col - len(highlight) + 1 if col and highlight else col
    return SqlError(f"Syntax error: {description}.", sql, line, start, len(highlight) or 1)
