"""Parity: do two sets of result rows hold the same rows?

:func:`compare` matches the rows a notebook's preview showed (pandas written as JSON lines)
against the rows ``workbench replay --sample`` wrote (Spark's JSON) as multisets: row order
does not matter, numbers compare by value (``3`` equals ``3.0``; floats within a relative
tolerance of 1e-9), timestamps by the instant they name (ISO-8601 with any precision, UTC
when no offset is given, as the workbench's Spark session keeps timestamps), NaN as NULL,
and maps and structs by their keys. :class:`Difference` holds the rows only one side has.
"""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

REL_TOL = 1e-9
ABS_TOL = 1e-12
SHOWN = 10
_FLOAT = "~float"
_TIMESTAMP = re.compile(
    r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?$"
)


@dataclass
class Difference:
    """The rows only the preview has, and those only the replay has (every one)."""

    only_preview: list[dict] = field(default_factory=list)
    only_replay: list[dict] = field(default_factory=list)
    columns: tuple[list[str], list[str]] | None = None  # (preview, replay) when they differ

    def __bool__(self) -> bool:
        return bool(self.only_preview or self.only_replay or self.columns)

    def describe(self, shown: int = SHOWN) -> str:
        lines = []
        if self.columns:
            lines.append(f"  columns: preview {self.columns[0]}, replay {self.columns[1]}")
        for label, rows in (("preview", self.only_preview), ("replay", self.only_replay)):
            if rows:
                more = f" (first {shown})" if len(rows) > shown else ""
                lines.append(f"  only in the {label}: {len(rows)} row(s){more}")
                lines += [f"    {json.dumps(r, sort_keys=True, default=str)}" for r in rows[:shown]]
        return "\n".join(lines)


def compare(preview: list[dict], replay: list[dict], *, subset: bool = False) -> Difference:
    """The rows that differ; ``subset``: the preview was cut short, so only its rows must
    be in the replay."""
    diff = Difference()
    columns = sorted({k for r in preview for k in r}), sorted({k for r in replay for k in r})
    if preview and replay and columns[0] != columns[1]:
        diff.columns = columns
    left, right = _groups(preview), _groups(replay)
    for key in sorted(set(left) | set(right), key=repr):
        a, b = _pair(left.get(key, []), right.get(key, []))
        diff.only_preview += a
        diff.only_replay += b
    if subset:
        diff.only_replay = []
    return diff


def _groups(rows: Iterable[dict]) -> dict[tuple, list[tuple[tuple, dict]]]:
    """Rows by everything but their floats; each with its floats (in column order)."""
    out: dict[tuple, list[tuple[tuple, dict]]] = defaultdict(list)
    for row in rows:
        floats: list[float] = []
        key = tuple((k, _normal(row[k], floats)) for k in sorted(row))
        out[key].append((tuple(floats), row))
    return out


def _pair(
    left: list[tuple[tuple, dict]], right: list[tuple[tuple, dict]]
) -> tuple[list[dict], list[dict]]:
    """Pair rows of one group in float order; those without a close partner differ."""
    left, right = sorted(left, key=lambda x: x[0]), sorted(right, key=lambda x: x[0])
    only_left, only_right, i, j = [], [], 0, 0
    while i < len(left) and j < len(right):
        if _close(left[i][0], right[j][0]):
            i, j = i + 1, j + 1
        elif left[i][0] < right[j][0]:
            only_left.append(left[i][1])
            i += 1
        else:
            only_right.append(right[j][1])
            j += 1
    only_left += [row for _, row in left[i:]]
    only_right += [row for _, row in right[j:]]
    return only_left, only_right


def _close(a: tuple, b: tuple) -> bool:
    return len(a) == len(b) and all(
        math.isclose(x, y, rel_tol=REL_TOL, abs_tol=ABS_TOL) for x, y in zip(a, b, strict=True)
    )


def _normal(value: Any, floats: list[float]) -> Any:
    """A hashable, comparable form of a JSON value; floats go to ``floats``."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if math.isnan(value):
            return None
        if value.is_integer() and abs(value) < 2**53:
            return int(value)
        floats.append(value)
        return _FLOAT
    if isinstance(value, str):
        return _instant(value) if _TIMESTAMP.match(value) else value
    if isinstance(value, dict):
        return tuple((k, _normal(value[k], floats)) for k in sorted(value))
    if isinstance(value, list):
        return tuple(_normal(v, floats) for v in value)
    return str(value)


def _instant(text: str) -> tuple[str, int]:
    """Microseconds since the epoch of an ISO-8601 timestamp (UTC without an offset)."""
    head, _, frac = text.replace(" ", "T").partition(".")
    zone = ""
    digits = frac
    for i, ch in enumerate(frac):
        if not ch.isdigit():
            digits, zone = frac[:i], frac[i:]
            break
    if not frac:
        match = re.search(r"(Z|[+-]\d{2}:?\d{2})$", head)
        if match:
            head, zone = head[: match.start()], match.group(0)
    moment = datetime.fromisoformat(head + (zone.replace("Z", "+00:00") or "+00:00"))
    micros = int((digits + "000000")[:6]) if digits else 0
    return ("ts", int(moment.astimezone(UTC).timestamp()) * 1_000_000 + micros)


def read_jsonl(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]
