"""Where a node or a name stands in the SQL the user wrote (1-based line and column)."""

from __future__ import annotations

from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.errors import TokenError

from workbench.exceptions import SqlError


@dataclass(frozen=True)
class Position:
    line: int
    column: int
    length: int = 1


def of(node: exp.Expr) -> Position | None:
    """The position sqlglot recorded for ``node`` (or its name identifier)."""
    for candidate in (node, node.args.get("this")):
        meta = getattr(candidate, "meta", None) or {}
        if "line" in meta and "col" in meta:
            length = meta.get("end", 0) - meta.get("start", 0) + 1
            return Position(meta["line"], meta["col"] - length + 1, length)
    return None


def locate(sql: str, name: str, followed_by: str | None = None) -> Position | None:
    """The first token spelling ``name`` (case-insensitive), optionally followed by a token."""
    try:
        tokens = sqlglot.tokenize(sql, read="spark")
    except TokenError:
        return None
    for i, token in enumerate(tokens):
        if token.text.lower() != name.lower():
            continue
        if followed_by and (i + 1 >= len(tokens) or tokens[i + 1].text != followed_by):
            continue
        length = token.end - token.start + 1
        return Position(token.line, token.col - length + 1, length)
    return None


def first_in(node: exp.Expr) -> Position | None:
    """The position of ``node``, or of the first node under it that has one."""
    return next((p for p in (of(n) for n in node.walk()) if p), None)


def span(node: exp.Expr, sql: str) -> Position | None:
    """Where ``node`` stands in ``sql``: from its first token to its last, closing
    parentheses included."""
    metas = [n.meta for n in node.walk() if n.meta and "start" in n.meta and "end" in n.meta]
    if not metas:
        return None
    start, end = min(m["start"] for m in metas), max(m["end"] for m in metas)
    while sql.count("(", start, end + 1) > sql.count(")", start, end + 1):
        closing = sql.find(")", end + 1)
        if closing < 0:
            break
        end = closing
    line = sql.count("\n", 0, start) + 1
    return Position(line, start - sql.rfind("\n", 0, start), end - start + 1)


def error(message: str, sql: str, node: exp.Expr) -> SqlError:
    """A :class:`SqlError` pointing at ``node`` (or the first located node under it)."""
    pos = first_in(node)
    if pos is None:
        return SqlError(message, sql)
    return SqlError(message, sql, pos.line, pos.column, pos.length)
