"""Flink interval literals (``INTERVAL '60' SECOND``) as milliseconds."""

from __future__ import annotations

import re

from sqlglot import exp

_UNIT_MS = {
    "MILLISECOND": 1,
    "SECOND": 1000,
    "MINUTE": 60_000,
    "HOUR": 3_600_000,
    "DAY": 86_400_000,
    "WEEK": 7 * 86_400_000,
}


def _unit(name: str) -> int | None:
    name = name.upper().rstrip("S") if name.upper() != "MS" else "MILLISECOND"
    return _UNIT_MS.get(name)


def millis(node: exp.Expr) -> int | None:
    """Milliseconds of an interval literal, or None when ``node`` is not one we can read."""
    if not isinstance(node, exp.Interval) or not isinstance(node.this, exp.Literal):
        return None
    text = node.this.name.strip()
    unit = node.args.get("unit")
    if unit is None:  # INTERVAL '5 minutes'
        match = re.fullmatch(r"([-+]?\d+(?:\.\d+)?)\s*([A-Za-z]+)", text)
        if not match or _unit(match.group(2)) is None:
            return None
        return int(float(match.group(1)) * (_unit(match.group(2)) or 0))
    if not isinstance(unit, exp.Var) or _unit(unit.name) is None:
        return None
    try:
        return int(float(text) * (_unit(unit.name) or 0))
    except ValueError:
        return None
