"""Spark's errors on a query, told in terms of the dagger SQL the user wrote.

Spark analyses and runs the translated SQL, and says where in it a fault is ("line 1 pos
133", or a fragment of the translated text), or only names an expression
(``MISSING_AGGREGATION``). :func:`to_sql_error` maps either back to the line and column of
the original query: the fragment (or the named expression) is parsed with sqlglot and
found among the nodes of the user's own query, which the translation generated it from.
An unknown column is answered with the closest columns by spelling, from every column of
the input streams and Spark's own proposals.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from workbench.exceptions import SqlError, WorkbenchError, did_you_mean
from workbench.sql import positions
from workbench.sql.dialect import dagger_dialect
from workbench.sql.joins import HELPER_PREFIX
from workbench.sql.parse import parse
from workbench.sql.windows import GROUP_WINDOWS

#: Columns the translation adds (window structs, join buckets): never suggested.
INTERNAL = {spark for spark, _ in GROUP_WINDOWS.values()}

_BACKTICKED = re.compile(r"`([^`]*)`")
_QUOTED = re.compile(r'^"(.*)"$', re.S)
_WHERE = re.compile(r"\s*(?:SQLSTATE: \w+)?;?\s*line \d+ pos \d+;?\s*$")


def _names(text: str) -> list[str]:
    return _BACKTICKED.findall(text or "")


def to_sql_error(
    err: Any, source: str, views: dict[str, str], columns: Iterable[str] = ()
) -> SqlError:
    """A :class:`SqlError` for a pyspark error (an ``AnalysisException``, or a query that
    failed as it ran) on the SQL translated from ``source``; ``columns`` are the input
    streams' columns, for "did you mean"."""
    condition = (_call(err, "getCondition") or _call(err, "getErrorClass") or "").upper()
    params = _call(err, "getMessageParameters") or {}
    message = _untranslate(_first_paragraph(err), views)
    name = None
    if condition.startswith(("UNRESOLVED_COLUMN", "UNRESOLVED_FIELD")):
        name = (_names(params.get("objectName", "")) or [params.get("fieldName", "")])[-1]
        what = "column" if condition.startswith("UNRESOLVED_COLUMN") else "field"
        known = _known(params.get("proposal", ""), columns if what == "column" else ())
        message = f"Unknown {what} '{name}'.{did_you_mean(name, known) if known else ''}"
    else:
        if condition.startswith("UNRESOLVED_ROUTINE"):
            routine = _names(params.get("routineName", ""))
            name = routine[-1] if routine else None
        from pyspark.errors import AnalysisException

        stage = "analyse" if isinstance(err, AnalysisException) else "run"
        message = f"Spark cannot {stage} the query: {message}"
    pos = where(err, params, source, views)
    if pos is None and name:
        pos = positions.locate(source, name)
    if pos is None:
        return SqlError(message, source)
    return SqlError(message, source, pos.line, pos.column, pos.length)


def where(
    err: Any, params: dict[str, str], source: str, views: dict[str, str]
) -> positions.Position | None:
    """Where in ``source`` the fault is: Spark's fragment of the translated SQL, else an
    expression its message names (in double quotes), found in the user's query."""
    try:
        tree = parse(source)
    except WorkbenchError:
        return None
    fragments = [c.fragment() for c in _call(err, "getQueryContext") or [] if _fragment(c)]
    quoted = [m.group(1) for v in params.values() if (m := _QUOTED.match(str(v)))]
    for text in [*fragments, *quoted]:
        wanted = _expression(_untranslate(text, views))
        if wanted is None:
            continue
        found = next(_same(tree, wanted), None) or next(_columns_of(tree, wanted), None)
        if found is not None:
            return positions.span(found, source)
    return None


def _fragment(context: Any) -> bool:
    try:
        return bool(context.fragment())
    except Exception:  # noqa: BLE001 - a DataFrame context has none
        return False


def _expression(text: str) -> exp.Expr | None:
    try:
        parsed = sqlglot.parse_one(text, read=dagger_dialect())
    except SqlglotError:
        return None
    return parsed.unnest() if parsed is not None else None


def _key(node: exp.Expr) -> str:
    return " ".join(node.sql(dialect=dagger_dialect()).lower().split())


def _same(tree: exp.Expr, wanted: exp.Expr) -> Iterator[exp.Expr]:
    """The nodes of ``tree`` that read as ``wanted``."""
    key = _key(wanted)
    return (n for n in tree.find_all(type(wanted)) if _key(n) == key)


def _columns_of(tree: exp.Expr, wanted: exp.Expr) -> Iterator[exp.Expr]:
    """The columns of ``tree`` that ``wanted`` reads (it was rewritten: a window...)."""
    for column in wanted.find_all(exp.Column):
        yield from _same(tree, column)


def _first_paragraph(err: Any) -> str:
    """Spark's message without the plan or the translated SQL that follow it."""
    text = str(getattr(err, "_message", None) or err).strip()
    text = re.split(r"\n== SQL|\nJVM stacktrace:|;\n", text)[0]
    text = re.split(r" SQLSTATE: \w+", text)[0]
    return _WHERE.sub("", " ".join(text.split()))


def _known(proposal: str, columns: Iterable[str]) -> list[str]:
    """Spark's proposals (the names in scope) and the input columns, without the columns
    the translation adds."""
    named = [(_names(item) or [item])[-1] for item in proposal.split(", ")]
    return [
        n
        for n in dict.fromkeys([*named, *columns])
        if n and n.lower() not in INTERNAL and not n.startswith(HELPER_PREFIX)
    ]


def _untranslate(text: str, views: dict[str, str]) -> str:
    for table, view in views.items():
        text = text.replace(f"{view} AS {table}", table).replace(view, table)
    return text


def _call(err: Any, method: str) -> Any:
    fn = getattr(err, method, None)
    try:
        return fn() if fn else None
    except Exception:  # pyspark raises when the JVM error has no structured data
        return None
