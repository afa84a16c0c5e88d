"""Durations as people write them in specs: ``500ms``, ``10s``, ``5m``, ``1h``, or milliseconds."""

from __future__ import annotations

import re

from workbench.exceptions import clip

_UNITS_MS = {"ms": 1, "s": 1000, "m": 60_000, "min": 60_000, "h": 3_600_000, "d": 86_400_000}
_PATTERN = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|min|h|d)?\s*$")


def to_millis(value: str | int | float) -> int:
    """Milliseconds in ``value``; a bare number is milliseconds. ValueError when unreadable."""
    if isinstance(value, bool):
        raise ValueError("expected a duration such as '10s', '500ms' or '5m'")
    if isinstance(value, int | float):
        if value < 0:
            raise ValueError("a duration cannot be negative")
        return int(value)
    match = _PATTERN.match(str(value))
    if not match:
        raise ValueError(
            f"'{clip(value)}' is not a duration: write e.g. '10s', '500ms', '5m' or '1h'"
        )
    number, unit = match.groups()
    return int(float(number) * _UNITS_MS[unit or "ms"])


def spark_interval(millis: int) -> str:
    """The string Spark's ``withWatermark``/``window``/triggers take, e.g. ``'60 seconds'``."""
    if millis % 1000:
        return f"{millis} milliseconds"
    return f"{millis // 1000} seconds"
