"""Spark's analysis errors, told in terms of the dagger SQL the user wrote.

Spark analyses the translated SQL; this maps its error (unresolved column, field,
type mismatch...) back to a line and column of the original query where it can.
"""

from __future__ import annotations

import re
from typing import Any

from workbench.exceptions import SqlError
from workbench.sql import positions
from workbench.sql.joins import HELPER_PREFIX
from workbench.sql.windows import GROUP_WINDOWS

#: Columns the translation adds (window structs, join buckets): never suggested.
INTERNAL = {spark for spark, _ in GROUP_WINDOWS.values()}

_BACKTICKED = re.compile(r"`([^`]*)`")


def _names(text: str) -> list[str]:
    return _BACKTICKED.findall(text or "")


def to_sql_error(err: Any, source: str, views: dict[str, str]) -> SqlError:
    """A :class:`SqlError` for a pyspark ``AnalysisException`` raised on translated SQL."""
    condition = (_call(err, "getCondition") or _call(err, "getErrorClass") or "").upper()
    params = _call(err, "getMessageParameters") or {}
    text = str(getattr(err, "_message", None) or err).strip()
    message = _untranslate(text.split("\n")[0], views)
    name = None
    if condition.startswith(("UNRESOLVED_COLUMN", "UNRESOLVED_FIELD")):
        name = (_names(params.get("objectName", "")) or [params.get("fieldName", "")])[-1]
        proposal = _suggestions(_untranslate(params.get("proposal", ""), views))
        what = "column" if condition.startswith("UNRESOLVED_COLUMN") else "field"
        hint = f" Did you mean one of: {proposal}?" if proposal else ""
        message = f"Unknown {what} '{name}'.{hint}"
    elif condition.startswith("UNRESOLVED_ROUTINE"):
        routine = _names(params.get("routineName", ""))
        name = routine[-1] if routine else None
    message = re.sub(r"\s*SQLSTATE: \w+\s*$", "", message)
    pos = positions.locate(source, name) if name else None
    if pos is None:
        return SqlError(f"Spark cannot analyse the query: {message}", source)
    return SqlError(message, source, pos.line, pos.column, pos.length)


def _suggestions(proposal: str) -> str:
    """Spark's proposal list without the columns the translation adds."""
    kept = []
    for item in proposal.split(", "):
        name = (_names(item) or [item])[-1]
        if name and name.lower() not in INTERNAL and not name.startswith(HELPER_PREFIX):
            kept.append(item)
    return ", ".join(kept)


def _untranslate(text: str, views: dict[str, str]) -> str:
    for table, view in views.items():
        text = text.replace(view, table)
    return text


def _call(err: Any, method: str) -> Any:
    fn = getattr(err, method, None)
    try:
        return fn() if fn else None
    except Exception:  # pyspark raises when the JVM error has no structured data
        return None
